//! Search grams: every bigram and trigram of a folded text, packed into a
//! `u64` key, and a cheap hasher for maps keyed by them.

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
