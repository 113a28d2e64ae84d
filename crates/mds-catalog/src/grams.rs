//! Search grams: every bigram and trigram of a folded text, packed into a
//! `u64` key, and a cheap hasher for maps keyed by them; and row
//! signatures: the four-character grams of a folded text, one bit each in a
//! `u64`.

use std::hash::Hasher;

/// A cheap hasher for packed gram keys.
#[derive(Default)]
pub(crate) struct GramHasher(u64);

impl Hasher for GramHasher {
    fn finish(&self) -> u64 {
        let h = (self.0 ^ (self.0 >> 31)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^ (h >> 32)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = x;
    }
}

/// Key of a two-character gram (bit 63 set; trigrams use at most 63 bits).
pub(crate) fn bigram(a: char, b: char) -> u64 {
    1 << 63 | (a as u64) << 21 | b as u64
}

/// Key of a three-character gram.
pub(crate) fn trigram(a: char, b: char, c: char) -> u64 {
    (a as u64) << 42 | (b as u64) << 21 | c as u64
}

/// Appends every bigram and trigram of `text` to `out`.
pub(crate) fn grams_of(text: &str, out: &mut Vec<u64>) {
    let (mut p2, mut p1) = (None, None);
    for c in text.chars() {
        if let Some(b) = p1 {
            out.push(bigram(b, c));
            if let Some(a) = p2 {
                out.push(trigram(a, b, c));
            }
        }
        (p2, p1) = (p1, Some(c));
    }
}

/// Appends every bigram and trigram of ASCII `text`, lower-cased (what
/// [`grams_of`] gives for its fold, without allocating).
pub(crate) fn ascii_grams(text: &[u8], out: &mut Vec<u64>) {
    let lower = |b: u8| b.to_ascii_lowercase() as char;
    for w in text.windows(2) {
        out.push(bigram(lower(w[0]), lower(w[1])));
    }
    for w in text.windows(3) {
        out.push(trigram(lower(w[0]), lower(w[1]), lower(w[2])));
    }
}

/// The signature bit of a four-character gram: one of 64, by a hash.
fn quad_bit(a: char, b: char, c: char, d: char) -> u64 {
    let k = trigram(a, b, c).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (d as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    1 << (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58)
}

/// The signature of a folded text: the bits of its four-character grams
/// (0 for a text shorter than four characters). A text containing another
/// contains its grams, so its signature holds the other's bits: a row whose
/// signature lacks a bit of a term's cannot contain the term.
pub(crate) fn signature(text: impl IntoIterator<Item = char>) -> u64 {
    let (mut sig, mut w) = (0, ['\0'; 3]);
    for (k, c) in text.into_iter().enumerate() {
        if k >= 3 {
            sig |= quad_bit(w[0], w[1], w[2], c);
        }
        w = [w[1], w[2], c];
    }
    sig
}

#[cfg(test)]
mod tests {
    use super::signature;

    #[test]
    fn a_text_holds_the_bits_of_what_it_contains() {
        let sig = |s: &str| signature(s.chars());
        assert_eq!(sig("abc"), 0, "no four-character gram");
        let whole = sig("reliance industries");
        for part in ["reli", "ance ind", "industries", "e in"] {
            assert_eq!(sig(part) & whole, sig(part), "{part}");
        }
        assert_ne!(sig("ia i"), 0);
        assert_eq!(sig("ia i").count_ones(), 1);
        assert_ne!(sig("nestlé") & sig("nestlé india"), 0);
    }
}
