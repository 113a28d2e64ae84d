//! The daily usage ledger and `GET /v1/usage/daily` (API.md section 8):
//! where a key's quota went, day by day and route by route.
//!
//! - [`DailyUsage`]: one entry of the ledger (a key's requests and `304`s
//!   on one day on one route), as the store keeps it and a node holds it
//!   before a flush.
//! - [`DailyUsageQueryParams`]: the query of `GET /v1/usage/daily` (its one
//!   parameter, [`MONTH`]), parsed once and described for OpenAPI.
//! - [`DailyPeriod`]: the days a report covers, and which months may be
//!   asked for (the current one and the twelve before it).
//! - [`V1UsageDaily`] and [`V1UsageDay`]: the report, assembled from
//!   entries by [`V1UsageDaily::assemble`].

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use crate::params::{ParamError, QueryParams};
use crate::usage::{BillingMonth, HISTORY_MONTHS};

/// `month`: the month to report on, `YYYY-MM`.
pub const MONTH: &str = "month";

/// Every parameter `GET /v1/usage/daily` defines.
pub const DAILY_USAGE_PARAMETERS: &[&str] = &[MONTH];

/// The route label of counts that were made before the store kept a daily
/// ledger (a store upgraded to it keeps each month's earlier count on the
/// month's first day under this label). Not a route template, which all
/// start with `/`.
pub const UNATTRIBUTED_ROUTE: &str = "unattributed";

/// One entry of a key's daily ledger: what it did on one day (UTC) on one
/// route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DailyUsage {
    /// The day (UTC).
    pub day: NaiveDate,
    /// The route template (`/v1/companies`), or [`UNATTRIBUTED_ROUTE`].
    pub route: String,
    /// Requests counted against the quota.
    pub requests: u64,
    /// Conditional requests answered `304` (not counted).
    pub not_modified: u64,
}

/// The query of `GET /v1/usage/daily`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
pub struct DailyUsageQueryParams {
    /// The month to report on, `YYYY-MM` (UTC): the current month (the
    /// default) or one of the twelve before it. (No example: any month
    /// named here would one day be out of that window.)
    #[cfg_attr(feature = "openapi", param(value_type = Option<String>, pattern = r"^[0-9]{4}-(0[1-9]|1[0-2])$"))]
    pub month: Option<BillingMonth>,
}

/// Whether the month may be asked for is [`DailyPeriod::at`]'s to say.
impl QueryParams for DailyUsageQueryParams {
    const NAMES: &'static [&'static str] = DAILY_USAGE_PARAMETERS;

    fn parse<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Result<Self, ParamError> {
        let month =
            get(MONTH).map(BillingMonth::parse).transpose().map_err(|detail| ParamError { param: MONTH, detail })?;
        Ok(DailyUsageQueryParams { month })
    }
}

/// The days a daily report covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DailyPeriod {
    /// The month.
    pub month: BillingMonth,
    /// Whether it is the current month.
    pub current: bool,
    /// The last day reported: today (UTC) in the current month, else the
    /// month's last day. The first is always the 1st.
    pub last: NaiveDate,
}

impl DailyPeriod {
    /// The period of `month` (the current month when `None`) at `now`: the
    /// current month up to today, or a whole month among the
    /// [`HISTORY_MONTHS`] before it. Any other month is refused with a
    /// sentence naming [`MONTH`].
    pub fn at(month: Option<BillingMonth>, now: DateTime<Utc>) -> Result<Self, ParamError> {
        let current = BillingMonth::of(now);
        let month = month.unwrap_or(current);
        let oldest = (0..HISTORY_MONTHS).fold(current, |m, _| m.prev());
        if month > current || month < oldest {
            return Err(ParamError {
                param: MONTH,
                detail: format!(
                    "month must be the current month ({current}) or one of the {HISTORY_MONTHS} before it ({oldest} to {})",
                    current.prev()
                ),
            });
        }
        let is_current = month == current;
        let last = if is_current { now.date_naive() } else { month.last_day() };
        Ok(DailyPeriod { month, current: is_current, last })
    }

    /// The first day reported (the 1st).
    pub fn first(&self) -> NaiveDate {
        self.month.first_day()
    }

    /// Whether `day` is one of the period's days.
    pub fn contains(&self, day: NaiveDate) -> bool {
        (self.first()..=self.last).contains(&day)
    }
}

/// Usage of one day (`V1UsageDay`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct V1UsageDay {
    /// The day (UTC), `YYYY-MM-DD`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date, example = "2026-11-01"))]
    pub date: NaiveDate,
    /// Requests counted against the quota that day.
    pub requests: u64,
    /// Conditional requests answered `304 Not Modified` that day (free:
    /// not in `requests`).
    pub not_modified: u64,
    /// `requests` by route template: every data route, zeros included.
    #[cfg_attr(feature = "openapi", schema(example = json!({"/v1/companies": 12, "/v1/news/{slug}": 3})))]
    pub by_route: BTreeMap<String, u64>,
}

/// Where the quota went, day by day (`GET /v1/usage/daily`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct V1UsageDaily {
    /// The key's prefix.
    pub key_prefix: String,
    /// Midnight UTC on the 1st of the month.
    #[serde(with = "crate::time::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime, example = "2026-11-01T00:00:00+00:00"))]
    pub period_start: DateTime<Utc>,
    /// The monthly quota: in force now for the current month, the one the
    /// month closed under for a past month (as `GET /v1/usage` says).
    pub quota: u64,
    /// Requests counted in the month: the sum of the days' `requests`, and
    /// what `GET /v1/usage` reports for the same month.
    pub requests: u64,
    /// One entry per day from the 1st to today (the current month) or to
    /// the month's last day, oldest first, days without traffic included.
    pub days: Vec<V1UsageDay>,
}

impl V1UsageDaily {
    /// The report of `period` for `key_prefix` against `quota`, from ledger
    /// `entries` (any order, a day and route possibly several times: the
    /// store's and those not flushed yet). Every route of `routes` is in
    /// every day's `by_route`; another label (a route since removed,
    /// [`UNATTRIBUTED_ROUTE`]) only where it has requests. Entries of days
    /// outside the period are left out.
    pub fn assemble<'a>(
        key_prefix: String,
        period: &DailyPeriod,
        quota: u64,
        routes: &[&str],
        entries: impl IntoIterator<Item = &'a DailyUsage>,
    ) -> Self {
        let zeros: BTreeMap<String, u64> = routes.iter().map(|r| ((*r).to_owned(), 0)).collect();
        let mut days: Vec<V1UsageDay> = period
            .first()
            .iter_days()
            .take_while(|d| *d <= period.last)
            .map(|date| V1UsageDay { date, requests: 0, not_modified: 0, by_route: zeros.clone() })
            .collect();
        for e in entries.into_iter().filter(|e| period.contains(e.day)) {
            let i = usize::try_from((e.day - period.first()).num_days()).expect("within the period");
            let day = &mut days[i];
            day.requests += e.requests;
            day.not_modified += e.not_modified;
            if e.requests > 0 || day.by_route.contains_key(&e.route) {
                *day.by_route.entry(e.route.clone()).or_default() += e.requests;
            }
        }
        V1UsageDaily {
            key_prefix,
            period_start: period.month.start(),
            quota,
            requests: days.iter().map(|d| d.requests).sum(),
            days,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::day;
    use crate::time::parse_rfc3339;

    fn now() -> DateTime<Utc> {
        parse_rfc3339("2026-11-21T10:00:00Z").unwrap()
    }

    fn month(s: &str) -> BillingMonth {
        BillingMonth::parse(s).unwrap()
    }

    #[test]
    fn the_current_month_and_the_twelve_before_it_may_be_asked_for() {
        let p = DailyPeriod::at(None, now()).unwrap();
        assert_eq!(
            (p.month, p.current, p.first(), p.last),
            (month("2026-11"), true, day("2026-11-01"), day("2026-11-21"))
        );
        assert_eq!(DailyPeriod::at(Some(month("2026-11")), now()).unwrap(), p);
        let oct = DailyPeriod::at(Some(month("2026-10")), now()).unwrap();
        assert_eq!((oct.current, oct.last), (false, day("2026-10-31")));
        let oldest = DailyPeriod::at(Some(month("2025-11")), now()).unwrap();
        assert_eq!(oldest.last, day("2025-11-30"));
        for refused in ["2025-10", "2026-12", "1999-01"] {
            let e = DailyPeriod::at(Some(month(refused)), now()).unwrap_err();
            assert_eq!(e.param, MONTH);
            assert_eq!(
                e.detail,
                "month must be the current month (2026-11) or one of the 12 before it (2025-11 to 2026-10)"
            );
        }
        // On the 1st, the month has one day so far.
        let first = DailyPeriod::at(None, parse_rfc3339("2026-12-01T00:00:00Z").unwrap()).unwrap();
        assert_eq!((first.first(), first.last), (day("2026-12-01"), day("2026-12-01")));
    }

    #[test]
    fn the_month_parameter_parses_or_names_itself() {
        let get = |v: &'static str| move |n: &str| (n == MONTH).then_some(v);
        assert_eq!(DailyUsageQueryParams::parse(get("2026-10")).unwrap().month, Some(month("2026-10")));
        assert_eq!(DailyUsageQueryParams::parse(|_| None).unwrap(), DailyUsageQueryParams::default());
        let e = DailyUsageQueryParams::parse(get("2026-1")).unwrap_err();
        assert_eq!((e.param, e.detail.as_str()), (MONTH, "\"2026-1\" is not a month; write it YYYY-MM, e.g. 2026-11"));
    }

    fn entry(d: &str, route: &str, requests: u64, not_modified: u64) -> DailyUsage {
        DailyUsage { day: day(d), route: route.to_owned(), requests, not_modified }
    }

    #[test]
    fn a_report_has_every_day_and_every_route_and_adds_up() {
        let p = DailyPeriod::at(None, now()).unwrap();
        let routes = ["/v1/companies", "/v1/news/{slug}"];
        let entries = [
            entry("2026-11-03", "/v1/companies", 4, 1),
            entry("2026-11-03", "/v1/companies", 2, 0),
            entry("2026-11-03", "/v1/news/{slug}", 1, 2),
            entry("2026-11-01", UNATTRIBUTED_ROUTE, 7, 0),
            entry("2026-11-21", "/v1/gone", 0, 3),
            entry("2026-10-31", "/v1/companies", 100, 0),
            entry("2026-11-22", "/v1/companies", 100, 0),
        ];
        let r = V1UsageDaily::assemble("mds_live_abc".into(), &p, 1_000, &routes, &entries);
        assert_eq!(r.days.len(), 21);
        assert_eq!(r.days[0].date, day("2026-11-01"));
        assert_eq!(r.days[20].date, day("2026-11-21"));
        assert_eq!(r.requests, 14, "days outside the period are left out");
        assert_eq!(r.requests, r.days.iter().map(|d| d.requests).sum::<u64>());
        let third = &r.days[2];
        assert_eq!((third.requests, third.not_modified), (7, 3));
        assert_eq!(third.by_route, BTreeMap::from([("/v1/companies".into(), 6), ("/v1/news/{slug}".into(), 1)]));
        assert_eq!(r.days[0].by_route[UNATTRIBUTED_ROUTE], 7);
        assert_eq!(r.days[0].by_route.len(), 3);
        assert_eq!(r.days[1].by_route, BTreeMap::from([("/v1/companies".into(), 0), ("/v1/news/{slug}".into(), 0)]));
        assert_eq!(
            (r.days[20].not_modified, r.days[20].by_route.len()),
            (3, 2),
            "a label with no requests adds no key"
        );
        for d in &r.days {
            assert_eq!(d.by_route.values().sum::<u64>(), d.requests, "{}", d.date);
        }
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["period_start"], "2026-11-01T00:00:00+00:00");
        assert_eq!(json["days"][2]["date"], "2026-11-03");
        assert_eq!(json.as_object().unwrap().len(), 5);
        assert_eq!(serde_json::from_value::<V1UsageDaily>(json).unwrap(), r);
    }

    #[cfg(feature = "openapi")]
    #[test]
    fn the_openapi_parameter_is_the_constant() {
        assert_eq!(crate::testing::param_names::<DailyUsageQueryParams>(), DAILY_USAGE_PARAMETERS);
    }
}
