//! The SQLite backend: the whole storage test suite (each function on a fresh
//! database file of its own), then what is particular to SQLite: several
//! processes on one file, locks, corrupt rows, URLs.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::Utc;
use mds_domain::{AccountName, Company, Environment, KeyHash, KeyPrefix, Tier, TierName};
use mds_store::prelude::*;
use mds_store::sqlite::{BUSY_TIMEOUT, INDEX_REBUILD_MIN_ROWS, SqliteStore};
use mds_store::{DatabaseUrl, KeyRecord, StoreError, StoreResult, UpsertSummary};
use mds_testkit::fixtures::company;
use mds_testkit::store::snapshot::KINDS;
use sqlx::{Connection, SqliteConnection};
use tempfile::TempDir;

fn url_in(dir: &Path) -> DatabaseUrl {
    DatabaseUrl::new(dir.join("mds.db").to_str().expect("UTF-8 temp path"))
}

/// A fresh, empty, not migrated store on a file in a new temporary directory.
async fn fresh() -> (SqliteStore, TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SqliteStore::connect(&url_in(dir.path())).await.expect("connect");
    (store, dir)
}

/// A migrated store and a raw connection to the same file, for poking at it.
async fn migrated_with_raw() -> (SqliteStore, SqliteConnection, TempDir) {
    let (store, dir) = fresh().await;
    store.migrate().await.expect("migrate");
    let raw = raw_of(&dir).await;
    (store, raw, dir)
}

/// A raw connection to the store's file, for poking at it.
async fn raw_of(dir: &TempDir) -> SqliteConnection {
    SqliteConnection::connect(url_in(dir.path()).expose()).await.expect("raw connection")
}

/// Another store on the same database.
async fn open_again(dir: &TempDir) -> SqliteStore {
    SqliteStore::connect(&url_in(dir.path())).await.expect("connect")
}

mds_testkit::store_test_suite!(fresh, raw = raw_of, open = open_again);

/// [`mds_testkit::store::actions::writes_are_dated_by_the_stores_clock`],
/// on a store given a clock that stands in 2001.
#[tokio::test]
async fn writes_are_dated_by_the_stores_clock() {
    let (store, _dir) = fresh().await;
    let clock = std::sync::Arc::new(mds_domain::clock::ManualClock::new("2001-02-03T04:05:06Z".parse().unwrap()));
    let store = store.with_clock(clock.clone());
    mds_testkit::store::actions::writes_are_dated_by_the_stores_clock(&store, &clock).await;
}

#[tokio::test]
async fn concurrent_and_repeated_migrations_are_harmless() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = SqliteStore::connect(&url_in(dir.path())).await.expect("connect a");
    let b = SqliteStore::connect(&url_in(dir.path())).await.expect("connect b");
    let (ra, rb) = tokio::join!(a.migrate(), b.migrate());
    ra.expect("migrate a");
    rb.expect("migrate b");
    a.migrate().await.expect("migrate a again");
    assert_eq!(a.tiers().await.unwrap().len(), Tier::defaults().len());
    assert_eq!(a.cursor_secret().await.unwrap(), b.cursor_secret().await.unwrap());

    let mut raw = SqliteConnection::connect(url_in(dir.path()).expose()).await.unwrap();
    let versions: Vec<i64> =
        sqlx::query_scalar("SELECT version FROM schema_migrations").fetch_all(&mut raw).await.unwrap();
    assert_eq!(versions, vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
}

#[tokio::test]
async fn the_file_is_in_wal_mode() {
    let (_store, mut raw, _dir) = migrated_with_raw().await;
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode").fetch_one(&mut raw).await.unwrap();
    assert_eq!(mode, "wal");
}

#[tokio::test]
async fn a_write_lock_held_elsewhere_makes_writes_unavailable_not_reads() {
    let (store, mut raw, _dir) = migrated_with_raw().await;
    sqlx::query("BEGIN IMMEDIATE").execute(&mut raw).await.unwrap();

    // WAL: readers are not blocked by another process's writer, and neither
    // is the migration of a store that is up to date (every command runs it).
    let started = Instant::now();
    assert_eq!(store.tiers().await.unwrap().len(), 4);
    store.migrate().await.expect("migrate while another process writes");
    assert!(started.elapsed() < Duration::from_secs(1), "reads waited {:?}", started.elapsed());

    let started = Instant::now();
    let err = store.create_account(&AccountName::parse("acme").unwrap(), Utc::now()).await.expect_err("locked");
    assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");
    assert!(started.elapsed() >= BUSY_TIMEOUT - Duration::from_millis(500), "gave up after {:?}", started.elapsed());

    sqlx::query("ROLLBACK").execute(&mut raw).await.unwrap();
    store.create_account(&AccountName::parse("acme").unwrap(), Utc::now()).await.expect("after the lock is gone");
}

#[tokio::test]
async fn a_file_that_cannot_be_opened_is_unavailable() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = url_in(&dir.path().join("no-such-directory"));
    match SqliteStore::connect(&url).await {
        Err(StoreError::Unavailable(_)) => {}
        other => panic!("expected Unavailable, got {other:?}"),
    }
}

#[tokio::test]
async fn a_bad_url_is_invalid() {
    let url = DatabaseUrl::new("sqlite://x.db?mode=sideways");
    match SqliteStore::connect(&url).await {
        Err(StoreError::Invalid(m)) => assert!(!m.contains('\n'), "{m}"),
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[tokio::test]
async fn an_in_memory_store_keeps_its_data() {
    let store = SqliteStore::connect(&DatabaseUrl::new("sqlite::memory:")).await.expect("connect");
    store.migrate().await.expect("migrate");
    store.create_account(&AccountName::parse("acme").unwrap(), Utc::now()).await.unwrap();
    assert_eq!(store.accounts().await.unwrap().len(), 1);

    // Another in-memory store is another database.
    let other = SqliteStore::connect(&DatabaseUrl::new("sqlite::memory:")).await.expect("connect");
    other.migrate().await.expect("migrate");
    assert!(other.accounts().await.unwrap().is_empty());
}

#[tokio::test]
async fn open_picks_sqlite_for_bare_paths() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = mds_store::open(&url_in(dir.path())).await.expect("open");
    store.migrate().await.expect("migrate");
    store.ping().await.expect("ping");
    assert!(dir.path().join("mds.db").exists());
}

#[tokio::test]
async fn companies_sorted_walk_the_index_without_sorting() {
    let (_store, mut raw, _dir) = migrated_with_raw().await;
    // The statement of `companies` and `companies_sorted`.
    let plan: Vec<(i64, i64, i64, String)> = sqlx::query_as(
        "EXPLAIN QUERY PLAN SELECT isin, ticker, name, industry, sector, is_bse, is_nse, market_cap_band, logo_url \
         FROM companies ORDER BY ticker, isin",
    )
    .fetch_all(&mut raw)
    .await
    .unwrap();
    let details: Vec<&str> = plan.iter().map(|(_, _, _, d)| d.as_str()).collect();
    assert!(details.iter().any(|d| d.contains("USING INDEX companies_ticker_isin")), "{details:?}");
    assert!(!details.iter().any(|d| d.contains("TEMP B-TREE")), "{details:?}");
}

#[tokio::test]
async fn a_snapshot_with_a_missing_chunk_is_an_error() {
    for kind in KINDS {
        let (store, mut raw, _dir) = migrated_with_raw().await;
        kind.save(&store, 7, &vec![1u8; 9 << 20]).await.unwrap();
        let chunks: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {} WHERE generation = 7", kind.table()))
            .fetch_one(&mut raw)
            .await
            .unwrap();
        assert_eq!(chunks, 3, "4 MiB chunks");
        mds_testkit::store::snapshot::expect_missing_chunk_error(&store, &mut raw, kind, 7).await;
    }
}

/// A key revoked by another process while an upsert is mid-way (its chunks,
/// an import's file, still coming): the upsert stages its rows outside the
/// write lock, so the revocation does not wait for it, and sees none of its
/// rows yet; then the upsert applies every row, counted as usual. (Before
/// staging, the upsert held the lock from its first chunk on, and the
/// revocation failed as unavailable after `BUSY_TIMEOUT`.)
#[tokio::test]
async fn a_key_is_revoked_while_an_upsert_is_mid_way() {
    let (store, dir) = fresh().await;
    store.migrate().await.expect("migrate");
    let acme = AccountName::parse("acme").unwrap();
    store.create_account(&acme, Utc::now()).await.unwrap();
    let key = KeyRecord {
        prefix: KeyPrefix::parse("mds_live_k01").unwrap(),
        hash: KeyHash([7; 32]),
        account: acme,
        tier: TierName::parse("pro").unwrap(),
        environment: Environment::Live,
        created_at: Utc::now(),
        revoked_at: None,
        expires_at: None,
    };
    store.create_key(&key).await.unwrap();
    let auth_before = store.generations().await.unwrap().auth;

    // What another process did between the first chunk and the second: its
    // revocation, the companies it saw, how long it waited.
    type MidWay = (StoreResult<KeyRecord>, u64, Duration);
    let mid_way: Arc<Mutex<Option<MidWay>>> = Arc::default();
    let (seen, path, prefix) = (mid_way.clone(), dir.path().to_owned(), key.prefix.clone());
    let mut given = 0u32;
    let mut chunks = std::iter::from_fn(move || {
        given += 1;
        let rows = |from: u32| (from..from + 3000).map(|i| company(i, "OK")).collect::<Vec<_>>();
        match given {
            1 => Some(rows(0)),
            2 => {
                // Another store on the file, on a thread and runtime of its
                // own, as another process would be.
                let (path, prefix) = (path.clone(), prefix.clone());
                let done = std::thread::spawn(move || {
                    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                    rt.block_on(async {
                        let other = SqliteStore::connect(&url_in(&path)).await.expect("connect");
                        let started = Instant::now();
                        let revoked = other.revoke_key(&prefix, Utc::now()).await;
                        let waited = started.elapsed();
                        (revoked, other.company_count().await.unwrap(), waited)
                    })
                });
                *seen.lock().unwrap() = Some(done.join().unwrap());
                Some(rows(3000))
            }
            _ => None,
        }
    });
    let summary = store.upsert_company_chunks(&mut chunks).await.expect("upsert");
    let (revoked, companies_seen, waited) = mid_way.lock().unwrap().take().expect("the second chunk was asked for");
    let revoked = revoked.unwrap_or_else(|e| panic!("revoked mid-way after {waited:?}: {e:?}"));
    assert!(revoked.revoked_at.is_some());
    assert_eq!(companies_seen, 0, "no row of the upsert is visible before it ends");
    assert_eq!(summary, UpsertSummary { inserted: 6000, updated: 0, unchanged: 0 });
    assert_eq!(store.company_count().await.unwrap(), 6000);
    let g = store.generations().await.unwrap();
    assert_eq!(g.auth, auth_before + 1, "the revocation stands");
    assert!(store.keys(None).await.unwrap()[0].revoked_at.is_some());
}

/// An upsert that cannot get the write lock to apply its staged rows fails
/// as unavailable after `BUSY_TIMEOUT`, like any write, and leaves the store
/// as it was; the next upsert (on the same pool) applies normally.
#[tokio::test]
async fn an_upsert_kept_from_the_write_lock_writes_nothing() {
    let (store, mut raw, _dir) = migrated_with_raw().await;
    let g = store.generations().await.unwrap();
    let rows: Vec<Company> = (0..500).map(|i| company(i, "OK")).collect();
    sqlx::query("BEGIN IMMEDIATE").execute(&mut raw).await.unwrap();
    let err = store.upsert_companies(&rows).await.expect_err("locked");
    assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");
    sqlx::query("ROLLBACK").execute(&mut raw).await.unwrap();
    assert_eq!(store.company_count().await.unwrap(), 0);
    assert_eq!(store.generations().await.unwrap(), g);
    assert_eq!(store.upsert_companies(&rows).await.unwrap(), UpsertSummary { inserted: 500, updated: 0, unchanged: 0 });
    assert_eq!(store.companies().await.unwrap(), rows);
}

/// An in-memory store (one connection, which stages and applies) upserts
/// like a file.
#[tokio::test]
async fn an_in_memory_store_upserts_companies() {
    let store = SqliteStore::connect(&DatabaseUrl::new("sqlite::memory:")).await.expect("connect");
    store.migrate().await.expect("migrate");
    let rows: Vec<Company> = (0..250).map(|i| company(i, "OK")).collect();
    let mut chunks = rows.chunks(100).map(<[Company]>::to_vec).collect::<Vec<_>>().into_iter();
    let s = store.upsert_company_chunks(&mut chunks).await.unwrap();
    assert_eq!(s, UpsertSummary { inserted: 250, updated: 0, unchanged: 0 });
    let again = store.upsert_companies(&rows).await.unwrap();
    assert_eq!(again, UpsertSummary { inserted: 0, updated: 0, unchanged: 250 });
    assert_eq!(store.companies().await.unwrap(), rows);
}

/// The indexes of `companies` as stored: `(name, sql)`, by name.
async fn company_indexes(raw: &mut SqliteConnection) -> Vec<(String, Option<String>)> {
    sqlx::query_as("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'companies' ORDER BY name")
        .fetch_all(raw)
        .await
        .unwrap()
}

/// SQLite's count of schema changes.
async fn schema_version(raw: &mut SqliteConnection) -> i64 {
    sqlx::query_scalar("PRAGMA schema_version").fetch_one(raw).await.unwrap()
}

/// An upsert of many rows (`INDEX_REBUILD_MIN_ROWS` and more, at least a
/// quarter of the table) drops the table's other indexes and builds them again after
/// writing (a change of schema): they come back exactly as they were and
/// serve as before. An upsert that fails after the drop leaves them as they
/// were too; one that writes nothing touches no index.
#[tokio::test]
async fn a_large_upsert_builds_the_indexes_again_as_they_were() {
    let (store, mut raw, _dir) = migrated_with_raw().await;
    let indexes = company_indexes(&mut raw).await;
    assert!(indexes.iter().any(|(name, _)| name == "companies_ticker_isin"), "{indexes:?}");
    let n = u32::try_from(INDEX_REBUILD_MIN_ROWS).unwrap();
    // Tickers in the reverse order of the ISINs, so the index is not the
    // table's order.
    let make = |i: u32, v: &str| company(i, &format!("T{:06}{v}", n - i));
    let rows: Vec<Company> = (0..n).map(|i| make(i, "A")).collect();
    let by_ticker = |rows: &[Company]| {
        let mut sorted = rows.to_vec();
        sorted.sort_by(|a, b| (a.ticker.as_str(), a.isin.as_str()).cmp(&(b.ticker.as_str(), b.isin.as_str())));
        sorted
    };

    sqlx::query(
        "CREATE TRIGGER boom BEFORE INSERT ON companies WHEN NEW.ticker = 'BOOM' BEGIN SELECT RAISE(ABORT, 'boom'); END",
    )
    .execute(&mut raw)
    .await
    .unwrap();
    let mut failing = rows.clone();
    failing.push(company(n, "BOOM"));
    let version = schema_version(&mut raw).await;
    store.upsert_companies(&failing).await.expect_err("the trigger aborts the last row");
    assert_eq!(store.company_count().await.unwrap(), 0);
    assert_eq!(company_indexes(&mut raw).await, indexes, "dropped and rolled back");
    assert_eq!(schema_version(&mut raw).await, version);
    sqlx::query("DROP TRIGGER boom").execute(&mut raw).await.unwrap();

    let version = schema_version(&mut raw).await;
    let all = UpsertSummary { inserted: u64::from(n), updated: 0, unchanged: 0 };
    assert_eq!(store.upsert_companies(&rows).await.unwrap(), all);
    assert!(schema_version(&mut raw).await > version, "the indexes were built again");
    assert_eq!(company_indexes(&mut raw).await, indexes);
    assert_eq!(store.companies().await.unwrap(), by_ticker(&rows));

    // Every ticker changed: written over a full table, rebuilt again.
    let changed: Vec<Company> = (0..n).map(|i| make(i, "B")).collect();
    let all = UpsertSummary { inserted: 0, updated: u64::from(n), unchanged: 0 };
    assert_eq!(store.upsert_companies(&changed).await.unwrap(), all);
    assert_eq!(company_indexes(&mut raw).await, indexes);
    assert_eq!(store.companies().await.unwrap(), by_ticker(&changed));
    let version = schema_version(&mut raw).await;
    let all = UpsertSummary { inserted: 0, updated: 0, unchanged: u64::from(n) };
    assert_eq!(store.upsert_companies(&changed).await.unwrap(), all);
    assert_eq!(schema_version(&mut raw).await, version, "nothing to write: no index touched");
}
