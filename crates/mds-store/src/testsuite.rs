//! The storage test suite: what every [`Store`] backend must do, written once
//! and run against each backend.
//!
//! Every function takes a **fresh, empty, not yet migrated** store, migrates it
//! itself, and panics (with `assert!`) on the first difference from the
//! contract of [`Store`]. A backend's integration tests run every function,
//! each against a database of its own, with [`store_test_suite!`](crate::store_test_suite):
//!
//! ```text
//! // crates/mds-store/tests/sqlite.rs
//! async fn fresh() -> (mds_store::sqlite::SqliteStore, tempfile::TempDir) { /* … */ }
//! mds_store::store_test_suite!(fresh);
//! ```
//!
//! which expands to one `#[tokio::test]` per suite function, so a function
//! added here (and to the macro's list) runs against every backend at once.
//! The caller needs `tokio` (with `macros` and `rt`) among its
//! dev-dependencies.
//!
//! The module is always compiled (it depends on nothing test-only), so a
//! backend in another crate can use it without a feature switch.

use chrono::{DateTime, Utc};
use mds_domain::time::parse_rfc3339;
use mds_domain::usage::{BillingMonth, QuotaHistory};
use mds_domain::{
    Account, AccountName, Article, Company, Environment, Isin, KeyHash, KeyPrefix, MarketCapBand, Slug, Ticker, Tier,
    TierName,
};

use crate::{Generations, KeyRecord, NewKey, Store, StoreError, StoreResult, UpsertSummary, UsageBatch, UsageDelta};

/// Defines one `#[tokio::test]` per function of [`testsuite`](crate::testsuite),
/// each on a store of its own.
///
/// `$fresh` is an async fn (a path) taking no argument and returning
/// `(S, G)`: `S` a fresh, empty, not migrated store (anything that coerces
/// to `&dyn Store` by reference), `G` a guard kept alive until the test ends
/// (a temporary directory, a database to drop; `()` when there is none).
#[macro_export]
macro_rules! store_test_suite {
    ($fresh:path) => {
        $crate::store_test_suite!(@tests $fresh;
            migrate_is_idempotent,
            default_tiers_are_seeded_once,
            set_tier_creates_then_updates,
            each_mutation_bumps_only_its_own_generation,
            empty_upserts_change_nothing,
            upsert_companies_counts_and_replaces_every_field,
            upsert_companies_repeated_isin_in_one_call,
            upsert_companies_in_large_batches,
            companies_are_ordered_by_ticker_then_isin,
            companies_sorted_are_in_byte_order,
            companies_sorted_agree_with_companies,
            catalog_snapshot_missing_is_none,
            catalog_snapshot_round_trips_in_chunks,
            saving_a_catalog_snapshot_removes_other_generations,
            an_empty_catalog_snapshot_round_trips,
            saving_a_catalog_snapshot_twice_keeps_one,
            concurrent_catalog_snapshot_saves_keep_one_whole_copy,
            articles_round_trip_every_field,
            upsert_articles_counts_and_replaces_every_field,
            accounts_create_list_and_entitle,
            create_key_checks_account_tier_and_prefix,
            revoke_key_is_idempotent,
            keys_filter_by_account,
            auth_snapshot_excludes_revoked_keys,
            apply_usage_adds_across_months_and_keys,
            apply_usage_in_large_batches,
            apply_usage_counts_a_batch_once,
            apply_usage_with_an_unknown_key_applies_nothing,
            usage_filters_and_orders_months,
            quota_history_follows_tier_and_entitlement_changes,
            quota_history_of_unknown_and_revoked_keys,
        );
    };
    (@tests $fresh:path; $($name:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $name() {
                let Some((store, _guard)) = $crate::testsuite::Fresh::into_fresh($fresh().await) else {
                    return;
                };
                $crate::testsuite::$name(&store).await;
            }
        )*
    };
}

/// What the `fresh` function given to [`store_test_suite!`] returns: a new
/// store and a guard that keeps its database alive, or `None` when the
/// backend is not available here (the test then returns: skipped, and the
/// function should say so on stderr).
pub trait Fresh<S, G> {
    /// The store and guard, if any.
    fn into_fresh(self) -> Option<(S, G)>;
}

impl<S, G> Fresh<S, G> for (S, G) {
    fn into_fresh(self) -> Option<(S, G)> {
        Some(self)
    }
}

impl<S, G> Fresh<S, G> for Option<(S, G)> {
    fn into_fresh(self) -> Option<(S, G)> {
        self
    }
}

// ---------------------------------------------------------------------------
// Helpers.

/// An ISIN from its first 11 characters, with the ISO 6166 check digit added.
fn isin(body: &str) -> Isin {
    assert_eq!(body.len(), 11, "ISIN body {body:?}");
    let digits: String = body
        .chars()
        .map(|c| c.to_digit(36).unwrap_or_else(|| panic!("bad ISIN character {c:?}")).to_string())
        .collect();
    // Luhn over the digits, doubling from the rightmost one (the check digit
    // will stand to its right).
    let sum: u32 = digits
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, b)| {
            let d = u32::from(b - b'0');
            if i % 2 == 0 { (d * 2) / 10 + (d * 2) % 10 } else { d }
        })
        .sum();
    let check = (10 - sum % 10) % 10;
    Isin::parse(&format!("{body}{check}")).expect("computed ISIN is valid")
}

fn ticker(s: &str) -> Ticker {
    Ticker::parse(s).expect("valid ticker")
}

fn at(s: &str) -> DateTime<Utc> {
    parse_rfc3339(s).expect("valid instant")
}

fn account_name(s: &str) -> AccountName {
    AccountName::parse(s).expect("valid account name")
}

fn tier_name(s: &str) -> TierName {
    TierName::parse(s).expect("valid tier name")
}

fn prefix(s: &str) -> KeyPrefix {
    KeyPrefix::parse(s).expect("valid prefix")
}

fn slug(s: &str) -> Slug {
    Slug::parse(s).expect("valid slug")
}

/// A hash whose bytes all differ, so a wrong hex encoding shows.
fn hash(seed: u8) -> KeyHash {
    KeyHash(std::array::from_fn(|i| seed.wrapping_mul(31).wrapping_add((i as u8).wrapping_mul(7))))
}

/// A company with every optional field set.
fn company(isin_body: &str, t: &str, name: &str) -> Company {
    Company {
        isin: isin(isin_body),
        ticker: ticker(t),
        name: name.to_owned(),
        industry: Some("Capital Goods".to_owned()),
        sector: Some("Industrials".to_owned()),
        is_bse: true,
        is_nse: false,
        market_cap_band: Some(MarketCapBand::Large),
        logo_url: Some(format!("https://img.example/{t}.png")),
    }
}

/// An article with every optional field set.
fn full_article(s: &str) -> Article {
    Article {
        slug: slug(s),
        headline: "Reliance Q2 profit rises 9%".to_owned(),
        subheadline: Some("Retail and Jio lead".to_owned()),
        excerpt: Some("Net profit rose…".to_owned()),
        body: Some("Line one.\nLine two with \"quotes\", ünïcödé and emoji 📈.".to_owned()),
        category: Some("earnings".to_owned()),
        tags: vec!["zeta".to_owned(), "alpha".to_owned(), "Mid Cap".to_owned(), "alpha".to_owned()],
        isin: Some(isin("INE002A0101")),
        ticker: Some("RELIANCE".to_owned()),
        company_name: Some("Reliance Industries Limited".to_owned()),
        author_name: Some("A. Writer".to_owned()),
        hero_image: Some("https://img.example/hero.jpg".to_owned()),
        url: Some(format!("https://news.example/{s}")),
        published_at: Some(at("2026-11-20T09:15:30.250Z")),
        updated_at: Some(at("2026-11-21T10:00:00.123456789+05:30")),
    }
}

/// An article with no optional field.
fn bare_article(s: &str) -> Article {
    Article {
        slug: slug(s),
        headline: "Short".to_owned(),
        subheadline: None,
        excerpt: None,
        body: None,
        category: None,
        tags: Vec::new(),
        isin: None,
        ticker: None,
        company_name: None,
        author_name: None,
        hero_image: None,
        url: None,
        published_at: None,
        updated_at: None,
    }
}

fn new_key(p: &str, seed: u8, account: &str, tier: &str, created: &str) -> NewKey {
    NewKey {
        prefix: prefix(p),
        hash: hash(seed),
        account: account_name(account),
        tier: tier_name(tier),
        environment: if p.starts_with("mds_test_") { Environment::Test } else { Environment::Live },
        created_at: at(created),
    }
}

fn record(k: &NewKey, revoked_at: Option<DateTime<Utc>>) -> KeyRecord {
    KeyRecord {
        prefix: k.prefix.clone(),
        hash: k.hash,
        account: k.account.clone(),
        tier: k.tier.clone(),
        environment: k.environment,
        created_at: k.created_at,
        revoked_at,
    }
}

fn summary(inserted: u64, updated: u64) -> UpsertSummary {
    UpsertSummary { inserted, updated }
}

fn default_tiers_by_name() -> Vec<Tier> {
    let mut d = Tier::defaults();
    d.sort_by(|a, b| a.name.cmp(&b.name));
    d
}

#[track_caller]
fn expect_not_found<T: std::fmt::Debug>(r: StoreResult<T>, sentence: &str) {
    match r {
        Err(StoreError::NotFound(m)) => assert_eq!(m, sentence),
        other => panic!("expected NotFound({sentence:?}), got {other:?}"),
    }
}

#[track_caller]
fn expect_conflict<T: std::fmt::Debug>(r: StoreResult<T>, sentence: &str) {
    match r {
        Err(StoreError::Conflict(m)) => assert_eq!(m, sentence),
        other => panic!("expected Conflict({sentence:?}), got {other:?}"),
    }
}

async fn migrated(store: &dyn Store) {
    store.migrate().await.expect("migrate");
}

async fn generations(store: &dyn Store) -> Generations {
    store.generations().await.expect("generations")
}

/// The instant the suite's tier changes are made at when it does not matter.
fn t0() -> DateTime<Utc> {
    at("2026-01-01T00:00:00Z")
}

fn month(year: i32, month: u32) -> BillingMonth {
    BillingMonth { year, month }
}

fn delta(key: &str, year: i32, m: u32, requests: u64) -> UsageDelta {
    UsageDelta { key: prefix(key), month: month(year, m), requests }
}

fn batch(id: &str, deltas: Vec<UsageDelta>) -> UsageBatch {
    UsageBatch { id: id.to_owned(), deltas }
}

async fn usage_of(store: &dyn Store, key: &str, from: BillingMonth, to: BillingMonth) -> Vec<(BillingMonth, u64)> {
    store.usage(&prefix(key), from, to).await.expect("usage")
}

#[track_caller]
fn expect_invalid<T: std::fmt::Debug>(r: StoreResult<T>, sentence: &str) {
    match r {
        Err(StoreError::Invalid(m)) => assert_eq!(m, sentence),
        other => panic!("expected Invalid({sentence:?}), got {other:?}"),
    }
}

async fn create_accounts(store: &dyn Store, names: &[&str]) {
    for n in names {
        store.create_account(&account_name(n), at("2026-01-01T00:00:00Z")).await.expect("create account");
    }
}

// ---------------------------------------------------------------------------
// The suite, in four modules; every function is re-exported here.

mod access;
mod catalog;
pub mod pg;
mod snapshot;
mod usage;

pub use access::{
    accounts_create_list_and_entitle, auth_snapshot_excludes_revoked_keys, create_key_checks_account_tier_and_prefix,
    default_tiers_are_seeded_once, each_mutation_bumps_only_its_own_generation, keys_filter_by_account,
    migrate_is_idempotent, revoke_key_is_idempotent, set_tier_creates_then_updates,
};
pub use catalog::{
    articles_round_trip_every_field, companies_are_ordered_by_ticker_then_isin, companies_sorted_agree_with_companies,
    companies_sorted_are_in_byte_order, empty_upserts_change_nothing, upsert_articles_counts_and_replaces_every_field,
    upsert_companies_counts_and_replaces_every_field, upsert_companies_in_large_batches,
    upsert_companies_repeated_isin_in_one_call,
};
pub use snapshot::{
    an_empty_catalog_snapshot_round_trips, catalog_snapshot_missing_is_none, catalog_snapshot_round_trips_in_chunks,
    concurrent_catalog_snapshot_saves_keep_one_whole_copy, saving_a_catalog_snapshot_removes_other_generations,
    saving_a_catalog_snapshot_twice_keeps_one,
};
pub use usage::{
    apply_usage_adds_across_months_and_keys, apply_usage_counts_a_batch_once, apply_usage_in_large_batches,
    apply_usage_with_an_unknown_key_applies_nothing, quota_history_follows_tier_and_entitlement_changes,
    quota_history_of_unknown_and_revoked_keys, usage_filters_and_orders_months,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computed_isins_match_real_ones() {
        assert_eq!(isin("INE117A0102").as_str(), "INE117A01022");
        assert_eq!(isin("INE144J0102").as_str(), "INE144J01027");
        assert_eq!(isin("US037833100").as_str(), "US0378331005");
    }

    #[test]
    fn hashes_differ_per_seed_and_byte() {
        assert_ne!(hash(1), hash(2));
        let h = hash(1).0;
        assert_ne!(h[0], h[1]);
    }
}
