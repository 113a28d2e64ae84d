//! The router: routes, and around them compression and the envelope (see
//! [`crate::middleware`] for the order and why).

use axum::Router;
use axum::routing::get;

use crate::controllers::{companies, health, news, usage};
use crate::error::ApiError;
use crate::middleware::envelope::Envelope;
use crate::state::AppState;
use crate::{docs, openapi};

/// The whole application as a service (`axum::serve` it with
/// `into_make_service`, or call it with `tower::ServiceExt::oneshot`).
///
/// The envelope (with compression) wraps the router from outside rather
/// than through `Router::layer`, which would wrap every route separately
/// and clone each wrapped stack on every request. The keyed routes are
/// guarded by the envelope (it knows them by [`crate::metrics::route_of`]).
pub fn router(state: AppState) -> Envelope {
    let v1 = Router::new()
        .route("/v1/companies", get(companies::list))
        .route("/v1/news/{slug}", get(news::show))
        .route("/v1/usage", get(usage::show));

    let ops = Router::new()
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/metrics", get(health::metrics));

    // The API reference, public: no key, not rate limited, not counted.
    let reference = Router::new()
        .route("/v1/openapi.json", get(openapi::serve))
        .route("/docs", get(docs::page))
        .route("/docs/{asset}", get(docs::asset));

    let routes = Router::new()
        .merge(v1)
        .merge(ops)
        .merge(reference)
        .fallback(|| async { ApiError::not_found("no such route; see the API reference for the routes") })
        .with_state(state.clone());

    Envelope::new(state, routes)
}
