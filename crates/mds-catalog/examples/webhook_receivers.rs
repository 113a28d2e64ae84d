//! The receivers of the webhook latency benchmark
//! (`bench/webhooks-hanging.sh`): on one address, receivers that answer
//! every `POST` with `204` at once; on another, receivers that take the
//! request and never answer (the node's timeout gives up on them). Each
//! request is printed on stdout as it arrives, before any answer:
//! `ok|hang PATH WEBHOOK-ID UNIX_SECONDS`.
//!
//! Usage: `cargo run --release -p mds-catalog --example webhook_receivers -- OK_ADDR HANG_ADDR`

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::http::{HeaderMap, StatusCode, Uri};

/// Prints one arrival.
fn arrived(kind: &str, uri: &Uri, headers: &HeaderMap) {
    let id = headers.get("webhook-id").and_then(|v| v.to_str().ok()).unwrap_or("-");
    let now = SystemTime::now().duration_since(UNIX_EPOCH).expect("after 1970").as_secs_f64();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{kind} {} {id} {now:.4}", uri.path());
}

async fn answer(uri: Uri, headers: HeaderMap) -> StatusCode {
    arrived("ok", &uri, &headers);
    StatusCode::NO_CONTENT
}

async fn hang(uri: Uri, headers: HeaderMap) -> StatusCode {
    arrived("hang", &uri, &headers);
    std::future::pending().await
}

#[tokio::main]
async fn main() {
    const USAGE: &str = "usage: webhook_receivers OK_ADDR HANG_ADDR";
    let mut args = std::env::args().skip(1);
    let (ok, hanging) = (args.next().expect(USAGE), args.next().expect(USAGE));
    let ok = tokio::net::TcpListener::bind(&ok).await.expect("bind");
    let hanging = tokio::net::TcpListener::bind(&hanging).await.expect("bind");
    let hangs = tokio::spawn(async move { axum::serve(hanging, Router::new().fallback(hang)).await });
    axum::serve(ok, Router::new().fallback(answer)).await.expect("serve");
    hangs.await.expect("joined").expect("serve");
}
