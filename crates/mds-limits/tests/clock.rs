//! The per-minute limit across steps of the wall clock (NTP, a VM
//! migration): measured on the monotonic clock, so a step back does not
//! refuse recent callers and a step forward does not refill allowances;
//! billing months still follow the wall clock. A real SQLite store in a
//! temporary directory holds the key.

mod common;

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use mds_domain::KeyPrefix;
use mds_limits::{Ask, Charge, Limiter, Limits, ManualClock, Meter, Policy};
use mds_store::sqlite::SqliteStore;

fn t0() -> DateTime<Utc> {
    "2026-11-15T12:00:00Z".parse().unwrap()
}

async fn store_with_key(dir: &tempfile::TempDir) -> (SqliteStore, KeyPrefix) {
    common::store_with_key(dir, "mds_live_c01", 7, t0()).await
}

const LIMITS: Limits = Limits { rate_limit_per_minute: 60, monthly_quota: 1_000_000 };

/// A counted request of `key` within [`LIMITS`].
fn ask(key: &KeyPrefix) -> Ask<'_> {
    Ask { key, limits: LIMITS, charge: Charge::Counted("/v1/companies") }
}

/// A limiter on manual clocks at [`t0`], its store with one key.
async fn setup(dir: &tempfile::TempDir) -> (SqliteStore, KeyPrefix, Arc<ManualClock>, Limiter) {
    let (store, key) = store_with_key(dir).await;
    let clock = Arc::new(ManualClock::new(t0()));
    let limiter = Limiter::new(Arc::new(Meter::new()), clock.clone());
    (store, key, clock, limiter)
}

#[tokio::test]
async fn a_step_back_of_the_wall_clock_refuses_no_one() {
    let dir = tempfile::tempdir().unwrap();
    let (store, key, clock, limiter) = setup(&dir).await;
    for _ in 0..5 {
        assert!(limiter.admit(&store, ask(&key)).await.unwrap().admitted());
    }
    clock.step(t0() - Duration::hours(1));
    clock.advance(Duration::seconds(1));
    let d = limiter.admit(&store, ask(&key)).await.unwrap();
    assert!(d.admitted(), "refused after a step back: retry after {} s", d.retry_after_secs);
    assert!(d.minute.remaining >= 54, "the minute stands as it did: {}", d.minute.remaining);
}

#[tokio::test]
async fn a_step_forward_of_the_wall_clock_refills_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (store, key, clock, limiter) = setup(&dir).await;
    while limiter.admit(&store, ask(&key)).await.unwrap().admitted() {}
    clock.step(t0() + Duration::hours(1));
    let d = limiter.admit(&store, ask(&key)).await.unwrap();
    assert_eq!(d.violated, vec![Policy::Minute], "the allowance did not refill by a step");
    assert!(d.retry_after_secs <= 1, "{}", d.retry_after_secs);
    clock.advance(Duration::seconds(1));
    assert!(limiter.admit(&store, ask(&key)).await.unwrap().admitted(), "time passing refills it");
}
