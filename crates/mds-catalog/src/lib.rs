//! The in-memory company catalog: what `GET /v1/companies` reads.
//!
//! The store is the durable copy; each serving node holds the companies in a
//! [`Catalog`] sorted by `(ticker, isin)`, rebuilt whenever the store's
//! generation changes (an import). Pages are keyset-based: a cursor holds the
//! last `(ticker, isin)` served, and the next page starts right after it by
//! binary search, so a deep page costs what the first page costs and rows
//! inserted meanwhile cause no duplicates or skips.
//!
//! # Layout
//! - [`catalog`]: [`Catalog`], its rows, filter indexes and [`ListRows`].
//! - [`build`]: [`CatalogBuilder`], which lays a catalog out from companies
//!   streamed in order.
//! - [`events`]: [`PackedEvents`], the identity events a builder is given,
//!   packed.
//! - `layout` (private): the one-buffer format, which is also the snapshot
//!   kept in the store so a node starts without rebuilding.
//! - [`detail`]: detail records by ISIN and the change feed ([`ChangeRows`]).
//! - [`industries`]: the classification tree of the active companies
//!   (`GET /v1/industries`).
//! - [`cursor`]: [`CursorCodec`], opaque HMAC-signed cursors bound to filters.
//! - `grams` (private): the bigrams and trigrams that index search.
//! - `tail` (private): a row's details in a few bytes, and back.
//! - `postings` (private): posting lists (compressed row ids or bitmaps) and
//!   their seekers.
//! - `rank` (private): the relevance of a search: what a term matched in
//!   a row and how well, the rows' former tickers and names (aliases), and
//!   the market-cap keys.
//! - `starts` (private): the word starts of every ticker, name and former
//!   value, sorted by their text: the rows a ranked search's term begins a
//!   word of, found without a scan.
//! - `replay` (private): the rule that rebuilds an ISIN's identity on a day
//!   from its identity events.
//! - [`history`]: identity over time: each row's events, its spans and
//!   versions (the list and detail `as_of`), the symbol periods; history,
//!   symbol lookups, `superseded_by` and `supersedes`.
//! - `wire` (private): the JSON of the history and symbol lookups, written
//!   from the catalog's bytes, and the JSON helpers of the detail's tail.

pub mod build;
pub mod catalog;
pub mod cursor;
pub mod detail;
pub mod events;
mod grams;
pub mod history;
pub mod industries;
mod layout;
mod postings;
mod rank;
mod replay;
mod starts;
mod tail;
mod wire;

pub use build::{CatalogBuilder, ChangeStamp, OrderError};
pub use catalog::{Catalog, ListRows, Rows, SortKey};
pub use cursor::{CursorCodec, CursorError};
pub use detail::{ChangeKey, ChangeRows};
pub use events::PackedEvents;
pub use layout::CatalogSnapshotError;
