//! The optional detail fields of a companies import file (contract section
//! 7.1): listings, the two classification levels `V1Company` lacks, and the
//! market capitalisation.
//!
//! - JSON Lines: the fields of `V1CompanyDetail` (`listings`,
//!   `classification`, `market_cap`, `status`), as `GET /v1/companies/{isin}` and the
//!   change feed write them, so a synced copy imports back; its
//!   `updated_at` is accepted and ignored (the store stamps what changes).
//! - CSV: flat optional columns ([`CSV_COLUMNS`]). A listing is given by
//!   any of its exchange's columns (its symbol defaults to the ticker);
//!   `classification` takes `sector` and `industry` from the company's own
//!   columns and adds `macro_sector` and `basic_industry`.
//!
//! Either way a listing must be on an exchange the row's flags list, once.
//! Either form may say the company's `status` (contract 10.2: `active`
//! when absent; `delisted`, or `superseded` as a synced copy says it).

use chrono::NaiveDate;
use mds_domain::bounds;
use mds_domain::detail::LISTING_TEXT_MAX;
use mds_domain::{Classification, CompanyDetails, CompanyStatus, Exchange, Listing, ListingStatus, MarketCap};

/// The optional detail columns of a companies CSV, in the order
/// `csv_details` reads them.
pub const CSV_COLUMNS: [&str; 17] = [
    "nse_symbol",
    "nse_series",
    "nse_listed_on",
    "nse_face_value",
    "nse_status",
    "bse_symbol",
    "bse_scrip_code",
    "bse_group",
    "bse_listed_on",
    "bse_face_value",
    "bse_status",
    "macro_sector",
    "basic_industry",
    "market_cap_inr_crore",
    "market_cap_as_of",
    "updated_at",
    "status",
];

/// Where one exchange's listing is among [`CSV_COLUMNS`].
#[derive(Clone, Copy)]
struct ListingColumns {
    exchange: Exchange,
    symbol: usize,
    scrip_code: Option<usize>,
    series: usize,
    listed_on: usize,
    face_value: usize,
    status: usize,
}

const NSE_COLUMNS: ListingColumns = ListingColumns {
    exchange: Exchange::Nse,
    symbol: 0,
    scrip_code: None,
    series: 1,
    listed_on: 2,
    face_value: 3,
    status: 4,
};
const BSE_COLUMNS: ListingColumns = ListingColumns {
    exchange: Exchange::Bse,
    symbol: 5,
    scrip_code: Some(6),
    series: 7,
    listed_on: 8,
    face_value: 9,
    status: 10,
};

/// What the row says about itself, which the details must agree with.
pub(crate) struct Row<'a> {
    /// The ticker (a listing's default symbol).
    pub ticker: &'a str,
    /// `is_nse`, `is_bse`.
    pub flags: (bool, bool),
    /// The company's `sector` and `industry`.
    pub levels: (Option<&'a str>, Option<&'a str>),
}

/// The details of a CSV row from its detail cells (`cell(i)`: column `i` of
/// [`CSV_COLUMNS`], `None` when absent or empty); every problem.
pub(crate) fn csv_details<'a>(
    row: &Row<'_>,
    cell: impl Fn(usize) -> Option<&'a str>,
) -> Result<CompanyDetails, Vec<String>> {
    let mut errors = Vec::new();
    let mut listings = Vec::new();
    for cols in [NSE_COLUMNS, BSE_COLUMNS] {
        let mut given = [Some(cols.symbol), cols.scrip_code, Some(cols.series), Some(cols.listed_on)]
            .into_iter()
            .chain([Some(cols.face_value), Some(cols.status)]);
        if !given.any(|i| i.is_some_and(|i| cell(i).is_some())) {
            continue;
        }
        let listed_on = cell(cols.listed_on).and_then(|v| ok(&mut errors, date(CSV_COLUMNS[cols.listed_on], v)));
        let face_value = cell(cols.face_value).and_then(|v| ok(&mut errors, number(CSV_COLUMNS[cols.face_value], v)));
        let status = match cell(cols.status) {
            None => Some(ListingStatus::Active),
            Some(v) => {
                ok(&mut errors, v.parse::<ListingStatus>().map_err(|e| format!("{}: {e}", CSV_COLUMNS[cols.status])))
            }
        };
        listings.push(Listing {
            exchange: cols.exchange,
            symbol: cell(cols.symbol).unwrap_or(row.ticker).to_owned(),
            scrip_code: cols.scrip_code.and_then(&cell).map(str::to_owned),
            series: cell(cols.series).map(str::to_owned),
            listed_on,
            face_value,
            status: status.unwrap_or(ListingStatus::Active),
            last_seen: None,
        });
    }
    let market_cap = match (cell(13), cell(14)) {
        (None, None) => None,
        (None, Some(_)) => {
            errors.push("market_cap_as_of is given without market_cap_inr_crore".to_owned());
            None
        }
        (Some(v), as_of) => {
            let inr_crore = number("market_cap_inr_crore", v).map_err(|e| errors.push(e)).unwrap_or_default();
            let as_of = as_of.and_then(|d| date("market_cap_as_of", d).map_err(|e| errors.push(e)).ok());
            Some(MarketCap { inr_crore, as_of })
        }
    };
    let classification = Classification {
        macro_sector: cell(11).map(str::to_owned),
        sector: row.levels.0.map(str::to_owned),
        industry: row.levels.1.map(str::to_owned),
        basic_industry: cell(12).map(str::to_owned),
    };
    // Only the two levels the company lacks make it "have" a classification.
    let classification = if classification.macro_sector.is_none()
        && classification.basic_industry.is_none()
        && listings.is_empty()
        && market_cap.is_none()
    {
        Classification::default()
    } else {
        classification
    };
    let status = match cell(16) {
        None => CompanyStatus::Active,
        Some(v) => v.parse::<CompanyStatus>().map_err(|e| errors.push(e)).unwrap_or_default(),
    };
    let details = CompanyDetails { listings, classification, market_cap, status };
    match check(row, &details) {
        Ok(()) if errors.is_empty() => Ok(details),
        Ok(()) => Err(errors),
        Err(more) => {
            errors.extend(more);
            Err(errors)
        }
    }
}

/// Checks details however they came: every listing on an exchange the
/// flags list (but a delisted one, which the flags no longer list: section
/// 10.3), once; texts within their bounds; numbers finite and not
/// negative.
pub(crate) fn check(row: &Row<'_>, d: &CompanyDetails) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    let mut seen = Vec::new();
    for l in &d.listings {
        let listed = match l.exchange {
            Exchange::Nse => row.flags.0,
            Exchange::Bse => row.flags.1,
        };
        if !listed && l.status != ListingStatus::Delisted {
            errors.push(format!("a listing on {} is given but is_{} is false", l.exchange, l.exchange));
        }
        if seen.contains(&l.exchange) {
            errors.push(format!("two listings on {}", l.exchange));
        }
        seen.push(l.exchange);
        for (what, v) in [("symbol", Some(&l.symbol)), ("series", l.series.as_ref())] {
            if let Some(v) = v {
                if v.is_empty() || v.len() > LISTING_TEXT_MAX || !v.bytes().all(|b| b.is_ascii_graphic() || b == b' ') {
                    errors.push(format!(
                        "{} {what} must be 1 to {LISTING_TEXT_MAX} printable ASCII characters (got {v:?})",
                        l.exchange
                    ));
                }
            }
        }
        if let Some(code) = &l.scrip_code {
            if l.exchange != Exchange::Bse
                || code.is_empty()
                || code.len() > 12
                || !code.bytes().all(|b| b.is_ascii_digit())
            {
                errors.push(format!("scrip_code must be BSE's digits, on the BSE listing only (got {code:?})"));
            }
        }
        if l.face_value.is_some_and(|v| !v.is_finite() || v < 0.0) {
            errors.push(format!("{} face value must be a non-negative number", l.exchange));
        }
    }
    let c = &d.classification;
    for (v, bound) in [
        (&c.macro_sector, bounds::SECTOR),
        (&c.sector, bounds::SECTOR),
        (&c.industry, bounds::INDUSTRY),
        (&c.basic_industry, bounds::INDUSTRY),
    ] {
        if let Some(e) = v.as_deref().and_then(|v| bound.check(v).err()) {
            errors.push(e);
        }
    }
    if d.market_cap.as_ref().is_some_and(|m| !m.inr_crore.is_finite() || m.inr_crore < 0.0) {
        errors.push("market_cap.inr_crore must be a non-negative number".to_owned());
    }
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

/// `r`'s value, or `None` with its error kept.
fn ok<T>(errors: &mut Vec<String>, r: Result<T, String>) -> Option<T> {
    r.map_err(|e| errors.push(e)).ok()
}

fn date(column: &str, v: &str) -> Result<NaiveDate, String> {
    NaiveDate::parse_from_str(v, "%Y-%m-%d").map_err(|_| format!("{column} must be a date YYYY-MM-DD (got {v:?})"))
}

fn number(column: &str, v: &str) -> Result<f64, String> {
    v.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| format!("{column} must be a non-negative number (got {v:?})"))
}
