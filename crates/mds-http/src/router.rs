//! The router: routes, per-route layers and the global middleware stack
//! (see [`crate::middleware`] for the order and why).

use axum::Router;
use axum::middleware::{from_fn, from_fn_with_state};
use axum::routing::get;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::CompressionLayer;

use crate::controllers::{companies, health, news, usage};
use crate::error::ApiError;
use crate::middleware::{access_log, etag, head, problem, request_id, timeout};
use crate::state::AppState;
use crate::{auth, docs, openapi, ratelimit};

/// The whole application as an axum `Router`.
pub fn router(state: AppState) -> Router {
    // Route layers wrap only matched routes; the last added runs first.
    let v1 = Router::new()
        .route("/v1/companies", get(companies::list))
        .route("/v1/news/{slug}", get(news::show))
        .route("/v1/usage", get(usage::show))
        .route_layer(from_fn(etag::conditional))
        .route_layer(from_fn_with_state(state.clone(), ratelimit::enforce))
        .route_layer(from_fn_with_state(state.clone(), auth::authenticate))
        .route_layer(from_fn(auth::refuse_key_in_query));

    let ops = Router::new()
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/metrics", get(health::metrics));

    // The API reference, public: no key, not rate limited, not counted.
    let reference = Router::new()
        .route("/v1/openapi.json", get(openapi::serve))
        .route("/docs", get(docs::page))
        .route("/docs/{asset}", get(docs::asset));

    Router::new()
        .merge(v1)
        .merge(ops)
        .merge(reference)
        .fallback(|| async { ApiError::not_found("no such route; see the API reference for the routes") })
        .with_state(state.clone())
        // Global layers: the last added is the outermost.
        .layer(CompressionLayer::new().gzip(true).br(true).zstd(true))
        .layer(from_fn(etag::tag_encoding))
        .layer(from_fn_with_state(state.config.request_timeout, timeout::bound))
        // A panic (a bug) becomes a bare 500 that `problem::render` turns into
        // `500 internal`; the connection and the other requests carry on.
        .layer(CatchPanicLayer::new())
        .layer(from_fn(problem::render))
        .layer(from_fn(head::as_get))
        .layer(from_fn_with_state(state.clone(), access_log::log))
        .layer(from_fn(request_id::assign))
}
