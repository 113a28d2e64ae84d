//! hyper's own answers to a request head it cannot read, given a body.
//!
//! hyper answers a request target over 64 KiB with `414` and a head over
//! its read buffer (about 400 KiB) with `431` before any service sees the
//! request, and writes them with no body (`content-length: 0`). The
//! connection's writer ([`super::conn::Watched`]) puts the same answer with a
//! problem+json body in place of those bytes ([`problem_for`]); the
//! connection closes after it, as hyper closes it.

use mds_domain::{ErrorCode, Problem};

/// The `detail` of a `414`.
pub(crate) const URI_TOO_LONG: &str = "the request target is over 64 KiB: send fewer or shorter query parameters";
/// The `detail` of a `431`.
pub(crate) const HEAD_TOO_LARGE: &str = "the request head is over 400 KiB: send fewer or smaller header fields";

/// The bytes to send instead of `head` when `head` is hyper's bodiless
/// `414` or `431` (the whole of one write: a head ending in a blank line,
/// with `content-length: 0`), else `None`. The service never answers these
/// statuses itself, and its answers always carry a body.
pub(super) fn problem_for(head: &[u8]) -> Option<Vec<u8>> {
    let code = if head.starts_with(b"HTTP/1.1 414 ") {
        ErrorCode::UriTooLong
    } else if head.starts_with(b"HTTP/1.1 431 ") {
        ErrorCode::RequestHeaderFieldsTooLarge
    } else {
        return None;
    };
    let text = std::str::from_utf8(head).ok()?;
    let fields = text.strip_suffix("\r\n\r\n")?;
    if fields.contains("\r\n\r\n") || !fields.lines().any(|l| l.eq_ignore_ascii_case("content-length: 0")) {
        return None;
    }
    let detail = if code == ErrorCode::UriTooLong { URI_TOO_LONG } else { HEAD_TOO_LARGE };
    let body = serde_json::to_vec(&Problem::new(code, detail)).expect("a problem always serialises");
    // hyper's status line and its other fields (`date`), then ours.
    let mut out = Vec::with_capacity(head.len() + body.len() + 96);
    for line in fields.split("\r\n").filter(|l| {
        let l = l.to_ascii_lowercase();
        !l.starts_with("content-length:") && !l.starts_with("connection:")
    }) {
        out.extend_from_slice(line.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"content-type: application/problem+json\r\nconnection: close\r\n");
    out.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
    out.extend_from_slice(&body);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hyper_s_bodiless_414_and_431_are_replaced() {
        let head = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\ndate: Sun, 29 Nov 2026 07:00:00 GMT\r\n\r\n";
        let out = String::from_utf8(problem_for(head).unwrap()).unwrap();
        let (h, body) = out.split_once("\r\n\r\n").unwrap();
        assert!(h.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"), "{h}");
        assert!(h.contains("date: Sun, 29 Nov 2026") && h.contains("content-type: application/problem+json"));
        assert!(h.contains(&format!("content-length: {}", body.len())) && !h.contains("content-length: 0"));
        let p: Problem = serde_json::from_str(body).unwrap();
        assert_eq!((p.status, p.code.as_str()), (431, "request_header_fields_too_large"));

        let uri = b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\n\r\n";
        assert!(String::from_utf8(problem_for(uri).unwrap()).unwrap().contains("\"uri_too_long\""));
        // Not hyper's: a body follows, another status, a partial head.
        assert!(problem_for(b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 2\r\n\r\n{}").is_none());
        assert!(problem_for(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n").is_none());
        assert!(problem_for(b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n").is_none());
    }
}
