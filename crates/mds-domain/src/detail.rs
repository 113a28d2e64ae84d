//! What the service knows about a company beyond `V1Company`: its
//! exchange listings, the four classification levels, the market
//! capitalisation its band was ranked on ([`CompanyDetails`], kept with the
//! company), and the wire record of `GET /v1/companies/{isin}` and of the
//! change feed ([`CompanyDetail`], contract section 7.1).

use std::str::FromStr;

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Deserializer, Serialize};

use crate::company::{Company, Exchange};
use crate::identity::CompanyStatus;
use crate::isin::Isin;

/// The details of a company that `V1Company` leaves out. Every field may be
/// unknown: a company imported without them has none
/// ([`CompanyDetails::is_empty`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompanyDetails {
    /// One per exchange listing, NSE first. Empty when the import gave none:
    /// [`CompanyDetails::listings_of`] then derives them from the flags.
    #[serde(default)]
    pub listings: Vec<Listing>,
    /// The four levels NSE and BSE share.
    #[serde(default)]
    pub classification: Classification,
    /// The figure the band was ranked on, if known.
    #[serde(default)]
    pub market_cap: Option<MarketCap>,
    /// Whether the company is active, superseded or delisted (contract
    /// 10.2), as the importer last left it; absent when `active`.
    #[serde(default, skip_serializing_if = "CompanyStatus::is_active")]
    pub status: CompanyStatus,
}

impl CompanyDetails {
    /// Whether nothing is known beyond `V1Company`.
    pub fn is_empty(&self) -> bool {
        *self == CompanyDetails::default()
    }

    /// The listings as served: those given, NSE first; or, when none were
    /// given, one per exchange flag of `company`, its ticker as the symbol,
    /// `active`, nothing else known.
    pub fn listings_of(&self, company: &Company) -> Vec<Listing> {
        if !self.listings.is_empty() {
            let mut l = self.listings.clone();
            l.sort_by_key(|l| l.exchange != Exchange::Nse);
            return l;
        }
        [(company.is_nse, Exchange::Nse), (company.is_bse, Exchange::Bse)]
            .into_iter()
            .filter(|(listed, _)| *listed)
            .map(|(_, exchange)| Listing::bare(exchange, company.ticker.as_str()))
            .collect()
    }
}

/// One listing of a security on an exchange.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Listing {
    /// The exchange.
    pub exchange: Exchange,
    /// NSE symbol, or BSE security id.
    pub symbol: String,
    /// BSE's numeric scrip code (`500002`), as a string of digits; `null` on NSE.
    pub scrip_code: Option<String>,
    /// NSE series (`EQ`, `BE`, …) or BSE group (`A`, `B`, `T`, …).
    pub series: Option<String>,
    /// Date of listing.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = Date))]
    pub listed_on: Option<NaiveDate>,
    /// Face value per share, in INR.
    pub face_value: Option<f64>,
    /// Whether it trades; `delisted` once it is gone from the latest
    /// snapshot of its exchange's list (contract section 10.3).
    pub status: ListingStatus,
    /// The day of the latest snapshot of its exchange's list that showed it
    /// (`null` when no exchange list was imported for it).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = Date))]
    pub last_seen: Option<NaiveDate>,
}

impl Listing {
    /// A listing of which only the exchange and symbol are known.
    pub fn bare(exchange: Exchange, symbol: &str) -> Self {
        Listing {
            exchange,
            symbol: symbol.to_owned(),
            scrip_code: None,
            series: None,
            listed_on: None,
            face_value: None,
            status: ListingStatus::Active,
            last_seen: None,
        }
    }
}

wire_enum!(
    /// Whether a listing trades.
    ListingStatus, "status must be one of active, suspended, delisted (got {:?})", {
        /// Trades.
        Active => "active",
        /// Listed, but trading is suspended.
        Suspended => "suspended",
        /// No longer listed.
        Delisted => "delisted",
    }
);

/// The four classification levels NSE and BSE share (BSE's `Sector Name`,
/// `Industry New Name`, `Igroup Name`, `ISubgroup Name`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Classification {
    /// Macro-economic sector (`Industrials`).
    pub macro_sector: Option<String>,
    /// Sector (`Capital Goods`).
    pub sector: Option<String>,
    /// Industry (`Electrical Equipment`).
    pub industry: Option<String>,
    /// Basic industry (`Heavy Electrical Equipment`).
    pub basic_industry: Option<String>,
}

/// A market capitalisation and the day it was taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MarketCap {
    /// In crore rupees.
    pub inr_crore: f64,
    /// The day of the figure, when known.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = Date))]
    pub as_of: Option<NaiveDate>,
}

/// `V1CompanyDetail`: one company with everything the service knows about
/// it. Every `V1Company` field with the same value as in the list, then the
/// details and when the store last changed the record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1CompanyDetail))]
pub struct CompanyDetail {
    /// The `V1Company` fields (its `details` are those below).
    #[serde(flatten)]
    pub company: Company,
    /// One per exchange listing, NSE first.
    pub listings: Vec<Listing>,
    /// The four classification levels.
    pub classification: Classification,
    /// The figure the band was ranked on; `null` when unknown.
    pub market_cap: Option<MarketCap>,
    /// `superseded` when its ISIN was replaced, else `active` when some
    /// exchange's latest list has it, else `delisted` (contract 10.2).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required))]
    pub status: CompanyStatus,
    /// The ISIN that replaced this one (a split or similar); `null` when
    /// none did.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required, value_type = Option<String>))]
    pub superseded_by: Option<Isin>,
    /// The ISINs this one replaced, oldest first; possibly empty.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required, value_type = Vec<String>))]
    pub supersedes: Vec<Isin>,
    /// When the store last changed this company's record.
    #[serde(with = "crate::time::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub updated_at: DateTime<Utc>,
}

impl CompanyDetail {
    /// The record of `company` as served, last changed at `updated_at`,
    /// with no identity history (`superseded_by` null, `supersedes` empty).
    pub fn of(company: &Company, updated_at: DateTime<Utc>) -> Self {
        let d = &company.details;
        CompanyDetail {
            listings: d.listings_of(company),
            classification: d.classification.clone(),
            market_cap: d.market_cap.clone(),
            status: d.status,
            superseded_by: None,
            supersedes: Vec::new(),
            company: Company { details: CompanyDetails::default(), ..company.clone() },
            updated_at,
        }
    }
}

/// One page of `GET /v1/companies/changes`: the page envelope of the lists
/// plus `sync_token`, a string exactly when `has_more` is false.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1ChangesPage))]
pub struct ChangesPage {
    /// The changed companies, in change order.
    pub data: Vec<CompanyDetail>,
    /// Cursor of the next page: a string when `has_more`, else `null`.
    pub next_cursor: Option<String>,
    /// Whether there is a next page.
    pub has_more: bool,
    /// On the last page, the token to pass as `since` next time; else `null`.
    pub sync_token: Option<String>,
}

/// The longest symbol, series or scrip code accepted.
pub const LISTING_TEXT_MAX: usize = 32;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Isin, Ticker};

    fn company(nse: bool, bse: bool) -> Company {
        Company {
            isin: Isin::parse("INE117A01022").unwrap(),
            ticker: Ticker::parse("ABB").unwrap(),
            name: "ABB India Limited".into(),
            industry: None,
            sector: None,
            is_bse: bse,
            is_nse: nse,
            market_cap_band: None,
            logo_url: None,
            details: CompanyDetails::default(),
        }
    }

    #[test]
    fn listings_follow_the_flags_when_none_are_given() {
        let c = company(true, true);
        let l = c.details.listings_of(&c);
        assert_eq!(l, vec![Listing::bare(Exchange::Nse, "ABB"), Listing::bare(Exchange::Bse, "ABB")]);
        assert!(company(false, false).details.listings_of(&company(false, false)).is_empty());
    }

    #[test]
    fn given_listings_come_nse_first() {
        let mut c = company(true, true);
        c.details.listings = vec![Listing::bare(Exchange::Bse, "500002"), Listing::bare(Exchange::Nse, "ABB")];
        let l = c.details.listings_of(&c);
        assert_eq!(l[0].exchange, Exchange::Nse);
        assert_eq!(l[1].exchange, Exchange::Bse);
    }

    /// The detail record is the company's list fields, then the details
    /// and `updated_at`, in that order, and reads back.
    #[test]
    fn detail_json_is_the_list_row_plus_the_details() {
        let mut c = company(true, false);
        c.details.market_cap = Some(MarketCap { inr_crore: 1234.5, as_of: NaiveDate::from_ymd_opt(2024, 3, 28) });
        c.details.classification.macro_sector = Some("Industrials".into());
        let at = DateTime::parse_from_rfc3339("2026-11-01T00:00:00+00:00").unwrap().with_timezone(&Utc);
        let served = serde_json::to_string(&CompanyDetail::of(&c, at)).unwrap();
        let row = serde_json::to_string(&Company { details: CompanyDetails::default(), ..c.clone() }).unwrap();
        assert!(served.starts_with(&row[..row.len() - 1]), "{served}");
        assert!(served.ends_with(",\"updated_at\":\"2026-11-01T00:00:00+00:00\"}"), "{served}");
        let back: CompanyDetail = serde_json::from_str(&served).unwrap();
        assert_eq!(back.market_cap, c.details.market_cap);
        assert_eq!(back.company.ticker, c.ticker);
    }
}
