//! The corporate-action routes (contract 13.3): `GET
//! /v1/companies/{isin}/actions`, a company's actions with (by default)
//! those of the ISINs it superseded ([`Node::company_actions`]), and `GET
//! /v1/actions`, the calendar's keyset pages
//! ([`Node::page`]); both kept per query until an import
//! changes the actions.
//!
//! [`Node::company_actions`]: mds_node::Node::company_actions
//! [`Node::page`]: mds_node::Node::page

use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use mds_domain::action_query::{ActionCalendarFilter, ActionCalendarQueryParams, CompanyActionsParams};
use mds_domain::{Isin, PageParams};

use super::{Identifier, found, tagged};
use crate::error::ApiError;
use crate::params::parse_query;
use crate::state::AppState;

/// Handler of `GET /v1/companies/{isin}/actions`. A bad query is `400`
/// before a malformed or unknown ISIN is `404`.
#[utoipa::path(
    get,
    path = crate::components::PATH_IN_TABLE,
    description = "The corporate actions of the company with this ISIN, `ex_date` descending, then `id`: with \
`lineage` (the default) also those of the ISINs it superseded (a split that gave it a new ISIN, followed back as far \
as the identity history goes), so a security's splits, bonuses and dividends read as one history; each action keeps \
the `isin` it was published for. `from` and `to` bound the ex-dates, both inclusive. Every action is answered: \
there are few per company, so the route is not paged. A company with none has an empty `data`. \
Each action carries its type's own object with its figures, the exchange's own text (`purpose`), who published \
it (`sources`) and the price adjustment `factor`.",
    params(crate::components::IsinPath, CompanyActionsParams),
    responses(
        (status = 200, description = "The company's actions.", body = mds_domain::action_query::CompanyActions, content_type = "application/json"),
        (status = 400, response = crate::components::CompanyActionsBadRequest),
    )
)]
pub async fn company(
    State(state): State<AppState>,
    segment: Option<Path<String>>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let Some(isin) = segment.and_then(|Path(s)| Isin::from_segment(&s)) else {
        parse_query::<CompanyActionsParams>(raw.as_deref())?;
        return Err(ApiError::not_found(Isin::NOT_FOUND));
    };
    found::<Isin>(state.node().company_actions(&isin, raw.as_deref(), parse_query::<CompanyActionsParams>).await?)
}

/// Handler of `GET /v1/actions`.
#[utoipa::path(
    get,
    path = crate::components::PATH_IN_TABLE,
    description = "The corporate-action calendar (\"what goes ex next week\"): every action whose ex-date is \
between `ex_date_from` and `ex_date_to` (both inclusive, either optional), of one `type` and published by one \
`exchange` if asked, `ex_date` ascending, then `id`. Pagination is keyset-based: pass `next_cursor` back as \
`cursor` with the same filters (`limit` may change); actions imported while you page cause no duplicates or \
skips.",
    params(ActionCalendarFilter, PageParams),
    responses(
        (status = 200, description = "A page of actions.", body = crate::components::ActionPage, content_type = "application/json"),
        (status = 400, response = crate::components::ActionsBadRequest),
    )
)]
pub async fn calendar(State(state): State<AppState>, RawQuery(raw): RawQuery) -> Result<Response, ApiError> {
    Ok(tagged(state.node().page(raw.as_deref(), parse_query::<ActionCalendarQueryParams>).await?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controllers::testing::assert_refused;

    #[test]
    fn each_bad_value_names_its_parameter() {
        let bad = [
            ("type=splits", "type"),
            ("from=2024-13-01", "from"),
            ("to=yesterday", "to"),
            ("from=2024-02-01&to=2024-01-31", "to"),
            ("lineage=1", "lineage"),
            ("type=split&type=bonus", "type"),
        ];
        assert_refused(parse_query::<CompanyActionsParams>, &bad, &["limit=5", "ex_date_from=2024-01-01"]);
        let bad = [
            ("ex_date_from=2024-1-1", "ex_date_from"),
            ("ex_date_to=2024-01-32", "ex_date_to"),
            ("ex_date_from=2024-02-01&ex_date_to=2024-01-31", "ex_date_to"),
            ("type=dividends", "type"),
            ("exchange=lse", "exchange"),
            ("limit=0", "limit"),
        ];
        assert_refused(parse_query::<ActionCalendarQueryParams>, &bad, &["from=2024-01-01", "isin=INE476A01014"]);
    }
}
