//! `GET /v1/news/{slug}`: one article with its body. Served from the node's
//! [`NewsCache`](mds_node::news::NewsCache) once read from the store.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use mds_domain::Slug;

use super::{hashed_json, path_param, tagged};
use crate::error::ApiError;
use crate::state::AppState;

/// Handler. A slug that cannot exist (not `[a-z0-9-]`, over 200 characters)
/// is answered `404` like an unknown one, without a store lookup.
#[utoipa::path(
    get,
    path = "/v1/news/{slug}",
    description = "One article with its `body`. Takes no query parameters.",
    params(crate::openapi::SlugPath),
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
    const NOT_FOUND: &str = "no article with this slug";
    let slug = path_param(slug, raw.as_deref(), Slug::parse, NOT_FOUND)?;
    let served = match state.news.get(slug.as_str()) {
        Some(served) => served,
        None => {
            let ticket = state.news.ticket();
            let article = state.store.article(&slug).await?.ok_or_else(|| ApiError::not_found(NOT_FOUND))?;
            let served = hashed_json(&article)?;
            state.news.put(ticket, slug.as_str(), served.clone());
            served
        }
    };
    // The body's tag, made once with the body.
    Ok(tagged(served))
}
