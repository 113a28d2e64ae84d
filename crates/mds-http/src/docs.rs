//! The API reference page, `GET /docs`: Redoc rendering `/v1/openapi.json`.
//!
//! Redoc's standalone bundle is vendored in `assets/` (see `assets/README.md`)
//! and compiled into the binary, so the page works offline: it loads nothing
//! but `/docs/redoc.standalone.js` and `/v1/openapi.json` from this server
//! (the bundle's one remote reference, a logo, is removed as it is served).
//!
//! What a reader needs beyond the operations (authentication, errors,
//! pagination, limits, caching) is the document's own introduction
//! (`openapi.md`), so the page never sends a consumer to a repository file.

use std::sync::OnceLock;

use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// The page: one local script, one local document.
pub const PAGE: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>mds API reference</title>
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<redoc spec-url="/v1/openapi.json"></redoc>
<script src="/docs/redoc.standalone.js"></script>
</body>
</html>
"#;

/// Redoc's standalone bundle (npm `redoc`, see `assets/README.md`), as
/// published.
pub const REDOC_JS: &[u8] = include_bytes!("../assets/redoc.standalone.js");

/// The one remote URL the bundle loads by itself: the "API docs by Redocly"
/// logo in the side menu.
pub const REDOC_REMOTE_LOGO: &str = "https://cdn.redoc.ly/redoc/logo-mini.svg";

/// The bundle as served: [`REDOC_JS`] with [`REDOC_REMOTE_LOGO`] replaced by
/// an empty `src`, which the browser does not fetch and Redoc answers by
/// hiding the image (its `onError`), so the page loads nothing remote.
pub fn redoc_js() -> &'static [u8] {
    static JS: OnceLock<Vec<u8>> = OnceLock::new();
    JS.get_or_init(|| {
        let js = std::str::from_utf8(REDOC_JS).expect("the bundle is UTF-8");
        assert!(js.contains(REDOC_REMOTE_LOGO), "the vendored Redoc no longer names its logo URL; review docs.rs");
        js.replace(REDOC_REMOTE_LOGO, "").into_bytes()
    })
}

/// Redoc's licence, served beside the bundle.
pub const REDOC_LICENSE: &str = include_str!("../assets/redoc.LICENSE");

/// `GET /docs`.
pub async fn page() -> Response {
    with(PAGE.into_response(), "text/html; charset=utf-8")
}

/// `GET /docs/{asset}`: the vendored files (cached for a day: they change
/// only with the binary; the route table says so).
pub async fn asset(Path(name): Path<String>) -> Result<Response, ApiError> {
    let (body, ct): (&'static [u8], &str) = match name.as_str() {
        "redoc.standalone.js" => (redoc_js(), "text/javascript; charset=utf-8"),
        "redoc.LICENSE" => (REDOC_LICENSE.as_bytes(), "text/plain; charset=utf-8"),
        _ => return Err(ApiError::not_found("no such documentation asset")),
    };
    Ok(with((StatusCode::OK, body).into_response(), ct))
}

fn with(mut resp: Response, content_type: &'static str) -> Response {
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn served_bundle_names_no_remote_asset() {
        let js = std::str::from_utf8(redoc_js()).unwrap();
        assert!(!js.contains("cdn.redoc.ly"));
        assert!(!js.contains("fonts.googleapis.com"));
        assert!(!PAGE.contains("://"));
    }
}
