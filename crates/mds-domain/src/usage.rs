//! Billing months and the usage record of `GET /v1/usage`.
//!
//! Billing months are calendar months in UTC; a window starts at midnight UTC
//! on the 1st.

use chrono::{DateTime, Datelike, NaiveDate, TimeZone, Utc};
use serde::{Deserialize, Serialize};

/// A calendar month in UTC, ordered by time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BillingMonth {
    /// Year.
    pub year: i32,
    /// Month, 1 to 12.
    pub month: u32,
}

impl BillingMonth {
    /// The month an instant falls in.
    pub fn of(t: DateTime<Utc>) -> Self {
        BillingMonth { year: t.year(), month: t.month() }
    }

    /// Midnight UTC on the 1st.
    pub fn start(self) -> DateTime<Utc> {
        let d = NaiveDate::from_ymd_opt(self.year, self.month, 1).expect("valid month");
        Utc.from_utc_datetime(&d.and_hms_opt(0, 0, 0).expect("midnight"))
    }

    /// The month after.
    pub fn next(self) -> Self {
        if self.month == 12 {
            BillingMonth { year: self.year + 1, month: 1 }
        } else {
            BillingMonth { year: self.year, month: self.month + 1 }
        }
    }

    /// The month before.
    pub fn prev(self) -> Self {
        if self.month == 1 {
            BillingMonth { year: self.year - 1, month: 12 }
        } else {
            BillingMonth { year: self.year, month: self.month - 1 }
        }
    }

    /// A compact integer key, `year * 100 + month` (`202611`), for storage.
    pub fn key(self) -> i32 {
        self.year * 100 + self.month as i32
    }

    /// The inverse of [`BillingMonth::key`].
    pub fn from_key(k: i32) -> Option<Self> {
        let m = (k % 100) as u32;
        (1..=12).contains(&m).then_some(BillingMonth { year: k / 100, month: m })
    }

    /// Whole seconds from `now` until the next month starts (at least 1).
    pub fn seconds_until_next(now: DateTime<Utc>) -> u64 {
        let next = BillingMonth::of(now).next().start();
        let ms = (next - now).num_milliseconds().max(0) as u64;
        ms.div_ceil(1000).max(1)
    }

    /// The month a day (UTC) falls in.
    pub fn of_day(day: NaiveDate) -> Self {
        BillingMonth { year: day.year(), month: day.month() }
    }

    /// Its first day.
    pub fn first_day(self) -> NaiveDate {
        NaiveDate::from_ymd_opt(self.year, self.month, 1).expect("valid month")
    }

    /// Its last day.
    pub fn last_day(self) -> NaiveDate {
        self.next().first_day().pred_opt().expect("a month after the first has a day before it")
    }

    /// Parses `YYYY-MM` (four digits, a hyphen, two digits; month 01 to 12),
    /// the form [`Display`](std::fmt::Display) writes.
    pub fn parse(s: &str) -> Result<Self, String> {
        let bad = || format!("{s:?} is not a month; write it YYYY-MM, e.g. 2026-11");
        let b = s.as_bytes();
        if b.len() != 7 || b[4] != b'-' || !b.iter().enumerate().all(|(i, c)| i == 4 || c.is_ascii_digit()) {
            return Err(bad());
        }
        let year: i32 = s[..4].parse().map_err(|_| bad())?;
        let month: u32 = s[5..].parse().map_err(|_| bad())?;
        if !(1..=12).contains(&month) {
            return Err(bad());
        }
        Ok(BillingMonth { year, month })
    }
}

impl std::fmt::Display for BillingMonth {
    /// `YYYY-MM`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}", self.year, self.month)
    }
}

impl std::str::FromStr for BillingMonth {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        BillingMonth::parse(s)
    }
}

/// Usage in one billing month (`V1UsageWindow`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct V1UsageWindow {
    /// Midnight UTC on the 1st of the month.
    #[serde(with = "crate::time::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime, example = "2026-11-01T00:00:00+00:00"))]
    pub period_start: DateTime<Utc>,
    /// Requests counted in the month.
    pub requests: u64,
    /// The monthly quota in force for the month.
    pub quota: u64,
    /// `max(quota - requests, 0)`.
    pub remaining: u64,
}

impl V1UsageWindow {
    /// A window for `month` with `requests` against `quota`.
    pub fn new(month: BillingMonth, requests: u64, quota: u64) -> Self {
        V1UsageWindow { period_start: month.start(), requests, quota, remaining: quota.saturating_sub(requests) }
    }
}

/// The usage record of the calling key (`GET /v1/usage`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct V1Usage {
    /// The key's prefix (its first 17 characters; 12 for a key issued before).
    pub key_prefix: String,
    /// The tier enforced now.
    pub tier: String,
    /// The tier the key was issued on.
    pub plan_tier: String,
    /// Whether the account's plan covers API access.
    pub entitled: bool,
    /// `live` or `test`.
    #[cfg_attr(feature = "openapi", schema(example = "live", pattern = "^(live|test)$"))]
    pub environment: String,
    /// Requests per minute allowed now.
    pub rate_limit_per_minute: u32,
    /// The current billing month.
    pub current_month: V1UsageWindow,
    /// Preceding months since the key was created, most recent first, at most 12.
    pub history: Vec<V1UsageWindow>,
}

/// How many preceding months `history` shows at most.
pub const HISTORY_MONTHS: usize = 12;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{format_utc, parse_rfc3339};

    #[test]
    fn month_boundaries_are_exact() {
        let last_ms = parse_rfc3339("2026-11-30T23:59:59.999Z").unwrap();
        assert_eq!(BillingMonth::of(last_ms), BillingMonth { year: 2026, month: 11 });
        let first = parse_rfc3339("2026-12-01T00:00:00Z").unwrap();
        assert_eq!(BillingMonth::of(first), BillingMonth { year: 2026, month: 12 });
        assert_eq!(format_utc(&BillingMonth::of(last_ms).start()), "2026-11-01T00:00:00+00:00");
        assert_eq!(BillingMonth::seconds_until_next(last_ms), 1);
    }

    #[test]
    fn months_wrap_years() {
        let jan = BillingMonth { year: 2027, month: 1 };
        assert_eq!(jan.prev(), BillingMonth { year: 2026, month: 12 });
        assert_eq!(jan.prev().next(), jan);
        assert_eq!(BillingMonth::from_key(jan.key()), Some(jan));
        assert_eq!(BillingMonth::from_key(202613), None);
    }

    #[test]
    fn months_have_their_days_and_parse_as_they_print() {
        let feb = BillingMonth { year: 2028, month: 2 };
        assert_eq!(feb.first_day(), NaiveDate::from_ymd_opt(2028, 2, 1).unwrap());
        assert_eq!(feb.last_day(), NaiveDate::from_ymd_opt(2028, 2, 29).unwrap(), "a leap year");
        assert_eq!(BillingMonth { year: 2026, month: 12 }.last_day().to_string(), "2026-12-31");
        assert_eq!(BillingMonth::of_day(feb.last_day()), feb);
        assert_eq!(feb.to_string(), "2028-02");
        assert_eq!("2028-02".parse::<BillingMonth>(), Ok(feb));
        for bad in ["2028-2", "2028-13", "2028-00", "28-02", "2028/02", "2028-02-01", "", "+028-02", "２０２８-02"]
        {
            assert!(BillingMonth::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn remaining_never_negative() {
        let w = V1UsageWindow::new(BillingMonth { year: 2026, month: 11 }, 12, 10);
        assert_eq!(w.remaining, 0);
    }
}

/// What a key's monthly quota was over time, from which the quota in force
/// for any month is read: the tier it was issued on, the evaluation tier,
/// and its account's entitlement, each as a time-ordered list of changes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QuotaHistory {
    /// `(effective_from, monthly_quota)` of the key's plan tier, oldest first.
    pub plan_tier: Vec<(DateTime<Utc>, u64)>,
    /// `(effective_from, monthly_quota)` of the evaluation tier, oldest first.
    pub evaluation: Vec<(DateTime<Utc>, u64)>,
    /// `(effective_from, entitled)` of the key's account, oldest first.
    pub entitled: Vec<(DateTime<Utc>, bool)>,
}

/// The value in force at `t`: the last change at or before `t`, else the
/// first change (history that starts later is taken to have held before).
fn in_force<T: Copy>(changes: &[(DateTime<Utc>, T)], t: DateTime<Utc>) -> Option<T> {
    let i = changes.partition_point(|(at, _)| *at <= t);
    changes.get(i.saturating_sub(1)).or(changes.first()).map(|(_, v)| *v)
}

impl QuotaHistory {
    /// The monthly quota in force at `t`.
    pub fn quota_at(&self, t: DateTime<Utc>) -> u64 {
        let entitled = in_force(&self.entitled, t).unwrap_or(true);
        let tier = crate::account::enforced_tier(entitled, Some(&self.plan_tier), &self.evaluation);
        in_force(tier, t).unwrap_or(0)
    }

    /// The quota in force for a closed month: the one at its last instant,
    /// which is what it closed under.
    pub fn quota_for(&self, month: BillingMonth) -> u64 {
        self.quota_at(month.next().start() - chrono::Duration::milliseconds(1))
    }
}

#[cfg(test)]
mod history_tests {
    use super::*;
    use crate::time::parse_rfc3339;

    fn t(s: &str) -> DateTime<Utc> {
        parse_rfc3339(s).unwrap()
    }

    #[test]
    fn quota_follows_tier_changes_and_entitlement() {
        let h = QuotaHistory {
            plan_tier: vec![(t("2026-01-01T00:00:00Z"), 50_000), (t("2026-06-15T00:00:00Z"), 80_000)],
            evaluation: vec![(t("2026-01-01T00:00:00Z"), 1_000)],
            entitled: vec![
                (t("2026-02-01T00:00:00Z"), true),
                (t("2026-09-10T00:00:00Z"), false),
                (t("2026-10-01T00:00:00Z"), true),
            ],
        };
        assert_eq!(h.quota_for(BillingMonth { year: 2026, month: 5 }), 50_000);
        assert_eq!(h.quota_for(BillingMonth { year: 2026, month: 6 }), 80_000, "closed under the new quota");
        assert_eq!(h.quota_for(BillingMonth { year: 2026, month: 9 }), 1_000, "not entitled at the close");
        assert_eq!(h.quota_for(BillingMonth { year: 2026, month: 10 }), 80_000);
        assert_eq!(h.quota_at(t("2025-12-01T00:00:00Z")), 50_000, "before any record: the first");
    }
}
