//! The PostgreSQL backend: the whole storage test suite (each function on a
//! database of its own), then what is particular to PostgreSQL: several nodes
//! on one database, concurrent migrations, byte order under any collation,
//! an unreachable server.
//!
//! The tests need a server: `MDS_TEST_POSTGRES_URL` names a database on it
//! that the tests connect to as an administrator (CI sets
//! `postgres://postgres@127.0.0.1:5432/test`). Each test creates a database
//! `mds_test_<random>` there and drops it when it ends. Without the variable,
//! each test that needs a server says it is skipped and passes.

use std::str::FromStr;
use std::time::{Duration, Instant};

use chrono::Utc;
use mds_domain::{AccountName, Company, KeyPrefix, Tier};
use mds_store::postgres::{ACQUIRE_TIMEOUT, PgStore};
use mds_store::prelude::*;
use mds_store::{DatabaseUrl, StoreError, UsageBatch, UsageDelta};
use mds_testkit::fixtures::company;
use mds_testkit::store::snapshot::KINDS;
use sqlx::PgConnection;
use sqlx::postgres::PgConnectOptions;

use mds_testkit::pg::{TestDb, admin_url, with_database};

/// A fresh, empty, not migrated store on a database of its own, or `None`
/// when no server is configured.
async fn fresh() -> Option<(PgStore, TestDb)> {
    let db = TestDb::create(&admin_url()?).await;
    Some((db.store().await, db))
}

/// A migrated store and a raw connection to its database, for poking at it.
async fn migrated_with_raw() -> Option<(PgStore, PgConnection, TestDb)> {
    let (store, db) = fresh().await?;
    store.migrate().await.expect("migrate");
    let raw = db.raw().await;
    Some((store, raw, db))
}

// ---------------------------------------------------------------------------
// The storage test suite.

// One test per function of the storage test suite, each on a database of its
// own; `fresh` returns `None` (skipped) without a server.
/// Two stores (two nodes) on a new database, migrated through the first, or
/// `None` when no server is configured.
async fn two_nodes() -> Option<(PgStore, PgStore, TestDb)> {
    let db = TestDb::create(&admin_url()?).await;
    let (a, b) = (db.store().await, db.store().await);
    a.migrate().await.unwrap();
    Some((a, b, db))
}

/// A raw connection to the test database, for poking at it.
/// [`two_nodes`], with account `acme` and one key of it.
async fn two_nodes_with_a_key() -> Option<(PgStore, PgStore, KeyPrefix, TestDb)> {
    let (a, b, db) = two_nodes().await?;
    let acme = AccountName::parse("acme").unwrap();
    a.create_account(&acme, Utc::now()).await.unwrap();
    let key = create_key(&a, &acme).await;
    Some((a, b, key, db))
}

async fn raw_of(db: &TestDb) -> PgConnection {
    db.raw().await
}

/// Another store on the same database.
async fn open_again(db: &TestDb) -> PgStore {
    db.store().await
}

mds_testkit::store_test_suite!(fresh, raw = raw_of, open = open_again);

/// [`mds_testkit::store::actions::writes_are_dated_by_the_stores_clock`],
/// on a store given a clock that stands in 2001.
#[tokio::test]
async fn writes_are_dated_by_the_stores_clock() {
    let Some((store, _db)) = fresh().await else { return };
    let clock = std::sync::Arc::new(mds_domain::clock::ManualClock::new("2001-02-03T04:05:06Z".parse().unwrap()));
    let store = store.with_clock(clock.clone());
    mds_testkit::store::actions::writes_are_dated_by_the_stores_clock(&store, &clock).await;
}

// ---------------------------------------------------------------------------
// Without a server.

#[test]
fn database_names_replace_the_admin_one() {
    assert_eq!(with_database("postgres://postgres@127.0.0.1:5432/test", "x"), "postgres://postgres@127.0.0.1:5432/x");
    assert_eq!(with_database("postgres://u:p@h/db?sslmode=disable", "x"), "postgres://u:p@h/x?sslmode=disable");
    assert_eq!(with_database("postgresql://h", "x"), "postgresql://h/x");
}

#[tokio::test]
async fn an_unreachable_server_is_unavailable_within_the_acquire_timeout() {
    let (closed, closed_too) =
        (DatabaseUrl::new("postgres://postgres@127.0.0.1:1/test"), DatabaseUrl::new("postgresql://127.0.0.1:1/test"));
    let started = Instant::now();
    // Directly, and through `open`, which picks PostgreSQL for postgres:// URLs.
    let (direct, opened) = tokio::join!(PgStore::connect(&closed), mds_store::open(&closed_too));
    match direct {
        Err(StoreError::Unavailable(_)) => {}
        other => panic!("expected Unavailable, got {other:?}"),
    }
    assert!(matches!(opened, Err(StoreError::Unavailable(_))));
    assert!(started.elapsed() < ACQUIRE_TIMEOUT + Duration::from_secs(2), "gave up after {:?}", started.elapsed());
}

#[tokio::test]
async fn a_bad_url_is_invalid_and_keeps_its_password() {
    let url = DatabaseUrl::new("postgres://mds:s3cret@db.internal:notaport/mds");
    match PgStore::connect(&url).await {
        Err(StoreError::Invalid(m)) => {
            assert!(!m.contains("s3cret"), "{m}");
            assert!(!m.contains('\n'), "{m}");
        }
        other => panic!("expected Invalid, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------
// With a server.

#[tokio::test]
async fn concurrent_migrations_apply_everything_once() {
    let Some(admin) = admin_url() else { return };
    let db = TestDb::create(&admin).await;
    let mut stores = Vec::new();
    for _ in 0..4 {
        stores.push(db.store().await);
    }
    let tasks: Vec<_> = stores.iter().cloned().map(|s| tokio::spawn(async move { s.migrate().await })).collect();
    for t in tasks {
        t.await.expect("task").expect("migrate");
    }
    stores[0].migrate().await.expect("migrate again");

    let secret = stores[0].cursor_secret().await.unwrap();
    for s in &stores {
        assert_eq!(s.cursor_secret().await.unwrap(), secret);
        assert_eq!(s.tiers().await.unwrap().len(), Tier::defaults().len());
    }
    let g = stores[0].generations().await.unwrap();
    assert_eq!((g.companies, g.news, g.auth), (0, 0, 1), "one seed, one bump");

    let mut raw = db.raw().await;
    let versions: Vec<i64> =
        sqlx::query_scalar("SELECT version FROM schema_migrations ORDER BY version").fetch_all(&mut raw).await.unwrap();
    assert_eq!(versions, vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    let history: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM tier_history").fetch_one(&mut raw).await.unwrap();
    assert_eq!(history, Tier::defaults().len() as i64);
}

#[tokio::test]
async fn the_schema_has_native_types() {
    let Some((_store, mut raw, _db)) = migrated_with_raw().await else { return };
    let columns = async |raw: &mut PgConnection, filter: &str| -> Vec<String> {
        let sql = format!(
            "SELECT table_name::text || '.' || column_name::text || ' ' || data_type::text \
             FROM information_schema.columns WHERE table_schema = 'public' AND {filter} ORDER BY 1"
        );
        sqlx::query_scalar(&sql).fetch_all(raw).await.unwrap()
    };
    assert_eq!(
        columns(&mut raw, "is_identity = 'YES'").await,
        [
            "accounts.id bigint",
            "admin_tokens.id bigint",
            "api_keys.id bigint",
            "audit_log.id bigint",
            "entitlement_history.id bigint",
            "events.id bigint",
            "tier_history.id bigint",
            "usage_routes.id bigint",
            "webhook_attempts.id bigint"
        ]
    );
    assert_eq!(
        columns(&mut raw, "data_type = 'boolean'").await,
        [
            "accounts.entitled boolean",
            "companies.is_bse boolean",
            "companies.is_nse boolean",
            "entitlement_history.entitled boolean"
        ]
    );
    // Instants are RFC 3339 text, as on SQLite; snapshots are bytes.
    assert_eq!(
        columns(&mut raw, "data_type NOT IN ('text', 'bigint', 'boolean')").await,
        ["catalog_snapshot_chunks.bytes bytea", "news_snapshot_chunks.bytes bytea"]
    );
    let c_collated = columns(&mut raw, "data_type = 'text' AND collation_name = 'C'").await;
    assert_eq!(c_collated, columns(&mut raw, "data_type = 'text'").await, "every text column is COLLATE \"C\"");
}

#[tokio::test]
async fn listings_are_in_byte_order_whatever_the_database_collation() {
    let Some((store, mut raw, _db)) = migrated_with_raw().await else { return };
    let collation: String = sqlx::query_scalar(
        "SELECT COALESCE(daticulocale, datcollate) FROM pg_database WHERE datname = current_database()",
    )
    .fetch_one(&mut raw)
    .await
    .unwrap_or_else(|_| "unknown".into());
    eprintln!("database collation: {collation}");

    let tickers = ["A_B", "AB", "A-B", "A1", "A&B", "A.B"];
    let rows: Vec<Company> = tickers.iter().enumerate().map(|(i, t)| company(i as u32, t)).collect();
    store.upsert_companies(&rows).await.unwrap();
    let got: Vec<String> = store.companies().await.unwrap().iter().map(|c| c.ticker.as_str().to_owned()).collect();
    let mut want: Vec<String> = tickers.iter().map(|t| (*t).to_owned()).collect();
    want.sort();
    assert_eq!(got, want);

    for name in ["ab", "a_b", "a0", "a-b"] {
        store.create_account(&AccountName::parse(name).unwrap(), Utc::now()).await.unwrap();
    }
    let got: Vec<String> = store.accounts().await.unwrap().iter().map(|a| a.name.as_str().to_owned()).collect();
    assert_eq!(got, ["a-b", "a0", "a_b", "ab"]);
}

#[tokio::test]
async fn companies_sorted_walk_the_index_without_sorting() {
    let Some((_store, mut raw, _db)) = migrated_with_raw().await else { return };
    // With sequential scans priced out, a plan without a Sort node shows the
    // index can serve the order (`COLLATE "C"` matches the index's columns);
    // with them, the planner is free to pick a scan and sort on a tiny table.
    sqlx::query("SET enable_seqscan = off").execute(&mut raw).await.unwrap();
    // The statement of `companies` and `companies_sorted`.
    let plan: Vec<String> = sqlx::query_scalar(
        "EXPLAIN SELECT isin, ticker, name, industry, sector, is_bse, is_nse, market_cap_band, logo_url \
         FROM companies ORDER BY ticker COLLATE \"C\", isin COLLATE \"C\"",
    )
    .fetch_all(&mut raw)
    .await
    .unwrap();
    assert!(plan.iter().any(|l| l.contains("companies_ticker_isin")), "{plan:?}");
    assert!(!plan.iter().any(|l| l.contains("Sort")), "{plan:?}");
}

#[tokio::test]
async fn snapshots_are_chunked_and_a_missing_chunk_is_an_error() {
    for kind in KINDS {
        let Some((store, mut raw, _db)) = migrated_with_raw().await else { return };
        kind.save(&store, 7, &vec![1u8; 9 << 20]).await.unwrap();
        let table = kind.table();
        let lengths: Vec<i32> =
            sqlx::query_scalar(&format!("SELECT octet_length(bytes) FROM {table} WHERE generation = 7 ORDER BY seq"))
                .fetch_all(&mut raw)
                .await
                .unwrap();
        assert_eq!(lengths, [4 << 20, 4 << 20, 1 << 20]);
        let storage: String = sqlx::query_scalar(&format!(
            "SELECT attstorage::text FROM pg_attribute WHERE attrelid = '{table}'::regclass AND attname = 'bytes'"
        ))
        .fetch_one(&mut raw)
        .await
        .unwrap();
        assert_eq!(storage, "e", "stored out of line, uncompressed");
        mds_testkit::store::snapshot::expect_missing_chunk_error(&store, &mut raw, kind, 7).await;
    }
}

#[tokio::test]
async fn two_nodes_saving_one_snapshot_keep_one_whole_copy() {
    let Some((a, db)) = fresh().await else { return };
    a.migrate().await.unwrap();
    let b = db.store().await;
    let (x, y) = (vec![1u8; 9 << 20], vec![2u8; 5 << 20]);
    for kind in KINDS {
        for _ in 0..3 {
            let (rx, ry) = tokio::join!(kind.save(&a, 3, &x), kind.save(&b, 3, &y));
            rx.expect("save on a");
            ry.expect("save on b");
            let kept = kind.load(&b, 3).await.unwrap().expect("a snapshot");
            assert!(kept == x || kept == y, "the kept snapshot mixes both copies");
        }
    }
}

#[tokio::test]
async fn text_with_a_nul_character_is_invalid() {
    let Some((store, _raw, _db)) = migrated_with_raw().await else { return };
    let mut c = company(1, "NUL");
    c.name = "before\0after".into();
    match store.upsert_companies(&[c]).await {
        Err(StoreError::Invalid(m)) => assert!(m.contains("NUL"), "{m}"),
        other => panic!("expected Invalid, got {other:?}"),
    }
    assert!(store.companies().await.unwrap().is_empty());
}

#[tokio::test]
async fn concurrent_upserts_of_the_same_rows_count_each_row_once() {
    let Some((a, b, _db)) = two_nodes().await else { return };
    let rows: Vec<Company> = (0..3_000).map(|i| company(i, "T")).collect();
    let reversed: Vec<Company> = rows.iter().rev().cloned().collect();
    let (ra, rb) = tokio::join!(a.upsert_companies(&rows), b.upsert_companies(&reversed));
    let (ra, rb) = (ra.expect("upsert a"), rb.expect("upsert b"));
    assert_eq!(ra.inserted + rb.inserted, 3_000, "{ra:?} {rb:?}");
    assert_eq!(ra.unchanged + rb.unchanged, 3_000, "the same rows again change nothing: {ra:?} {rb:?}");
    assert_eq!(ra.updated + rb.updated, 0, "{ra:?} {rb:?}");
    assert_eq!(a.companies().await.unwrap().len(), 3_000);
}

/// A key's count read with its `usage` generation holds exactly the
/// batches applied as of that generation, while two nodes apply batches at
/// once: what a Redis counter is seeded from, each node then adding what
/// its batches after that generation hold.
#[tokio::test]
async fn a_count_as_of_a_generation_holds_exactly_the_batches_up_to_it() {
    let Some((a, b, key, _db)) = two_nodes_with_a_key().await else { return };
    let nov = month(2026, 11);
    let write = |store: &'static str, on: &PgStore| {
        let (on, key) = (on.clone(), key.clone());
        async move {
            let mut applied = Vec::new();
            for i in 1..=40u64 {
                let delta = UsageDelta::counted(key.clone(), nov.first_day(), "/v1/companies", i);
                let batch = UsageBatch { id: format!("{store}:{i}"), deltas: vec![delta] };
                let r = on.apply_usage_batch(&batch).await.unwrap();
                assert!(r.fresh);
                applied.push((r.generation, i));
            }
            applied
        }
    };
    let read = async {
        let mut reads = Vec::new();
        for _ in 0..80 {
            reads.push(a.usage_as_of(&key, nov).await.unwrap());
        }
        reads
    };
    let (from_a, from_b, reads) = tokio::join!(write("node-a", &a), write("node-b", &b), read);
    let all: Vec<(i64, u64)> = from_a.into_iter().chain(from_b).collect();
    let mut generations: Vec<i64> = all.iter().map(|(g, _)| *g).collect();
    generations.sort_unstable();
    generations.dedup();
    assert_eq!(generations.len(), 80, "every batch has a generation of its own");
    for (count, generation) in reads {
        let held: u64 = all.iter().filter(|(g, _)| *g <= generation).map(|(_, n)| n).sum();
        assert_eq!(count, held, "as of generation {generation}");
    }
    // A batch applied before is not counted again, and is told the
    // generation it was applied at.
    let again = UsageBatch {
        id: "node-a:1".into(),
        deltas: vec![UsageDelta::counted(key.clone(), nov.first_day(), "/v1/companies", 1)],
    };
    let r = b.apply_usage_batch(&again).await.unwrap();
    assert!(!r.fresh);
    assert_eq!(r.generation, all[0].0, "node-a:1 was applied first of node-a's");
    assert_eq!(a.usage_as_of(&key, nov).await.unwrap(), (2 * 820, *generations.last().unwrap()));
}

#[tokio::test]
async fn a_batch_applied_by_two_nodes_at_once_counts_once() {
    let Some((a, b, _db)) = two_nodes().await else { return };
    let acme = AccountName::parse("acme").unwrap();
    a.create_account(&acme, Utc::now()).await.unwrap();
    let mut deltas = Vec::new();
    for i in 0..50 {
        deltas.push(UsageDelta::counted(
            create_key(&a, &acme).await,
            month(2026, 11).first_day(),
            "/v1/companies",
            i + 1,
        ));
    }
    let one = UsageBatch { id: "node-a:1".into(), deltas: deltas.clone() };
    let (ra, rb) = tokio::join!(a.apply_usage(&one), b.apply_usage(&one));
    assert_ne!(ra.expect("apply a"), rb.expect("apply b"), "exactly one applies it");

    // Two different batches on the same rows, in opposite orders: no deadlock.
    let two = UsageBatch { id: "node-a:2".into(), deltas: deltas.clone() };
    let three = UsageBatch { id: "node-b:1".into(), deltas: deltas.iter().rev().cloned().collect() };
    let (ra, rb) = tokio::join!(a.apply_usage(&two), b.apply_usage(&three));
    assert!(ra.expect("apply two") && rb.expect("apply three"));
    // Two batches on the same rows bringing the same new route at once: it
    // is added once, and both count.
    let new_route = |d: &UsageDelta| UsageDelta { route: "/v1/new".into(), ..d.clone() };
    let four = UsageBatch { id: "node-a:3".into(), deltas: deltas.iter().map(new_route).collect() };
    let five = UsageBatch { id: "node-b:2".into(), deltas: deltas.iter().rev().map(new_route).collect() };
    let (ra, rb) = tokio::join!(a.apply_usage(&four), b.apply_usage(&five));
    assert!(ra.expect("apply four") && rb.expect("apply five"));
    let nov = month(2026, 11).first_day();
    for (i, d) in deltas.iter().enumerate() {
        let n = i as u64 + 1;
        let got = a.usage(&d.key, month(2026, 11), month(2026, 11)).await.unwrap();
        assert_eq!(got, vec![(month(2026, 11), 5 * n)]);
        let days = b.usage_days(&d.key, nov, nov).await.unwrap();
        let days: Vec<(&str, u64)> = days.iter().map(|e| (e.route.as_str(), e.requests)).collect();
        assert_eq!(days, [("/v1/companies", 3 * n), ("/v1/new", 2 * n)]);
    }
}

#[tokio::test]
async fn concurrent_revocations_keep_the_first_instant() {
    let Some((a, b, prefix, _db)) = two_nodes_with_a_key().await else { return };
    let g = a.generations().await.unwrap().auth;
    let t1 = Utc::now();
    let t2 = t1 + chrono::TimeDelta::seconds(1);
    let (ra, rb) = tokio::join!(a.revoke_key(&prefix, t1), b.revoke_key(&prefix, t2));
    let (ra, rb) = (ra.unwrap(), rb.unwrap());
    assert_eq!(ra.revoked_at, rb.revoked_at, "both return the one instant stored");
    assert_eq!(a.keys(None).await.unwrap()[0].revoked_at, ra.revoked_at);
    assert_eq!(a.generations().await.unwrap().auth, g + 1, "one revocation, one bump");
}

#[tokio::test]
async fn an_unmigrated_store_is_an_error_not_a_panic() {
    let Some((store, _db)) = fresh().await else { return };
    store.ping().await.expect("ping");
    // No tables yet: a database error, not a panic.
    assert!(matches!(store.generations().await, Err(StoreError::Database(_))));
}

#[tokio::test]
async fn a_missing_database_is_an_error_not_a_hang() {
    let Some(admin) = admin_url() else { return };
    let started = Instant::now();
    let url = DatabaseUrl::new(&with_database(&admin, "mds_test_no_such_database"));
    let err = PgStore::connect(&url).await.expect_err("no such database");
    assert!(matches!(err, StoreError::Database(_)), "{err:?}");
    assert!(started.elapsed() < ACQUIRE_TIMEOUT, "took {:?}", started.elapsed());
}

#[tokio::test]
async fn open_picks_postgres_for_postgres_urls() {
    let Some(admin) = admin_url() else { return };
    let db = TestDb::create(&admin).await;
    let store = mds_store::open(db.url()).await.expect("open");
    store.migrate().await.expect("migrate");
    store.ping().await.expect("ping");
    let options = PgConnectOptions::from_str(db.url().expose()).unwrap();
    assert_eq!(options.get_database(), Some(db.name()));
    assert_eq!(store.tiers().await.unwrap().len(), Tier::defaults().len());
}

// ---------------------------------------------------------------------------
// Helpers.

/// Stores a new live key of `account` on the evaluation tier. A prefix
/// already taken (three random characters: tests that make many keys meet
/// one now and then) is answered with another key, as `mds keys create` does.
async fn create_key(store: &PgStore, account: &AccountName) -> KeyPrefix {
    loop {
        let key = mds_domain::ApiKey::generate(mds_domain::Environment::Live);
        let created = store
            .create_key(&mds_store::KeyRecord {
                prefix: key.prefix(),
                hash: key.hash(),
                account: account.clone(),
                tier: mds_domain::TierName::evaluation(),
                environment: key.environment(),
                created_at: Utc::now(),
                revoked_at: None,
                expires_at: None,
            })
            .await;
        match created {
            Ok(_) => return key.prefix(),
            Err(mds_store::StoreError::Conflict(_)) => continue,
            Err(e) => panic!("create key: {e:?}"),
        }
    }
}

fn month(year: i32, month: u32) -> mds_domain::usage::BillingMonth {
    mds_domain::usage::BillingMonth { year, month }
}
