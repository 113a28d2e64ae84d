//! Change counters, usage batches and quota history (schema version 2).

#[allow(unused_imports)]
use super::*;

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
