//! [`Tagged`]: a JSON body with its strong `ETag`, as the keyed handlers
//! answer it and as the node's caches keep it ([`crate::pages`],
//! [`crate::article`]); and the one way a tag is written ([`tag_of`],
//! from a [`digest`] of the bytes or [`derived_tag`] from what made them).

use bytes::Bytes;
use http::HeaderValue;
use sha2::{Digest, Sha256};

/// A JSON body with its strong `ETag`.
#[derive(Debug, Clone)]
pub struct Tagged {
    /// The JSON.
    pub body: Bytes,
    /// Its tag.
    pub etag: HeaderValue,
}

impl Tagged {
    /// `json`, tagged with its [`digest`].
    pub fn hashed(json: Vec<u8>) -> Self {
        let etag = tag_of(&digest(&json));
        Tagged { body: Bytes::from(json), etag }
    }
}

/// The `ETag` value of a 16-byte digest: `"<32 hex digits>"`.
pub fn tag_of(digest: &[u8; 16]) -> HeaderValue {
    let mut out = [b'"'; 34];
    mds_domain::hex::encode_into(digest, &mut out[1..33]);
    HeaderValue::from_bytes(&out).expect("hex is ASCII")
}

/// The XXH3-128 hash of `bytes`, big-endian: the digest a representation's
/// tag is written from. Not a cryptographic hash, and need not be: a tag
/// only has to differ when the bytes do (two bodies of one route meet with
/// a chance of 2^-128), and the bodies are mds's own. It runs at memory
/// speed; SHA-256 of a made news page (11 KB) was 13 % of its CPU in a
/// perf profile, with the CPU's SHA extensions. The same function on every
/// node and in every build, so a tag is the same wherever the same bytes
/// are served.
pub fn digest(bytes: &[u8]) -> [u8; 16] {
    xxhash_rust::xxh3::xxh3_128(bytes).to_be_bytes()
}

/// The strong `ETag` of a representation made from the held data `id`
/// names (a catalog version, a news index), without hashing it: 16 bytes of
/// the SHA-256 of `label`, `id` and what `feed` adds (what the
/// representation holds besides that data: the filters, the position, the
/// limit). For this to be strong, `id` must name one held copy on one node
/// (a node's cursors and this build make the bytes too), and the
/// representation a function of it and of what `feed` adds.
pub fn derived_tag(label: &[u8], id: &[u8; 16], feed: impl FnOnce(&mut Sha256)) -> HeaderValue {
    let mut h = Sha256::new();
    h.update(label);
    h.update(id);
    feed(&mut h);
    tag_of(&first_16(&h.finalize()))
}

fn first_16(sha256: &[u8]) -> [u8; 16] {
    sha256[..16].try_into().expect("16 of 32 bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_quoted_hex() {
        let mut d = [0u8; 16];
        d[0] = 0xab;
        d[15] = 0x01;
        assert_eq!(tag_of(&d), "\"ab000000000000000000000000000001\"");
        // XXH3-128 of the empty input, as the xxHash reference gives it.
        assert_eq!(tag_of(&digest(b"")), "\"99aa06d3014798d86001c324468d497f\"");
        assert_ne!(digest(br#"{"a":1}"#), digest(br#"{"a":2}"#));
    }
}
