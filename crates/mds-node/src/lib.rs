//! The application layer of mds: what a serving node holds and does,
//! between the parts (store, catalog, limits) and the interfaces that drive
//! it (the HTTP API, the operator CLI, the admin API), which call the
//! same functions here.
//!
//! # Layout
//! - [`node`]: [`Node`], a node's state: the store, the company catalog
//!   ([`catalog`]) with its kept pages ([`pages`]), the key cache
//!   ([`keys`]), served news ([`news`]) and news list pages
//!   ([`news_list`]), the limiter, the metrics ([`metrics`]);
//!   authentication and admission.
//! - [`news_list`]: a page of the news list made from the store, its
//!   cursor, the pages kept per news generation.
//! - [`reload`], [`flush`] and [`leases`]: the background tasks that
//!   follow the store, write counted requests to it and give back the Redis
//!   leases of quiet keys; [`tasks`] starts and watches them.
//! - [`catalog_load`]: a companies generation's catalog, from its snapshot
//!   or built from the rows (also run by `mds import` after an import).
//! - [`issue`]: issuing keys unaudited (tests' fixtures), and the draw of a
//!   free prefix every issue and roll goes through.
//! - [`admin`]: the operations of the CLI and the admin API on tiers,
//!   accounts, keys (issue with an expiry, roll, revoke) and admin tokens,
//!   audited; [`idempotency`]: the `Idempotency-Key` of the admin API's
//!   `POST`s.
//! - [`usage`]: the usage reports of a key (monthly and daily).
//! - [`tagged`]: a body with its strong `ETag`, as served and as kept.
//! - [`config`]: the settings, [`NodeConfig`].

pub mod admin;
pub mod catalog;
pub mod catalog_load;
pub mod config;
pub mod flush;
pub mod followed;
pub mod idempotency;
pub mod issue;
pub mod keys;
pub mod leases;
pub mod metrics;
pub mod news;
pub mod news_list;
pub mod node;
pub mod pages;
pub mod reload;
pub mod tagged;
pub mod tasks;
pub mod usage;
pub mod usage_cache;

pub use config::NodeConfig;
pub use issue::issue_key;
pub use keys::{KeyCacheConfig, KeyContext};
pub use node::{Node, Unchecked};
pub use tagged::Tagged;
