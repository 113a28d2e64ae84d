//! Strong `ETag`s and conditional `GET` (`If-None-Match` → `304`).
//!
//! A tag is 16 bytes as 32 hex digits, quoted ([`mds_node::tagged::tag_of`]). The keyed
//! handlers tag their uncompressed JSON themselves, each from what
//! determines it: `/v1/companies` from the catalog version and the page
//! asked for (no hashing of the page), news from the article's JSON (hashed
//! once, when it enters the node's cache), `/v1/usage` from its JSON
//! ([`mds_node::tagged::digest`]: XXH3-128). Compression runs outside them, and
//! [`tag_encoding`] then gives a compressed representation its own strong
//! tag (`"<digest>.gzip"`), as a strong validator must differ between
//! representations. [`not_modified`] (in the guard, outside compression)
//! matches either form of a tag, so a client that stored a compressed
//! response still gets its `304`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// Content codings the compression layer may apply.
const CODINGS: &[&str] = &["gzip", "br", "zstd", "deflate"];

/// `304 Not Modified` in place of `resp` when it is a `200` whose tag
/// (either form: the representation's own, or the uncompressed one's)
/// `if_none_match` names; else `resp`. The `304` carries the tag as the
/// caller named it, and the response's `Cache-Control` and `Vary` (RFC
/// 9110 15.4.5: the fields a `200` would have carried).
pub fn not_modified(if_none_match: &HeaderValue, resp: Response) -> Response {
    if resp.status() != StatusCode::OK {
        return resp;
    }
    debug_assert!(resp.headers().contains_key(header::ETAG), "keyed handlers tag their bodies");
    let matched = resp.headers().get(header::ETAG).and_then(|tag| {
        let tag = tag.to_str().ok()?;
        Some(match matching_tag(if_none_match.to_str().ok()?, tag)? {
            Match::Named(t) => HeaderValue::from_str(t),
            Match::Any => HeaderValue::from_str(&format!("\"{}\"", digest_of(tag)?)),
        })
    });
    let Some(Ok(matched)) = matched else { return resp };
    let mut not_modified = StatusCode::NOT_MODIFIED.into_response();
    let h = not_modified.headers_mut();
    h.insert(header::ETAG, matched);
    for name in [header::CACHE_CONTROL, header::VARY] {
        for v in resp.headers().get_all(&name) {
            h.append(name.clone(), v.clone());
        }
    }
    not_modified
}

/// A compressed `200` gets the tag of its own representation. For the
/// response as it leaves the compression layer.
pub fn tag_encoding(resp: &mut Response) {
    let Some(coding) = resp.headers().get(header::CONTENT_ENCODING) else { return };
    let Some(tag) = resp.headers().get(header::ETAG) else { return };
    let (Ok(coding), Ok(tag)) = (coding.to_str(), tag.to_str()) else { return };
    if let Some(plain) = tag.strip_suffix('"') {
        if let Ok(v) = HeaderValue::from_str(&format!("{plain}.{coding}\"")) {
            resp.headers_mut().insert(header::ETAG, v);
        }
    }
}

/// How `If-None-Match` matched.
#[derive(Debug, PartialEq, Eq)]
enum Match<'a> {
    /// By this tag (either form), which the `304` answers with.
    Named(&'a str),
    /// By `*`: the `304` answers with the uncompressed form.
    Any,
}

/// The digest of a tag of either form (`"<digest>"`, `"<digest>.gzip"`).
fn digest_of(tag: &str) -> Option<&str> {
    let inner = tag.strip_prefix('"')?.strip_suffix('"')?;
    Some(match inner.split_once('.') {
        Some((digest, coding)) if CODINGS.contains(&coding) => digest,
        _ => inner,
    })
}

/// How `If-None-Match` names the representation tagged `tag` (either
/// form, and `tag` itself may be a compressed representation's), if it does.
fn matching_tag<'a>(if_none_match: &'a str, tag: &str) -> Option<Match<'a>> {
    let digest = digest_of(tag)?;
    for raw in if_none_match.split(',') {
        let t = raw.trim();
        if t == "*" {
            return Some(Match::Any);
        }
        // Weak comparison applies to If-None-Match (RFC 9110 13.1.2).
        let opaque = t.strip_prefix("W/").unwrap_or(t);
        let Some(inner) = opaque.strip_prefix('"').and_then(|s| s.strip_suffix('"')) else { continue };
        let Some(rest) = inner.strip_prefix(digest) else { continue };
        if rest.is_empty() || rest.strip_prefix('.').is_some_and(|c| CODINGS.contains(&c)) {
            return Some(Match::Named(opaque));
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
        let tag = format!("\"{d}\"");
        let gz = format!("\"{d}.gzip\"");
        assert_eq!(matching_tag(&tag, &tag), Some(Match::Named(&tag)));
        assert_eq!(matching_tag(&format!("\"x\", W/{gz}"), &tag), Some(Match::Named(&gz)));
        assert_eq!(matching_tag("*", &tag), Some(Match::Any));
        assert_eq!(matching_tag(&format!("\"{d}.rot13\""), &tag), None);
        assert_eq!(matching_tag("\"other\"", &tag), None);
        assert_eq!(matching_tag(d, &tag), None);
        // Against a compressed representation's tag, either form matches.
        assert_eq!(matching_tag(&tag, &gz), Some(Match::Named(&tag)));
        assert_eq!(matching_tag(&gz, &gz), Some(Match::Named(&gz)));
        assert_eq!(digest_of(&gz), Some(d));
    }
}
