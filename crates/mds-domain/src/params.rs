//! The query parameters of `GET /v1/companies`, defined once: their names,
//! the rules that parse them, and (feature `openapi`) their OpenAPI
//! description, all from [`CompaniesQueryParams`].
//!
//! The server parses a request with [`CompaniesQueryParams`]'s [`QueryParams::parse`], the
//! OpenAPI document lists `CompaniesQueryParams`' two parts as its
//! parameters (`IntoParams`), and the Rust client names what it sends with
//! the constants below. A test checks that the constants are the field names
//! of the `IntoParams` derive, so the three cannot drift apart.

use chrono::NaiveDate;

use crate::identity::{StatusFilter, parse_as_of};
use crate::query::{CompanyFilter, Industry, Letter, Limit, SearchTerm};
use crate::{CompanySort, Exchange, MarketCapBand, Ticker};

/// A route's query: the parameter names it defines and how their values
/// parse. The server refuses any other name before [`QueryParams::parse`]
/// sees the values.
pub trait QueryParams: Sized {
    /// Every parameter the route defines.
    const NAMES: &'static [&'static str];
    /// Parses the parameters from `get` (the value given for a name, if
    /// any); the first bad value is the error. Names not in
    /// [`QueryParams::NAMES`] are the caller's to refuse.
    fn parse<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Result<Self, ParamError>;

    /// [`QueryParams::parse`] of a query given as (name, value) pairs: the
    /// first value given for a name is its value.
    fn from_pairs(pairs: &[(&str, &str)]) -> Result<Self, ParamError> {
        Self::parse(|n| pairs.iter().find(|(k, _)| *k == n).map(|(_, v)| *v))
    }
}

/// A route that takes no query parameters.
impl QueryParams for () {
    const NAMES: &'static [&'static str] = &[];

    fn parse<'a>(_: impl Fn(&str) -> Option<&'a str>) -> Result<Self, ParamError> {
        Ok(())
    }
}

/// `letter`: first character of the ticker ([`CompanyFilter::letter`]).
pub const LETTER: &str = "letter";
/// `industry`: exact industry ([`CompanyFilter::industry`]).
pub const INDUSTRY: &str = "industry";
/// `exchange`: `bse` or `nse` ([`CompanyFilter::exchange`]).
pub const EXCHANGE: &str = "exchange";
/// `market_cap`: market-cap band ([`CompanyFilter::market_cap`]).
pub const MARKET_CAP: &str = "market_cap";
/// `search`: substring of name or ticker ([`CompanyFilter::search`]).
pub const SEARCH: &str = "search";
/// `ticker`: exact ticker ([`CompanyFilter::ticker`]).
pub const TICKER: &str = "ticker";
/// `status`: which companies by status ([`CompanyFilter::status`]).
pub const STATUS: &str = "status";
/// `as_of`: the master as of a day ([`CompanyFilter::as_of`],
/// [`DetailParams::as_of`]).
pub const AS_OF: &str = "as_of";
/// `sort`: `relevance` or `ticker` ([`CompanyFilter::sort`]).
pub const SORT: &str = "sort";
/// `exchange` of `GET /v1/symbols/{symbol}` ([`SymbolParams::exchange`]).
pub const SYMBOL_EXCHANGE: &str = "exchange";
/// `cursor`: where the page starts ([`PageParams::cursor`]).
pub const CURSOR: &str = "cursor";
/// `limit`: rows per page ([`PageParams::limit`]).
pub const LIMIT: &str = "limit";

/// The filter parameters, in the order they are checked.
pub const FILTER_PARAMETERS: &[&str] = &[LETTER, INDUSTRY, EXCHANGE, MARKET_CAP, SEARCH, TICKER, STATUS, AS_OF, SORT];
/// The pagination parameters of a list endpoint.
pub const PAGE_PARAMETERS: &[&str] = &[CURSOR, LIMIT];
/// Every parameter `GET /v1/companies` defines: the filters, then pagination.
pub const COMPANIES_PARAMETERS: &[&str] =
    &[LETTER, INDUSTRY, EXCHANGE, MARKET_CAP, SEARCH, TICKER, STATUS, AS_OF, SORT, CURSOR, LIMIT];

/// A parameter value that does not parse: which parameter, and a sentence
/// saying what it must be (the server's `400 invalid_parameter`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamError {
    /// The parameter's name (one of the constants of this module).
    pub param: &'static str,
    /// What the value must be.
    pub detail: String,
}

/// Pagination of a list endpoint: where to start and how many rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
pub struct PageParams {
    /// `next_cursor` of the previous page, sent with the same filters.
    pub cursor: Option<String>,
    /// Page size, 1 to 200 (digits only, no sign, no leading zero).
    #[cfg_attr(feature = "openapi", param(value_type = Option<u16>, minimum = 1, maximum = 200, default = 50))]
    pub limit: Limit,
}

/// The value of the parameter `param` as `get` gives it, parsed by `parse`;
/// a bad value is an error naming `param`.
pub(crate) fn one<'a, T>(
    get: &impl Fn(&str) -> Option<&'a str>,
    param: &'static str,
    parse: impl FnOnce(&'a str) -> Result<T, String>,
) -> Result<Option<T>, ParamError> {
    get(param).map(parse).transpose().map_err(|detail| ParamError { param, detail })
}

/// The canonical text form of a set of filters, which binds a cursor to
/// them: each given value as `name=length:value;`, in the order put.
#[derive(Default)]
pub(crate) struct Canonical(String);

impl Canonical {
    /// Adds the filter `name` if it has a value.
    pub(crate) fn put(&mut self, name: &str, value: Option<&str>) {
        if let Some(v) = value {
            self.0.push_str(name);
            self.0.push('=');
            self.0.push_str(&v.len().to_string());
            self.0.push(':');
            self.0.push_str(v);
            self.0.push(';');
        }
    }

    /// The text.
    pub(crate) fn finish(self) -> String {
        self.0
    }
}

/// The query of a paged route: the route's own parameters (its filters;
/// the change feed's `since`) and pagination.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Paged<F> {
    /// The route's own parameters.
    pub filter: F,
    /// Cursor and page size.
    pub page: PageParams,
}

/// The parameters a paged route has of its own, besides `cursor` and
/// `limit`.
pub trait Filter: Sized {
    /// Every parameter of the route: its own, then `cursor` and `limit`.
    const ROUTE_PARAMETERS: &'static [&'static str];
    /// Parses its own parameters from `get`; the first bad value is the
    /// error.
    fn parse<'a>(get: &impl Fn(&str) -> Option<&'a str>) -> Result<Self, ParamError>;
}

/// The route's own parameters first, then `limit`.
impl<F: Filter> QueryParams for Paged<F> {
    const NAMES: &'static [&'static str] = F::ROUTE_PARAMETERS;

    fn parse<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Result<Self, ParamError> {
        let filter = F::parse(&get)?;
        let limit = one(&get, LIMIT, Limit::parse)?.unwrap_or_default();
        Ok(Paged { filter, page: PageParams { cursor: get(CURSOR).map(str::to_owned), limit } })
    }
}

/// The query of `GET /v1/companies`: filters (AND) and pagination.
pub type CompaniesQueryParams = Paged<CompanyFilter>;

/// Parsed in the order of [`COMPANIES_PARAMETERS`].
impl Filter for CompanyFilter {
    const ROUTE_PARAMETERS: &'static [&'static str] = COMPANIES_PARAMETERS;

    fn parse<'a>(get: &impl Fn(&str) -> Option<&'a str>) -> Result<Self, ParamError> {
        let mut f = CompanyFilter {
            letter: one(get, LETTER, Letter::parse)?,
            industry: one(get, INDUSTRY, Industry::parse)?,
            exchange: one(get, EXCHANGE, str::parse::<Exchange>)?,
            market_cap: one(get, MARKET_CAP, str::parse::<MarketCapBand>)?,
            search: one(get, SEARCH, SearchTerm::parse)?,
            ticker: one(get, TICKER, |t| Ticker::parse(t).map_err(|e| e.to_string()))?,
            status: one(get, STATUS, str::parse::<StatusFilter>)?.unwrap_or_default(),
            as_of: one(get, AS_OF, |s| parse_as_of(s, NaiveDate::MAX))?,
            sort: one(get, SORT, str::parse::<CompanySort>)?,
        };
        if f.sort == Some(CompanySort::Relevance) && f.search.is_none() {
            return Err(ParamError {
                param: SORT,
                detail: "sort=relevance needs search; without it the order is ticker".into(),
            });
        }
        // One query, one form: the order is held as given or implied with
        // a search, and not at all without one (its only order), so a query
        // and its canonical form parse to the same filter.
        f.sort = f.search.as_ref().map(|_| f.order());
        Ok(f)
    }
}

/// The query of `GET /v1/companies/{isin}`: the company as of a day, or
/// as it stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
pub struct DetailParams {
    /// The company as it stood at the end of this day (`YYYY-MM-DD`, from
    /// 1990-01-01 up to today; the pattern states
    /// the years 1990 to 2099, a day after today is refused all the same): `404` when it was not listed then; its
    /// ticker and name of that day, and `status`, `superseded_by` and
    /// `supersedes` as they stood then. Listings, classification, market
    /// cap, industry, sector, band, logo and the exchange flags are not
    /// tracked over time: they are today's.
    #[cfg_attr(feature = "openapi", param(value_type = Option<String>, format = Date, pattern = r"^(199[0-9]|20[0-9][0-9])-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$", example = "2024-01-31"))]
    pub as_of: Option<NaiveDate>,
}

impl QueryParams for DetailParams {
    const NAMES: &'static [&'static str] = &[AS_OF];

    fn parse<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Result<Self, ParamError> {
        Ok(DetailParams { as_of: one(&get, AS_OF, |s| parse_as_of(s, NaiveDate::MAX))? })
    }
}

/// The query of `GET /v1/symbols/{symbol}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
pub struct SymbolParams {
    /// The exchange whose symbol it is: `nse` (the default) or `bse` (a
    /// BSE security id).
    #[cfg_attr(feature = "openapi", param(value_type = Option<Exchange>, default = "nse"))]
    pub exchange: Option<Exchange>,
}

impl SymbolParams {
    /// The exchange asked for, `nse` when none was.
    pub fn exchange(&self) -> Exchange {
        self.exchange.unwrap_or(Exchange::Nse)
    }
}

impl QueryParams for SymbolParams {
    const NAMES: &'static [&'static str] = &[SYMBOL_EXCHANGE];

    fn parse<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Result<Self, ParamError> {
        Ok(SymbolParams { exchange: one(&get, SYMBOL_EXCHANGE, str::parse::<Exchange>)? })
    }
}

/// `since`: the `sync_token` of an earlier walk of the change feed
/// ([`SyncParams::since`]).
pub const SINCE: &str = "since";
/// Every parameter `GET /v1/companies/changes` defines.
pub const CHANGES_PARAMETERS: &[&str] = &[SINCE, CURSOR, LIMIT];

/// Where the change feed starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
pub struct SyncParams {
    /// `sync_token` of the last page of an earlier walk: only what changed
    /// after it. Without it, every company.
    pub since: Option<String>,
}

/// The query of `GET /v1/companies/changes`: where to start, and pagination.
pub type ChangesQueryParams = Paged<SyncParams>;

/// Tokens and cursors are checked by whoever can open them.
impl Filter for SyncParams {
    const ROUTE_PARAMETERS: &'static [&'static str] = CHANGES_PARAMETERS;

    fn parse<'a>(get: &impl Fn(&str) -> Option<&'a str>) -> Result<Self, ParamError> {
        Ok(SyncParams { since: get(SINCE).map(str::to_owned) })
    }
}

/// The schemas of the query parameters several routes take (feature
/// `openapi`), as lenient as the routes' parsing: white space around the
/// value allowed, where the schemas of the records show the stored form.
#[cfg(feature = "openapi")]
pub mod param_schema {
    use utoipa::openapi::RefOr;
    use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};

    /// `isin`: an ISIN in any case, its check digit verified.
    pub struct Isin;

    /// `ticker`: a ticker, matched exactly but for case.
    pub struct Ticker;

    impl utoipa::PartialSchema for Isin {
        fn schema() -> RefOr<Schema> {
            let pattern = "^\\s*[A-Za-z]{2}[A-Za-z0-9]{9}[0-9]\\s*$";
            ObjectBuilder::new().schema_type(Type::String).pattern(Some(pattern)).build().into()
        }
    }

    impl utoipa::ToSchema for Isin {}

    impl utoipa::PartialSchema for Ticker {
        fn schema() -> RefOr<Schema> {
            let pattern = "^\\s*[!-~]{1,32}\\s*$";
            ObjectBuilder::new().schema_type(Type::String).min_length(Some(1)).pattern(Some(pattern)).build().into()
        }
    }

    impl utoipa::ToSchema for Ticker {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_agree() {
        assert_eq!([FILTER_PARAMETERS, PAGE_PARAMETERS].concat(), COMPANIES_PARAMETERS);
    }

    #[test]
    fn bad_values_name_their_parameter_in_order() {
        assert_eq!(CompaniesQueryParams::from_pairs(&[("limit", "0")]).unwrap_err().param, LIMIT);
        assert_eq!(CompaniesQueryParams::from_pairs(&[("limit", "0"), ("letter", "ab")]).unwrap_err().param, LETTER);
        assert_eq!(CompaniesQueryParams::from_pairs(&[("industry", "")]).unwrap_err().param, INDUSTRY);
        let q = CompaniesQueryParams::from_pairs(&[("ticker", " abb "), ("cursor", "c"), ("limit", "7")]).unwrap();
        assert_eq!(q.filter.ticker.unwrap().as_str(), "ABB");
        assert_eq!((q.page.cursor.as_deref(), q.page.limit.get()), (Some("c"), 7));
        assert_eq!(CompaniesQueryParams::from_pairs(&[]).unwrap(), CompaniesQueryParams::default());
    }

    #[test]
    fn a_search_is_ranked_unless_sorted_by_ticker() {
        let f = |pairs: &[(&str, &str)]| CompaniesQueryParams::from_pairs(pairs).map(|q| q.filter);
        assert_eq!(f(&[("search", "bank")]).unwrap().order(), CompanySort::Relevance);
        assert_eq!(f(&[]).unwrap().order(), CompanySort::Ticker);
        assert_eq!(f(&[("search", "bank"), ("sort", "ticker")]).unwrap().order(), CompanySort::Ticker);
        assert_eq!(f(&[("search", "bank"), ("sort", "relevance")]).unwrap().order(), CompanySort::Relevance);
        assert_eq!(f(&[("sort", "ticker")]).unwrap().order(), CompanySort::Ticker);
        assert_eq!(f(&[("sort", "relevance")]).unwrap_err().param, SORT);
        assert_eq!(f(&[("search", "bank"), ("sort", "name")]).unwrap_err().param, SORT);
        // The order binds a search's cursor; a list without a search keeps
        // its canonical form (and its cursors).
        let (ranked, by_ticker) =
            (f(&[("search", "bank")]).unwrap(), f(&[("search", "bank"), ("sort", "ticker")]).unwrap());
        assert_ne!(ranked.canonical(), by_ticker.canonical());
        assert_eq!(ranked.canonical(), f(&[("search", "bank"), ("sort", "relevance")]).unwrap().canonical());
        assert_eq!(f(&[("sort", "ticker")]).unwrap().canonical(), "");
        // A query and the one it implies are the same filter.
        assert_eq!(ranked, f(&[("search", "bank"), ("sort", "relevance")]).unwrap());
        assert_eq!(f(&[("sort", "ticker")]).unwrap(), f(&[]).unwrap());
    }

    /// The `IntoParams` derives name exactly the parameters the constants
    /// name, in the same order: one list, whichever way it is read.
    #[cfg(feature = "openapi")]
    #[test]
    fn openapi_parameters_are_the_constants() {
        use crate::testing::param_names;
        assert_eq!(param_names::<CompanyFilter>(), FILTER_PARAMETERS);
        assert_eq!(param_names::<PageParams>(), PAGE_PARAMETERS);
    }
}
