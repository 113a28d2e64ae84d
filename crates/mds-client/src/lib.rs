//! Rust client for the mds market-data API.
//!
//! The wire types are those of the server ([`mds_domain`]), so a field added
//! there reaches clients with no second definition to keep in step.
//!
//! - [`Client`]: built with [`Client::builder`]; holds the base URL, the API
//!   key (never shown by `Debug`), the timeout and the retry policy.
//! - [`Client::companies`] → [`CompaniesRequest`]: filters, then one
//!   [`Page`] ([`send`](CompaniesRequest::send)), every page
//!   ([`pages`](CompaniesRequest::pages)), or every company as a [`Stream`]
//!   ([`stream`](CompaniesRequest::stream)) or a vector
//!   ([`all`](CompaniesRequest::all)).
//! - [`Client::company`] → [`CompanyDetail`] (listings, classification,
//!   market cap, `updated_at`).
//! - [`Client::changes`] → [`ChangesRequest`]: the change feed from a
//!   `sync_token`, one [`ChangesPage`] or every page to the next token;
//!   [`Client::sync`] keeps a [`Replica`] (a map ISIN → [`CompanyDetail`])
//!   up to date with it and starts over when a token has expired.
//! - [`Client::news_list`] → [`NewsListRequest`]: filters, then one page of
//!   [`ArticleSummary`] (newest first, no body), every page, a stream or a
//!   vector, as for companies ([`Pages`] serves both).
//! - [`Client::actions`] → [`ActionsRequest`]: the corporate-action
//!   calendar's filters, then a page, every page or every
//!   [`CorporateAction`]; [`Client::company_actions`] →
//!   [`CompanyActionsRequest`]: a company's actions with its lineage
//!   ([`CompanyActions`]).
//! - [`Client::company_prices`] → [`CompanyPricesRequest`]: a security's
//!   end-of-day bars (`from`, `to`, [`Adjust`], `lineage`) with every
//!   [`Adjustment`] applied ([`CompanyPrices`]); [`Client::market_day`] →
//!   [`MarketDayRequest`]: every [`Bar`] of one day, a page at a time or
//!   all of them.
//! - [`Client::article`] → [`Article`] (with its body); [`Client::usage`] →
//!   [`V1Usage`]; [`Client::usage_daily`] → [`V1UsageDaily`].
//! - [`Client::events`] → [`EventsRequest`]: the event log as a list;
//!   [`Client::event_stream`] → [`EventStreamRequest`]: the live stream,
//!   [`follow`](EventStreamRequest::follow)ed with resume;
//!   [`verify_webhook`] checks a webhook delivery's signature and time.
//! - [`Error`]: [`Error::Api`] carries the problem body (`code`, `detail`,
//!   `param`, `request_id`); transport, timeout and decode failures have
//!   their own variants.
//!
//! # Retries
//! A `429` or `503` is retried up to `max_retries` times. The client waits
//! what `Retry-After` says; without one, an exponential backoff from
//! `backoff`, capped at `max_delay`. A `Retry-After` longer than `max_delay`
//! (a monthly quota used up) is not retried. Nothing else is retried.
//!
//! # Example
//! ```no_run
//! use std::time::Duration;
//! use mds_client::{Client, Exchange};
//!
//! # async fn example() -> Result<(), mds_client::Error> {
//! let client = Client::builder()
//!     .base_url("http://127.0.0.1:8080")
//!     .api_key(std::env::var("MDS_API_KEY").expect("MDS_API_KEY"))
//!     .timeout(Duration::from_secs(10))
//!     .max_retries(3)
//!     .backoff(Duration::from_millis(250))
//!     .build()?;
//! let page = client.companies().letter('A').exchange(Exchange::Nse).search("bank").limit(100).send().await?;
//! println!("{} companies, more: {}", page.data.len(), page.has_more);
//! match client.article("no-such-article").await {
//!     Err(mds_client::Error::Api { status: 404, problem }) => println!("{}", problem.detail),
//!     other => println!("{other:?}"),
//! }
//! # Ok(()) }
//! ```

mod actions;
mod changes;
mod client;
mod companies;
mod error;
mod events;
mod list;
mod news_list;
mod part;
mod prices;
mod sync;

pub use actions::{ActionsRequest, CompanyActionsRequest};
pub use changes::{Changes, ChangesPages, ChangesRequest};
pub use client::{
    Client, ClientBuilder, DEFAULT_BACKOFF, DEFAULT_BASE_URL, DEFAULT_MAX_DELAY, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT,
    RetryEvent,
};
pub use companies::CompaniesRequest;
pub use error::{Error, Result};
pub use events::{EventFilters, EventStreamRequest, EventsRequest, STREAM_SILENCE, verify_webhook};
pub use futures_util::Stream;
pub use list::{ListRequest, Pages};
pub use mds_domain::action_query::CompanyActions;
pub use mds_domain::actions::{ActionType, CorporateAction};
pub use mds_domain::daily::{V1UsageDaily, V1UsageDay};
pub use mds_domain::facets::{BasicIndustry, Facet, Hint, Industries, Industry, MacroSector, NewsFacets, Sector};
pub use mds_domain::price_query::{Adjust, Adjustment, CompanyPrices};
pub use mds_domain::prices::{Bar, IsinSource, Series};
pub use mds_domain::usage::{BillingMonth, V1Usage, V1UsageWindow};
pub use mds_domain::webhook::VerifyError;
pub use mds_domain::{
    Article, ArticleSummary, ChangesPage, Classification, Company, CompanyChanged, CompanyDetail, CompanyHistory,
    CompanyListItem, CompanySort, CompanyStatus, ErrorCode, Event, EventId, EventType, Exchange, IdentityChange,
    IdentityEvent, Isin, Listing, ListingStatus, MarketCap, MarketCapBand, MatchField, NewsSort, Page, Problem,
    SearchMatch, Slug, StatusFilter, SymbolHistory, SymbolPeriod, Ticker,
};
pub use news_list::NewsListRequest;
pub use part::CompanyRequest;
pub use prices::{CompanyPricesRequest, MarketDayRequest};
pub use sync::{Replica, SYNC_PAGE_SIZE, SyncReport};
