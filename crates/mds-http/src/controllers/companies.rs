//! `GET /v1/companies`: one keyset page of the filtered company list.

use axum::extract::{RawQuery, State};
use axum::response::Response;
use mds_domain::{CompanyFilter, ErrorCode, Exchange, Letter, Limit, MarketCapBand, SearchTerm, Ticker};

use super::{Caching, json};
use crate::error::ApiError;
use crate::params::Params;
use crate::state::AppState;

/// The query parameters the endpoint defines.
pub const PARAMETERS: &[&str] =
    &["letter", "industry", "exchange", "market_cap", "search", "ticker", "cursor", "limit"];

/// The longest `industry` value accepted.
const INDUSTRY_MAX_LEN: usize = 200;

/// A parsed request: filters, page size, cursor.
#[derive(Debug)]
pub struct CompaniesRequest {
    /// The filters (AND).
    pub filter: CompanyFilter,
    /// Page size.
    pub limit: Limit,
    /// The cursor as sent, if any.
    pub cursor: Option<String>,
}

impl CompaniesRequest {
    /// Parses and validates the query string.
    pub fn parse(raw: Option<&str>) -> Result<Self, ApiError> {
        let p = Params::parse(raw, PARAMETERS)?;
        let bad = |param: &'static str| move |detail: String| ApiError::invalid_parameter(param, detail);
        let filter = CompanyFilter {
            letter: p.get("letter").map(Letter::parse).transpose().map_err(bad("letter"))?,
            industry: p.get("industry").map(parse_industry).transpose().map_err(bad("industry"))?,
            exchange: p.get("exchange").map(str::parse::<Exchange>).transpose().map_err(bad("exchange"))?,
            market_cap: p.get("market_cap").map(str::parse::<MarketCapBand>).transpose().map_err(bad("market_cap"))?,
            search: p.get("search").map(SearchTerm::parse).transpose().map_err(bad("search"))?,
            ticker: p
                .get("ticker")
                .map(|t| Ticker::parse(t).map_err(|e| e.to_string()))
                .transpose()
                .map_err(bad("ticker"))?,
        };
        let limit = p.get("limit").map(Limit::parse).transpose().map_err(bad("limit"))?.unwrap_or_default();
        Ok(CompaniesRequest { filter, limit, cursor: p.get("cursor").map(str::to_owned) })
    }
}

fn parse_industry(s: &str) -> Result<String, String> {
    if s.is_empty() || s.len() > INDUSTRY_MAX_LEN {
        Err(format!("industry must be 1 to {INDUSTRY_MAX_LEN} bytes, matched exactly"))
    } else {
        Ok(s.to_owned())
    }
}

/// Handler.
#[utoipa::path(
    get,
    path = "/v1/companies",
    operation_id = "listCompanies",
    tag = "companies",
    summary = "List companies",
    description = "One page of companies, ordered by `ticker` then `isin`. Pagination is keyset-based: pass \
`next_cursor` back as `cursor` with the same filters (`limit` may change). Counts against the monthly quota.",
    params(crate::openapi::CompaniesQuery),
    responses(
        (status = 200, description = "A page of companies.", body = crate::openapi::V1CompanyPage, content_type = "application/json"),
        (status = 304, description = "Not modified: `If-None-Match` matched the `ETag`; no body, not counted."),
        (status = 400, response = crate::openapi::CompaniesBadRequest),
        (status = 401, response = crate::openapi::Unauthorized),
        (status = 405, response = crate::openapi::MethodNotAllowed),
        (status = 429, response = crate::openapi::TooManyRequests),
        (status = 500, response = crate::openapi::Internal),
        (status = 503, response = crate::openapi::Unavailable),
    )
)]
pub async fn list(State(state): State<AppState>, RawQuery(raw): RawQuery) -> Result<Response, ApiError> {
    let req = CompaniesRequest::parse(raw.as_deref())?;
    let after = match &req.cursor {
        Some(c) => Some(
            state
                .cursors
                .decode(&req.filter, c)
                .map_err(|e| ApiError::new(ErrorCode::InvalidCursor, e.to_string()).with_param("cursor"))?,
        ),
        None => None,
    };
    let catalog = state.catalog();
    let page = catalog.page(&req.filter, after.as_ref(), req.limit.get());
    let next_cursor = page.next.as_ref().map(|k| state.cursors.encode(&req.filter, k));
    let mut body = Vec::with_capacity(64 + page.rows.iter().map(|r| r.len() + 1).sum::<usize>());
    body.extend_from_slice(b"{\"data\":[");
    for (i, row) in page.rows.iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(row.as_bytes());
    }
    body.extend_from_slice(b"],\"next_cursor\":");
    serde_json::to_writer(&mut body, &next_cursor).expect("a string serialises");
    body.extend_from_slice(if page.has_more() { b",\"has_more\":true}" } else { b",\"has_more\":false}" });
    Ok(json(body, Caching::Private(state.config.cache_max_age.as_secs())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(q: &str) -> (ErrorCode, Option<String>) {
        let e = CompaniesRequest::parse(Some(q)).unwrap_err();
        let r = axum::response::IntoResponse::into_response(e);
        let p = r.extensions().get::<mds_domain::Problem>().unwrap();
        (ErrorCode::parse(&p.code).unwrap(), p.param.clone())
    }

    #[test]
    fn each_bad_value_names_its_parameter() {
        for (q, param) in [
            ("limit=0", "limit"),
            ("limit=201", "limit"),
            ("limit=x", "limit"),
            ("letter=ab", "letter"),
            ("exchange=lse", "exchange"),
            ("market_cap=huge", "market_cap"),
            ("search=a", "search"),
            ("search=%20a%20", "search"),
            ("ticker=", "ticker"),
            ("industry=", "industry"),
            ("limit=5&limit=6", "limit"),
        ] {
            assert_eq!(err(q), (ErrorCode::InvalidParameter, Some(param.to_owned())), "{q}");
        }
        assert_eq!(err("industy=x"), (ErrorCode::UnknownParameter, Some("industy".to_owned())));
    }

    #[test]
    fn good_values_parse() {
        let r = CompaniesRequest::parse(Some("letter=a&exchange=nse&market_cap=mid_cap&limit=200&ticker=abb")).unwrap();
        assert_eq!(r.limit.get(), 200);
        assert_eq!(r.filter.letter.unwrap().as_char(), 'A');
        assert_eq!(r.filter.ticker.unwrap().as_str(), "ABB");
        assert_eq!(CompaniesRequest::parse(None).unwrap().limit.get(), 50);
    }
}
