//! End-of-day prices (contract 14.2): a security's series
//! ([`CompanyPricesRequest`], `GET /v1/companies/{isin}/prices`) and the
//! market on one day ([`MarketDayRequest`], `GET /v1/prices`; one page,
//! every page or every bar as every list request has them).
//!
//! The parameter names and the wire records ([`CompanyPrices`], [`Bar`],
//! [`Adjustment`](mds_domain::price_query::Adjustment)) are those of
//! [`mds_domain::price_query`] and [`mds_domain::prices`], the definitions
//! the server parses and writes with.

use mds_domain::price_query::{ADJUST, Adjust, CompanyPrices, SERIES};
use mds_domain::prices::{Bar, Series};

use crate::list::ListRequest;
use crate::part::CompanyRequest;

/// A `GET /v1/companies/{isin}/prices` request: the security's bars, oldest
/// first, adjusted as asked (`split` by default), continued (by default)
/// through the ISINs it superseded.
///
/// ```no_run
/// # async fn example(client: mds_client::Client) -> Result<(), mds_client::Error> {
/// use chrono::NaiveDate;
/// use mds_client::Adjust;
/// let from = NaiveDate::from_ymd_opt(2025, 1, 1).unwrap();
/// let ttl = client.company_prices("INE592B01024").from(from).adjust(Adjust::Split).send().await?;
/// for b in &ttl.bars {
///     println!("{} {} {}", b.date, b.isin, b.close);
/// }
/// for a in &ttl.adjustments {
///     println!("{} {:?} x{}", a.ex_date, a.action_type, a.factor);
/// }
/// # Ok(()) }
/// ```
pub type CompanyPricesRequest = CompanyRequest<CompanyPrices>;

/// The filter of `GET /v1/companies/{isin}/prices` beyond the span and
/// lineage ([`CompanyRequest`]).
impl CompanyPricesRequest {
    /// How the prices are adjusted (the server's default: [`Adjust::Split`]).
    pub fn adjust(self, adjust: Adjust) -> Self {
        self.set(ADJUST, adjust.as_str().to_owned())
    }
}

/// A `GET /v1/prices` request: the market on one day, by ISIN then series,
/// as published; a page, every page, or every [`Bar`] of the day.
///
/// ```no_run
/// # async fn example(client: mds_client::Client) -> Result<(), mds_client::Error> {
/// use chrono::NaiveDate;
/// use mds_client::Series;
/// let day = NaiveDate::from_ymd_opt(2025, 2, 12).unwrap();
/// let bars = client.market_day(day).series(Series::EQ).limit(200).all().await?;
/// println!("{} EQ bars on {day}", bars.len());
/// # Ok(()) }
/// ```
pub type MarketDayRequest = ListRequest<Bar>;

/// The filters of `GET /v1/prices` (the day is set by
/// [`Client::market_day`](crate::Client::market_day)).
impl MarketDayRequest {
    /// Only bars of this series (`EQ`, `BE`, `SM`, ...).
    pub fn series(self, s: Series) -> Self {
        self.set(SERIES, s.as_str().to_owned())
    }
}
