//! Contract section 16: migrations are expand-only, so a node one version
//! older keeps working on the newer schema. This build's code is the older
//! code here: the whole storage test suite runs on SQLite stores migrated,
//! then taken one version ahead by what an expand-only migration may do
//! (`mds_testkit::next_schema`: a column on every table, a new table), and
//! the schema reads as ahead and usable. A schema that says it contracted
//! past this build is refused.

use mds_store::prelude::*;
use mds_store::sqlite::SqliteStore;
use mds_store::{DatabaseUrl, StoreError};
use sqlx::{Connection, SqliteConnection};
use tempfile::TempDir;

fn url_in(dir: &TempDir) -> DatabaseUrl {
    DatabaseUrl::new(dir.path().join("mds.db").to_str().expect("UTF-8 temp path"))
}

/// A store migrated by this build, then one version ahead of it.
async fn ahead() -> (SqliteStore, TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SqliteStore::connect(&url_in(&dir)).await.expect("connect");
    store.migrate().await.expect("migrate");
    let mut raw = SqliteConnection::connect(url_in(&dir).expose()).await.expect("raw");
    mds_testkit::next_schema::add_expand_only_version(&mut raw).await;
    (store, dir)
}

/// [`ahead`], not seeded yet: what the suite's functions start from (each
/// migrates, and some check what that first migrate seeds).
async fn ahead_not_seeded() -> (SqliteStore, TempDir) {
    let (store, dir) = ahead().await;
    let mut raw = SqliteConnection::connect(url_in(&dir).expose()).await.expect("raw");
    mds_testkit::next_schema::unseed(&mut raw).await;
    (store, dir)
}

mds_testkit::store_test_suite!(ahead_not_seeded);

#[tokio::test]
async fn a_schema_one_expand_only_version_ahead_is_current_enough() {
    let (store, _dir) = ahead().await;
    let state = store.schema().await.unwrap();
    assert!(state.ahead() && state.missing.is_empty(), "{state:?}");
    state.current().expect("usable by this build");
    store.migrate().await.expect("migrate leaves it as it is");
    assert_eq!(store.schema().await.unwrap(), state);
}

#[tokio::test]
async fn a_schema_that_contracted_past_this_build_is_refused() {
    let (store, dir) = ahead().await;
    let mut raw = SqliteConnection::connect(url_in(&dir).expose()).await.unwrap();
    let version = store.schema().await.unwrap().version();
    sqlx::query("INSERT INTO meta (key, value) VALUES ('schema_oldest_code', $1)")
        .bind(version.to_string())
        .execute(&mut raw)
        .await
        .unwrap();
    let e = store.schema().await.unwrap().current().unwrap_err().to_string();
    assert!(e.contains("upgrade mds"), "{e}");
    match store.migrate().await {
        Err(StoreError::Invalid(m)) => assert!(m.contains("upgrade mds"), "{m}"),
        other => panic!("migrate on a contracted newer schema: {other:?}"),
    }
}

#[tokio::test]
async fn a_store_never_migrated_says_so_and_is_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::connect(&url_in(&dir)).await.unwrap();
    let state = store.schema().await.unwrap();
    assert!(state.applied.is_empty() && state.missing.len() as i64 == state.known, "{state:?}");
    let e = state.current().unwrap_err().to_string();
    assert!(e.contains("no schema yet; run `mds migrate`"), "{e}");
    let mut raw = SqliteConnection::connect(url_in(&dir).expose()).await.unwrap();
    let tables: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sqlite_master").fetch_one(&mut raw).await.unwrap();
    assert_eq!(tables, 0, "reading the state created nothing");
}
