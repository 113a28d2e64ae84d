//! Change counters, usage batches and the daily ledger, quota history
//! (schema versions 2 and 5).

use std::collections::HashMap;

use chrono::{Datelike, NaiveDate};
use mds_domain::daily::DailyUsage;

#[allow(unused_imports)]
use super::*;

/// `meta` key of the counter bumped by company upserts.
pub(crate) const META_GENERATION_COMPANIES: &str = "generation_companies";
/// `meta` key of the counter bumped by article upserts.
pub(crate) const META_GENERATION_NEWS: &str = "generation_news";
/// `meta` key of the counter bumped by tier, account and key changes.
pub(crate) const META_GENERATION_AUTH: &str = "generation_auth";
/// `meta` key of the counter bumped by every usage batch applied.
pub(crate) const META_GENERATION_USAGE: &str = "generation_usage";
/// `meta` key of the counter bumped by corporate-action imports that store
/// or change an action. Not seeded: a store without it is at 0 (it came
/// after the actions tables, and an import adds it).
pub(crate) const META_GENERATION_ACTIONS: &str = "generation_actions";
/// `meta` key of the counter bumped by price imports that write a day.
/// Not seeded, as [`META_GENERATION_ACTIONS`]: a store without it is at 0.
pub(crate) const META_GENERATION_PRICES: &str = "generation_prices";
/// The seeded counters' `meta` keys, in the order of [`crate::Generations`].
pub(crate) const META_GENERATIONS: [&str; 4] =
    [META_GENERATION_COMPANIES, META_GENERATION_NEWS, META_GENERATION_AUTH, META_GENERATION_USAGE];

/// How long the id of an applied usage batch is kept (a batch sent again
/// later than this is counted again).
pub(crate) const USAGE_BATCH_RETENTION: chrono::TimeDelta = chrono::TimeDelta::days(7);
/// The longest usage batch id, in characters.
pub(crate) const MAX_USAGE_BATCH_ID_CHARS: usize = 100;

/// The stored value of the change counter under `meta` key `key`.
pub(crate) fn generation_counter(key: &str, value: &str) -> StoreResult<i64> {
    value.parse().map_err(|_| corrupt(format_args!("meta.{key} is not an integer: {value:?}")))
}

/// The counters from `(meta key, value)` pairs; `not_migrated` when one
/// is missing.
pub(crate) fn generations(pairs: &[(String, String)]) -> StoreResult<crate::Generations> {
    let get = |key: &str| -> StoreResult<i64> {
        let (_, value) = pairs.iter().find(|(k, _)| k == key).ok_or_else(not_migrated)?;
        generation_counter(key, value)
    };
    let unseeded = |key: &str| -> StoreResult<i64> {
        match pairs.iter().find(|(k, _)| k == key) {
            Some((_, value)) => generation_counter(key, value),
            None => Ok(0),
        }
    };
    Ok(crate::Generations {
        companies: get(META_GENERATION_COMPANIES)?,
        news: get(META_GENERATION_NEWS)?,
        auth: get(META_GENERATION_AUTH)?,
        usage: get(META_GENERATION_USAGE)?,
        actions: unseeded(META_GENERATION_ACTIONS)?,
        prices: unseeded(META_GENERATION_PRICES)?,
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

/// One `(key, day, route)` entry of the daily ledger to add, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MergedDay<'a> {
    /// The key.
    pub(crate) key: &'a KeyPrefix,
    /// [`day_key`] of the day.
    pub(crate) day: i32,
    /// The route template.
    pub(crate) route: &'a str,
    /// Requests to add.
    pub(crate) requests: i64,
    /// `304`s to add.
    pub(crate) not_modified: i64,
}

/// A batch's deltas as stored: its entries of the daily ledger (a key, day
/// and route given more than once summed into one) and the month counts
/// they add up to (one per key and month), both in the order of first
/// appearance, so one multi-row upsert never touches a row twice. `Invalid`
/// when a sum exceeds `i64::MAX`, a route label is empty or longer than
/// [`crate::MAX_USAGE_ROUTE_CHARS`], or a day's year is outside 1 to 9999.
pub(crate) fn merge_usage(deltas: &[crate::UsageDelta]) -> StoreResult<(Vec<MergedDelta<'_>>, Vec<MergedDay<'_>>)> {
    let too_many = |what: &str, key: &KeyPrefix, at: i32| {
        StoreError::Invalid(format!("{what} must be at most {} (key {key}, {at})", i64::MAX))
    };
    let mut months: Vec<MergedDelta<'_>> = Vec::new();
    let mut days: Vec<MergedDay<'_>> = Vec::with_capacity(deltas.len());
    let mut month_index: HashMap<(&str, i32), usize> = HashMap::new();
    let mut day_index: HashMap<(&str, i32, &str), usize> = HashMap::new();
    for d in deltas {
        check_route(&d.route)?;
        let requests = to_bigint("requests", d.requests)?;
        let not_modified = to_bigint("not_modified", d.not_modified)?;
        let day = day_key(d.day)?;
        let month = d.month().key();
        match month_index.get(&(d.key.as_str(), month)) {
            Some(&i) => {
                let sum = months[i].requests.checked_add(requests);
                months[i].requests = sum.ok_or_else(|| too_many("requests", &d.key, month))?;
            }
            None => {
                month_index.insert((d.key.as_str(), month), months.len());
                months.push(MergedDelta { key: &d.key, month, requests });
            }
        }
        match day_index.get(&(d.key.as_str(), day, &*d.route)) {
            Some(&i) => {
                let e = &mut days[i];
                e.requests = e.requests.checked_add(requests).ok_or_else(|| too_many("requests", &d.key, day))?;
                e.not_modified =
                    e.not_modified.checked_add(not_modified).ok_or_else(|| too_many("not_modified", &d.key, day))?;
            }
            None => {
                day_index.insert((d.key.as_str(), day, &*d.route), days.len());
                days.push(MergedDay { key: &d.key, day, route: &d.route, requests, not_modified });
            }
        }
    }
    Ok((months, days))
}

/// Checks a route label: 1 to [`crate::MAX_USAGE_ROUTE_CHARS`] characters.
fn check_route(route: &str) -> StoreResult<()> {
    let n = route.chars().count();
    if n == 0 || n > crate::MAX_USAGE_ROUTE_CHARS {
        return Err(StoreError::Invalid(format!(
            "a usage route must be 1 to {} characters (got {n})",
            crate::MAX_USAGE_ROUTE_CHARS
        )));
    }
    Ok(())
}

/// A day as stored: `year * 10000 + month * 100 + day` (`20261121`), so a
/// month's days are one range; `Invalid` outside the years 1 to 9999.
pub(crate) fn day_key(day: NaiveDate) -> StoreResult<i32> {
    if !(1..=9999).contains(&day.year()) {
        return Err(StoreError::Invalid(format!("a usage day must be in the years 1 to 9999 (got {day})")));
    }
    Ok(day.year() * 10_000 + day.month() as i32 * 100 + day.day() as i32)
}

/// The inverse of [`day_key`].
pub(crate) fn from_day_key(k: i64) -> Option<NaiveDate> {
    let k = i32::try_from(k).ok()?;
    NaiveDate::from_ymd_opt(k / 10_000, u32::try_from(k / 100 % 100).ok()?, u32::try_from(k % 100).ok()?)
}

/// The distinct keys of `deltas`, in the order of first appearance.
pub(crate) fn distinct_keys<'a>(deltas: &[MergedDelta<'a>]) -> Vec<&'a KeyPrefix> {
    let mut seen = HashSet::new();
    deltas.iter().map(|d| d.key).filter(|k| seen.insert(k.as_str())).collect()
}

/// The distinct routes of `days`, sorted (the order their rows are locked in).
pub(crate) fn distinct_routes<'a>(days: &[MergedDay<'a>]) -> Vec<&'a str> {
    let mut routes: Vec<&str> = days.iter().map(|d| d.route).collect();
    routes.sort_unstable();
    routes.dedup();
    routes
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

/// A `usage_daily` row joined with its route (`day`, `template`,
/// `requests`, `not_modified`).
pub(crate) fn daily_usage(r: &impl RowExt) -> StoreResult<DailyUsage> {
    let day = r.int("day")?;
    let count = |col: &str| -> StoreResult<u64> {
        let n = r.int(col)?;
        u64::try_from(n).map_err(|_| corrupt(format_args!("usage_daily.{col} out of range: {n}")))
    };
    Ok(DailyUsage {
        day: from_day_key(day).ok_or_else(|| corrupt(format_args!("usage_daily.day is not a yyyymmdd day: {day}")))?,
        route: r.text("template")?,
        requests: count("requests")?,
        not_modified: count("not_modified")?,
    })
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
