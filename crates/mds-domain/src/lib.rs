//! Domain types and rules of mds, with no I/O.
//!
//! Everything that crosses a boundary (an HTTP query string, an import file,
//! a CLI argument) is parsed once into one of these types; code behind the
//! boundary trusts them ("parse, don't validate").
//!
//! # Layout
//! - [`actions`]: corporate actions ([`actions::CorporateAction`]), their
//!   types, typed figures and stable ids; [`action_query`]: the queries and
//!   answers of the actions routes, their orders and a calendar position;
//!   [`action_rows`]: the file rows an action import keeps, resolved or
//!   not.
//! - [`company`]: the company record (`V1Company`), [`company::Ticker`],
//!   [`company::MarketCapBand`], [`company::Exchange`].
//! - [`detail`]: what is known beyond `V1Company` ([`detail::CompanyDetails`])
//!   and the record of `GET /v1/companies/{isin}` ([`detail::CompanyDetail`]).
//! - [`event`]: the events of the log, the stream and webhooks, and the
//!   filters that pick them.
//! - [`identity`]: identity over time: [`identity::IdentityEvent`]s,
//!   [`identity::CompanyStatus`], the history and symbol records, `as_of`.
//! - [`snapshot`]: exchange snapshots (as runs) and NSE's change files,
//!   and the pure rules that make identity events and statuses of them
//!   ([`snapshot::derive`]).
//! - [`isin`]: [`isin::Isin`], validated with the ISO 6166 check digit.
//! - [`article`]: the news [`article::Article`], the
//!   [`article::ArticleSummary`] the news list shows, and the
//!   [`article::Slug`].
//! - [`query`]: the company filters of `GET /v1/companies`, page size and
//!   the values they take ([`query::Industry`], [`query::Letter`], ...).
//! - [`params`]: the query parameters of `GET /v1/companies`, named and
//!   parsed once (and described for OpenAPI with the feature `openapi`).
//! - [`news`]: the query of `GET /v1/news` (filters, parameters, parsing),
//!   the list's order and a position in it.
//! - [`page`]: the page envelope of list endpoints.
//! - [`facets`]: the values of the exact-match filters (the industries
//!   tree, the news facets) and the `hint` of an empty page.
//! - [`prices`]: end-of-day prices: the bar (`V1Bar`), series, and the
//!   fixed-point decimals they are held in.
//! - [`price_query`]: the queries and answers of the price routes
//!   (`GET /v1/companies/{isin}/prices`, `GET /v1/prices`) and the rules of
//!   adjustment (which actions adjust, a dividend's or rights issue's factor
//!   from the close, the factors applied to each bar).
//! - [`bar_json`]: the price routes' answers as JSON, written directly
//!   (the bytes `serde_json` writes, made faster).
//! - [`key`]: API key format, checksum, prefix and hash.
//! - [`account`]: accounts and tiers (tiers are data, not code).
//! - [`admin`]: admin tokens, the actor of a change, audit log entries.
//! - [`usage`]: billing months and the usage record of `GET /v1/usage`.
//! - [`daily`]: the daily usage ledger and the report of
//!   `GET /v1/usage/daily`.
//! - [`problem`]: the RFC 9457 problem body and the stable error codes.
//! - [`time`]: the one timestamp format of the wire.
//! - [`calls`]: what a traced request called out to (the store, Redis),
//!   gathered for its trace's child spans.
//! - [`clock`]: the injectable [`clock::Clock`], the one a node, its
//!   limits and its store read the time from.
//! - [`webhook`]: how a webhook delivery is signed and checked (Standard
//!   Webhooks).
//! - [`hex`]: the one hex encoding (hashes, tags, secrets).
//! - [`bounds`]: the longest value each stored text field may hold.
//!
//! The wire records here are shared with API clients, so this crate stays
//! free of storage and HTTP dependencies.

/// `ToSchema` for a string newtype with a custom serde impl (feature
/// `openapi`): a named string schema with its pattern, lengths and example.
#[cfg(feature = "openapi")]
macro_rules! string_schema {
    ($ty:ty, $desc:expr, $pattern:expr, $min:expr, $max:expr, $example:expr) => {
        impl utoipa::PartialSchema for $ty {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .description(Some($desc))
                    .pattern(Some($pattern))
                    .min_length(Some($min))
                    .max_length(Some($max))
                    .examples([$example])
                    .build()
                    .into()
            }
        }
        impl utoipa::ToSchema for $ty {}
    };
}

/// `Display` and `Serialize` as the value's wire text, its `as_str()`: for
/// the closed sets of values whose wire form is one word.
macro_rules! wire_text {
    ($ty:ty) => {
        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    };
}

/// The impls every validated text newtype (`struct T(String)` with a
/// `T::parse(&str) -> Result<T, E>`) shares: `as_str`, `Display` (the text),
/// `Debug` (`T(text)`), and serde as a string that deserializes through
/// `parse`, `$error` making the message from the parse error and the text.
macro_rules! text_newtype {
    ($ty:ident, $error:expr) => {
        impl $ty {
            /// The value as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!(stringify!($ty), "({})"), self.0)
            }
        }

        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <String as serde::Deserialize>::deserialize(d)?;
                $ty::parse(&s).map_err(|e| serde::de::Error::custom(($error)(e, s.as_str())))
            }
        }
    };
}

pub mod account;
pub mod admin;
pub mod article;
pub mod bar_json;
pub mod bounds;
pub mod calls;
pub mod clock;
#[macro_use]
pub mod company;
// After `company`, whose `wire_enum!` it uses.
pub mod action_query;
pub mod action_rows;
pub mod actions;
pub mod daily;
pub mod detail;
pub mod event;
pub mod facets;
pub mod hex;
pub mod identity;
pub mod isin;
pub mod key;
pub mod news;
pub mod news_search;
pub mod page;
pub mod params;
pub mod price_query;
pub mod prices;
pub mod problem;
pub mod query;
pub mod snapshot;
pub mod time;
pub mod usage;
pub mod webhook;

#[cfg(test)]
mod testing;

pub use account::{Account, AccountName, AdminTokenName, Tier, TierName};
pub use admin::{Actor, AdminToken, AuditEntry};
pub use article::{Article, ArticleSummary, Slug};
pub use company::{
    Company, CompanyListItem, CompanySort, Exchange, MarketCapBand, MatchField, SearchMatch, Ticker, tidy_name,
};
pub use detail::{ChangesPage, Classification, CompanyDetail, CompanyDetails, Listing, ListingStatus, MarketCap};
pub use event::{
    CompanyChanged, Event, EventDraft, EventFilter, EventId, EventSubject, EventType, EventsLogQuery, EventsQuery,
    StoredEvent,
};
pub use identity::{
    CompanyHistory, CompanyStatus, IdentityChange, IdentityEvent, StatusFilter, SymbolHistory, SymbolPeriod,
};
pub use isin::Isin;
pub use key::{ApiKey, Environment, KeyHash, KeyPrefix};
pub use news::{NewsFilter, NewsKey, NewsQueryParams};
pub use news_search::{NewsSort, NewsText};
pub use page::Page;
pub use params::{CompaniesQueryParams, DetailParams, PageParams, ParamError, SymbolParams};
pub use problem::{ErrorCode, Problem};
pub use query::{CompanyFilter, Industry, Letter, Limit, SearchTerm};
