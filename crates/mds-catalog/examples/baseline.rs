//! The benchmark baseline: an HTTP server that answers every request with the
//! same response (read from files), doing no other work. `bench/run.sh`
//! gives it the exact body `mds serve` returned and, when it has them, that
//! response's headers (`curl -D`), so both servers send the same bytes (bar
//! the `Date`, which hyper writes for both) and the ratio measures what mds
//! does beyond writing the response.
//!
//! Usage: `cargo run --release -p mds-catalog --example baseline -- ADDR BODY_FILE [HEADERS_FILE]`
//! (without a headers file: `Content-Type: application/json` only).

use axum::Router;
use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use axum::response::IntoResponse;

/// The headers of a `curl -D` dump: every `name: value` line after the
/// status line, except those hyper writes itself (`Date`, `Content-Length`).
fn headers_of(dump: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for line in dump.lines().skip(1) {
        let Some((name, value)) = line.split_once(':') else { continue };
        let name = HeaderName::from_bytes(name.trim().as_bytes()).expect("a header name");
        if name != header::DATE && name != header::CONTENT_LENGTH {
            headers.append(name, HeaderValue::from_str(value.trim()).expect("a header value"));
        }
    }
    headers
}

#[tokio::main]
async fn main() {
    const USAGE: &str = "usage: baseline ADDR BODY_FILE [HEADERS_FILE]";
    let mut args = std::env::args().skip(1);
    let addr = args.next().expect(USAGE);
    let body: &'static [u8] = std::fs::read(args.next().expect(USAGE)).expect("the body file").leak();
    let headers = match args.next() {
        Some(path) => headers_of(&std::fs::read_to_string(path).expect("the headers file")),
        None => HeaderMap::from_iter([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))]),
    };
    let app = Router::new().fallback(move || {
        let headers = headers.clone();
        async move { (headers, body).into_response() }
    });
    let listener = tokio::net::TcpListener::bind(&addr).await.expect("bind");
    axum::serve(listener, app).await.expect("serve");
}
