//! The merge of NSE's and BSE's lists (and the market-capitalisation file)
//! by ISIN into companies.

use std::collections::HashMap;

use mds_domain::{Classification, Company, CompanyDetails, Exchange, Isin, Listing, ListingStatus};

use super::bse::{BseEquityList, BseListing, BseTickerSource};
use super::mcap::McapList;
use super::nse::{NseEquityList, NseListing};

/// The companies made from the exchanges' files.
#[derive(Debug, Clone, PartialEq)]
pub struct MergedCompanies {
    /// One company per ISIN, sorted by ticker, then ISIN.
    pub companies: Vec<Company>,
    /// How many rows of the NSE and BSE lists were skipped for want of an ISIN.
    pub skipped_without_isin: usize,
    /// What an operator should know about the result, one sentence each,
    /// naming the file and line: skipped rows, and BSE securities whose
    /// ticker is their Security Code.
    pub notes: Vec<String>,
}

/// A BSE row as a listing: its Security Id as the symbol (its ticker when
/// the id is not one), its code, group, face value and status.
fn bse_listing(b: &BseListing) -> Listing {
    let symbol = if b.security_id.is_empty() { b.ticker.to_string() } else { b.security_id.clone() };
    Listing {
        exchange: Exchange::Bse,
        symbol,
        scrip_code: Some(b.scrip_code.clone()),
        series: b.group.clone(),
        listed_on: None,
        face_value: b.face_value,
        status: b.status,
        last_seen: None,
    }
}

/// BSE's four classification levels.
fn classification_of(b: &BseListing) -> Classification {
    Classification {
        macro_sector: b.macro_sector.clone(),
        sector: b.sector.clone(),
        industry: b.industry.clone(),
        basic_industry: b.basic_industry.clone(),
    }
}

/// The company of NSE listing `n`, with its BSE listing `b` when BSE
/// lists it too, and its market cap in `mcap` (see [`merge`]).
pub(super) fn nse_company(n: &NseListing, b: Option<&BseListing>, mcap: Option<&McapList>) -> Company {
    let nse_listing = Listing {
        exchange: Exchange::Nse,
        symbol: n.symbol.to_string(),
        scrip_code: None,
        series: n.series.clone(),
        listed_on: n.listed_on,
        face_value: n.face_value,
        status: ListingStatus::Active,
        last_seen: None,
    };
    Company {
        isin: n.isin.clone(),
        ticker: n.symbol.clone(),
        name: n.name.clone(),
        industry: b.and_then(|b| b.industry.clone()),
        sector: b.and_then(|b| b.sector.clone()),
        is_bse: b.is_some(),
        is_nse: true,
        market_cap_band: mcap.and_then(|m| m.band_of(&n.symbol)),
        logo_url: None,
        details: CompanyDetails {
            listings: [Some(nse_listing), b.map(bse_listing)].into_iter().flatten().collect(),
            classification: b.map(classification_of).unwrap_or_default(),
            market_cap: mcap.and_then(|m| m.market_cap_of(&n.symbol)),
            ..CompanyDetails::default()
        },
    }
}

/// The company of BSE listing `b`, on no NSE list (see [`merge`]).
pub(super) fn bse_company(b: &BseListing) -> Company {
    Company {
        isin: b.isin.clone(),
        ticker: b.ticker.clone(),
        name: b.name.clone(),
        industry: b.industry.clone(),
        sector: b.sector.clone(),
        is_bse: true,
        is_nse: false,
        market_cap_band: None,
        logo_url: None,
        details: CompanyDetails {
            listings: vec![bse_listing(b)],
            classification: classification_of(b),
            market_cap: None,
            ..CompanyDetails::default()
        },
    }
}

/// Merges the lists by ISIN into companies.
///
/// - `is_nse` / `is_bse`: on the NSE / BSE list.
/// - `ticker` and `name`: NSE's `SYMBOL` and `NAME OF COMPANY` when on NSE,
///   else BSE's ticker ([`BseListing::ticker`]) and `Issuer Name`.
/// - `industry` / `sector`: BSE's classification; `None` for NSE-only.
/// - `market_cap_band`: by the NSE symbol's rank in `mcap`; `None` for a
///   company not on NSE or not in the file, or without `mcap`.
/// - `logo_url`: `None` (no source has logos).
/// - details: an NSE listing (series, listing date, face value) and a BSE
///   one (security id, code, group, face value, status) as listed; BSE's
///   four classification levels; the market capitalisation from `mcap` by
///   NSE symbol, in crore, of the day `mcap` is of.
///
/// Sorted by ticker, then ISIN.
pub fn merge(nse: &NseEquityList, bse: &BseEquityList, mcap: Option<&McapList>) -> MergedCompanies {
    let on_bse: HashMap<&Isin, &BseListing> = bse.listings.iter().map(|b| (&b.isin, b)).collect();
    let on_nse: HashMap<&Isin, &NseListing> = nse.listings.iter().map(|n| (&n.isin, n)).collect();
    let mut companies = Vec::with_capacity(on_bse.len() + on_nse.len());
    for n in &nse.listings {
        companies.push(nse_company(n, on_bse.get(&n.isin).copied(), mcap));
    }
    let mut notes = Vec::new();
    for (file, skipped) in [("NSE list", &nse.skipped_without_isin), ("BSE list", &bse.skipped_without_isin)] {
        for s in skipped {
            notes.push(format!("{file} line {}: skipped, no ISIN (ISIN cell {:?})", s.line, s.isin));
        }
    }
    for b in bse.listings.iter().filter(|b| !on_nse.contains_key(&b.isin)) {
        if b.ticker_source == BseTickerSource::SecurityCode {
            notes.push(format!(
                "BSE list line {}: Security Id {:?} is not a valid ticker; the Security Code {} is the ticker of {}",
                b.line, b.security_id, b.ticker, b.isin
            ));
        }
        companies.push(bse_company(b));
    }
    companies.sort_by(|a, b| (&a.ticker, &a.isin).cmp(&(&b.ticker, &b.isin)));
    MergedCompanies {
        companies,
        skipped_without_isin: nse.skipped_without_isin.len() + bse.skipped_without_isin.len(),
        notes,
    }
}
