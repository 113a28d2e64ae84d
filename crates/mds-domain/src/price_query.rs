//! The queries and answers of the end-of-day price routes (contract 14.2),
//! defined once: `GET /v1/companies/{isin}/prices`
//! ([`CompanyPricesParams`], answered with [`CompanyPrices`]) and the
//! market on one day `GET /v1/prices` ([`MarketDayQueryParams`], answered
//! with a [`MarketDay`], resumed after a [`MarketKey`]); and the rules of
//! adjustment: which actions adjust a series ([`Adjust::applies`]), the
//! factor of a dividend or rights issue from the close before it
//! ([`close_factor`]), and the factors applied to each bar
//! ([`adjust_bars`]).
//!
//! # Adjustment
//! As Polygon's and CRSP's adjustment factors: the bars are kept as
//! published and adjusted when read, every factor shown. A bar is
//! multiplied by the product of the factors of the actions whose ex-date is
//! after it; its share counts are divided by the product of the factors of
//! the actions that change the number of shares (split, consolidation,
//! bonus); a dividend or rights issue adjusts prices only.

use chrono::{Months, NaiveDate};
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize};

use crate::Isin;
use crate::action_query::{FROM, LINEAGE, TO, boolean, check_bounds, parse_day};
use crate::actions::{Action, ActionId, ActionType, CorporateAction};
use crate::params::{CURSOR, Filter, LIMIT, Paged, ParamError, QueryParams, one};
use crate::prices::{Bar, Factors, Price, Series};

/// `adjust`: how the prices are adjusted ([`CompanyPricesParams::adjust`]).
pub const ADJUST: &str = "adjust";
/// `date`: the day of the market ([`MarketDayFilter::date`]).
pub const DATE: &str = "date";
/// `series`: only bars of this series ([`MarketDayFilter::series`]).
pub const SERIES: &str = "series";

/// Every parameter `GET /v1/companies/{isin}/prices` defines.
pub const COMPANY_PRICES_PARAMETERS: &[&str] = &[FROM, TO, ADJUST, LINEAGE];
/// The filter parameters of `GET /v1/prices`, in the order they are checked.
pub const MARKET_FILTER_PARAMETERS: &[&str] = &[DATE, SERIES];
/// Every parameter `GET /v1/prices` defines: the filters, then pagination.
pub const MARKET_PARAMETERS: &[&str] = &[DATE, SERIES, CURSOR, LIMIT];

/// The longest span one request of a series may ask for, in years.
pub const MAX_YEARS: u32 = 10;

wire_enum!(
    /// How a series' prices are adjusted, `adjust` on the wire.
    Adjust, "adjust must be one of none, split, total (got {:?})", {
        /// The file's numbers, as published.
        Unadjusted => "none",
        /// Splits, consolidations and bonuses applied (the default).
        Split => "split",
        /// Those, and dividends and rights issues.
        Total => "total",
    }
);

impl Adjust {
    /// Whether an action of type `t` adjusts a series adjusted this way.
    pub fn applies(self, t: ActionType) -> bool {
        match t {
            ActionType::Split | ActionType::Consolidation | ActionType::Bonus => self != Adjust::Unadjusted,
            ActionType::Dividend | ActionType::Rights => self == Adjust::Total,
            ActionType::Buyback | ActionType::Demerger | ActionType::Other => false,
        }
    }
}

/// Whether an action of type `t` changes the number of shares (and so
/// adjusts volumes as well as prices).
pub fn changes_shares(t: ActionType) -> bool {
    matches!(t, ActionType::Split | ActionType::Consolidation | ActionType::Bonus)
}

/// The query of `GET /v1/companies/{isin}/prices`. Each field is the query
/// parameter of the same name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
pub struct CompanyPricesParams {
    /// The first day (`YYYY-MM-DD`, inclusive); by default a year before `to`. At most 10 years before `to`.
    #[cfg_attr(feature = "openapi", param(value_type = Option<String>, format = Date, pattern = r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$", example = "2024-03-07"))]
    pub from: Option<NaiveDate>,
    /// The last day (`YYYY-MM-DD`, inclusive); by default the last day loaded. Not before `from`.
    #[cfg_attr(feature = "openapi", param(value_type = Option<String>, format = Date, pattern = r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$", example = "2025-03-07"))]
    pub to: Option<NaiveDate>,
    /// `split` (the default): splits, consolidations and bonuses applied; `total`: dividends and rights
    /// issues too; `none`: the file's numbers.
    #[cfg_attr(feature = "openapi", param(value_type = Option<Adjust>, default = "split"))]
    pub adjust: Option<Adjust>,
    /// `true` (the default): the series continues through the ISINs this one superseded (through
    /// `isin_changed`, followed back as far as they go); `false`: this ISIN's bars only.
    #[cfg_attr(feature = "openapi", param(value_type = Option<bool>, default = true))]
    pub lineage: Option<bool>,
}

impl CompanyPricesParams {
    /// How the prices are adjusted (`split` by default).
    pub fn adjust(&self) -> Adjust {
        self.adjust.unwrap_or(Adjust::Split)
    }

    /// Whether the ISINs it superseded are asked for too (the default).
    pub fn lineage(&self) -> bool {
        self.lineage.unwrap_or(true)
    }

    /// The days asked for, both inclusive, when the last day loaded is
    /// `last` (`None`: no day is loaded, and no day is asked for): `to`
    /// defaults to `last`, `from` to a year before `to`. A span longer
    /// than [`MAX_YEARS`] is an error of `from`; so is a `from` after a
    /// defaulted `to` (a `to` before a given `from` is refused by
    /// [`QueryParams::parse`] already).
    pub fn span(&self, last: Option<NaiveDate>) -> Result<Option<(NaiveDate, NaiveDate)>, ParamError> {
        let Some(to) = self.to.or(last) else { return Ok(None) };
        let from = match self.from {
            Some(from) => from,
            None => to.checked_sub_months(Months::new(12)).unwrap_or(NaiveDate::MIN),
        };
        if from > to {
            return Err(ParamError {
                param: FROM,
                detail: format!("{FROM} ({from}) is after the last day loaded ({to}); ask with an earlier {FROM}"),
            });
        }
        let earliest = to.checked_sub_months(Months::new(12 * MAX_YEARS)).unwrap_or(NaiveDate::MIN);
        if from < earliest {
            return Err(ParamError {
                param: FROM,
                detail: format!(
                    "at most {MAX_YEARS} years a request: {FROM} must be on or after {earliest} for {TO} {to} \
                     (got {from})"
                ),
            });
        }
        Ok(Some((from, to)))
    }
}

/// Parsed in the order of [`COMPANY_PRICES_PARAMETERS`]; a `to` before
/// `from`, or more than [`MAX_YEARS`] after it, is an error (of `to`, as
/// the actions routes', and of `from`, as [`CompanyPricesParams::span`]).
impl QueryParams for CompanyPricesParams {
    const NAMES: &'static [&'static str] = COMPANY_PRICES_PARAMETERS;

    fn parse<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Result<Self, ParamError> {
        let p = CompanyPricesParams {
            from: one(&get, FROM, |s| parse_day(FROM, s))?,
            to: one(&get, TO, |s| parse_day(TO, s))?,
            adjust: one(&get, ADJUST, str::parse::<Adjust>)?,
            lineage: one(&get, LINEAGE, boolean)?,
        };
        check_bounds(p.from, p.to, FROM, TO)?;
        if let (Some(_), Some(to)) = (p.from, p.to) {
            p.span(Some(to))?;
        }
        Ok(p)
    }
}

/// One adjustment applied to a series: the action, and the factor its
/// prices before the ex-date were multiplied by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1PriceAdjustment))]
pub struct Adjustment {
    /// The action's id (`GET /v1/companies/{isin}/actions` shows it whole).
    pub action_id: ActionId,
    /// Its ex-date: the bars before it are adjusted.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date, example = "2025-02-12"))]
    pub ex_date: NaiveDate,
    /// Its type.
    #[serde(rename = "type")]
    pub action_type: ActionType,
    /// The factor the prices of the bars before `ex_date` were multiplied
    /// by (a split's, consolidation's or bonus's volumes divided by).
    pub factor: f64,
}

/// `GET /v1/companies/{isin}/prices`: a security's bars, oldest first, as
/// asked adjusted, with every adjustment applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1CompanyPrices))]
pub struct CompanyPrices {
    /// The ISIN asked for.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub isin: Isin,
    /// How the prices are adjusted.
    pub adjust: Adjust,
    /// The bars, oldest first (then ISIN, then series); each names its
    /// ISIN (with `lineage`, a superseded one's bars name it).
    pub bars: Vec<Bar>,
    /// The adjustments applied to at least one bar, oldest ex-date first
    /// (then action id); none with `adjust=none`.
    pub adjustments: Vec<Adjustment>,
}

/// The factor of a dividend or rights issue (contract 13.2) given the last
/// close before its ex-date: a dividend's `(close − amount) / close`; a
/// rights issue's the theoretical ex-rights price over the close,
/// `(held × close + new × price) / ((held + new) × close)`. `None` when
/// the action is of another type, a figure is missing, or the factor would
/// not be below 1 and above 0 (a dividend not below the close, rights
/// priced at or above it: nothing to adjust).
pub fn close_factor(action: &Action, close: Price) -> Option<f64> {
    let c = close.to_f64();
    if c <= 0.0 {
        return None;
    }
    let f = match action {
        Action::Dividend { dividend } => (c - dividend.amount?) / c,
        Action::Rights { rights } => {
            let (new, held, price) = (f64::from(rights.ratio_new?), f64::from(rights.ratio_held?), rights.price?);
            (held * c + new * price) / ((held + new) * c)
        }
        _ => return None,
    };
    (f > 0.0 && f < 1.0).then(|| crate::actions::round_factor(f))
}

/// The close a dividend's or rights issue's factor is taken from (contract
/// 13.2, 14.2): the last close before `ex_date` among `bars` (sorted by
/// day; any series) of the security the action concerns, `isins`: its
/// ISIN and those an ISIN change links it to (a split's old and new ISIN
/// are one security; an exchange's bars may be filed under either);
/// `None` when none is loaded. The one rule of both the price routes'
/// adjustments and the actions routes' `factor`.
pub fn close_before(bars: &[Bar], isins: &[Isin], ex_date: NaiveDate) -> Option<Price> {
    let before = bars.partition_point(|b| b.date < ex_date);
    bars[..before].iter().rev().find(|b| isins.contains(&b.isin)).map(|b| b.close)
}

/// The factor `action` adjusts prices by, if known: its own
/// ([`CorporateAction::factor`], from its figures) or, for a dividend or
/// rights issue, [`close_factor`] with the close `close_before` gives.
pub fn factor_of(action: &CorporateAction, close_before: impl FnOnce() -> Option<Price>) -> Option<f64> {
    match action.action.action_type() {
        ActionType::Dividend | ActionType::Rights => close_factor(&action.action, close_before()?),
        _ => action.factor.or_else(|| action.action.factor()),
    }
    .filter(|f| f.is_finite() && *f > 0.0)
}

/// The factors each of `bars` (oldest first) is adjusted by, given
/// `adjustments` (oldest ex-date first), in the bars' order: its prices by
/// the product of the factors of the adjustments whose ex-date is after
/// it, its `prev_close` by those whose ex-date is after the day before it
/// (so on an ex-date too), its share counts by those of the adjustments
/// that change the number of shares ([`changes_shares`]); see
/// [`Bar::adjust`].
pub fn factors_of(bars: &[Bar], adjustments: &[Adjustment]) -> Vec<Factors> {
    let mut out = vec![Factors::NONE; bars.len()];
    let mut next = adjustments.len();
    let (mut price, mut shares) = (1.0f64, 1.0f64);
    for (bar, f) in bars.iter().zip(out.iter_mut()).rev() {
        while next > 0 && adjustments[next - 1].ex_date > bar.date {
            let a = &adjustments[next - 1];
            price *= a.factor;
            if changes_shares(a.action_type) {
                shares *= a.factor;
            }
            next -= 1;
        }
        let on_the_day: f64 =
            adjustments[..next].iter().rev().take_while(|a| a.ex_date == bar.date).map(|a| a.factor).product();
        *f = Factors { price, prev_close: price * on_the_day, shares };
    }
    out
}

/// Adjusts `bars` (oldest first) by `adjustments` (oldest ex-date first),
/// each by its [`factors_of`].
pub fn adjust_bars(bars: &mut [Bar], adjustments: &[Adjustment]) {
    let factors = factors_of(bars, adjustments);
    for (bar, f) in bars.iter_mut().zip(factors) {
        bar.adjust(f);
    }
}

/// The filters of `GET /v1/prices`. Each field is the query parameter of
/// the same name.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
pub struct MarketDayFilter {
    /// The trading day (`YYYY-MM-DD`).
    #[cfg_attr(feature = "openapi", param(required, value_type = String, format = Date, pattern = r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$", example = "2025-02-12"))]
    pub date: NaiveDate,
    /// Only bars of this series (`EQ`, `BE`, `SM`, ...).
    #[cfg_attr(feature = "openapi", param(value_type = Option<Series>, example = "EQ"))]
    pub series: Option<Series>,
}

impl MarketDayFilter {
    /// The canonical text form of the filters, which binds a cursor to them.
    pub fn canonical(&self) -> String {
        let mut c = crate::params::Canonical::default();
        c.put(DATE, Some(&self.date.to_string()));
        c.put(SERIES, self.series.as_ref().map(Series::as_str));
        c.finish()
    }

    /// Whether `bar` passes the filters: the rule the store's read
    /// follows, written plainly.
    pub fn matches(&self, bar: &Bar) -> bool {
        bar.date == self.date && self.series.is_none_or(|s| bar.series == s)
    }
}

/// The query of `GET /v1/prices`: the day, a series, and pagination.
pub type MarketDayQueryParams = Paged<MarketDayFilter>;

/// Parsed in the order of [`MARKET_PARAMETERS`]; `date` is required.
impl Filter for MarketDayFilter {
    const ROUTE_PARAMETERS: &'static [&'static str] = MARKET_PARAMETERS;

    fn parse<'a>(get: &impl Fn(&str) -> Option<&'a str>) -> Result<Self, ParamError> {
        let date = one(get, DATE, |s| parse_day(DATE, s))?
            .ok_or_else(|| ParamError { param: DATE, detail: format!("{DATE} is required: a day YYYY-MM-DD") })?;
        let series = one(get, SERIES, |s| Series::parse(s).map_err(|e| format!("{SERIES}: {e}")))?;
        Ok(MarketDayFilter { date, series })
    }
}

/// A position in a day's market: the ISIN and series of the last bar
/// served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarketKey {
    /// Its ISIN.
    pub isin: Isin,
    /// Its series.
    pub series: Series,
}

impl MarketKey {
    /// The key of a bar.
    pub fn of(bar: &Bar) -> Self {
        MarketKey { isin: bar.isin.clone(), series: bar.series }
    }
}

/// `GET /v1/prices`: a page of the market on one day, by ISIN then series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1MarketDay))]
pub struct MarketDay {
    /// The day.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date, example = "2025-02-12"))]
    pub date: NaiveDate,
    /// Its bars, by ISIN then series, as published.
    pub data: Vec<Bar>,
    /// Whether more bars follow.
    pub has_more: bool,
    /// The `cursor` of the next page (with the same `date` and `series`); `null` on the last.
    #[cfg_attr(feature = "openapi", schema(required))]
    pub next_cursor: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::{Bonus, Dividend, FaceValueChange, Rights};
    use crate::prices::{Figures, IsinSource, Paise};
    use crate::testing::day;
    use crate::testing::refused;

    #[test]
    fn lists_agree() {
        assert_eq!([MARKET_FILTER_PARAMETERS, crate::params::PAGE_PARAMETERS].concat(), MARKET_PARAMETERS);
    }

    #[test]
    fn bad_values_name_their_parameter() {
        refused::<CompanyPricesParams>(&[
            (&[("adjust", "splits")][..], ADJUST),
            (&[("adjust", "None")][..], ADJUST),
            (&[("from", "2024-1-01")][..], FROM),
            (&[("to", "2024-02-30")][..], TO),
            (&[("lineage", "yes")][..], LINEAGE),
            (&[("from", "2024-05-02"), ("to", "2024-05-01")][..], TO),
            (&[("from", "2014-05-01"), ("to", "2024-05-02")][..], FROM),
        ]);
        refused::<MarketDayQueryParams>(&[
            (&[][..], DATE),
            (&[("series", "EQ")][..], DATE),
            (&[("date", "2025-02-30")][..], DATE),
            (&[("date", "2025-02-12"), ("series", "EQX")][..], SERIES),
            (&[("date", "2025-02-12"), ("limit", "0")][..], LIMIT),
        ]);
    }

    #[test]
    fn spans() {
        let p = |pairs: &[(&str, &str)]| CompanyPricesParams::from_pairs(pairs).unwrap();
        let last = Some(day("2025-03-07"));
        assert_eq!(p(&[]).span(last).unwrap(), Some((day("2024-03-07"), day("2025-03-07"))), "a year to the last day");
        assert_eq!(p(&[]).span(None).unwrap(), None, "nothing loaded");
        assert_eq!(p(&[("to", "2024-02-29")]).span(last).unwrap(), Some((day("2023-02-28"), day("2024-02-29"))));
        assert_eq!(p(&[("from", "2015-03-07")]).span(last).unwrap(), Some((day("2015-03-07"), day("2025-03-07"))));
        assert_eq!(p(&[("from", "2015-03-06")]).span(last).unwrap_err().param, FROM, "ten years and a day");
        assert_eq!(p(&[("from", "2025-03-08")]).span(last).unwrap_err().param, FROM, "after the last day");
        let both = p(&[("from", "2015-03-07"), ("to", "2025-03-07")]);
        assert_eq!(both.span(Some(day("2020-01-01"))).unwrap(), Some((day("2015-03-07"), day("2025-03-07"))));
        assert_eq!(p(&[]).adjust(), Adjust::Split);
        assert!(p(&[]).lineage());
        assert_eq!(p(&[("adjust", "none"), ("lineage", "false")]).adjust(), Adjust::Unadjusted);
    }

    #[test]
    fn which_actions_adjust() {
        use ActionType::*;
        let all = [Dividend, Bonus, Split, Consolidation, Rights, Buyback, Demerger, Other];
        let of = |a: Adjust| all.into_iter().filter(|t| a.applies(*t)).collect::<Vec<_>>();
        assert_eq!(of(Adjust::Unadjusted), []);
        assert_eq!(of(Adjust::Split), [Bonus, Split, Consolidation]);
        assert_eq!(of(Adjust::Total), [Dividend, Bonus, Split, Consolidation, Rights]);
    }

    #[test]
    fn factors_from_the_close() {
        let close = Price::parse("100").unwrap();
        let div = |amount| Action::Dividend { dividend: Dividend { amount, kind: None } };
        assert_eq!(close_factor(&div(Some(5.0)), close), Some(0.95));
        assert_eq!(close_factor(&div(None), close), None);
        assert_eq!(close_factor(&div(Some(100.0)), close), None, "not below the close");
        assert_eq!(close_factor(&div(Some(5.0)), Price::from_units(0)), None);
        // TTL's rights 4:27 at Rs 12 (face value 1 + premium 11) on a close of 15.
        let rights = |price| Action::Rights { rights: Rights { ratio_new: Some(4), ratio_held: Some(27), price } };
        let f = close_factor(&rights(Some(12.0)), Price::parse("15").unwrap()).unwrap();
        assert!((f - (27.0 * 15.0 + 4.0 * 12.0) / (31.0 * 15.0)).abs() < 1e-12, "{f}");
        assert_eq!(close_factor(&rights(Some(15.0)), Price::parse("15").unwrap()), None, "priced at the close");
        assert_eq!(close_factor(&rights(None), close), None);
        let bonus = Action::Bonus { bonus: Bonus { ratio_new: Some(1), ratio_held: Some(1) } };
        assert_eq!(close_factor(&bonus, close), None, "a bonus's factor is its figures'");
    }

    fn bar(date: &str, close: &str, volume: u64) -> Bar {
        let f = Figures::flat(Paise::parse(close).unwrap(), volume);
        Bar::published(day(date), Isin::parse("INE592B01016").unwrap(), Series::EQ, IsinSource::File, &f)
    }

    fn adjustment(ex: &str, t: ActionType, factor: f64) -> Adjustment {
        let isin = Isin::parse("INE592B01016").unwrap();
        let action = match t {
            ActionType::Split => Action::Split {
                split: FaceValueChange { face_value_from: Some(10.0), face_value_to: Some(1.0), new_isin: None },
            },
            _ => Action::Dividend { dividend: Dividend { amount: Some(1.0), kind: None } },
        };
        Adjustment { action_id: ActionId::of(&isin, day(ex), &action), ex_date: day(ex), action_type: t, factor }
    }

    #[test]
    fn bars_before_an_ex_date_are_adjusted() {
        let mut bars =
            vec![bar("2025-02-10", "150", 100), bar("2025-02-11", "145.29", 1000), bar("2025-02-12", "14.01", 9000)];
        let adjustments =
            [adjustment("2025-02-11", ActionType::Dividend, 0.99), adjustment("2025-02-12", ActionType::Split, 0.1)];
        adjust_bars(&mut bars, &adjustments);
        let closes: Vec<String> = bars.iter().map(|b| b.close.to_string()).collect();
        assert_eq!(closes, ["14.85", "14.529", "14.01"], "150 × 0.1 × 0.99; 145.29 × 0.1; the ex-date's own");
        let prev: Vec<String> = bars.iter().map(|b| b.prev_close.to_string()).collect();
        assert_eq!(prev, ["14.85", "14.3837", "1.401"], "the day before's factors: on an ex-date, its own too");
        let volumes: Vec<u64> = bars.iter().map(|b| b.volume).collect();
        assert_eq!(volumes, [1000, 10000, 9000], "the split divides volumes; the dividend does not");
        let mut none = vec![bar("2025-02-10", "150", 100)];
        adjust_bars(&mut none, &[]);
        assert_eq!(none, [bar("2025-02-10", "150", 100)]);
    }
}
