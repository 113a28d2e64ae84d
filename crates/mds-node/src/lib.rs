//! The application layer of mds: what a serving node holds and does,
//! between the parts (store, catalog, limits) and the interfaces that drive
//! it (the HTTP API, the operator CLI, the admin API), which call the
//! same functions here.
//!
//! Every route of the HTTP API is one operation here (a method on
//! [`Node`]): its controller parses the request, calls it and renders
//! what it returns.
//!
//! # Layout
//! - [`node`]: [`Node`], a node's state behind accessors: the store, the
//!   company catalog ([`catalog`]) with its kept pages ([`pages`], by a
//!   typed key per list), the key cache ([`keys`]), served articles
//!   ([`article`]) and news list pages ([`news_list`]), the limiter, the
//!   metrics ([`metrics`]); authentication and admission.
//! - The read operations of the API: [`companies`] (a page of the company
//!   list, one company's detail, either `as_of` a day), [`identity`] (a
//!   company's history, the companies that carried a symbol), [`changes`] (the change feed, its sync
//!   tokens and cursors), [`news_list`] (a page of the news list, its
//!   cursor, the pages kept per news generation), [`news_index`] (the news
//!   list of a generation held in memory, pages made from it),
//!   [`facets`] (the industries tree and the news facets, kept as pages),
//!   [`action_pages`] (a company's corporate actions with its lineage, the
//!   actions calendar's pages and cursor, both kept per actions
//!   generation), [`prices`] (a security's end-of-day series, adjusted
//!   and continued through its lineage, and the market on one day, as
//!   JSON or CSV, kept per prices and actions generation), [`article`] (one article
//!   and the cache of served ones), [`usage`] (the usage reports of a key,
//!   monthly and daily; what `/v1/usage` keeps of the store in
//!   [`usage_cache`], a [`followed`] map as the article cache is),
//!   [`lists`] (the one operation of the lists whose pages are kept by
//!   their raw query, [`Node::page`], and what each list's query says:
//!   where its pages are kept and how one is made),
//!   [`health`] (readiness, the metrics text, the store probe) with
//!   [`process`] (the process's metrics); why one cannot answer:
//!   [`error::ReadError`].
//! - [`reload`], [`flush`] and [`leases`]: the background tasks that
//!   follow the store, write counted requests to it (and fsync the usage
//!   spill, with `spill_dir`; mirror the unflushed counts to Redis every
//!   50 ms, with `--redis`) and give back the Redis leases of quiet keys
//!   (and take over the usage mirrors of nodes that stopped pushing them);
//!   [`tasks`] starts and watches them.
//! - [`webhooks`]: webhook endpoints (the operations of their routes) and
//!   the task that delivers their events, signed, under leases in the store.
//! - [`catalog_load`]: a companies generation's catalog, from its snapshot
//!   or built from the rows (also run by an import after its write);
//!   [`news_load`], likewise, a news generation's news index.
//! - [`import`]: the one place an import runs, whatever its format
//!   ([`import::run`]: read, one transaction with its events, snapshots, a
//!   summary that adds up), and the formats registered
//!   ([`import::FORMATS`]), which `mds import` and `mds demo` offer.
//! - [`issue`]: the draw of a free prefix every key issue and roll goes
//!   through.
//! - [`admin`]: the operations of the CLI and the admin API on tiers,
//!   accounts, keys (issue with an expiry, roll, revoke) and admin tokens,
//!   audited; [`idempotency`]: the `Idempotency-Key` of the admin API's
//!   `POST`s.
//! - [`tagged`]: a body with its strong `ETag`, as served and as kept.
//! - [`config`]: the settings, [`NodeConfig`].
//! - [`access_log`]: where the HTTP layer's access lines go: the sink the
//!   binary installs at start-up (formatting them as the log's lines) and
//!   the levels the log's filter lets through.

pub mod access_log;
pub mod action_pages;
pub mod admin;
pub mod article;
pub mod catalog;
pub mod catalog_load;
pub mod changes;
pub mod companies;
pub mod config;
pub mod error;
pub mod events;
pub mod facets;
pub mod flush;
pub mod followed;
pub mod health;
pub mod idempotency;
pub mod identity;
pub mod import;
pub mod issue;
pub mod keys;
mod keyset;
pub mod leases;
pub mod lists;
pub mod metrics;
pub mod news_index;
pub mod news_list;
pub mod news_load;
pub mod node;
pub mod pages;
pub mod prices;
pub mod process;
pub mod reload;
pub mod tagged;
pub mod tasks;
pub mod usage;
pub mod usage_cache;
pub mod webhooks;

pub use config::NodeConfig;
pub use error::ReadError;
pub use keys::{KeyCacheConfig, KeyContext};
pub use node::{Node, Unchecked};
pub use tagged::Tagged;
