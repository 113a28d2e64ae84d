//! The meter's daily ledger against a real SQLite store: settled requests
//! reach the store by day, route and outcome, and a usage read taken while
//! a flush is landing sees every count exactly once.

mod common;

use common::Answering;

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, NaiveDate, Utc};
use mds_domain::KeyPrefix;
use mds_domain::daily::DailyUsage;
use mds_domain::usage::BillingMonth;
use mds_limits::{Ask, Charge, Limiter, Limits, ManualClock, Meter, Outcome};
use mds_store::prelude::*;
use mds_store::sqlite::SqliteStore;

fn t0() -> DateTime<Utc> {
    "2026-11-15T23:59:59Z".parse().unwrap()
}

fn day(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

async fn store_with_key(dir: &tempfile::TempDir) -> (SqliteStore, KeyPrefix) {
    common::store_with_key(dir, "mds_live_l01", 9, t0()).await
}

const LIMITS: Limits = Limits { rate_limit_per_minute: 1_000, monthly_quota: 1_000_000 };

#[tokio::test]
async fn requests_reach_the_ledger_by_day_route_and_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let (store, key) = store_with_key(&dir).await;
    let clock = Arc::new(ManualClock::new(t0()));
    let limiter = Limiter::new(Arc::new(Meter::new()), clock.clone());
    let admit = async |route, outcome| {
        let d = limiter.admit(&store, Ask { key: &key, limits: LIMITS, charge: Charge::Counted(route) }).await.unwrap();
        d.hold.expect("a counted request has a hold").settle(outcome);
    };
    admit("/v1/companies", Outcome::Counted).await;
    admit("/v1/companies", Outcome::NotModified).await;
    admit("/v1/news/{slug}", Outcome::Counted).await;
    admit("/v1/news/{slug}", Outcome::Released).await;
    // A free request has no hold and records nothing.
    assert!(
        limiter.admit(&store, Ask { key: &key, limits: LIMITS, charge: Charge::Free }).await.unwrap().hold.is_none()
    );
    // Across midnight (UTC): the next day's entries.
    clock.advance(chrono::Duration::seconds(2));
    admit("/v1/companies", Outcome::Counted).await;
    // Admitted before midnight, answered after: the day of admission.
    clock.set(t0());
    let late = limiter
        .admit(&store, Ask { key: &key, limits: LIMITS, charge: Charge::Counted("/v1/companies") })
        .await
        .unwrap()
        .hold
        .unwrap();
    clock.advance(chrono::Duration::seconds(5));
    late.settle(Outcome::Counted);
    // Dropped unsettled (the client went away): counted.
    drop(
        limiter
            .admit(&store, Ask { key: &key, limits: LIMITS, charge: Charge::Counted("/v1/news/{slug}") })
            .await
            .unwrap(),
    );

    assert_eq!(limiter.meter().flush(&store).await.unwrap(), 5);
    let entry = |d: &str, route: &str, requests, not_modified| DailyUsage {
        day: day(d),
        route: route.to_owned(),
        requests,
        not_modified,
    };
    assert_eq!(
        store.usage_days(&key, day("2026-11-01"), day("2026-11-30")).await.unwrap(),
        vec![
            entry("2026-11-15", "/v1/companies", 2, 1),
            entry("2026-11-15", "/v1/news/{slug}", 1, 0),
            entry("2026-11-16", "/v1/companies", 1, 0),
            entry("2026-11-16", "/v1/news/{slug}", 1, 0),
        ]
    );
    let nov = BillingMonth::of(t0());
    assert_eq!(store.usage(&key, nov, nov).await.unwrap(), vec![(nov, 5)]);
    assert!(limiter.meter().is_drained());
}

/// A read that comes while a flush's batch is in the store but not yet out
/// of the outbox waits for the flush to finish: it counts the batch once,
/// not twice (store and outbox) or not at all.
#[tokio::test]
async fn a_read_during_a_flush_counts_each_request_once() {
    let dir = tempfile::tempdir().unwrap();
    let (store, key) = store_with_key(&dir).await;
    let store = Arc::new(Answering::late(store, Duration::from_millis(400)));
    let meter = Arc::new(Meter::new());
    let limiter = Limiter::new(meter.clone(), Arc::new(ManualClock::new(t0())));
    for _ in 0..5 {
        let d = limiter
            .admit(&*store, Ask { key: &key, limits: LIMITS, charge: Charge::Counted("/v1/companies") })
            .await
            .unwrap();
        d.hold.unwrap().settle(Outcome::Counted);
    }
    let flushing = {
        let (meter, store) = (meter.clone(), store.clone());
        tokio::spawn(async move { meter.flush(&*store).await })
    };
    // The batch is committed at once; the flush returns 400 ms later.
    tokio::time::sleep(Duration::from_millis(150)).await;
    let nov = (day("2026-11-01"), day("2026-11-30"));
    let (stored, unflushed) = meter.read_with_unflushed(&key, store.usage_days(&key, nov.0, nov.1)).await;
    let total: u64 = stored.unwrap().iter().chain(&unflushed).map(|e| e.requests).sum();
    assert_eq!(total, 5, "each request counted once");
    assert_eq!(flushing.await.unwrap().unwrap(), 5);
}
