//! What every backend shares: turning stored rows back into domain values,
//! the operator sentences of errors, hex, the chunking of upserts and of
//! catalog snapshots.
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

// ---------------------------------------------------------------------------
// Operator sentences, the same for every backend.

/// `no account named "x"`.
pub(crate) fn no_account(name: &AccountName) -> StoreError {
    StoreError::NotFound(format!("no account named \"{name}\""))
}

/// `no tier named "x"`.
pub(crate) fn no_tier(name: &TierName) -> StoreError {
    StoreError::NotFound(format!("no tier named \"{name}\""))
}

/// `no key with prefix "x"`.
pub(crate) fn no_key(prefix: &KeyPrefix) -> StoreError {
    StoreError::NotFound(format!("no key with prefix \"{prefix}\""))
}

/// `an account named "x" already exists`.
pub(crate) fn account_exists(name: &AccountName) -> StoreError {
    StoreError::Conflict(format!("an account named \"{name}\" already exists"))
}

/// `a key with prefix "x" already exists`.
pub(crate) fn prefix_exists(prefix: &KeyPrefix) -> StoreError {
    StoreError::Conflict(format!("a key with prefix \"{prefix}\" already exists"))
}

/// A second key with the same hash: only a caller that stores one key twice.
pub(crate) fn hash_exists() -> StoreError {
    StoreError::Conflict("a key with the same hash already exists".into())
}

/// The schema or its seed rows are missing.
pub(crate) fn not_migrated() -> StoreError {
    StoreError::Invalid("the store has no mds schema yet; run `mds migrate`".into())
}

/// A stored value that does not decode.
pub(crate) fn corrupt(what: impl Display) -> StoreError {
    undecodable(sqlx::Error::Decode(format!("corrupt row: {what}").into()))
}

/// A column that does not decode as the type asked for.
pub(crate) fn undecodable(e: sqlx::Error) -> StoreError {
    StoreError::Database(Cause::new(e))
}

// ---------------------------------------------------------------------------
// Encodings.

/// An instant as stored.
pub(crate) fn ts(t: &DateTime<Utc>) -> String {
    format_utc(t)
}

/// An optional instant as stored.
pub(crate) fn ts_opt(t: &Option<DateTime<Utc>>) -> Option<String> {
    t.as_ref().map(format_utc)
}

/// Tags as stored: a JSON array of strings.
pub(crate) fn tags_json(tags: &[String]) -> String {
    serde_json::to_string(tags).expect("a list of strings always serialises")
}

/// A count or limit as stored (`BIGINT`); `Invalid` beyond `i64::MAX`.
pub(crate) fn to_bigint(what: &str, v: u64) -> StoreResult<i64> {
    i64::try_from(v).map_err(|_| StoreError::Invalid(format!("{what} must be at most {} (got {v})", i64::MAX)))
}

/// Splits `rows` into runs of at most `max` rows in which no key repeats, in
/// order. One multi-row `INSERT … ON CONFLICT DO UPDATE` per run then behaves
/// like row-by-row upserts (PostgreSQL refuses to touch one row twice in a
/// statement), and a key seen again later counts as an update.
pub(crate) fn chunks_by_key<'a, T>(rows: &'a [T], max: usize, key: impl Fn(&'a T) -> &'a str) -> Vec<&'a [T]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut seen = HashSet::new();
    for (i, row) in rows.iter().enumerate() {
        let k = key(row);
        if i - start == max || seen.contains(k) {
            out.push(&rows[start..i]);
            start = i;
            seen.clear();
        }
        seen.insert(k);
    }
    if start < rows.len() {
        out.push(&rows[start..]);
    }
    out
}

// ---------------------------------------------------------------------------
// Decoding.

/// Typed column access over any `sqlx` row, with errors as [`StoreError`].
pub(crate) trait RowExt {
    /// A non-null text column.
    fn text(&self, col: &str) -> StoreResult<String>;
    /// A nullable text column.
    fn opt_text(&self, col: &str) -> StoreResult<Option<String>>;
    /// A 0/1 (or boolean) column.
    fn flag(&self, col: &str) -> StoreResult<bool>;
    /// An integer column.
    fn int(&self, col: &str) -> StoreResult<i64>;
}

impl<R> RowExt for R
where
    R: Row,
    for<'c> &'c str: ColumnIndex<R>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> bool: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
{
    fn text(&self, col: &str) -> StoreResult<String> {
        self.try_get(col).map_err(undecodable)
    }

    fn opt_text(&self, col: &str) -> StoreResult<Option<String>> {
        self.try_get(col).map_err(undecodable)
    }

    fn flag(&self, col: &str) -> StoreResult<bool> {
        self.try_get(col).map_err(undecodable)
    }

    fn int(&self, col: &str) -> StoreResult<i64> {
        self.try_get(col).map_err(undecodable)
    }
}

fn instant(table: &str, col: &str, s: &str) -> StoreResult<DateTime<Utc>> {
    parse_rfc3339(s).map_err(|e| corrupt(format_args!("{table}.{col} is not an RFC 3339 instant ({e}): {s:?}")))
}

fn opt_instant(table: &str, col: &str, s: Option<String>) -> StoreResult<Option<DateTime<Utc>>> {
    s.map(|s| instant(table, col, &s)).transpose()
}

/// A `companies` row.
pub(crate) fn company(r: &impl RowExt) -> StoreResult<Company> {
    let isin = r.text("isin")?;
    let ticker = r.text("ticker")?;
    let band = r
        .opt_text("market_cap_band")?
        .map(|b| b.parse::<MarketCapBand>())
        .transpose()
        .map_err(|e| corrupt(format_args!("companies {isin}: {e}")))?;
    Ok(Company {
        isin: Isin::parse(&isin).map_err(|e| corrupt(format_args!("companies: {e}")))?,
        ticker: Ticker::parse(&ticker).map_err(|e| corrupt(format_args!("companies {isin}: {e}: {ticker:?}")))?,
        name: r.text("name")?,
        industry: r.opt_text("industry")?,
        sector: r.opt_text("sector")?,
        is_bse: r.flag("is_bse")?,
        is_nse: r.flag("is_nse")?,
        market_cap_band: band,
        logo_url: r.opt_text("logo_url")?,
    })
}

/// An `articles` row.
pub(crate) fn article(r: &impl RowExt) -> StoreResult<Article> {
    let slug = r.text("slug")?;
    let tags = r.text("tags_json")?;
    let isin = r
        .opt_text("isin")?
        .map(|s| Isin::parse(&s))
        .transpose()
        .map_err(|e| corrupt(format_args!("articles {slug}: {e}")))?;
    Ok(Article {
        headline: r.text("headline")?,
        subheadline: r.opt_text("subheadline")?,
        excerpt: r.opt_text("excerpt")?,
        body: r.opt_text("body")?,
        category: r.opt_text("category")?,
        tags: serde_json::from_str(&tags)
            .map_err(|e| corrupt(format_args!("articles {slug}: tags_json is not a list of strings ({e})")))?,
        isin,
        ticker: r.opt_text("ticker")?,
        company_name: r.opt_text("company_name")?,
        author_name: r.opt_text("author_name")?,
        hero_image: r.opt_text("hero_image")?,
        url: r.opt_text("url")?,
        published_at: opt_instant("articles", "published_at", r.opt_text("published_at")?)?,
        updated_at: opt_instant("articles", "updated_at", r.opt_text("updated_at")?)?,
        slug: Slug::parse(&slug).map_err(|e| corrupt(format_args!("articles: {e}: {slug:?}")))?,
    })
}

/// A `tiers` row (`name`, `rate_limit_per_minute`, `monthly_quota`).
pub(crate) fn tier(r: &impl RowExt) -> StoreResult<Tier> {
    let name = r.text("name")?;
    let rate = r.int("rate_limit_per_minute")?;
    let quota = r.int("monthly_quota")?;
    Ok(Tier {
        rate_limit_per_minute: u32::try_from(rate)
            .map_err(|_| corrupt(format_args!("tiers {name}: rate_limit_per_minute out of range: {rate}")))?,
        monthly_quota: u64::try_from(quota)
            .map_err(|_| corrupt(format_args!("tiers {name}: monthly_quota out of range: {quota}")))?,
        name: TierName::parse(&name).map_err(|e| corrupt(format_args!("tiers: {e}")))?,
    })
}

/// An `accounts` row (`name`, `entitled`, `created_at`).
pub(crate) fn account(r: &impl RowExt) -> StoreResult<Account> {
    let name = r.text("name")?;
    Ok(Account {
        entitled: r.flag("entitled")?,
        created_at: instant("accounts", "created_at", &r.text("created_at")?)?,
        name: AccountName::parse(&name).map_err(|e| corrupt(format_args!("accounts: {e}")))?,
    })
}

/// An `api_keys` row joined with its account's name as `account`.
pub(crate) fn key_record(r: &impl RowExt) -> StoreResult<KeyRecord> {
    let prefix = r.text("prefix")?;
    let prefix = KeyPrefix::parse(&prefix).map_err(|e| corrupt(format_args!("api_keys: {e}")))?;
    let hash = r.text("hash_hex")?;
    let account = r.text("account")?;
    let tier = r.text("tier")?;
    let environment = r.text("environment")?;
    Ok(KeyRecord {
        hash: KeyHash::from_hex(&hash)
            .ok_or_else(|| corrupt(format_args!("api_keys {prefix}: hash_hex is not 32 bytes of hex")))?,
        account: AccountName::parse(&account).map_err(|e| corrupt(format_args!("api_keys {prefix}: {e}")))?,
        tier: TierName::parse(&tier).map_err(|e| corrupt(format_args!("api_keys {prefix}: {e}")))?,
        environment: Environment::parse(&environment).map_err(|e| corrupt(format_args!("api_keys {prefix}: {e}")))?,
        created_at: instant("api_keys", "created_at", &r.text("created_at")?)?,
        revoked_at: opt_instant("api_keys", "revoked_at", r.opt_text("revoked_at")?)?,
        prefix,
    })
}

/// The stored cursor secret (hex of 32 bytes).
pub(crate) fn cursor_secret(value: &str) -> StoreResult<Vec<u8>> {
    match mds_domain::hex::decode(value) {
        Some(bytes) if bytes.len() == CURSOR_SECRET_LEN => Ok(bytes),
        _ => Err(corrupt("meta.cursor_secret is not 32 bytes of hex")),
    }
}

// ---------------------------------------------------------------------------
// Change counters, usage and quota history (schema version 2).

/// `meta` key of the counter bumped by company upserts.
pub(crate) const META_GENERATION_COMPANIES: &str = "generation_companies";
/// `meta` key of the counter bumped by article upserts.
pub(crate) const META_GENERATION_NEWS: &str = "generation_news";
/// `meta` key of the counter bumped by tier, account and key changes.
pub(crate) const META_GENERATION_AUTH: &str = "generation_auth";
/// The three counters' `meta` keys, in the order of [`crate::Generations`].
pub(crate) const META_GENERATIONS: [&str; 3] = [META_GENERATION_COMPANIES, META_GENERATION_NEWS, META_GENERATION_AUTH];

/// How long the id of an applied usage batch is kept (a batch sent again
/// later than this is counted again).
pub(crate) const USAGE_BATCH_RETENTION: chrono::TimeDelta = chrono::TimeDelta::days(7);
/// The longest usage batch id, in characters.
pub(crate) const MAX_USAGE_BATCH_ID_CHARS: usize = 100;

/// The stored value of the change counter under `meta` key `key`.
pub(crate) fn generation_counter(key: &str, value: &str) -> StoreResult<i64> {
    value.parse().map_err(|_| corrupt(format_args!("meta.{key} is not an integer: {value:?}")))
}

/// The three counters from `(meta key, value)` pairs; `not_migrated` when one
/// is missing.
pub(crate) fn generations(pairs: &[(String, String)]) -> StoreResult<crate::Generations> {
    let get = |key: &str| -> StoreResult<i64> {
        let (_, value) = pairs.iter().find(|(k, _)| k == key).ok_or_else(not_migrated)?;
        generation_counter(key, value)
    };
    Ok(crate::Generations {
        companies: get(META_GENERATION_COMPANIES)?,
        news: get(META_GENERATION_NEWS)?,
        auth: get(META_GENERATION_AUTH)?,
    })
}

/// Checks a usage batch id: 1 to [`MAX_USAGE_BATCH_ID_CHARS`] characters.
pub(crate) fn check_usage_batch_id(id: &str) -> StoreResult<()> {
    let n = id.chars().count();
    if n == 0 {
        Err(StoreError::Invalid("a usage batch id must not be empty".into()))
    } else if n > MAX_USAGE_BATCH_ID_CHARS {
        Err(StoreError::Invalid(format!(
            "a usage batch id must be at most {MAX_USAGE_BATCH_ID_CHARS} characters (got {n})"
        )))
    } else {
        Ok(())
    }
}

/// One `(key, month)` count to add, as stored: the month's key and a `BIGINT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MergedDelta<'a> {
    /// The key.
    pub(crate) key: &'a KeyPrefix,
    /// [`BillingMonth::key`] of the month.
    pub(crate) month: i32,
    /// Requests to add.
    pub(crate) requests: i64,
}

/// The deltas of a batch with a key and month that appear more than once
/// summed into one (in the order of first appearance), so one multi-row
/// upsert never touches a row twice; `Invalid` when a sum exceeds `i64::MAX`.
pub(crate) fn merge_usage(deltas: &[crate::UsageDelta]) -> StoreResult<Vec<MergedDelta<'_>>> {
    let mut out: Vec<MergedDelta<'_>> = Vec::with_capacity(deltas.len());
    let mut index: std::collections::HashMap<(&str, i32), usize> = std::collections::HashMap::new();
    for d in deltas {
        let requests = to_bigint("requests", d.requests)?;
        let month = d.month.key();
        match index.get(&(d.key.as_str(), month)) {
            Some(&i) => {
                let sum = out[i].requests.checked_add(requests);
                out[i].requests = sum.ok_or_else(|| {
                    StoreError::Invalid(format!("requests must be at most {} (key {}, month {month})", i64::MAX, d.key))
                })?;
            }
            None => {
                index.insert((d.key.as_str(), month), out.len());
                out.push(MergedDelta { key: &d.key, month, requests });
            }
        }
    }
    Ok(out)
}

/// The distinct keys of `deltas`, in the order of first appearance.
pub(crate) fn distinct_keys<'a>(deltas: &[MergedDelta<'a>]) -> Vec<&'a KeyPrefix> {
    let mut seen = HashSet::new();
    deltas.iter().map(|d| d.key).filter(|k| seen.insert(k.as_str())).collect()
}

/// A `usage_counts` row (`month`, `requests`).
pub(crate) fn usage_count(r: &impl RowExt) -> StoreResult<(BillingMonth, u64)> {
    let month = r.int("month")?;
    let requests = r.int("requests")?;
    let m = i32::try_from(month)
        .ok()
        .and_then(BillingMonth::from_key)
        .ok_or_else(|| corrupt(format_args!("usage_counts.month is not a yyyymm month: {month}")))?;
    let n =
        u64::try_from(requests).map_err(|_| corrupt(format_args!("usage_counts.requests out of range: {requests}")))?;
    Ok((m, n))
}

/// A `tier_history` row (`effective_from`, `monthly_quota`).
pub(crate) fn tier_change(r: &impl RowExt) -> StoreResult<(DateTime<Utc>, u64)> {
    let at = instant("tier_history", "effective_from", &r.text("effective_from")?)?;
    let quota = r.int("monthly_quota")?;
    let quota =
        u64::try_from(quota).map_err(|_| corrupt(format_args!("tier_history.monthly_quota out of range: {quota}")))?;
    Ok((at, quota))
}

/// An `entitlement_history` row (`effective_from`, `entitled`).
pub(crate) fn entitlement_change(r: &impl RowExt) -> StoreResult<(DateTime<Utc>, bool)> {
    Ok((instant("entitlement_history", "effective_from", &r.text("effective_from")?)?, r.flag("entitled")?))
}

/// History rows read in insertion (`id`) order, put oldest first by instant;
/// changes at the same instant keep their insertion order. Sorting here, not
/// in SQL, keeps the order independent of the database's text collation.
pub(crate) fn oldest_first<T>(mut changes: Vec<(DateTime<Utc>, T)>) -> Vec<(DateTime<Utc>, T)> {
    changes.sort_by_key(|(at, _)| *at);
    changes
}

// ---------------------------------------------------------------------------
// Catalog snapshots (schema version 3).

/// Bytes per stored chunk of a catalog snapshot (the last chunk may be
/// shorter). Small enough that one chunk beside the whole snapshot is little
/// extra memory, large enough that 150 MB take a few dozen statements.
pub(crate) const SNAPSHOT_CHUNK_BYTES: usize = 4 << 20;

/// The chunks `bytes` is stored as, with their `seq`, in order: at least one,
/// so that an empty snapshot is stored (as one empty chunk) and reads back
/// as present.
pub(crate) fn snapshot_chunks(bytes: &[u8]) -> Vec<(i64, &[u8])> {
    let mut chunks: Vec<&[u8]> = bytes.chunks(SNAPSHOT_CHUNK_BYTES).collect();
    if chunks.is_empty() {
        chunks.push(&[]);
    }
    (0..).zip(chunks).collect()
}

/// The buffer a snapshot is loaded into, from how many chunks the
/// generation has and their total length (`SUM`, null over no rows): `None`
/// when there is no chunk (no snapshot), else an empty vector with exactly
/// the snapshot's capacity.
pub(crate) fn snapshot_buffer(generation: i64, chunks: i64, total: Option<i64>) -> StoreResult<Option<Vec<u8>>> {
    if chunks == 0 {
        return Ok(None);
    }
    let total = total.unwrap_or(0);
    let len =
        usize::try_from(total).map_err(|_| corrupt(format_args!("catalog snapshot {generation}: length {total}")))?;
    Ok(Some(Vec::with_capacity(len)))
}

/// A chunk that should be there and is not: the chunks are not numbered
/// `0..count` (someone wrote the table behind the store's back).
pub(crate) fn snapshot_chunk_missing(generation: i64, seq: i64) -> StoreError {
    corrupt(format_args!("catalog snapshot {generation}: chunk {seq} is missing"))
}

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
