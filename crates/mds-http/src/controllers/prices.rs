//! The end-of-day price routes (contract 14.2): `GET
//! /v1/companies/{isin}/prices`, a security's series, adjusted and
//! continued through the ISINs it superseded ([`Node::company_prices`]),
//! and `GET /v1/prices`, the market on one day in keyset pages
//! ([`Node::market_prices`]); each as JSON or, asked with `Accept:
//! text/csv`, as CSV (`Vary: Accept`).
//!
//! [`Node::company_prices`]: mds_node::Node::company_prices
//! [`Node::market_prices`]: mds_node::Node::market_prices

use axum::extract::{FromRequestParts, Path, RawQuery, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;
use mds_domain::price_query::{CompanyPricesParams, MarketDayFilter, MarketDayQueryParams};
use mds_domain::{Isin, PageParams};
use mds_node::Tagged;
use mds_node::prices::PriceFormat;

use super::{Identifier, tagged};
use crate::error::ApiError;
use crate::params::parse_query;
use crate::state::AppState;

/// The media type of the CSV form.
const TEXT_CSV: &str = "text/csv; charset=utf-8";

/// The form `Accept` asks for: CSV when it ranks `text/csv` (or `text/*`)
/// above `application/json` (or `application/*`), by their `q` (1 when
/// not given); JSON otherwise (no `Accept`, `*/*`, a tie, or neither).
pub fn format_of(headers: &HeaderMap) -> PriceFormat {
    let (mut csv, mut json) = (0.0f32, 0.0f32);
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let mut parts = item.split(';');
            let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q=").and_then(|q| q.trim().parse::<f32>().ok()))
                .next()
                .unwrap_or(1.0);
            match media.as_str() {
                "text/csv" | "text/*" => csv = csv.max(q),
                "application/json" | "application/*" => json = json.max(q),
                _ => {}
            }
        }
    }
    match csv > 0.0 && csv > json {
        true => PriceFormat::Csv,
        false => PriceFormat::Json,
    }
}

/// The form a request's `Accept` asks for ([`format_of`]), read from its
/// headers where they are (an extractor of the whole `HeaderMap` copies
/// them).
pub struct Form(pub PriceFormat);

impl<S: Sync> FromRequestParts<S> for Form {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Form(format_of(&parts.headers)))
    }
}

/// The answer in its form, with `Vary: Accept` (the envelope adds
/// `accept-encoding`).
fn render(t: Tagged, format: PriceFormat) -> Response {
    let mut resp = tagged(t);
    let h = resp.headers_mut();
    if format == PriceFormat::Csv {
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static(TEXT_CSV));
    }
    h.append(header::VARY, HeaderValue::from_static("accept"));
    resp
}

/// Handler of `GET /v1/companies/{isin}/prices`. A bad query is `400`
/// before a malformed or unknown ISIN is `404`.
#[utoipa::path(
    get,
    path = crate::components::PATH_IN_TABLE,
    description = "The end-of-day bars of the company with this ISIN, oldest first (then ISIN, then series), from \
`from` to `to` (both inclusive; `to` defaults to the last day loaded, `from` to a year before `to`; at most 10 years a \
request). With `lineage` (the default) the series continues through the ISINs this one superseded (a split that gave \
it a new ISIN), each bar naming its `isin`. `adjust=split` (the default) multiplies the prices of each bar by the \
`factor` of every split, consolidation and bonus whose ex-date is after it and that has gone ex by the last day \
loaded, and divides its volume and delivered quantity by it; `adjust=total` also applies dividends and rights issues \
(their factor from the last close before the ex-date; prices only); `adjust=none` gives the file's numbers. Adjusted \
prices are rounded to four decimals, adjusted share counts to whole shares. `adjustments` lists every factor applied, \
so anyone can undo them. A day with no bar (a holiday, a suspension) is absent: no bar is ever invented. With \
`Accept: text/csv` the answer is the bars as CSV: a header line of the bar's field names and a line a bar (no \
adjustments), tagged apart from the JSON form.",
    params(crate::components::IsinPath, CompanyPricesParams),
    responses(
        (status = 200, description = "The company's bars.", content(
            (mds_domain::price_query::CompanyPrices = "application/json"),
            (String = "text/csv", example = json!("date,isin,series,open,high,low,close,last,prev_close,volume,turnover,trades,delivery_qty,delivery_pct,isin_source\n2025-02-12,INE592B01024,BE,14.35,14.35,13.80,14.01,14.00,14.53,251384,3533569.27,812,,,file\n"))
        ), headers(("Vary" = String, description = "`Accept` (and `accept-encoding`): the form depends on it."))),
        (status = 400, response = crate::components::CompanyPricesBadRequest),
    )
)]
pub async fn company(
    State(state): State<AppState>,
    segment: Option<Path<String>>,
    Form(format): Form,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let Some(isin) = segment.and_then(|Path(s)| Isin::from_segment(&s)) else {
        parse_query::<CompanyPricesParams>(raw.as_deref())?;
        return Err(ApiError::not_found(Isin::NOT_FOUND));
    };
    let found = state.node().company_prices(&isin, raw.as_deref(), format, parse_query::<CompanyPricesParams>).await?;
    found.map(|t| render(t, format)).ok_or_else(|| ApiError::not_found(Isin::NOT_FOUND))
}

/// Handler of `GET /v1/prices`.
#[utoipa::path(
    get,
    path = crate::components::PATH_IN_TABLE,
    description = "The market on one day: every bar of `date` (of one `series` if asked), as published, by ISIN then \
series. A day with no bars (a holiday, or not loaded) has an empty `data`. Pagination is keyset-based: pass \
`next_cursor` back as `cursor` with the same `date` and `series` (`limit` may change). With `Accept: text/csv` the \
answer is the whole day as CSV in one response (a header line of the bar's field names and a line a bar; `cursor` \
and `limit` are checked but not used), tagged apart from the JSON form.",
    params(MarketDayFilter, PageParams),
    responses(
        (status = 200, description = "A page of the day's bars.", content(
            (mds_domain::price_query::MarketDay = "application/json"),
            (String = "text/csv")
        ), headers(("Vary" = String, description = "`Accept` (and `accept-encoding`): the form depends on it."))),
        (status = 400, response = crate::components::MarketPricesBadRequest),
    )
)]
pub async fn market(
    State(state): State<AppState>,
    Form(format): Form,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let page = state.node().market_prices(raw.as_deref(), format, parse_query::<MarketDayQueryParams>).await?;
    Ok(render(page, format))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controllers::testing::assert_refused;

    #[test]
    fn each_bad_value_names_its_parameter() {
        let bad = [
            ("adjust=splits", "adjust"),
            ("from=2024-13-01", "from"),
            ("to=yesterday", "to"),
            ("from=2024-02-01&to=2024-01-31", "to"),
            ("from=2014-01-01&to=2024-01-02", "from"),
            ("lineage=1", "lineage"),
            ("adjust=split&adjust=total", "adjust"),
        ];
        assert_refused(parse_query::<CompanyPricesParams>, &bad, &["limit=5", "date=2024-01-01"]);
        let bad = [
            ("series=EQ", "date"),
            ("date=2025-02-30", "date"),
            ("date=2025-02-12&series=EQQ", "series"),
            ("date=2025-02-12&limit=0", "limit"),
        ];
        assert_refused(parse_query::<MarketDayQueryParams>, &bad, &["isin=INE592B01016"]);
    }

    #[test]
    fn accept_chooses_the_form() {
        let of = |accept: Option<&str>| {
            let mut h = HeaderMap::new();
            if let Some(a) = accept {
                h.insert(header::ACCEPT, HeaderValue::from_str(a).unwrap());
            }
            format_of(&h)
        };
        for csv in ["text/csv", "TEXT/CSV; charset=utf-8", "text/csv, application/json;q=0.5", "text/*"] {
            assert_eq!(of(Some(csv)), PriceFormat::Csv, "{csv}");
        }
        for json in [
            None,
            Some("*/*"),
            Some("application/json"),
            Some("text/csv;q=0.5, application/json"),
            Some("application/json, text/csv"),
            Some("text/csv;q=0"),
            Some("text/html"),
        ] {
            assert_eq!(of(json), PriceFormat::Json, "{json:?}");
        }
    }
}
