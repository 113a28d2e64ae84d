//! `GET /v1/companies`: the filters of its request; the page size, one page
//! and every page as every list request has them ([`ListRequest`]).
//!
//! The parameter names and the page envelope are those of
//! [`mds_domain::params`] and [`mds_domain::Page`], the definitions the
//! server parses and writes with. Values are sent as given and checked by
//! the server, so a bad one comes back as the server's `400`.

use chrono::NaiveDate;
use mds_domain::params::{AS_OF, EXCHANGE, INDUSTRY, LETTER, MARKET_CAP, SEARCH, SORT, STATUS, TICKER};
use mds_domain::{Company, CompanyListItem, CompanySort, Exchange, MarketCapBand, StatusFilter};

use crate::list::ListRequest;

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
pub type CompaniesRequest = ListRequest<Company>;

/// The filters of `GET /v1/companies`.
impl CompaniesRequest {
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

    /// Case-insensitive substring of the name or ticker, or of a former
    /// one (2–100 characters); the rows come by relevance (contract
    /// section 15), each with its `match`, unless [`Self::sort`] says
    /// `ticker`.
    pub fn search(self, term: impl Into<String>) -> Self {
        self.set(SEARCH, term.into())
    }

    /// The order: [`CompanySort::Relevance`] (the default with a search;
    /// refused without one) or [`CompanySort::Ticker`] (ticker, then ISIN).
    pub fn sort(self, sort: CompanySort) -> Self {
        self.set(SORT, sort.as_str().to_owned())
    }

    /// Exact ticker, case-insensitive (may match several securities).
    pub fn ticker(self, ticker: impl Into<String>) -> Self {
        self.set(TICKER, ticker.into())
    }

    /// Companies of this status (the server's default: `active`).
    pub fn status(self, status: StatusFilter) -> Self {
        self.set(STATUS, status.as_str().to_owned())
    }

    /// The same request, its rows read with what a search matched in each
    /// ([`CompanyListItem::matched`], the `match` a plain [`Company`]
    /// leaves out).
    ///
    /// ```no_run
    /// # async fn example(client: mds_client::Client) -> Result<(), mds_client::Error> {
    /// let page = client.companies().search("zomato").with_match().send().await?;
    /// if let Some(m) = &page.data[0].matched {
    ///     println!("{} matched its {} {:?}", page.data[0].ticker, m.field, m.value);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn with_match(self) -> ListRequest<CompanyListItem> {
        self.rows()
    }

    /// The master as it stood at the end of `day` (from 1990-01-01 up to
    /// today): the companies listed then, with that day's ticker and name.
    pub fn as_of(self, day: NaiveDate) -> Self {
        self.set(AS_OF, day.format("%Y-%m-%d").to_string())
    }
}
