//! The in-process cost of metering one counted request: `Limiter::admit`
//! (GCRA and the quota reservation, the key already seeded) then settling
//! its hold, on one key, one thread, a real SQLite store behind it (read
//! once, to seed the month). What the request path pays for limits and the
//! meter, without HTTP. `ROUTES` routes are taken in turn, and every tenth
//! request is a `304`, so the ledger's entries are found and added to as in
//! serving.
//!
//! Usage: `cargo run --release -p mds-limits --example admit_cost -- [N=2000000] [ROUTES=2]`

use std::sync::Arc;
use std::time::Instant;

use chrono::Utc;
use mds_limits::{Ask, Charge, Limiter, Limits, Meter, Outcome, SystemClock};

/// The store with one key that the limiter's tests use too.
#[path = "../tests/common/mod.rs"]
mod common;

const ROUTES: [&str; 4] = ["/v1/companies", "/v1/news/{slug}", "/v1/companies/{isin}", "/v1/news"];

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let n: u32 = args.next().map_or(2_000_000, |s| s.parse().expect("N"));
    let routes: usize = args.next().map_or(2, |s| s.parse().expect("ROUTES"));
    let dir = tempfile::tempdir().unwrap();
    let (store, key) = common::store_with_key(&dir, "mds_live_bench001", 1, Utc::now()).await;
    let limiter = Limiter::new(Arc::new(Meter::new()), Arc::new(SystemClock));
    let limits = Limits { rate_limit_per_minute: u32::MAX, monthly_quota: u64::MAX };
    for round in 0..3 {
        let start = Instant::now();
        for i in 0..n {
            let route = ROUTES[i as usize % routes];
            let d = limiter.admit(&store, Ask { key: &key, limits, charge: Charge::Counted(route) }).await.unwrap();
            let outcome = if i % 10 == 9 { Outcome::NotModified } else { Outcome::Counted };
            d.hold.unwrap().settle(outcome);
        }
        let ns = start.elapsed().as_nanos() as f64 / f64::from(n);
        limiter.meter().flush(&store).await.unwrap();
        println!("round {round}: {ns:.1} ns per admitted and settled request ({n} requests, {routes} routes)");
    }
}
