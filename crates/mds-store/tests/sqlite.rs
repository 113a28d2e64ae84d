//! The SQLite backend: the whole storage test suite (each function on a fresh
//! database file of its own), then what is particular to SQLite: several
//! processes on one file, locks, corrupt rows, URLs.

use std::path::Path;
use std::time::{Duration, Instant};

use chrono::Utc;
use mds_domain::{AccountName, Tier};
use mds_store::prelude::*;
use mds_store::sqlite::{BUSY_TIMEOUT, SqliteStore};
use mds_store::{DatabaseUrl, StoreError};
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
    assert_eq!(versions, vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
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
async fn a_catalog_snapshot_with_a_missing_chunk_is_an_error() {
    let (store, mut raw, _dir) = migrated_with_raw().await;
    store.save_catalog_snapshot(7, &vec![1u8; 9 << 20]).await.unwrap();
    let chunks: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM catalog_snapshot_chunks WHERE generation = 7")
        .fetch_one(&mut raw)
        .await
        .unwrap();
    assert_eq!(chunks, 3, "4 MiB chunks");
    sqlx::query("DELETE FROM catalog_snapshot_chunks WHERE seq = 1").execute(&mut raw).await.unwrap();
    let err = store.catalog_snapshot(7).await.expect_err("a chunk is missing");
    assert!(matches!(err, StoreError::Database(_)), "{err:?}");
    assert!(err.to_string().contains("chunk 1 is missing"), "{err}");
}
