//! Rate limits, monthly quotas and usage metering.
//!
//! Every admitted request takes from its key's per-minute limit (GCRA) and,
//! unless it is a usage read, reserves one request of the month's quota. When
//! the response is known the reservation is either counted or released (a
//! `304`, a `5xx`); counted requests and `304`s go into the meter's pending
//! entries, per key, day (UTC) and route. Pending entries are flushed to the
//! store's daily ledger (and, summed, its monthly counts) in batches, at
//! least once a second, by a background task; nothing is written to the
//! store on the request path.
//!
//! # Layout
//! - [`clock`]: the injectable [`Clock`] (tests move time across a month end).
//! - [`gcra`]: the per-minute limit, a pure GCRA.
//! - [`meter`]: [`Meter`], per key and month counts, admission against the
//!   quota, per key, day and route ledger entries, and the idempotent flush.
//! - [`limiter`]: [`Limiter`], both checks together, and the [`Decision`]
//!   that the HTTP layer turns into headers or a `429`.
//! - [`shared`] (`src/shared/`, one job a file, its Lua scripts in `.lua`
//!   files): [`SharedLimiter`], the same limits across all nodes together:
//!   tokens leased from Redis and spent locally (`lease`: a lease's state
//!   and size), falling back to [`Limiter`] with a per-node share of the
//!   limit while Redis is away.
//! - [`spill`]: [`Spill`], the optional local append-only file of the
//!   counts not yet flushed, and their recovery after a crash.
//! - [`mirror`]: the meter's side of the usage mirror (with Redis, the
//!   unflushed counts copied there every 50 ms, for another node to give
//!   the store if this one never returns); its Redis side is in
//!   `shared/mirror.rs`.

pub mod clock;
pub mod gcra;
mod lease;
pub mod limiter;
pub mod meter;
pub mod mirror;
pub mod shared;
pub mod spill;

pub use clock::{Clock, ManualClock, SystemClock};
pub use limiter::{Ask, Charge, Decision, Limiter, Limits, Policy, PolicyState, QuotaHold};
pub use meter::{Meter, Outcome};
pub use shared::{SharedConfig, SharedConfigError, SharedLimiter, SharedStats};
pub use spill::Spill;
