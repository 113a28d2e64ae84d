//! The HTTP API of mds.
//!
//! # Layout
//! - [`admin`]: the admin API, on its own listener (`--admin-listen`): its
//!   route table (rows of [`route`]'s kind), served in the same envelope.
//! - [`routes`]: the route table, every route of the public listener with
//!   its properties (key, charge, caching, OpenAPI operation), the one place
//!   a path template is written; what a row holds is [`route`].
//!   [`router()`] mounts it inside the middleware; [`server::Server`] binds
//!   first, reports its port, serves until shutdown.
//! - [`state`]: [`AppState`], the node (`mds-node`: store, cached views,
//!   limiter, metrics, background tasks, the operations the routes call)
//!   and the HTTP settings, each behind an accessor.
//! - [`controllers`]: the handlers; each parses its request, calls one
//!   node operation and renders it.
//! - [`auth`]: key-in-query refusal, bearer authentication.
//! - [`params`]: query-string rules shared by endpoints.
//! - [`ratelimit`]: the limiter's answer as HTTP: `429`s and the
//!   rate-limit headers.
//! - [`middleware`]: the envelope of every request (request id, access log,
//!   HEAD, timeout, problems), the guard of keyed routes, ETags.
//! - [`error`]: [`ApiError`], rendered as problem+json.
//! - [`mcp`]: the Model Context Protocol's tools for language-model
//!   agents, shared by `POST /mcp` ([`controllers::mcp`]) and `mds mcp`
//!   (stdio).
//! - [`config`]: settings, [`HttpConfig`] and [`ServerConfig`].
//! - [`openapi`]: the OpenAPI document of a route table
//!   (`/v1/openapi.json`), with the parts the handlers refer to in
//!   [`components`]; [`docs`]: the reference page (`/docs`) with its
//!   vendored assets.
//!
//! Modules depend one way: `routes` → `controllers`, `openapi`, `route` →
//! `state` → `config`; `openapi` → `components`. The one loop: `mcp`
//! reads the document of `routes` (its tools are defined from it) and
//! `controllers::mcp` serves `mcp`.

pub mod admin;
pub mod auth;
pub mod components;
pub mod config;
pub mod controllers;
pub mod docs;
pub mod error;
pub mod mcp;
pub mod middleware;
pub mod openapi;
pub mod params;
pub mod ratelimit;
pub mod route;
pub mod router;
pub mod routes;
pub mod server;
pub mod state;

pub use config::HttpConfig;
pub use config::ServerConfig;
pub use error::ApiError;
pub use router::router;
pub use server::{Server, shutdown_signal};
pub use state::AppState;
