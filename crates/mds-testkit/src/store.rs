//! The storage test suite: what every [`Store`] backend must do, written once
//! and run against each backend.
//!
//! Every function takes a **fresh, empty, not yet migrated** store, migrates it
//! itself, and panics (with `assert!`) on the first difference from the
//! contract of [`Store`]. A backend's integration tests run every function,
//! each against a database of its own, with
//! [`store_test_suite!`](crate::store_test_suite):
//!
//! ```text
//! // crates/mds-store/tests/sqlite.rs
//! async fn fresh() -> (mds_store::sqlite::SqliteStore, tempfile::TempDir) { /* … */ }
//! mds_testkit::store_test_suite!(fresh);
//! ```
//!
//! which expands to one `#[tokio::test]` per suite function. The macro holds
//! the one list of the suite's functions, by module: a function added to a
//! module here and to that list runs against every backend at once. The
//! caller needs `tokio` (with `macros` and `rt`) among its dev-dependencies.
//!
//! # Layout
//! - `access`, `actions`, `catalog`, `events`, `identity`, `news`, `prices`, `snapshot`, `usage`: the
//!   suite's functions, by role (`news`: the pages of the news list;
//!   `identity`: snapshots, change files and the events made of them;
//!   `snapshot`: the catalog's and the news index's saved bytes).
//! - `raw`: functions that change the database behind the store's back.
//! - `nodes`: functions on several stores opened on one database.
//! - The helpers below: names, instants, rows and expectations they share.

use chrono::{DateTime, Utc};
use mds_domain::time::parse_rfc3339;
use mds_domain::usage::{BillingMonth, QuotaHistory};
use mds_domain::{
    Account, AccountName, Article, Company, Environment, KeyHash, KeyPrefix, MarketCapBand, Slug, Ticker, Tier,
    TierName,
};

use mds_store::{
    ActiveKey, AuthChanges, DailyUsage, Generations, KeyRecord, Store, StoreError, StoreResult, UpsertSummary,
    UsageBatch, UsageDelta,
};

use crate::fixtures::isin;

/// Defines one `#[tokio::test]` per function of [`store`](crate::store),
/// each on a store of its own.
///
/// `store_test_suite!(fresh, raw = raw_of, open = open_again)` adds the
/// functions of [`raw`](crate::store::raw), each on a fresh store, given
/// also the raw connection `raw_of(&guard)` returns (a
/// [`Raw`](crate::raw::Raw)), and those of [`nodes`](crate::store::nodes),
/// given also a function that opens another store on the same database
/// (`open_again(&guard)`).
///
/// `$fresh` is an async fn (a path) taking no argument and returning
/// `(S, G)` or `Option<(S, G)>`: `S` a fresh, empty, not migrated store
/// (anything that coerces to `&dyn Store` by reference), `G` a guard kept
/// alive until the test ends (a temporary directory, a database to drop;
/// `()` when there is none); `None` skips the test.
#[macro_export]
macro_rules! store_test_suite {
    ($fresh:path) => {
        $crate::store_test_suite!(@tests $fresh;
            access::{
                migrate_is_idempotent,
                default_tiers_are_seeded_once,
                set_tier_creates_then_updates,
                each_mutation_bumps_only_its_own_generation,
                accounts_create_list_and_entitle,
                create_key_checks_account_tier_and_prefix,
                revoke_key_is_idempotent,
                roll_key_issues_a_new_key_and_expires_the_old,
                keys_filter_by_account,
                admin_lists_page_by_keyset,
                auth_directory_and_key_lookup,
                auth_changes_say_what_changed_since,
            },
            actions::{
                action_imports_are_idempotent,
                kept_rows_without_their_facts_take_them_from_their_file,
                action_imports_join_publications,
                action_imports_announce_added_and_changed,
                action_imports_are_all_or_nothing,
                action_reads_filter_order_and_page,
                moved_rows_move_their_actions,
            },
            catalog::{
                empty_upserts_change_nothing,
                upsert_companies_counts_and_replaces_every_field,
                upsert_companies_repeated_isin_in_one_call,
                upsert_companies_in_large_batches,
                upsert_company_chunks_is_one_upsert,
                companies_are_ordered_by_ticker_then_isin,
                companies_sorted_are_in_byte_order,
                companies_sorted_agree_with_companies,
                change_stamps_mark_only_what_changed,
                company_details_round_trip,
                articles_round_trip_every_field,
                upsert_articles_counts_and_replaces_every_field,
            },
            events::{
                company_upserts_announce_what_changed,
                article_upserts_announce_published_and_updated,
                event_pages_filter_and_resume,
                pruning_moves_the_expired_mark,
            },
            identity::{
                identity_imports_announce_company_changes,
                a_rename_after_an_exact_isin_change_is_the_successors,
                identity_events_follow_snapshots_and_change_files,
                identity_imports_are_idempotent,
                an_older_snapshot_is_refused_and_nothing_written,
                a_snapshot_of_the_latest_day_replaces_it,
                company_status_round_trips,
            },
            prices::{
                a_day_is_replaced_whole_and_idempotently,
                a_price_import_is_all_or_nothing,
                a_price_import_announces_each_day_it_writes,
                a_price_import_merges_with_what_a_day_holds,
                price_reads_filter_order_and_page,
            },
            news::{
                news_pages_follow_the_list_order,
                news_pages_resume_after_any_position,
                news_pages_filter_by_every_parameter,
                news_pages_walk_many_articles,
            },
            snapshot::{
                snapshots_missing_are_none,
                snapshots_round_trip_in_chunks,
                saving_a_snapshot_removes_other_generations,
                an_empty_snapshot_round_trips,
                saving_a_snapshot_twice_keeps_one,
                concurrent_snapshot_saves_keep_one_whole_copy,
                the_two_kinds_of_snapshot_are_kept_apart,
            },
            usage::{
                apply_usage_adds_across_months_and_keys,
                apply_usage_bumps_the_usage_generation,
                apply_usage_in_large_batches,
                apply_usage_counts_a_batch_once,
                apply_usage_with_an_unknown_key_applies_nothing,
                usage_filters_and_orders_months,
                apply_usage_keeps_a_daily_ledger_that_adds_up_to_the_months,
                usage_days_filter_and_order_days_then_routes,
                apply_usage_refuses_bad_routes_and_days_whole,
                quota_history_follows_tier_and_entitlement_changes,
                quota_history_of_unknown_and_revoked_keys,
            },
            webhooks::{
                webhook_endpoints_are_per_account_and_limited,
                webhook_deliveries_follow_the_cursor,
                webhook_runs_are_claimed_and_recorded_in_order,
                webhook_pings_and_disabling,
            },
        );
    };
    ($fresh:path, raw = $raw:path, open = $open:path) => {
        $crate::store_test_suite!($fresh);
        $crate::store_test_suite!(@open $fresh, $open; two_stores_on_one_database_see_each_others_writes);
        $crate::store_test_suite!(@raw $fresh, $raw;
            corrupt_rows_are_errors_not_panics,
            a_failed_upsert_writes_nothing,
            a_schema_newer_than_this_build_is_refused,
            a_closed_store_is_unavailable,
            applied_batch_ids_are_pruned_after_a_week,
            a_refused_usage_batch_leaves_no_row_behind,
            companies_sorted_stop_at_the_first_corrupt_row,
            keys_are_stored_as_hashes,
            a_version_1_store_is_upgraded_with_its_history_backfilled,
            a_store_counted_before_the_daily_ledger_keeps_its_counts_in_it,
            route_templates_are_stored_once,
        );
    };
    (@open $fresh:path, $open:path; $($name:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $name() {
                let Some((store, guard)) = $crate::store::Fresh::into_fresh($fresh().await) else {
                    return;
                };
                $crate::store::nodes::$name(&store, || $open(&guard)).await;
            }
        )*
    };
    (@raw $fresh:path, $raw:path; $($name:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $name() {
                let Some((store, guard)) = $crate::store::Fresh::into_fresh($fresh().await) else {
                    return;
                };
                let mut raw = $raw(&guard).await;
                $crate::store::raw::$name(&store, &mut raw).await;
            }
        )*
    };
    (@tests $fresh:path; $($module:ident::{$($name:ident),* $(,)?}),* $(,)?) => {
        $($(
            #[tokio::test]
            async fn $name() {
                let Some((store, _guard)) = $crate::store::Fresh::into_fresh($fresh().await) else {
                    return;
                };
                $crate::store::$module::$name(&store).await;
            }
        )*)*
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
        details: Default::default(),
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
    crate::fixtures::bare_article(s, "Short")
}

fn new_key(p: &str, seed: u8, account: &str, tier: &str, created: &str) -> KeyRecord {
    KeyRecord {
        prefix: prefix(p),
        hash: hash(seed),
        account: account_name(account),
        tier: tier_name(tier),
        environment: if p.starts_with("mds_test_") { Environment::Test } else { Environment::Live },
        created_at: at(created),
        revoked_at: None,
        expires_at: None,
    }
}

fn record(k: &KeyRecord, revoked_at: Option<DateTime<Utc>>) -> KeyRecord {
    KeyRecord { revoked_at, ..k.clone() }
}

fn summary(inserted: u64, updated: u64) -> UpsertSummary {
    UpsertSummary { inserted, updated, unchanged: 0 }
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

/// The latest event id of the log.
async fn latest_event(store: &dyn Store) -> mds_domain::EventId {
    store.event_page(mds_domain::EventId(0), &mds_domain::EventFilter::default(), 1).await.expect("log").latest
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

/// `requests` counted requests of `key` in a month (on its first day, on
/// `/v1/companies`).
fn delta(key: &str, year: i32, m: u32, requests: u64) -> UsageDelta {
    UsageDelta::counted(prefix(key), month(year, m).first_day(), "/v1/companies", requests)
}

/// What `key` did on `day` (`YYYY-MM-DD`) on `route`.
fn day_delta(key: &str, day: &str, route: &'static str, requests: u64, not_modified: u64) -> UsageDelta {
    UsageDelta { key: prefix(key), day: date(day), route: route.into(), requests, not_modified }
}

/// A day, from `YYYY-MM-DD`.
fn date(day: &str) -> chrono::NaiveDate {
    day.parse().expect("a YYYY-MM-DD day")
}

/// A daily ledger entry.
fn entry(day: &str, route: &str, requests: u64, not_modified: u64) -> DailyUsage {
    DailyUsage { day: date(day), route: route.to_owned(), requests, not_modified }
}

async fn days_of(store: &dyn Store, key: &str, from: &str, to: &str) -> Vec<DailyUsage> {
    store.usage_days(&prefix(key), date(from), date(to)).await.expect("usage days")
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
// The suite, in four modules.

pub mod access;
pub mod actions;
pub mod catalog;
pub mod events;
pub mod identity;
pub mod news;
pub mod nodes;
pub mod prices;
pub mod raw;
pub mod snapshot;
pub mod usage;
pub mod webhooks;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_differ_per_seed_and_byte() {
        assert_ne!(hash(1), hash(2));
        let h = hash(1).0;
        assert_ne!(h[0], h[1]);
    }
}
