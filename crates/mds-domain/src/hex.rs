//! Lower-case hex, the one way mds writes bytes as text (key hashes in the
//! store, `ETag`s, the cursor secret) and reads them back.

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Writes `bytes` as lower-case hex into `out`, which must be exactly twice
/// as long.
pub fn encode_into(bytes: &[u8], out: &mut [u8]) {
    assert_eq!(out.len(), 2 * bytes.len(), "hex of n bytes is 2n digits");
    for (b, pair) in bytes.iter().zip(out.chunks_exact_mut(2)) {
        pair[0] = DIGITS[usize::from(b >> 4)];
        pair[1] = DIGITS[usize::from(b & 15)];
    }
}

/// `bytes` as lower-case hex.
pub fn encode(bytes: &[u8]) -> String {
    let mut out = vec![0; 2 * bytes.len()];
    encode_into(bytes, &mut out);
    String::from_utf8(out).expect("hex is ASCII")
}

/// The bytes of lower- or upper-case hex; `None` if it is not hex.
pub fn decode(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let bytes: Vec<u8> = (0..=255).collect();
        let hex = encode(&bytes);
        assert_eq!(&hex[..8], "00010203");
        assert_eq!(&hex[hex.len() - 4..], "feff");
        assert_eq!(decode(&hex).unwrap(), bytes);
        assert_eq!(decode("ABcd").unwrap(), vec![0xab, 0xcd]);
        assert!(decode("abc").is_none());
        assert!(decode("zz").is_none());
        assert!(decode("é1").is_none());
    }
}
