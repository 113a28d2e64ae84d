//! `X-Request-Id`: echo the caller's if it is sane, else make a new one
//! (a ULID: 26 characters, time-ordered), and put it on the response.

use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use rand::Rng;

/// The header name.
pub static X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The request id of the current request, in request extensions.
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

/// Whether a caller-sent id is safe to echo and log: 1 to 128 characters of
/// `[A-Za-z0-9._:-]`, and nothing that looks like a key.
fn sane(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= 128
        && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"._:-".contains(&b))
        && !v.contains("mds_live_")
        && !v.contains("mds_test_")
}

/// A new ULID (Crockford base32 of 48 bits of milliseconds and 80 random bits).
pub fn new_ulid() -> String {
    const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let ms = chrono::Utc::now().timestamp_millis() as u128;
    let rnd: u128 = rand::thread_rng().r#gen::<u128>() & ((1u128 << 80) - 1);
    let mut n = (ms << 80) | rnd;
    let mut out = [0u8; 26];
    for slot in out.iter_mut().rev() {
        *slot = ALPHABET[(n & 31) as usize];
        n >>= 5;
    }
    String::from_utf8(out.to_vec()).expect("ASCII")
}

/// Middleware: assigns the request id.
pub async fn assign(mut req: Request, next: Next) -> Response {
    let id = req
        .headers()
        .get(&X_REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| sane(v))
        .map(str::to_owned)
        .unwrap_or_else(new_ulid);
    req.extensions_mut().insert(RequestId(id.clone()));
    let mut resp = next.run(req).await;
    if let Ok(v) = HeaderValue::from_str(&id) {
        resp.headers_mut().insert(X_REQUEST_ID.clone(), v);
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ulids_are_26_chars_and_sane() {
        let a = new_ulid();
        assert_eq!(a.len(), 26);
        assert!(sane(&a));
        assert_ne!(a, new_ulid());
    }

    #[test]
    fn insane_ids_are_replaced() {
        assert!(!sane(""));
        assert!(!sane("a b"));
        assert!(!sane(&"a".repeat(129)));
        assert!(!sane("<script>"));
        assert!(sane("req-123:abc.def_x"));
        assert!(!sane("mds_live_abcdefghijklmnop"));
    }
}
