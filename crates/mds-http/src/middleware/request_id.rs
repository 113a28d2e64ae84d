//! `X-Request-Id`: echo the caller's if it is sane, else make a new one
//! (a ULID: 26 characters, time-ordered). [`super::envelope`] puts it on the
//! response, in the access log and in every problem body.

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use mds_domain::Environment;
use rand::Rng;

/// The header name.
pub static X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Whether a caller-sent id is safe to echo and log: 1 to 128 characters of
/// `[A-Za-z0-9._:-]`, and nothing that looks like a key.
fn sane(v: &[u8]) -> bool {
    !v.is_empty()
        && v.len() <= 128
        && v.iter().all(|&b| b.is_ascii_alphanumeric() || b"._:-".contains(&b))
        && !Environment::ALL.iter().any(|e| contains(v, e.scheme().as_bytes()))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// A new ULID (Crockford base32 of 48 bits of milliseconds and 80 random
/// bits), as its 26 ASCII bytes. Its time is the system's, not the node's
/// clock (as the `Date` header hyper writes): an id orders requests as
/// they happened, whatever a test makes the node believe the time is.
fn ulid_bytes() -> [u8; 26] {
    const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let ms = chrono::Utc::now().timestamp_millis() as u128;
    let rnd: u128 = rand::thread_rng().r#gen::<u128>() & ((1u128 << 80) - 1);
    let mut n = (ms << 80) | rnd;
    let mut out = [0u8; 26];
    for slot in out.iter_mut().rev() {
        *slot = ALPHABET[(n & 31) as usize];
        n >>= 5;
    }
    out
}

/// The request id of a request with `headers`: the caller's when sane, else
/// a new ULID. Held as a header value, ready to echo; every sane id is
/// visible ASCII, so [`HeaderValue::to_str`] never fails on it.
pub fn assign(headers: &HeaderMap) -> HeaderValue {
    match headers.get(&X_REQUEST_ID) {
        Some(v) if sane(v.as_bytes()) => v.clone(),
        _ => HeaderValue::from_bytes(&ulid_bytes()).expect("ULIDs are ASCII"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ulids_are_26_chars_and_sane() {
        let a = ulid_bytes();
        assert!(sane(&a));
        assert_ne!(a, ulid_bytes());
    }

    #[test]
    fn insane_ids_are_replaced() {
        assert!(!sane(b""));
        assert!(!sane(b"a b"));
        assert!(!sane("a".repeat(129).as_bytes()));
        assert!(!sane(b"<script>"));
        assert!(sane(b"req-123:abc.def_x"));
        assert!(!sane(b"mds_live_abcdefghijklmnop"));
        let mut h = HeaderMap::new();
        h.insert(&X_REQUEST_ID, HeaderValue::from_static("a b"));
        assert_eq!(assign(&h).len(), 26);
        h.insert(&X_REQUEST_ID, HeaderValue::from_static("mine-1"));
        assert_eq!(assign(&h), "mine-1");
    }
}
