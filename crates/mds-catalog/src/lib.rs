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
//! - [`catalog`]: [`Catalog`], its rows (pre-serialised JSON in arenas),
//!   filter indexes and [`Page`].
//! - [`cursor`]: [`CursorCodec`], opaque HMAC-signed cursors bound to filters.
//! - `grams` (private): the bigrams and trigrams that index search.
//! - `postings` (private): posting lists (row ids or bitmaps) and their seekers.

pub mod catalog;
pub mod cursor;
mod grams;
mod postings;

pub use catalog::{Catalog, Page, SortKey};
pub use cursor::{CursorCodec, CursorError};
