//! The integration tests of the `mds` package, as one test binary: each
//! module is one suite (a file here), run alone with
//! `cargo test --test suite NAME::`.
//!
//! One binary, not one a file: the harness (`common`) and the generic code
//! of the dependencies are compiled and linked once instead of 31 times,
//! and libtest's threads run the suites' tests side by side, as they ran
//! one file's before (each suite that must not share the machine holds a
//! lock of its own, as `crash` does).

mod common;

mod catalog_snapshot;
mod chaos;
mod cli;
mod client;
mod crash;
mod hardening;
mod http_actions;
mod http_admin;
mod http_companies;
mod http_events;
mod http_identity;
mod http_keys;
mod http_limits;
mod http_mcp;
mod http_news;
mod http_news_search;
mod http_prices;
mod http_reference;
mod http_semantics;
mod http_usage_daily;
mod http_webhooks;
mod import_while_serving;
mod multi_node;
mod news_snapshot;
mod openapi;
mod search_eval;
mod server_logs;
mod server_process;
mod shared_limits;
mod spill;
mod traces;
