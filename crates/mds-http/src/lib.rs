//! The HTTP API of mds.
//!
//! # Layout
//! - [`router()`]: routes and the middleware stack; [`server::Server`]
//!   binds first, reports its port, serves until shutdown.
//! - [`state`]: [`AppState`], the store plus cached views (catalog, keys)
//!   kept fresh by [`reload`].
//! - [`auth`]: key-in-query refusal, bearer authentication, [`auth::KeyContext`].
//! - [`controllers`]: one module per endpoint.
//! - [`params`]: query-string rules shared by endpoints.
//! - [`ratelimit`]: per-minute limit, monthly quota, metering, headers
//!   (the engine is the `mds-limits` crate); [`flush`] writes counts.
//! - [`middleware`]: request id, access log, HEAD, problems, timeout, ETag.
//! - [`error`]: [`ApiError`], rendered as problem+json.
//! - [`metrics`]: Prometheus metrics (`/metrics`).
//! - [`config`]: settings, [`HttpConfig`].
//! - [`openapi`]: the OpenAPI document (`/v1/openapi.json`); [`docs`]: the
//!   reference page (`/docs`) with its vendored assets.

pub mod auth;
pub mod config;
pub mod controllers;
pub mod docs;
pub mod error;
pub mod flush;
pub mod metrics;
pub mod middleware;
pub mod openapi;
pub mod params;
pub mod ratelimit;
pub mod reload;
pub mod router;
pub mod server;
pub mod state;

pub use config::HttpConfig;
pub use error::ApiError;
pub use router::router;
pub use server::{Server, shutdown_signal};
pub use state::AppState;
