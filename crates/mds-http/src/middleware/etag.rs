//! Strong `ETag`s and conditional `GET` (`If-None-Match` → `304`).
//!
//! [`conditional`] runs on the uncompressed JSON: the tag is a digest of the
//! body. Compression runs outside it, and [`tag_encoding`] then gives a
//! compressed representation its own strong tag (`"<digest>.gzip"`), as a
//! strong validator must differ between representations. `If-None-Match`
//! matches either form of a tag, so a client that stored a compressed
//! response still gets its `304`.

use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

/// Largest body that is tagged (bigger ones are passed through untagged).
const MAX_TAGGED_BODY: usize = 16 * 1024 * 1024;

/// Content codings the compression layer may apply.
const CODINGS: &[&str] = &["gzip", "br", "zstd", "deflate"];

/// Middleware: tags successful `GET` responses and answers `304` when the
/// caller already holds the representation.
pub async fn conditional(req: Request, next: Next) -> Response {
    if req.method() != Method::GET {
        return next.run(req).await;
    }
    let if_none_match = req.headers().get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let resp = next.run(req).await;
    if resp.status() != StatusCode::OK {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    let bytes = match to_bytes(body, MAX_TAGGED_BODY).await {
        Ok(b) => b,
        Err(e) => return crate::error::ApiError::internal(&e).into_response(),
    };
    let digest = body_digest(&bytes);
    if let Some(matched) = if_none_match.as_deref().and_then(|inm| matching_tag(inm, &digest)) {
        let mut not_modified = StatusCode::NOT_MODIFIED.into_response();
        let h = not_modified.headers_mut();
        h.insert(header::ETAG, HeaderValue::from_str(&matched).expect("tags are ASCII"));
        copy_headers(&parts.headers, h, &[header::CACHE_CONTROL, header::VARY]);
        *not_modified.extensions_mut() = std::mem::take(&mut parts.extensions);
        return not_modified;
    }
    parts.headers.insert(header::ETAG, HeaderValue::from_str(&format!("\"{digest}\"")).expect("hex is ASCII"));
    Response::from_parts(parts, Body::from(bytes))
}

/// Middleware (outside compression): a compressed `200` gets the tag of its
/// own representation.
pub async fn tag_encoding(req: Request, next: Next) -> Response {
    let mut resp = next.run(req).await;
    let coding = resp.headers().get(header::CONTENT_ENCODING).and_then(|v| v.to_str().ok()).map(str::to_owned);
    if let (Some(coding), Some(tag)) = (coding, resp.headers().get(header::ETAG).and_then(|v| v.to_str().ok())) {
        if let Some(plain) = tag.strip_suffix('"') {
            let tagged = format!("{plain}.{coding}\"");
            if let Ok(v) = HeaderValue::from_str(&tagged) {
                resp.headers_mut().insert(header::ETAG, v);
            }
        }
    }
    resp
}

fn copy_headers(from: &HeaderMap, to: &mut HeaderMap, names: &[header::HeaderName]) {
    for n in names {
        for v in from.get_all(n) {
            to.append(n.clone(), v.clone());
        }
    }
}

/// The first 16 bytes of SHA-256 of the body, as hex.
fn body_digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// The tag in `If-None-Match` that names the representation with `digest`
/// (either encoding), or `*`, as the tag to answer with.
fn matching_tag(if_none_match: &str, digest: &str) -> Option<String> {
    for raw in if_none_match.split(',') {
        let t = raw.trim();
        if t == "*" {
            return Some(format!("\"{digest}\""));
        }
        // Weak comparison applies to If-None-Match (RFC 9110 13.1.2).
        let opaque = t.strip_prefix("W/").unwrap_or(t);
        let Some(inner) = opaque.strip_prefix('"').and_then(|s| s.strip_suffix('"')) else { continue };
        let Some(rest) = inner.strip_prefix(digest) else { continue };
        if rest.is_empty() || rest.strip_prefix('.').is_some_and(|c| CODINGS.contains(&c)) {
            return Some(opaque.to_owned());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_none_match_forms() {
        let d = "00112233445566778899aabbccddeeff";
        assert_eq!(matching_tag(&format!("\"{d}\""), d).as_deref(), Some(&*format!("\"{d}\"")));
        assert_eq!(matching_tag(&format!("\"x\", W/\"{d}.gzip\""), d).as_deref(), Some(&*format!("\"{d}.gzip\"")));
        assert_eq!(matching_tag("*", d).as_deref(), Some(&*format!("\"{d}\"")));
        assert_eq!(matching_tag(&format!("\"{d}.rot13\""), d), None);
        assert_eq!(matching_tag("\"other\"", d), None);
        assert_eq!(matching_tag(d, d), None);
    }
}
