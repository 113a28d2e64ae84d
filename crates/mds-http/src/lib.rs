//! The HTTP API of mds.
//!
//! # Layout
//! - [`router()`]: routes and the middleware stack; [`server::Server`]
//!   binds first, reports its port, serves until shutdown.
//! - [`state`]: [`AppState`], the store plus cached views (catalog, keys)
//!   kept fresh by [`reload`]; [`catalog_load`] gets a generation's catalog
//!   (its snapshot in the store, or built from the rows and saved).
//! - [`auth`]: key-in-query refusal, bearer authentication, [`auth::KeyContext`].
//! - [`controllers`]: one module per endpoint.
//! - [`params`]: query-string rules shared by endpoints.
//! - [`ratelimit`]: per-minute limit, monthly quota, metering, headers
//!   (the engine is the `mds-limits` crate); [`flush`] writes counts.
//! - [`middleware`]: the envelope of every request (request id, access log,
//!   HEAD, timeout, problems), the guard of keyed routes, ETags.
//! - [`views`]: the catalog with its version, and the news articles served.
//! - [`error`]: [`ApiError`], rendered as problem+json.
//! - [`metrics`]: Prometheus metrics (`/metrics`).
//! - [`config`]: settings, [`HttpConfig`].
//! - [`openapi`]: the OpenAPI document (`/v1/openapi.json`); [`docs`]: the
//!   reference page (`/docs`) with its vendored assets.

pub mod auth;
pub mod catalog_load;
pub mod config;
pub mod controllers;
pub mod docs;
pub mod error;
pub mod flush;
pub mod metrics;
pub mod middleware;
pub mod openapi;
pub mod pages;
pub mod params;
pub mod ratelimit;
pub mod reload;
pub mod router;
pub mod server;
pub mod state;
pub mod views;

pub use config::HttpConfig;
pub use error::ApiError;
pub use router::router;
pub use server::{Server, shutdown_signal};
pub use state::AppState;
