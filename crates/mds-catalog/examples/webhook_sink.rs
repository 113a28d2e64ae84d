//! The receiver of the webhook benchmark (`bench/webhooks.sh`): an HTTP
//! server that answers every `POST` with `204`, counts the deliveries and
//! the distinct `(path, webhook-id)` pairs (every other is a duplicate), and
//! prints `at N UNIX_SECONDS` on stdout when the count of distinct ones
//! reaches each of the targets given, then `duplicates D` with the last.
//!
//! Usage: `cargo run --release -p mds-catalog --example webhook_sink -- ADDR TARGET...`

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};

/// What the sink has seen.
#[derive(Default)]
struct Seen {
    /// Every `(path, webhook-id)` received.
    distinct: HashSet<(String, String)>,
    /// Every delivery, duplicates included.
    total: u64,
    /// The targets not reached yet, ascending.
    targets: Vec<usize>,
}

/// Counts one delivery; prints the targets it reaches.
async fn receive(State(seen): State<Arc<Mutex<Seen>>>, uri: Uri, headers: HeaderMap) -> StatusCode {
    let id = headers.get("webhook-id").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    let mut s = seen.lock().expect("not poisoned");
    s.total += 1;
    s.distinct.insert((uri.path().to_owned(), id));
    while s.targets.first().is_some_and(|&t| s.distinct.len() >= t) {
        let t = s.targets.remove(0);
        let now = SystemTime::now().duration_since(UNIX_EPOCH).expect("after 1970").as_secs_f64();
        println!("at {t} {now:.3}");
        if s.targets.is_empty() {
            println!("duplicates {}", s.total - s.distinct.len() as u64);
        }
    }
    StatusCode::NO_CONTENT
}

#[tokio::main]
async fn main() {
    const USAGE: &str = "usage: webhook_sink ADDR TARGET...";
    let mut args = std::env::args().skip(1);
    let addr = args.next().expect(USAGE);
    let mut targets: Vec<usize> = args.map(|a| a.parse().expect(USAGE)).collect();
    targets.sort_unstable();
    let seen = Arc::new(Mutex::new(Seen { targets, ..Seen::default() }));
    let app = Router::new().fallback(receive).with_state(seen);
    let listener = tokio::net::TcpListener::bind(&addr).await.expect("bind");
    axum::serve(listener, app).await.expect("serve");
}
