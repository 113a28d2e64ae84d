//! The benchmark baseline: an HTTP server that answers every request with the
//! same bytes (read from a file), doing no other work. `bench/run.sh` serves
//! the exact body `mds serve` returned, so the ratio measures what mds does
//! beyond writing the response.
//!
//! Usage: `cargo run --release -p mds-catalog --example baseline -- ADDR BODY_FILE`

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let addr = args.next().expect("usage: baseline ADDR BODY_FILE");
    let body: &'static [u8] = std::fs::read(args.next().expect("usage: baseline ADDR BODY_FILE")).unwrap().leak();
    let app = Router::new()
        .fallback(move || async move { ([(header::CONTENT_TYPE, "application/json")], body).into_response() });
    let listener = tokio::net::TcpListener::bind(&addr).await.expect("bind");
    axum::serve(listener, app).await.expect("serve");
}
