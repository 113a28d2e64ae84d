//! What every backend shares about rows, one module a job: the column lists
//! and `meta` keys (here), the operator sentences of errors ([`errors`]),
//! how values are stored ([`encode`]) and decoded back ([`decode`]),
//! counters, usage batches and quota history ([`usage`]), snapshot chunks,
//! the catalog's and the news index's ([`snapshot`]).
//!
//! The backends store the same columns with the same encodings (instants as
//! RFC 3339 text in UTC, key hashes as lower-case hex, tags as a JSON array),
//! so decoding is written once, over any `sqlx` row type. A row that does not
//! decode (a bad ISIN, a negative quota) is a [`StoreError::Database`], never a
//! panic: the database was changed behind the store's back.

use std::collections::HashSet;
use std::fmt::Display;

use chrono::{DateTime, Utc};
use mds_domain::news_search::ArticleText;
use mds_domain::time::{format_utc, parse_rfc3339};
use mds_domain::usage::BillingMonth;
use mds_domain::{
    Account, AccountName, Article, ArticleSummary, Company, CompanyDetails, Environment, Isin, KeyHash, KeyPrefix,
    MarketCapBand, Slug, Ticker, Tier, TierName,
};
use sqlx::{ColumnIndex, Decode, Row, Type};

use crate::{Cause, KeyRecord, StoreError, StoreResult, StoredCompany};

/// `meta` key of the cursor secret.
pub(crate) const META_CURSOR_SECRET: &str = "cursor_secret";
/// Length of the cursor secret in bytes.
pub(crate) const CURSOR_SECRET_LEN: usize = 32;

/// Column list of `companies`, in the order [`company`] reads and the
/// backends bind.
pub(crate) const COMPANY_COLUMNS: &[&str] = &[
    "isin",
    "ticker",
    "name",
    "industry",
    "sector",
    "is_bse",
    "is_nse",
    "market_cap_band",
    "logo_url",
    "details_json",
];

/// The stamp columns of `companies` (after [`COMPANY_COLUMNS`]): when and
/// in which generation the row's content last changed. Written with the
/// same values for every row an upsert changes; never compared.
pub(crate) const COMPANY_STAMP_COLUMNS: [&str; 2] = ["updated_at", "change_seq"];

/// Column list of `articles`, in the order [`article`] reads and the
/// backends bind.
pub(crate) const ARTICLE_COLUMNS: &[&str] = &ARTICLE_COLUMN_ARRAY;

const ARTICLE_COLUMN_ARRAY: [&str; 15] = [
    "slug",
    "headline",
    "subheadline",
    "excerpt",
    "body",
    "category",
    "tags_json",
    "isin",
    "ticker",
    "company_name",
    "author_name",
    "hero_image",
    "url",
    "published_at",
    "updated_at",
];

/// The columns of `articles` but `body`: what the news list reads
/// ([`article_summary`]).
pub(crate) const ARTICLE_SUMMARY_COLUMNS: &[&str] = &all_but::<15, 14>(ARTICLE_COLUMN_ARRAY, "body");

/// `columns` without `dropped` (which is among them), in their order.
const fn all_but<const N: usize, const M: usize>(columns: [&'static str; N], dropped: &str) -> [&'static str; M] {
    let mut out = [""; M];
    let (mut i, mut j) = (0, 0);
    while i < N {
        if !same(columns[i], dropped) {
            out[j] = columns[i];
            j += 1;
        }
        i += 1;
    }
    assert!(j == M, "`dropped` is one of `columns`");
    out
}

/// `a == b`, in a `const fn`.
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

mod decode;
mod encode;
mod errors;
mod snapshot;
mod usage;

pub(crate) use decode::*;
pub(crate) use encode::*;
pub(crate) use errors::*;
pub(crate) use snapshot::*;
pub(crate) use usage::*;

#[cfg(test)]
mod usage_tests {
    use std::str::FromStr;

    use super::*;
    use crate::UsageDelta;

    fn delta(key: &KeyPrefix, day: &str, route: &'static str, requests: u64, not_modified: u64) -> UsageDelta {
        UsageDelta { key: key.clone(), day: day.parse().unwrap(), route: route.into(), requests, not_modified }
    }

    #[test]
    fn merging_sums_repeats_in_first_order_and_months_from_days() {
        let a = KeyPrefix::parse("mds_live_aaa").unwrap();
        let b = KeyPrefix::parse("mds_live_bbb").unwrap();
        let deltas = [
            delta(&a, "2026-11-03", "/x", 5, 1),
            delta(&b, "2026-11-03", "/x", 1, 0),
            delta(&a, "2026-10-31", "/x", 2, 0),
            delta(&a, "2026-11-03", "/x", 7, 2),
            delta(&a, "2026-11-04", "/y", 0, 9),
        ];
        let (months, days) = merge_usage(&deltas).unwrap();
        let got: Vec<(&str, i32, i64)> = months.iter().map(|d| (d.key.as_str(), d.month, d.requests)).collect();
        assert_eq!(got, vec![("mds_live_aaa", 202611, 12), ("mds_live_bbb", 202611, 1), ("mds_live_aaa", 202610, 2)]);
        let got: Vec<(&str, i32, &str, i64, i64)> =
            days.iter().map(|d| (d.key.as_str(), d.day, d.route, d.requests, d.not_modified)).collect();
        assert_eq!(
            got,
            vec![
                ("mds_live_aaa", 20261103, "/x", 12, 3),
                ("mds_live_bbb", 20261103, "/x", 1, 0),
                ("mds_live_aaa", 20261031, "/x", 2, 0),
                ("mds_live_aaa", 20261104, "/y", 0, 9),
            ]
        );
        let keys: Vec<&str> = distinct_keys(&months).iter().map(|k| k.as_str()).collect();
        assert_eq!(keys, ["mds_live_aaa", "mds_live_bbb"]);
        assert_eq!(distinct_routes(&days), ["/x", "/y"]);

        let huge = [delta(&a, "2026-11-03", "/x", i64::MAX as u64, 0), delta(&a, "2026-11-04", "/x", 1, 0)];
        assert!(matches!(merge_usage(&huge), Err(StoreError::Invalid(_))), "the month's sum overflows");
        let huge = [delta(&a, "2026-11-03", "/x", 0, i64::MAX as u64), delta(&a, "2026-11-03", "/x", 0, 1)];
        assert!(matches!(merge_usage(&huge), Err(StoreError::Invalid(_))));
        assert!(matches!(merge_usage(&[delta(&a, "2026-11-03", "/x", u64::MAX, 0)]), Err(StoreError::Invalid(_))));
        assert!(matches!(merge_usage(&[delta(&a, "2026-11-03", "", 1, 0)]), Err(StoreError::Invalid(_))));
        let long: &'static str = "r".repeat(201).leak();
        assert!(matches!(merge_usage(&[delta(&a, "2026-11-03", long, 1, 0)]), Err(StoreError::Invalid(_))));
        assert!(merge_usage(&[delta(&a, "2026-11-03", &long[..200], 1, 0)]).is_ok());
        assert!(matches!(merge_usage(&[delta(&a, "+10000-01-01", "/x", 1, 0)]), Err(StoreError::Invalid(_))));
    }

    #[test]
    fn days_are_stored_as_yyyymmdd() {
        let d = |s: &str| chrono::NaiveDate::from_str(s).unwrap();
        assert_eq!(day_key(d("2026-11-03")).unwrap(), 20261103);
        assert_eq!(day_key(d("0001-01-01")).unwrap(), 10101);
        assert_eq!(from_day_key(20261103), Some(d("2026-11-03")));
        assert_eq!(from_day_key(99991231), Some(d("9999-12-31")));
        assert_eq!(from_day_key(20261131), None);
        assert_eq!(from_day_key(20261300), None);
        assert_eq!(from_day_key(i64::MAX), None);
    }

    #[test]
    fn batch_ids_are_bounded() {
        assert!(check_usage_batch_id("node-1:42").is_ok());
        assert!(check_usage_batch_id(&"é".repeat(100)).is_ok());
        assert!(matches!(check_usage_batch_id(""), Err(StoreError::Invalid(_))));
        assert!(matches!(check_usage_batch_id(&"x".repeat(101)), Err(StoreError::Invalid(_))));
    }

    #[test]
    fn history_is_sorted_stably() {
        let t = |s: &str| parse_rfc3339(s).unwrap();
        let v = vec![
            (t("2026-02-01T00:00:00.5Z"), 1),
            (t("2026-02-01T00:00:00Z"), 2),
            (t("2026-02-01T00:00:00.5Z"), 3),
            (t("2025-01-01T00:00:00Z"), 4),
        ];
        let got: Vec<i32> = oldest_first(v).into_iter().map(|(_, x)| x).collect();
        assert_eq!(got, [4, 2, 1, 3]);
    }

    #[test]
    fn counters_decode_or_say_which_is_corrupt() {
        let pairs = |v: &str| {
            vec![
                (META_GENERATION_AUTH.to_owned(), "7".to_owned()),
                (META_GENERATION_COMPANIES.to_owned(), "5".to_owned()),
                (META_GENERATION_NEWS.to_owned(), v.to_owned()),
                (META_GENERATION_USAGE.to_owned(), "8".to_owned()),
            ]
        };
        let g = crate::Generations { companies: 5, news: 6, auth: 7, usage: 8, actions: 0, prices: 0 };
        assert_eq!(generations(&pairs("6")).unwrap(), g, "no actions counter: 0");
        let mut with_actions = pairs("6");
        with_actions.push((META_GENERATION_ACTIONS.to_owned(), "3".to_owned()));
        assert_eq!(generations(&with_actions).unwrap(), crate::Generations { actions: 3, ..g });
        with_actions.push((META_GENERATION_PRICES.to_owned(), "4".to_owned()));
        assert_eq!(generations(&with_actions).unwrap(), crate::Generations { actions: 3, prices: 4, ..g });
        let err = generations(&pairs("many")).unwrap_err();
        assert!(err.to_string().contains("meta.generation_news"), "{err}");
        assert!(matches!(generations(&pairs("1")[..3]), Err(StoreError::Invalid(_))));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_columns_are_the_article_columns_but_body() {
        let mut all = ARTICLE_COLUMNS.to_vec();
        all.retain(|c| *c != "body");
        assert_eq!(ARTICLE_SUMMARY_COLUMNS, all);
    }

    #[test]
    fn chunks_split_on_size_and_repeated_keys() {
        let rows = ["a", "b", "c", "a", "d", "e", "f", "g"];
        let chunks = chunks_by_key(&rows, 3, |s| *s);
        assert_eq!(chunks, vec![&["a", "b", "c"][..], &["a", "d", "e"][..], &["f", "g"][..]]);
        let chunks = chunks_by_key(&rows, 10, |s| *s);
        assert_eq!(chunks, vec![&["a", "b", "c"][..], &["a", "d", "e", "f", "g"][..]]);
        let chunks = chunks_by_key(&["x", "x", "x"], 10, |s| *s);
        assert_eq!(chunks, vec![&["x"][..], &["x"][..], &["x"][..]]);
        assert!(chunks_by_key::<&str>(&[], 10, |s| *s).is_empty());
    }

    #[test]
    fn snapshots_split_into_numbered_chunks_at_least_one() {
        assert_eq!(snapshot_chunks(&[]), vec![(0, &[][..])]);
        let bytes = vec![7u8; 2 * SNAPSHOT_CHUNK_BYTES + 1];
        let shape: Vec<(i64, usize)> = snapshot_chunks(&bytes).iter().map(|(s, c)| (*s, c.len())).collect();
        assert_eq!(shape, vec![(0, SNAPSHOT_CHUNK_BYTES), (1, SNAPSHOT_CHUNK_BYTES), (2, 1)]);
        assert_eq!(snapshot_chunks(&bytes[..SNAPSHOT_CHUNK_BYTES]).len(), 1);
    }

    #[test]
    fn snapshot_buffers_have_the_exact_capacity() {
        for kind in [SnapshotKind::Catalog, SnapshotKind::News] {
            assert!(snapshot_buffer(kind, 1, 0, None).unwrap().is_none());
            assert!(snapshot_buffer(kind, 1, 1, Some(0)).unwrap().unwrap().is_empty());
            let buf = snapshot_buffer(kind, 1, 3, Some(9_000_000)).unwrap().unwrap();
            assert!(buf.is_empty() && buf.capacity() >= 9_000_000);
            match snapshot_buffer(kind, 1, 1, Some(-1)) {
                Err(e @ StoreError::Database(_)) => {
                    assert!(e.to_string().contains(&format!("{} snapshot 1", kind.word())), "{e}")
                }
                other => panic!("expected Database, got {other:?}"),
            }
        }
    }

    #[test]
    fn quotas_beyond_bigint_are_invalid() {
        assert_eq!(to_bigint("q", 5).unwrap(), 5);
        assert!(matches!(to_bigint("q", u64::MAX), Err(StoreError::Invalid(_))));
    }
}
