//! The queries and answers of the corporate-action routes (contract 13.3),
//! defined once: `GET /v1/companies/{isin}/actions` ([`CompanyActionsParams`],
//! answered with [`CompanyActions`]) and the calendar `GET /v1/actions`
//! ([`ActionCalendarQueryParams`], answered with a [`Page`](crate::Page) of
//! [`CorporateAction`], in [`calendar_order`] and resumed after an
//! [`ActionKey`]).
//!
//! The server parses a request with these types' [`QueryParams::parse`],
//! the OpenAPI document lists them as the routes' parameters
//! (`IntoParams`), and the Rust client names what it sends with the
//! constants below; a test checks that the constants are the names of the
//! `IntoParams` derives. [`ActionCalendarFilter::matches`] and
//! [`CompanyActionsParams::matches`] are the rules written plainly, for the
//! tests that hold the store to them.

use std::cmp::Ordering;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use crate::actions::{ActionId, ActionType, CorporateAction};
use crate::params::{CURSOR, EXCHANGE, Filter, LIMIT, Paged, ParamError, QueryParams, one};
use crate::{Exchange, Isin};

/// `type`: only actions of this type (both routes).
pub const TYPE: &str = "type";
/// `from`: ex-dates on or after ([`CompanyActionsParams::from`]).
pub const FROM: &str = "from";
/// `to`: ex-dates on or before ([`CompanyActionsParams::to`]).
pub const TO: &str = "to";
/// `lineage`: with the ISINs it superseded ([`CompanyActionsParams::lineage`]).
pub const LINEAGE: &str = "lineage";
/// `ex_date_from`: the calendar from this ex-date ([`ActionCalendarFilter::ex_date_from`]).
pub const EX_DATE_FROM: &str = "ex_date_from";
/// `ex_date_to`: the calendar up to this ex-date ([`ActionCalendarFilter::ex_date_to`]).
pub const EX_DATE_TO: &str = "ex_date_to";

/// Every parameter `GET /v1/companies/{isin}/actions` defines.
pub const COMPANY_ACTIONS_PARAMETERS: &[&str] = &[TYPE, FROM, TO, LINEAGE];
/// The filter parameters of `GET /v1/actions`, in the order they are checked.
pub const CALENDAR_FILTER_PARAMETERS: &[&str] = &[EX_DATE_FROM, EX_DATE_TO, TYPE, EXCHANGE];
/// Every parameter `GET /v1/actions` defines: the filters, then pagination.
pub const CALENDAR_PARAMETERS: &[&str] = &[EX_DATE_FROM, EX_DATE_TO, TYPE, EXCHANGE, CURSOR, LIMIT];

/// Parses the day parameter `name`: `YYYY-MM-DD`, a day that exists (the
/// document's pattern states the form; `2026-02-30` is refused all the same).
pub fn parse_day(name: &str, s: &str) -> Result<NaiveDate, String> {
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .filter(|_| s.len() == 10)
        .ok_or_else(|| format!("{name} must be a date YYYY-MM-DD (got {s:?})"))
}

/// Parses an action type.
fn action_type(s: &str) -> Result<ActionType, String> {
    s.parse::<ActionType>()
}

/// Refuses bounds that leave no day: `to` before `from` is an error of
/// `to` (the actions routes' and the price routes' rule).
pub(crate) fn check_bounds(
    from: Option<NaiveDate>,
    to: Option<NaiveDate>,
    from_name: &'static str,
    to_name: &'static str,
) -> Result<(), ParamError> {
    match (from, to) {
        (Some(f), Some(t)) if t < f => Err(ParamError {
            param: to_name,
            detail: format!("{to_name} ({t}) must not be before {from_name} ({f}): both are inclusive"),
        }),
        _ => Ok(()),
    }
}

/// The query of `GET /v1/companies/{isin}/actions`; all given filters must
/// hold (AND). Each field is the query parameter of the same name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
pub struct CompanyActionsParams {
    /// Only actions of this type.
    #[cfg_attr(feature = "openapi", param(rename = "type", value_type = Option<ActionType>, example = "split"))]
    pub action_type: Option<ActionType>,
    /// Ex-dates on or after this day (`YYYY-MM-DD`, inclusive).
    #[cfg_attr(feature = "openapi", param(value_type = Option<String>, format = Date, pattern = r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$", example = "2024-01-01"))]
    pub from: Option<NaiveDate>,
    /// Ex-dates on or before this day (`YYYY-MM-DD`, inclusive); not before `from`.
    #[cfg_attr(feature = "openapi", param(value_type = Option<String>, format = Date, pattern = r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$", example = "2024-12-31"))]
    pub to: Option<NaiveDate>,
    /// `true` (the default): also the actions of the ISINs this one superseded (through
    /// `isin_changed`, followed back as far as they go); `false`: this ISIN's only.
    #[cfg_attr(feature = "openapi", param(value_type = Option<bool>, default = true))]
    pub lineage: Option<bool>,
}

impl CompanyActionsParams {
    /// Whether the ISINs it superseded are asked for too (the default).
    pub fn lineage(&self) -> bool {
        self.lineage.unwrap_or(true)
    }

    /// Whether `a` passes the filters (type and ex-date bounds): the rule
    /// the store's read follows, written plainly.
    pub fn matches(&self, a: &CorporateAction) -> bool {
        self.action_type.is_none_or(|t| a.action.action_type() == t)
            && self.from.is_none_or(|d| a.ex_date >= d)
            && self.to.is_none_or(|d| a.ex_date <= d)
    }
}

/// Parses `lineage`: `true` or `false` (the actions routes' and the price
/// routes').
pub(crate) fn boolean(s: &str) -> Result<bool, String> {
    match s {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!("lineage must be true or false (got {s:?})")),
    }
}

/// Parsed in the order of [`COMPANY_ACTIONS_PARAMETERS`]; a `to` before
/// `from` is an error of `to`.
impl QueryParams for CompanyActionsParams {
    const NAMES: &'static [&'static str] = COMPANY_ACTIONS_PARAMETERS;

    fn parse<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Result<Self, ParamError> {
        let p = CompanyActionsParams {
            action_type: one(&get, TYPE, action_type)?,
            from: one(&get, FROM, |s| parse_day(FROM, s))?,
            to: one(&get, TO, |s| parse_day(TO, s))?,
            lineage: one(&get, LINEAGE, boolean)?,
        };
        check_bounds(p.from, p.to, FROM, TO)?;
        Ok(p)
    }
}

/// `GET /v1/companies/{isin}/actions`: the actions of an ISIN (and, with
/// `lineage`, of the ISINs it superseded), `ex_date` descending, then `id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1CompanyActions))]
pub struct CompanyActions {
    /// The ISIN asked for.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub isin: Isin,
    /// Its actions, `ex_date` descending, then `id`.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<crate::actions::CorporateAction>))]
    pub data: Vec<CorporateAction>,
}

/// The filters of the calendar `GET /v1/actions`; all given ones must hold
/// (AND). Each field is the query parameter of the same name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
pub struct ActionCalendarFilter {
    /// Ex-dates on or after this day (`YYYY-MM-DD`, inclusive).
    #[cfg_attr(feature = "openapi", param(value_type = Option<String>, format = Date, pattern = r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$", example = "2026-07-01"))]
    pub ex_date_from: Option<NaiveDate>,
    /// Ex-dates on or before this day (`YYYY-MM-DD`, inclusive); not before `ex_date_from`.
    #[cfg_attr(feature = "openapi", param(value_type = Option<String>, format = Date, pattern = r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$", example = "2026-07-07"))]
    pub ex_date_to: Option<NaiveDate>,
    /// Only actions of this type.
    #[cfg_attr(feature = "openapi", param(rename = "type", value_type = Option<ActionType>, example = "dividend"))]
    pub action_type: Option<ActionType>,
    /// Only actions this exchange published (`nse` or `bse`; an action both published passes either).
    #[cfg_attr(feature = "openapi", param(value_type = Option<Exchange>))]
    pub exchange: Option<Exchange>,
}

impl ActionCalendarFilter {
    /// Whether `a` passes every filter: the rule the store's read follows,
    /// written plainly.
    pub fn matches(&self, a: &CorporateAction) -> bool {
        self.ex_date_from.is_none_or(|d| a.ex_date >= d)
            && self.ex_date_to.is_none_or(|d| a.ex_date <= d)
            && self.action_type.is_none_or(|t| a.action.action_type() == t)
            && self.exchange.is_none_or(|e| a.sources.contains(&e))
    }

    /// The canonical text form of the filters, which binds a cursor to them.
    pub fn canonical(&self) -> String {
        let mut c = crate::params::Canonical::default();
        c.put(EX_DATE_FROM, self.ex_date_from.map(|d| d.to_string()).as_deref());
        c.put(EX_DATE_TO, self.ex_date_to.map(|d| d.to_string()).as_deref());
        c.put(TYPE, self.action_type.map(ActionType::as_str));
        c.put(EXCHANGE, self.exchange.map(Exchange::as_str));
        c.finish()
    }
}

/// The query of `GET /v1/actions`: filters (AND) and pagination.
pub type ActionCalendarQueryParams = Paged<ActionCalendarFilter>;

/// Parsed in the order of [`CALENDAR_PARAMETERS`]; an `ex_date_to` before
/// `ex_date_from` is an error of `ex_date_to`.
impl Filter for ActionCalendarFilter {
    const ROUTE_PARAMETERS: &'static [&'static str] = CALENDAR_PARAMETERS;

    fn parse<'a>(get: &impl Fn(&str) -> Option<&'a str>) -> Result<Self, ParamError> {
        let f = ActionCalendarFilter {
            ex_date_from: one(get, EX_DATE_FROM, |s| parse_day(EX_DATE_FROM, s))?,
            ex_date_to: one(get, EX_DATE_TO, |s| parse_day(EX_DATE_TO, s))?,
            action_type: one(get, TYPE, action_type)?,
            exchange: one(get, EXCHANGE, str::parse::<Exchange>)?,
        };
        check_bounds(f.ex_date_from, f.ex_date_to, EX_DATE_FROM, EX_DATE_TO)?;
        Ok(f)
    }
}

/// A position in the calendar: the ex-date and id of the last action
/// served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionKey {
    /// Its ex-date.
    pub ex_date: NaiveDate,
    /// Its id.
    pub id: ActionId,
}

impl ActionKey {
    /// The key of an action.
    pub fn of(a: &CorporateAction) -> Self {
        ActionKey { ex_date: a.ex_date, id: a.id.clone() }
    }
}

/// The order of the calendar: `ex_date` ascending, then `id`.
pub fn calendar_order(a: &ActionKey, b: &ActionKey) -> Ordering {
    a.ex_date.cmp(&b.ex_date).then_with(|| a.id.cmp(&b.id))
}

/// The order of a company's actions: `ex_date` descending, then `id`.
pub fn company_order(a: &ActionKey, b: &ActionKey) -> Ordering {
    b.ex_date.cmp(&a.ex_date).then_with(|| a.id.cmp(&b.id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::refused;

    #[test]
    fn lists_agree() {
        assert_eq!([CALENDAR_FILTER_PARAMETERS, crate::params::PAGE_PARAMETERS].concat(), CALENDAR_PARAMETERS);
    }

    #[test]
    fn bad_values_name_their_parameter() {
        refused::<CompanyActionsParams>(&[
            (&[("type", "spilt")][..], TYPE),
            (&[("from", "2024-1-01")][..], FROM),
            (&[("to", "2024-02-30")][..], TO),
            (&[("lineage", "yes")][..], LINEAGE),
            (&[("lineage", "TRUE")][..], LINEAGE),
            (&[("from", "2024-05-02"), ("to", "2024-05-01")][..], TO),
        ]);
        refused::<ActionCalendarQueryParams>(&[
            (&[("ex_date_from", "20240101")][..], EX_DATE_FROM),
            (&[("ex_date_to", "x")][..], EX_DATE_TO),
            (&[("type", "")][..], TYPE),
            (&[("exchange", "lse")][..], EXCHANGE),
            (&[("limit", "201")][..], LIMIT),
            (&[("ex_date_from", "2024-05-02"), ("ex_date_to", "2024-05-01")][..], EX_DATE_TO),
        ]);
    }

    #[test]
    fn good_values_parse() {
        let p = CompanyActionsParams::from_pairs(&[("type", "split"), ("from", "2024-05-01"), ("to", "2024-05-01")])
            .unwrap();
        assert_eq!(p.action_type, Some(ActionType::Split));
        assert!(p.lineage(), "lineage is the default");
        assert!(!CompanyActionsParams::from_pairs(&[("lineage", "false")]).unwrap().lineage());
        let q = ActionCalendarQueryParams::from_pairs(&[("exchange", "bse"), ("limit", "7"), ("cursor", "c")]).unwrap();
        assert_eq!(q.filter.exchange, Some(Exchange::Bse));
        assert_eq!((q.page.cursor.as_deref(), q.page.limit.get()), (Some("c"), 7));
        assert_eq!(ActionCalendarQueryParams::from_pairs(&[]).unwrap(), ActionCalendarQueryParams::default());
        assert_eq!(ActionCalendarFilter::default().canonical(), "");
        let a = ActionCalendarQueryParams::from_pairs(&[("ex_date_from", "2024-01-01")]).unwrap().filter;
        let b = ActionCalendarQueryParams::from_pairs(&[("ex_date_to", "2024-01-01")]).unwrap().filter;
        assert_ne!(a.canonical(), b.canonical(), "a bound is not the other bound");
    }

    #[test]
    fn orders() {
        let key = |d: &str, id: &str| ActionKey { ex_date: d.parse().unwrap(), id: ActionId::parse(id).unwrap() };
        let (a, b, c) = (
            key("2024-01-01", "ca_0000000000000002"),
            key("2024-01-02", "ca_0000000000000001"),
            key("2024-01-02", "ca_0000000000000003"),
        );
        let mut v = vec![c.clone(), a.clone(), b.clone()];
        v.sort_by(calendar_order);
        assert_eq!(v, [a.clone(), b.clone(), c.clone()]);
        v.sort_by(company_order);
        assert_eq!(v, [b, c, a]);
    }

    #[cfg(feature = "openapi")]
    #[test]
    fn openapi_parameters_are_the_constants() {
        use crate::testing::param_names;
        assert_eq!(param_names::<ActionCalendarFilter>(), CALENDAR_FILTER_PARAMETERS);
        assert_eq!(param_names::<CompanyActionsParams>(), COMPANY_ACTIONS_PARAMETERS);
    }
}
