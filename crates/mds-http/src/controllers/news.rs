//! `GET /v1/news/{slug}`: one article with its body. Served from the node's
//! [`NewsCache`](mds_node::news::NewsCache) once read from the store.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use mds_domain::Slug;

use mds_node::Tagged;

use super::tagged;
use crate::error::ApiError;
use crate::params::Params;
use crate::state::AppState;

/// Handler. A slug that cannot exist (not `[a-z0-9-]`, over 200 characters)
/// is answered `404` like an unknown one, without a store lookup.
#[utoipa::path(
    get,
    path = "/v1/news/{slug}",
    description = "One article with its `body`. Takes no query parameters.",
    params((
        "slug" = Slug,
        Path,
        description = "The article's slug: 1 to 200 characters of `a-z`, `0-9`, `-`.",
        example = "tcs-reports-higher-deal-wins-in-a-cautious-demand-environment-2026-01-08"
    )),
    responses(
        (status = 200, description = "The article.", body = mds_domain::Article, content_type = "application/json"),
        (status = 400, response = crate::openapi::BadRequest),
        (status = 404, response = crate::openapi::NotFound),
    )
)]
pub async fn show(
    State(state): State<AppState>,
    slug: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    Params::parse(raw.as_deref(), &[])?;
    let not_found = || ApiError::not_found("no article with this slug");
    let Ok(Path(slug)) = slug else { return Err(not_found()) };
    let slug = Slug::parse(&slug).map_err(|_| not_found())?;
    let served = match state.news.get(slug.as_str()) {
        Some(served) => served,
        None => {
            let ticket = state.news.ticket();
            let article = state.store.article(&slug).await?.ok_or_else(not_found)?;
            let served = Tagged::hashed(serde_json::to_vec(&article).map_err(|e| ApiError::internal(&e))?);
            state.news.put(ticket, slug.as_str(), served.clone());
            served
        }
    };
    // The body's tag, made once with the body.
    Ok(tagged(served))
}
