//! What the limiter's store tests share: a real SQLite store in a
//! temporary directory with account `acme` and one key on tier `starter`,
//! and [`Answering`], the store with its answers late or lost. Each test
//! binary uses part of it.
#![allow(dead_code)]

mod answering;

#[allow(unused_imports)]
pub(crate) use answering::Answering;

use chrono::{DateTime, Utc};
use mds_domain::{AccountName, Environment, KeyHash, KeyPrefix, TierName};
use mds_store::prelude::*;
use mds_store::sqlite::SqliteStore;
use mds_store::{DatabaseUrl, KeyRecord};

/// A migrated store in `dir` holding account `acme` and the key `prefix`
/// (hash `[seed; 32]`), both created at `at`.
pub(crate) async fn store_with_key(
    dir: &tempfile::TempDir,
    prefix: &str,
    seed: u8,
    at: DateTime<Utc>,
) -> (SqliteStore, KeyPrefix) {
    let store = SqliteStore::connect(&DatabaseUrl::new(dir.path().join("mds.db").to_str().unwrap())).await.unwrap();
    store.migrate().await.unwrap();
    let acme = AccountName::parse("acme").unwrap();
    store.create_account(&acme, at).await.unwrap();
    let prefix = KeyPrefix::parse(prefix).unwrap();
    let key = KeyRecord {
        prefix: prefix.clone(),
        hash: KeyHash([seed; 32]),
        account: acme,
        tier: TierName::parse("starter").unwrap(),
        environment: Environment::Live,
        created_at: at,
        revoked_at: None,
        expires_at: None,
    };
    store.create_key(&key).await.unwrap();
    (store, prefix)
}
