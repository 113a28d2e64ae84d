//! `GET /v1/usage/daily`: where the calling key's quota went in one month,
//! day by day and route by route: the node's daily report
//! ([`mds_node::usage`]), with every data route of the route table
//! ([`crate::routes::data_routes`], given to the state) in every day.

use axum::extract::State;
use axum::response::Response;
use mds_domain::daily::{DailyUsageQueryParams, V1UsageDaily};

use super::{Caller, hashed_json, tagged};
use crate::error::ApiError;
use crate::params::Query;
use crate::state::AppState;

/// Handler.
#[utoipa::path(
    get,
    path = crate::components::PATH_IN_TABLE,
    description = "Where the quota went in one billing month (UTC): one entry per day from the 1st to today (the \
current month) or to the month's last day (a past month), days without traffic included. Each day has the \
requests counted against the quota, the `304 Not Modified` answers (free), and the counted requests by route \
template, every data route present. The days add up exactly to what `GET /v1/usage` reports for the same month \
(`current_month.requests`, or the month's `history` window).",
    params(DailyUsageQueryParams),
    responses(
        (status = 200, description = "The month, day by day.", body = V1UsageDaily, content_type = "application/json"),
    )
)]
pub async fn show(
    State(state): State<AppState>,
    Caller(ctx): Caller,
    Query(query): Query<DailyUsageQueryParams>,
) -> Result<Response, ApiError> {
    let report = state.node().usage_daily_of_month(&ctx, query.month, state.data_routes()).await?;
    Ok(tagged(hashed_json(&report)?))
}
