//! The exchanges' own daily files, and the merge that turns them into
//! companies.
//!
//! - NSE `EQUITY_L.csv`: every equity listed on NSE (symbol, name, ISIN).
//! - BSE `Equity.csv`: every equity listed on BSE, with BSE's four-level
//!   classification (CRLF line ends, a trailing comma on each data row).
//! - An NSE market-capitalisation file (`Id,Symbol,Company_Name,
//!   Market_capitalization_lakhs`), ranked to give the SEBI-style bands.
//!
//! These are other people's formats, so their headers are matched ignoring
//! case and surrounding spaces, and columns this module does not read are
//! ignored. A row whose ISIN is a placeholder (`-`, `NA`, empty) cannot be
//! keyed and is skipped, and reported as skipped; anything else that is wrong
//! is an error with its line, as in the other parsers.

use std::collections::HashMap;

use mds_domain::{Company, Isin, MarketCapBand, Ticker};

use crate::error::{ImportError, RowError};
use crate::fields::{non_empty, parse_isin, parse_ticker};
use crate::text::{self, Column, FirstSeen, HeaderRule, Record};

/// A row left out because it has no real ISIN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedRow {
    /// Line of the row.
    pub line: usize,
    /// The ISIN cell as written (trimmed): `-`, `NA` or empty.
    pub isin: String,
}

/// One security on NSE's equity list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NseListing {
    /// Line of the row.
    pub line: usize,
    /// `ISIN NUMBER`.
    pub isin: Isin,
    /// `SYMBOL`.
    pub symbol: Ticker,
    /// `NAME OF COMPANY`.
    pub name: String,
}

/// NSE's equity list (`EQUITY_L.csv`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NseEquityList {
    /// The securities, in file order.
    pub listings: Vec<NseListing>,
    /// Rows without a real ISIN.
    pub skipped_without_isin: Vec<SkippedRow>,
}

/// Where a BSE security's ticker came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BseTickerSource {
    /// The `Security Id` (`ABB`, `20MICRONS`): the usual case.
    SecurityId,
    /// The numeric `Security Code` (`536493`), used when the `Security Id` is
    /// not a valid ticker (BSE has ids with a space, such as `JK AGRI`).
    /// BSE itself identifies every security by this code.
    SecurityCode,
}

/// One security on BSE's equity list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BseListing {
    /// Line of the row.
    pub line: usize,
    /// `ISIN No`.
    pub isin: Isin,
    /// The ticker: the `Security Id`, or the `Security Code` when the id is
    /// not a valid ticker (see [`BseListing::ticker_source`]).
    pub ticker: Ticker,
    /// Which column [`BseListing::ticker`] came from.
    pub ticker_source: BseTickerSource,
    /// The `Security Id` as written (trimmed).
    pub security_id: String,
    /// `Issuer Name`.
    pub name: String,
    /// `Igroup Name` (the Industry level); `None` when unclassified (`-`).
    pub industry: Option<String>,
    /// `Industry New Name` (the Sector level); `None` when unclassified (`-`).
    pub sector: Option<String>,
}

/// BSE's equity list (`Equity.csv`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BseEquityList {
    /// The securities, in file order.
    pub listings: Vec<BseListing>,
    /// Rows without a real ISIN.
    pub skipped_without_isin: Vec<SkippedRow>,
}

/// One row of the market-capitalisation file.
#[derive(Debug, Clone, PartialEq)]
pub struct McapRow {
    /// Line of the row.
    pub line: usize,
    /// `Symbol` (NSE).
    pub symbol: Ticker,
    /// `Market_capitalization_lakhs`, in lakh rupees.
    pub market_cap_lakhs: f64,
    /// 1 for the largest market capitalisation in the file.
    pub rank: usize,
}

/// A market-capitalisation file, ranked.
#[derive(Debug, Clone, PartialEq)]
pub struct McapList {
    /// The rows, largest first (ties by symbol).
    rows: Vec<McapRow>,
    /// Index into `rows` by symbol.
    by_symbol: HashMap<Ticker, usize>,
}

impl McapList {
    /// The rows, largest first (ties by symbol).
    pub fn rows(&self) -> &[McapRow] {
        &self.rows
    }

    /// The rank of an NSE symbol, `None` when the file does not have it.
    pub fn rank_of(&self, symbol: &Ticker) -> Option<usize> {
        self.by_symbol.get(symbol).map(|&i| self.rows[i].rank)
    }

    /// The band of an NSE symbol by its rank ([`MarketCapBand::from_rank`]).
    pub fn band_of(&self, symbol: &Ticker) -> Option<MarketCapBand> {
        self.rank_of(symbol).map(MarketCapBand::from_rank)
    }
}

/// The companies made from the exchanges' files.
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// ISIN cells that mean "no ISIN".
fn is_placeholder(isin: &str) -> bool {
    ["", "-", "NA", "N/A"].iter().any(|p| p.eq_ignore_ascii_case(isin))
}

/// The data records of an exchange CSV and where its columns are.
struct ExchangeTable {
    records: Vec<Record>,
    /// The index of each column asked for, in the order asked.
    col: Vec<usize>,
}

/// Reads an exchange CSV whose `columns` are all required; `None` when the
/// header is bad (the problems are in `errors`).
fn read_exchange_csv(
    text: &str,
    columns: &[Column],
    errors: &mut Vec<RowError>,
) -> Result<Option<ExchangeTable>, ImportError> {
    let table = text::read_csv(text, true, errors)?;
    match text::map_columns(&table, columns, HeaderRule::Lenient) {
        Ok(found) => Ok(Some(ExchangeTable { records: table.records, col: found.into_iter().flatten().collect() })),
        Err(header_errors) => {
            errors.extend(header_errors);
            Ok(None)
        }
    }
}

/// Checks the ISIN cell of an exchange row: `Ok(None)` for a placeholder,
/// which is recorded in `skipped`.
fn exchange_isin(record: &Record, index: usize, skipped: &mut Vec<SkippedRow>) -> Result<Option<Isin>, String> {
    let cell = record.get(index);
    if is_placeholder(cell) {
        skipped.push(SkippedRow { line: record.line, isin: cell.to_owned() });
        return Ok(None);
    }
    parse_isin(cell).map(Some)
}

/// A required name cell.
fn exchange_name(record: &Record, index: usize, column: &str) -> Result<String, String> {
    match record.get(index) {
        "" => Err(format!("{column} is empty")),
        name => {
            mds_domain::bounds::COMPANY_NAME.check(name).map(|()| name.to_owned()).map_err(|e| format!("{column}: {e}"))
        }
    }
}

/// The ISIN, or a duplicate error when an earlier line has it.
fn first_time(seen: &mut FirstSeen<Isin>, isin: Option<Isin>, line: usize) -> Result<Option<Isin>, String> {
    match isin {
        Some(isin) => match seen.insert(isin.clone(), line) {
            Some(first) => Err(format!("duplicate ISIN {isin}: it is already on line {first}")),
            None => Ok(Some(isin)),
        },
        None => Ok(None),
    }
}

const NSE_COLUMNS: &[Column] =
    &[Column::required("SYMBOL"), Column::required("NAME OF COMPANY"), Column::required("ISIN NUMBER")];

/// Parses NSE's `EQUITY_L.csv`. Every bad row is reported with its line.
pub fn parse_nse_equity_list(bytes: &[u8]) -> Result<NseEquityList, ImportError> {
    let mut skipped_without_isin = Vec::new();
    let listings = parse_listings(bytes, NSE_COLUMNS, 2, &mut skipped_without_isin, |record, col, isin| {
        let symbol = parse_ticker(record.get(col[0])).map_err(|e| format!("SYMBOL: {e}"));
        let name = exchange_name(record, col[1], "NAME OF COMPANY");
        match (isin, symbol, name) {
            (Ok(isin), Ok(symbol), Ok(name)) => Ok(NseListing { line: record.line, isin, symbol, name }),
            (isin, symbol, name) => Err(vec![isin.err(), symbol.err(), name.err()]),
        }
    })?;
    Ok(NseEquityList { listings, skipped_without_isin })
}

/// The listings of an exchange CSV with `columns`, the ISIN in column
/// `isin_col` (of `columns`): rows with a placeholder for an ISIN are
/// recorded in `skipped` and left out; an ISIN seen on an earlier line is an
/// error; `listing` makes the rest (with the ISIN, or its error, so a row's
/// problems are all reported together). Every bad row is reported.
fn parse_listings<L>(
    bytes: &[u8],
    columns: &[Column],
    isin_col: usize,
    skipped: &mut Vec<SkippedRow>,
    mut listing: impl FnMut(&Record, &[usize], Result<Isin, String>) -> Result<L, Vec<Option<String>>>,
) -> Result<Vec<L>, ImportError> {
    let mut seen = FirstSeen::new();
    read_rows(bytes, columns, |record, col| {
        match exchange_isin(record, col[isin_col], skipped).and_then(|isin| first_time(&mut seen, isin, record.line)) {
            Ok(None) => None,
            Ok(Some(isin)) => Some(listing(record, col, Ok(isin))),
            Err(e) => Some(listing(record, col, Err(e))),
        }
    })
}

/// The rows of an exchange CSV with `columns`, each made by `row` from its
/// record and the columns' indexes (`None`: the row is left out; `Err`: its
/// problems). Every bad row is reported.
fn read_rows<T>(
    bytes: &[u8],
    columns: &[Column],
    mut row: impl FnMut(&Record, &[usize]) -> Option<Result<T, Vec<Option<String>>>>,
) -> Result<Vec<T>, ImportError> {
    let mut errors = Vec::new();
    let text = text::decode(bytes, &mut errors)?;
    let mut out = Vec::new();
    if let Some(ExchangeTable { records, col }) = read_exchange_csv(&text, columns, &mut errors)? {
        for record in &records {
            match row(record, &col) {
                None => {}
                Some(Ok(r)) => out.push(r),
                Some(Err(problems)) => RowError::push_all(&mut errors, record.line, problems),
            }
        }
    }
    ImportError::check(errors)?;
    Ok(out)
}

const BSE_COLUMNS: &[Column] = &[
    Column::required("Security Code"),
    Column::required("Issuer Name"),
    Column::required("Security Id"),
    Column::required("ISIN No"),
    Column::required("Industry New Name"),
    Column::required("Igroup Name"),
];

/// Parses BSE's `Equity.csv`. Every bad row is reported with its line.
pub fn parse_bse_equity_list(bytes: &[u8]) -> Result<BseEquityList, ImportError> {
    let mut skipped_without_isin = Vec::new();
    let listings = parse_listings(bytes, BSE_COLUMNS, 3, &mut skipped_without_isin, |record, col, isin| {
        let security_id = record.get(col[2]);
        let ticker = bse_ticker(security_id, record.get(col[0]));
        let name = exchange_name(record, col[1], "Issuer Name");
        let industry = classification(record.get(col[5]), mds_domain::bounds::INDUSTRY);
        let sector = classification(record.get(col[4]), mds_domain::bounds::SECTOR);
        match (isin, ticker, name, industry, sector) {
            (Ok(isin), Ok((ticker, ticker_source)), Ok(name), Ok(industry), Ok(sector)) => Ok(BseListing {
                line: record.line,
                isin,
                ticker,
                ticker_source,
                security_id: security_id.to_owned(),
                name,
                industry,
                sector,
            }),
            (isin, ticker, name, industry, sector) => {
                Err(vec![isin.err(), ticker.err(), name.err(), industry.err(), sector.err()])
            }
        }
    })?;
    Ok(BseEquityList { listings, skipped_without_isin })
}

/// The ticker of a BSE row: the Security Id, else the Security Code.
fn bse_ticker(security_id: &str, security_code: &str) -> Result<(Ticker, BseTickerSource), String> {
    if let Ok(ticker) = Ticker::parse(security_id) {
        return Ok((ticker, BseTickerSource::SecurityId));
    }
    if !security_code.is_empty() {
        if let Ok(ticker) = Ticker::parse(security_code) {
            return Ok((ticker, BseTickerSource::SecurityCode));
        }
    }
    Err(format!(
        "Security Id {security_id:?} is not a valid ticker, and Security Code {security_code:?} cannot stand in for it"
    ))
}

/// A BSE classification cell: `-` and empty mean unclassified.
fn classification(cell: &str, bound: mds_domain::bounds::Bound) -> Result<Option<String>, String> {
    let value = non_empty(Some(cell)).filter(|c| *c != "-");
    value.map(|v| bound.check(v).map(|()| v.to_owned())).transpose()
}

const MCAP_COLUMNS: &[Column] = &[Column::required("Symbol"), Column::required("Market_capitalization_lakhs")];

/// Parses a market-capitalisation file and ranks it, largest first.
///
/// The whole file is ranked, as SEBI ranks every listed company, so a symbol
/// missing from the NSE list still takes its place in the ranking.
pub fn parse_nse_mcap(bytes: &[u8]) -> Result<McapList, ImportError> {
    let mut seen = FirstSeen::new();
    let mut rows = read_rows(bytes, MCAP_COLUMNS, |record, col| {
        let line = record.line;
        let symbol = parse_ticker(record.get(col[0])).map_err(|e| format!("Symbol: {e}")).and_then(|symbol| match seen
            .insert(symbol.clone(), line)
        {
            Some(first) => Err(format!("duplicate Symbol {symbol}: it is already on line {first}")),
            None => Ok(symbol),
        });
        let cap = record.get(col[1]);
        let cap = cap.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0).ok_or_else(|| {
            format!("Market_capitalization_lakhs must be a non-negative number of lakh rupees (got {cap:?})")
        });
        Some(match (symbol, cap) {
            (Ok(symbol), Ok(market_cap_lakhs)) => Ok(McapRow { line, symbol, market_cap_lakhs, rank: 0 }),
            (symbol, cap) => Err(vec![symbol.err(), cap.err()]),
        })
    })?;
    rows.sort_by(|a, b| b.market_cap_lakhs.total_cmp(&a.market_cap_lakhs).then_with(|| a.symbol.cmp(&b.symbol)));
    for (i, row) in rows.iter_mut().enumerate() {
        row.rank = i + 1;
    }
    let by_symbol = rows.iter().enumerate().map(|(i, r)| (r.symbol.clone(), i)).collect();
    Ok(McapList { rows, by_symbol })
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
///
/// Sorted by ticker, then ISIN.
pub fn merge(nse: &NseEquityList, bse: &BseEquityList, mcap: Option<&McapList>) -> MergedCompanies {
    let on_bse: HashMap<&Isin, &BseListing> = bse.listings.iter().map(|b| (&b.isin, b)).collect();
    let on_nse: HashMap<&Isin, &NseListing> = nse.listings.iter().map(|n| (&n.isin, n)).collect();
    let mut companies = Vec::with_capacity(on_bse.len() + on_nse.len());
    for n in &nse.listings {
        let b = on_bse.get(&n.isin);
        companies.push(Company {
            isin: n.isin.clone(),
            ticker: n.symbol.clone(),
            name: n.name.clone(),
            industry: b.and_then(|b| b.industry.clone()),
            sector: b.and_then(|b| b.sector.clone()),
            is_bse: b.is_some(),
            is_nse: true,
            market_cap_band: mcap.and_then(|m| m.band_of(&n.symbol)),
            logo_url: None,
        });
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
        companies.push(Company {
            isin: b.isin.clone(),
            ticker: b.ticker.clone(),
            name: b.name.clone(),
            industry: b.industry.clone(),
            sector: b.sector.clone(),
            is_bse: true,
            is_nse: false,
            market_cap_band: None,
            logo_url: None,
        });
    }
    companies.sort_by(|a, b| (&a.ticker, &a.isin).cmp(&(&b.ticker, &b.isin)));
    MergedCompanies {
        companies,
        skipped_without_isin: nse.skipped_without_isin.len() + bse.skipped_without_isin.len(),
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders() {
        for p in ["", "-", "NA", "na", "N/A"] {
            assert!(is_placeholder(p), "{p:?}");
        }
        assert!(!is_placeholder("INE117A01022"));
        assert!(!is_placeholder("X"));
    }

    #[test]
    fn bse_ticker_falls_back_to_the_security_code() {
        assert_eq!(bse_ticker("ABB", "500002").unwrap(), (Ticker::parse("ABB").unwrap(), BseTickerSource::SecurityId));
        assert_eq!(
            bse_ticker("JK AGRI", "536493").unwrap(),
            (Ticker::parse("536493").unwrap(), BseTickerSource::SecurityCode)
        );
        assert!(bse_ticker("JK AGRI", "").is_err());
    }

    #[test]
    fn classification_dash_is_none() {
        let b = mds_domain::bounds::INDUSTRY;
        assert_eq!(classification("-", b), Ok(None));
        assert_eq!(classification(" ", b), Ok(None));
        assert_eq!(classification(" Gas ", b), Ok(Some("Gas".to_owned())));
        assert!(classification(&"g".repeat(201), b).is_err());
    }
}
