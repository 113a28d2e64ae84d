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
//! - here: [`router`], the route table's rows mounted inside the envelope;
//! - [`routes`]: the route table, rows of the public table's kind
//!   ([`crate::route::Route`]): per route its path, admin token, and per
//!   method its OpenAPI operation, JSON body, `Idempotency-Key` and audit
//!   actions;
//! - [`envelope`]: what the envelope (one for both listeners,
//!   [`crate::middleware::envelope`]) does on the admin routes: the admin
//!   token, the body's size and type, `Idempotency-Key`, `ETag`/`304`;
//! - [`problems`]: the admin API's problems (its codes are
//!   [`mds_domain::ErrorCode`]s, as the public API's);
//! - [`body`]: JSON bodies read field by field (unknown fields refused);
//! - [`controllers`]: the handlers; [`webhooks`]: those of the webhook
//!   routes (any account's endpoints, disabling one);
//! - [`openapi`]: the admin API's own OpenAPI document, made from the table.

pub mod bodies;
pub mod body;
pub mod controllers;
pub mod envelope;
pub mod openapi;
pub mod problems;
pub mod routes;
pub mod webhooks;

use axum::Router;

use crate::error::ApiError;
use crate::middleware::envelope::{Envelope, Listener};
use crate::state::AppState;

/// The admin listener's application: the rows of [`routes::ROUTES`] inside
/// the envelope (the public listener's, which does on the admin routes
/// what [`envelope`] says).
pub fn router(state: AppState) -> Envelope {
    let routes = routes::ROUTES
        .iter()
        .fold(Router::new(), |router, r| router.route(r.path, (r.handler)()))
        .fallback(|| async { ApiError::not_found("no such route; see /admin/v1/openapi.json for the admin routes") })
        .with_state(state.clone());
    Envelope::of(Listener::Admin, state, routes)
}
