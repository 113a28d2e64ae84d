//! `GET /v1/companies`: the request builder, one page, and every page.
//!
//! The parameter names and the page envelope are those of
//! [`mds_domain::params`] and [`mds_domain::Page`], the definitions the
//! server parses and writes with. Values are sent as given and checked by
//! the server, so a bad one comes back as the server's `400`.

use std::collections::VecDeque;

use futures_util::Stream;
use mds_domain::params::{CURSOR, EXCHANGE, INDUSTRY, LETTER, LIMIT, MARKET_CAP, SEARCH, TICKER};
use mds_domain::{Company, Exchange, MarketCapBand, Page};

use crate::client::Client;
use crate::error::Result;

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
    client: Client,
    params: Vec<(&'static str, String)>,
    cursor: Option<String>,
}

impl CompaniesRequest {
    pub(crate) fn new(client: Client) -> Self {
        CompaniesRequest { client, params: Vec::new(), cursor: None }
    }

    fn set(mut self, name: &'static str, value: String) -> Self {
        self.params.retain(|(n, _)| *n != name);
        self.params.push((name, value));
        self
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
    pub fn cursor(mut self, cursor: impl Into<String>) -> Self {
        self.cursor = Some(cursor.into());
        self
    }

    /// Fetches one page.
    pub async fn send(&self) -> Result<Page<Company>> {
        self.fetch(self.cursor.as_deref()).await
    }

    async fn fetch(&self, cursor: Option<&str>) -> Result<Page<Company>> {
        let mut url = self.client.url(&["v1", "companies"]);
        {
            let mut q = url.query_pairs_mut();
            for (k, v) in &self.params {
                q.append_pair(k, v);
            }
            if let Some(c) = cursor {
                q.append_pair(CURSOR, c);
            }
        }
        if url.query() == Some("") {
            url.set_query(None);
        }
        self.client.get_json(url).await
    }

    /// Every page from the start (or from [`cursor`](Self::cursor)), one
    /// [`Pages::next_page`] call at a time.
    pub fn pages(self) -> Pages {
        let cursor = self.cursor.clone();
        Pages { request: self, cursor, done: false }
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
        let state = (self.pages(), VecDeque::new(), false);
        futures_util::stream::unfold(state, |(mut pages, mut buf, failed)| async move {
            if failed {
                return None;
            }
            loop {
                if let Some(c) = buf.pop_front() {
                    return Some((Ok(c), (pages, buf, false)));
                }
                match pages.next_page().await {
                    Ok(Some(page)) => buf.extend(page.data),
                    Ok(None) => return None,
                    Err(e) => return Some((Err(e), (pages, buf, true))),
                }
            }
        })
    }

    /// Every matching company in one vector (all pages).
    pub async fn all(self) -> Result<Vec<Company>> {
        let mut out = Vec::new();
        let mut pages = self.pages();
        while let Some(page) = pages.next_page().await? {
            out.extend(page.data);
        }
        Ok(out)
    }
}

/// The pages of a [`CompaniesRequest`], fetched on demand.
#[derive(Debug)]
pub struct Pages {
    request: CompaniesRequest,
    cursor: Option<String>,
    done: bool,
}

impl Pages {
    /// The next page, or `None` after the last one. After an error, calling
    /// again retries the same page.
    pub async fn next_page(&mut self) -> Result<Option<Page<Company>>> {
        if self.done {
            return Ok(None);
        }
        let page = self.request.fetch(self.cursor.as_deref()).await?;
        match (&page.next_cursor, page.has_more) {
            (Some(c), true) => self.cursor = Some(c.clone()),
            _ => self.done = true,
        }
        Ok(Some(page))
    }

    /// The cursor the next call will send (`None` before the first page of
    /// a request without a cursor, and after the last page).
    pub fn cursor(&self) -> Option<&str> {
        if self.done { None } else { self.cursor.as_deref() }
    }
}
