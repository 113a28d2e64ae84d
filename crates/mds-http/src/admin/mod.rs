//! The admin API (contract section 9): `/admin/v1/...` on a listener of its
//! own (`mds serve --admin-listen ADDR`), for the systems that run the
//! business (sign-up, billing) and operators without database access.
//!
//! Every `/admin/v1` request carries `Authorization: Bearer <admin token>`
//! (`mds admin-tokens create NAME`); an API key there is `401`, as an admin
//! token is on the public listener. The listener also serves `/metrics`
//! (which then leaves the public listener), without a token, as the public
//! listener served it.
//!
//! The routes run the operations of [`mds_node::admin`], the same functions
//! the CLI runs, each recorded in the audit log under the token's name.
//!
//! # Layout
//! - here: the route table and [`router`];
//! - [`envelope`]: request id, the admin token, `HEAD`, timeout, `ETag`/`304`,
//!   problems, the access log line;
//! - [`problems`]: the admin API's own problem codes;
//! - [`body`]: JSON bodies read field by field (unknown fields refused);
//! - [`controllers`]: the handlers;
//! - [`openapi`]: the admin API's own OpenAPI document.

pub mod body;
pub mod controllers;
pub mod envelope;
pub mod openapi;
pub mod problems;

use axum::Router;
use axum::routing::{get, post, put};

use crate::controllers::health;
use crate::error::ApiError;
use crate::state::AppState;

/// The admin listener's application: the `/admin/v1` routes and `/metrics`
/// inside the admin [`envelope`].
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/metrics", get(health::metrics))
        .route("/admin/v1/openapi.json", get(openapi::serve))
        .route("/admin/v1/tiers", get(controllers::list_tiers))
        .route("/admin/v1/tiers/{name}", put(controllers::put_tier))
        .route("/admin/v1/accounts", get(controllers::list_accounts).post(controllers::create_account))
        .route("/admin/v1/accounts/{name}", get(controllers::get_account).patch(controllers::update_account))
        .route("/admin/v1/accounts/{name}/usage", get(controllers::account_usage))
        .route("/admin/v1/keys", get(controllers::list_keys).post(controllers::issue_key))
        .route("/admin/v1/keys/{prefix}", get(controllers::get_key).delete(controllers::revoke_key))
        .route("/admin/v1/keys/{prefix}/roll", post(controllers::roll_key))
        .route("/admin/v1/audit", get(controllers::list_audit))
        .fallback(|| async { ApiError::not_found("no such route; see /admin/v1/openapi.json for the admin routes") })
        .layer(axum::middleware::from_fn_with_state(state.clone(), envelope::wrap))
        .with_state(state)
}
