//! `GET /v1/news`: the request builder of the news list; one page and every
//! page as every list request has them ([`crate::list`]).
//!
//! The parameter names, the listed article ([`ArticleSummary`]) and the
//! page envelope are those of [`mds_domain::news`] and [`mds_domain`], the
//! definitions the server parses and writes with. Text values are sent as
//! given and checked by the server (a bad one comes back as its `400`);
//! instants are typed and sent in the wire format.

use chrono::{DateTime, Utc};
use futures_util::Stream;
use mds_domain::news::{CATEGORY, ISIN, PUBLISHED_AFTER, PUBLISHED_BEFORE, TAG};
use mds_domain::params::{LIMIT, TICKER};
use mds_domain::time::format_utc;
use mds_domain::{ArticleSummary, Page};

use crate::client::Client;
use crate::error::Result;
use crate::list::{ListQuery, Pages};

/// A `GET /v1/news` request: articles newest first, without their body;
/// filters combine with AND. A bad value (an invalid ISIN, a limit over
/// 200) comes back as [`Error::Api`](crate::Error::Api) with code
/// `invalid_parameter`.
///
/// ```no_run
/// # async fn example(client: mds_client::Client) -> Result<(), mds_client::Error> {
/// // One page.
/// let page = client.news_list().ticker("RELIANCE").limit(10).send().await?;
/// // Every article about a company, then one with its body.
/// let about = client.news_list().isin("INE002A01018").all().await?;
/// if let Some(first) = about.first() {
///     let article = client.news(first.slug.as_str()).await?;
///     println!("{}", article.body.unwrap_or_default());
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct NewsListRequest {
    query: ListQuery,
}

impl NewsListRequest {
    pub(crate) fn new(client: Client) -> Self {
        NewsListRequest { query: ListQuery::new(client, &["v1", "news"]) }
    }

    fn set(self, name: &'static str, value: String) -> Self {
        NewsListRequest { query: self.query.set(name, value) }
    }

    /// About the company with this ISIN (case-insensitive).
    pub fn isin(self, isin: impl Into<String>) -> Self {
        self.set(ISIN, isin.into())
    }

    /// About the company with this ticker (exact, case-insensitive).
    pub fn ticker(self, ticker: impl Into<String>) -> Self {
        self.set(TICKER, ticker.into())
    }

    /// In this category (exact, case-sensitive).
    pub fn category(self, category: impl Into<String>) -> Self {
        self.set(CATEGORY, category.into())
    }

    /// Carrying this tag (exact, case-sensitive).
    pub fn tag(self, tag: impl Into<String>) -> Self {
        self.set(TAG, tag.into())
    }

    /// Published strictly after this instant (undated articles are left out).
    pub fn published_after(self, t: DateTime<Utc>) -> Self {
        self.set(PUBLISHED_AFTER, format_utc(&t))
    }

    /// Published strictly before this instant, which must be later than
    /// [`published_after`](Self::published_after) (undated articles are
    /// left out).
    pub fn published_before(self, t: DateTime<Utc>) -> Self {
        self.set(PUBLISHED_BEFORE, format_utc(&t))
    }

    /// Articles per page, 1 to 200 (the server's default is 50).
    pub fn limit(self, limit: u16) -> Self {
        self.set(LIMIT, limit.to_string())
    }

    /// Starts at this cursor (a `next_cursor` from a page with the same filters).
    pub fn cursor(self, cursor: impl Into<String>) -> Self {
        NewsListRequest { query: self.query.cursor(cursor.into()) }
    }

    /// Fetches one page.
    pub async fn send(&self) -> Result<Page<ArticleSummary>> {
        self.query.send().await
    }

    /// Every page from the start (or from [`cursor`](Self::cursor)), one
    /// [`Pages::next_page`] call at a time.
    pub fn pages(self) -> Pages<ArticleSummary> {
        self.query.pages()
    }

    /// Every matching article, following `next_cursor` to the last page.
    /// The stream ends after the first error, which it yields.
    pub fn stream(self) -> impl Stream<Item = Result<ArticleSummary>> + Send + 'static {
        self.pages().stream()
    }

    /// Every matching article in one vector (all pages).
    pub async fn all(self) -> Result<Vec<ArticleSummary>> {
        self.pages().all().await
    }
}
