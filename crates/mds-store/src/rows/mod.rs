//! What every backend shares about rows, one module a job: the column lists
//! and `meta` keys (here), the operator sentences of errors ([`errors`]),
//! how values are stored ([`encode`]) and decoded back ([`decode`]),
//! counters, usage batches and quota history ([`usage`]), catalog snapshot
//! chunks ([`snapshot`]).
//!
//! The backends store the same columns with the same encodings (instants as
//! RFC 3339 text in UTC, key hashes as lower-case hex, tags as a JSON array),
//! so decoding is written once, over any `sqlx` row type. A row that does not
//! decode (a bad ISIN, a negative quota) is a [`StoreError::Database`], never a
//! panic: the database was changed behind the store's back.

use std::collections::HashSet;
use std::fmt::Display;

use chrono::{DateTime, Utc};
use mds_domain::time::{format_utc, parse_rfc3339};
use mds_domain::usage::BillingMonth;
use mds_domain::{
    Account, AccountName, Article, Company, Environment, Isin, KeyHash, KeyPrefix, MarketCapBand, Slug, Ticker, Tier,
    TierName,
};
use sqlx::{ColumnIndex, Decode, Row, Type};

use crate::{Cause, KeyRecord, StoreError, StoreResult};

/// `meta` key of the cursor secret.
pub(crate) const META_CURSOR_SECRET: &str = "cursor_secret";
/// Length of the cursor secret in bytes.
pub(crate) const CURSOR_SECRET_LEN: usize = 32;

/// Column list of `companies`, in the order [`company`] reads and the
/// backends bind.
pub(crate) const COMPANY_COLUMNS: &[&str] =
    &["isin", "ticker", "name", "industry", "sector", "is_bse", "is_nse", "market_cap_band", "logo_url"];

/// Column list of `articles`, in the order [`article`] reads and the
/// backends bind.
pub(crate) const ARTICLE_COLUMNS: &[&str] = &[
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
    use super::*;
    use crate::UsageDelta;

    fn delta(key: &KeyPrefix, year: i32, month: u32, requests: u64) -> UsageDelta {
        UsageDelta { key: key.clone(), month: BillingMonth { year, month }, requests }
    }

    #[test]
    fn merging_sums_repeats_in_first_order() {
        let a = KeyPrefix::parse("mds_live_aaa").unwrap();
        let b = KeyPrefix::parse("mds_live_bbb").unwrap();
        let deltas = [delta(&a, 2026, 11, 5), delta(&b, 2026, 11, 1), delta(&a, 2026, 10, 2), delta(&a, 2026, 11, 7)];
        let merged = merge_usage(&deltas).unwrap();
        let got: Vec<(&str, i32, i64)> = merged.iter().map(|d| (d.key.as_str(), d.month, d.requests)).collect();
        assert_eq!(got, vec![("mds_live_aaa", 202611, 12), ("mds_live_bbb", 202611, 1), ("mds_live_aaa", 202610, 2)]);
        let keys: Vec<&str> = distinct_keys(&merged).iter().map(|k| k.as_str()).collect();
        assert_eq!(keys, ["mds_live_aaa", "mds_live_bbb"]);

        let huge = [delta(&a, 2026, 11, i64::MAX as u64), delta(&a, 2026, 11, 1)];
        assert!(matches!(merge_usage(&huge), Err(StoreError::Invalid(_))));
        assert!(matches!(merge_usage(&[delta(&a, 2026, 11, u64::MAX)]), Err(StoreError::Invalid(_))));
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
            ]
        };
        assert_eq!(generations(&pairs("6")).unwrap(), crate::Generations { companies: 5, news: 6, auth: 7 });
        let err = generations(&pairs("many")).unwrap_err();
        assert!(err.to_string().contains("meta.generation_news"), "{err}");
        assert!(matches!(generations(&pairs("1")[..2]), Err(StoreError::Invalid(_))));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(snapshot_buffer(1, 0, None).unwrap().is_none());
        assert!(snapshot_buffer(1, 1, Some(0)).unwrap().unwrap().is_empty());
        let buf = snapshot_buffer(1, 3, Some(9_000_000)).unwrap().unwrap();
        assert!(buf.is_empty() && buf.capacity() >= 9_000_000);
        assert!(matches!(snapshot_buffer(1, 1, Some(-1)), Err(StoreError::Database(_))));
    }

    #[test]
    fn quotas_beyond_bigint_are_invalid() {
        assert_eq!(to_bigint("q", 5).unwrap(), 5);
        assert!(matches!(to_bigint("q", u64::MAX), Err(StoreError::Invalid(_))));
    }
}
