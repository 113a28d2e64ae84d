//! `GET /v1/companies`: the request builder; one page and every page as
//! every list request has them ([`crate::list`]).
//!
//! The parameter names and the page envelope are those of
//! [`mds_domain::params`] and [`mds_domain::Page`], the definitions the
//! server parses and writes with. Values are sent as given and checked by
//! the server, so a bad one comes back as the server's `400`.

use futures_util::Stream;
use mds_domain::params::{EXCHANGE, INDUSTRY, LETTER, LIMIT, MARKET_CAP, SEARCH, TICKER};
use mds_domain::{Company, Exchange, MarketCapBand, Page};

use crate::client::Client;
use crate::error::Result;
use crate::list::{ListQuery, Pages};

/// A `GET /v1/companies` request: filters combine with AND. Values are
/// checked by the server; a bad one (a search shorter than 2 characters, a
/// limit over 200) comes back as [`Error::Api`](crate::Error::Api) with code
/// `invalid_parameter`.
///
/// ```no_run
/// # async fn example(client: mds_client::Client) -> Result<(), mds_client::Error> {
/// use mds_client::Exchange;
/// // One page.
/// let page = client.companies().letter('A').exchange(Exchange::Bse).limit(100).send().await?;
/// // Every page, walked by hand.
/// let mut pages = client.companies().search("bank").pages();
/// while let Some(page) = pages.next_page().await? {
///     println!("{} companies", page.data.len());
/// }
/// // Every company, in one vector.
/// let all = client.companies().industry("Banks").all().await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct CompaniesRequest {
    query: ListQuery,
}

impl CompaniesRequest {
    pub(crate) fn new(client: Client) -> Self {
        CompaniesRequest { query: ListQuery::new(client, &["v1", "companies"]) }
    }

    fn set(self, name: &'static str, value: String) -> Self {
        CompaniesRequest { query: self.query.set(name, value) }
    }

    /// Tickers starting with this character (`A`–`Z`, case-insensitive, or `0`–`9`).
    pub fn letter(self, letter: char) -> Self {
        self.set(LETTER, letter.to_string())
    }

    /// Exact, case-sensitive industry (an unknown one gives no rows).
    pub fn industry(self, industry: impl Into<String>) -> Self {
        self.set(INDUSTRY, industry.into())
    }

    /// Listed on this exchange.
    pub fn exchange(self, exchange: Exchange) -> Self {
        self.set(EXCHANGE, exchange.as_str().to_owned())
    }

    /// In this market-cap band.
    pub fn market_cap(self, band: MarketCapBand) -> Self {
        self.set(MARKET_CAP, band.as_str().to_owned())
    }

    /// Case-insensitive substring of the name or ticker (2–100 characters).
    pub fn search(self, term: impl Into<String>) -> Self {
        self.set(SEARCH, term.into())
    }

    /// Exact ticker, case-insensitive (may match several securities).
    pub fn ticker(self, ticker: impl Into<String>) -> Self {
        self.set(TICKER, ticker.into())
    }

    /// Rows per page, 1 to 200 (the server's default is 50).
    pub fn limit(self, limit: u16) -> Self {
        self.set(LIMIT, limit.to_string())
    }

    /// Starts at this cursor (a `next_cursor` from a page with the same filters).
    pub fn cursor(self, cursor: impl Into<String>) -> Self {
        CompaniesRequest { query: self.query.cursor(cursor.into()) }
    }

    /// Fetches one page.
    pub async fn send(&self) -> Result<Page<Company>> {
        self.query.send().await
    }

    /// Every page from the start (or from [`cursor`](Self::cursor)), one
    /// [`Pages::next_page`] call at a time.
    pub fn pages(self) -> Pages {
        self.query.pages()
    }

    /// Every matching company, following `next_cursor` to the last page.
    /// The stream ends after the first error, which it yields.
    ///
    /// ```no_run
    /// # async fn example(client: mds_client::Client) -> Result<(), mds_client::Error> {
    /// use futures_util::StreamExt as _;
    /// let mut companies = std::pin::pin!(client.companies().search("bank").limit(200).stream());
    /// while let Some(c) = companies.next().await {
    ///     println!("{}", c?.name);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn stream(self) -> impl Stream<Item = Result<Company>> + Send + 'static {
        self.pages().stream()
    }

    /// Every matching company in one vector (all pages).
    pub async fn all(self) -> Result<Vec<Company>> {
        self.pages().all().await
    }
}
