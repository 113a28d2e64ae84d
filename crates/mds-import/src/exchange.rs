//! The exchanges' own daily files, and the merge that turns them into
//! companies.
//!
//! - NSE `EQUITY_L.csv`: every equity listed on NSE (symbol, name, ISIN;
//!   series, date of listing and face value when the file has them).
//! - BSE `Equity.csv`: every equity listed on BSE, with BSE's four-level
//!   classification, security code and id, status, group and face value
//!   (CRLF line ends, a trailing comma on each data row).
//! - An NSE market-capitalisation file (`Id,Symbol,Company_Name,
//!   Market_capitalization_lakhs`), ranked to give the SEBI-style bands; the
//!   figure is kept as each company's market capitalisation, with the day
//!   the caller says it is of.
//!
//! These are other people's formats, so their headers are matched ignoring
//! case and surrounding spaces, and columns this module does not read are
//! ignored. A row whose ISIN is a placeholder (`-`, `NA`, empty) cannot be
//! keyed and is skipped, and reported as skipped; anything else that is wrong
//! is an error with its line, as in the other parsers.

use std::collections::HashMap;

use chrono::NaiveDate;
use mds_domain::{
    Classification, Company, CompanyDetails, Exchange, Isin, Listing, ListingStatus, MarketCap, MarketCapBand, Ticker,
};

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
#[derive(Debug, Clone, PartialEq)]
pub struct NseListing {
    /// Line of the row.
    pub line: usize,
    /// `ISIN NUMBER`.
    pub isin: Isin,
    /// `SYMBOL`.
    pub symbol: Ticker,
    /// `NAME OF COMPANY`.
    pub name: String,
    /// `SERIES` (`EQ`, `BE`, …), when the file has it.
    pub series: Option<String>,
    /// `DATE OF LISTING` (`06-OCT-2008`), when the file has it.
    pub listed_on: Option<NaiveDate>,
    /// `FACE VALUE`, in rupees, when the file has it.
    pub face_value: Option<f64>,
}

/// An exchange's equity list: its securities (`L`: [`NseListing`] or
/// [`BseListing`]) and the rows left out.
#[derive(Debug, Clone, PartialEq)]
pub struct EquityList<L> {
    /// The securities, in file order.
    pub listings: Vec<L>,
    /// Rows without a real ISIN.
    pub skipped_without_isin: Vec<SkippedRow>,
}

/// NSE's equity list (`EQUITY_L.csv`).
pub type NseEquityList = EquityList<NseListing>;

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
#[derive(Debug, Clone, PartialEq)]
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
    /// `Security Code`, BSE's numeric id of the security.
    pub scrip_code: String,
    /// `Status` (`Active` when the file has no such column).
    pub status: ListingStatus,
    /// `Group` (`A`, `B`, `T`, …), when given.
    pub group: Option<String>,
    /// `Face Value`, in rupees, when given.
    pub face_value: Option<f64>,
    /// `Sector Name` (the Macro-Economic Sector level), when classified.
    pub macro_sector: Option<String>,
    /// `ISubgroup Name` (the Basic Industry level), when classified.
    pub basic_industry: Option<String>,
}

/// BSE's equity list (`Equity.csv`).
pub type BseEquityList = EquityList<BseListing>;

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

impl McapRow {
    /// The figure in crore rupees (a crore is 100 lakh).
    /// Rounded to a millionth of a crore (ten rupees), so a figure given
    /// to the lakh's hundredth reads back as written (`50706.70` lakh is
    /// `507.067`, not `507.06699999999995`).
    pub fn inr_crore(&self) -> f64 {
        (self.market_cap_lakhs / 100.0 * 1e6).round() / 1e6
    }
}

/// A market-capitalisation file, ranked.
#[derive(Debug, Clone, PartialEq)]
pub struct McapList {
    /// The rows, largest first (ties by symbol).
    rows: Vec<McapRow>,
    /// Index into `rows` by symbol.
    by_symbol: HashMap<Ticker, usize>,
    /// The day of the figures, when known ([`McapList::as_of`]).
    as_of: Option<NaiveDate>,
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

    /// The market capitalisation of an NSE symbol, with the file's day.
    pub fn market_cap_of(&self, symbol: &Ticker) -> Option<MarketCap> {
        self.by_symbol.get(symbol).map(|&i| MarketCap { inr_crore: self.rows[i].inr_crore(), as_of: self.as_of })
    }

    /// The day the figures are of, if known.
    pub fn as_of(&self) -> Option<NaiveDate> {
        self.as_of
    }

    /// The list, its figures being of `day` (`None`: unknown).
    pub fn with_as_of(self, day: Option<NaiveDate>) -> Self {
        McapList { as_of: day, ..self }
    }
}

/// The day a market-capitalisation file's name gives, as NSE and its
/// mirrors write it: `DDMMYYYY` (`MCAP28032024.csv`) or `YYYY-MM-DD`
/// (`nse_mcap_2024-03-28.csv`). `None` when the name holds neither.
pub fn mcap_day_from_file_name(name: &str) -> Option<NaiveDate> {
    let b = name.as_bytes();
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    for i in 0..b.len() {
        if let Some(w) = b.get(i..i + 10) {
            if digits(&w[..4]) && w[4] == b'-' && digits(&w[5..7]) && w[7] == b'-' && digits(&w[8..]) {
                if let Ok(d) = NaiveDate::parse_from_str(&name[i..i + 10], "%Y-%m-%d") {
                    return Some(d);
                }
            }
        }
        if let Some(w) = b.get(i..i + 8) {
            let bounded = (i == 0 || !b[i - 1].is_ascii_digit()) && b.get(i + 8).is_none_or(|c| !c.is_ascii_digit());
            if bounded && digits(w) {
                if let Ok(d) = NaiveDate::parse_from_str(&name[i..i + 8], "%d%m%Y") {
                    return Some(d);
                }
            }
        }
    }
    None
}

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

/// ISIN cells that mean "no ISIN".
fn is_placeholder(isin: &str) -> bool {
    ["", "-", "NA", "N/A"].iter().any(|p| p.eq_ignore_ascii_case(isin))
}

/// Where the columns asked for are in a file, in the order asked.
struct Cols(Vec<Option<usize>>);

impl Cols {
    /// Where required column `i` is (a header without it was refused).
    fn req(&self, i: usize) -> usize {
        self.0[i].expect("a required column is in the header")
    }

    /// Where optional column `i` is, if the file has it.
    fn opt(&self, i: usize) -> Option<usize> {
        self.0[i]
    }
}

/// The data records of an exchange CSV and where its columns are.
struct ExchangeTable {
    records: Vec<Record>,
    col: Cols,
}

/// Reads an exchange CSV with `columns`; `None` when the header is bad (the
/// problems are in `errors`).
fn read_exchange_csv(
    text: &str,
    columns: &[Column],
    errors: &mut Vec<RowError>,
) -> Result<Option<ExchangeTable>, ImportError> {
    let table = text::read_csv(text, true, errors)?;
    match text::map_columns(&table, columns, HeaderRule::Lenient) {
        Ok(found) => Ok(Some(ExchangeTable { records: table.records, col: Cols(found) })),
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

const NSE_COLUMNS: &[Column] = &[
    Column::required("SYMBOL"),
    Column::required("NAME OF COMPANY"),
    Column::required("ISIN NUMBER"),
    Column::optional("SERIES"),
    Column::optional("DATE OF LISTING"),
    Column::optional("FACE VALUE"),
];

/// A short code cell (a series or a group): `-` and empty mean none.
fn code(cell: Option<&str>, column: &str) -> Result<Option<String>, String> {
    match cell.filter(|c| *c != "-") {
        None => Ok(None),
        Some(c) if c.len() <= mds_domain::detail::LISTING_TEXT_MAX && c.bytes().all(|b| b.is_ascii_graphic()) => {
            Ok(Some(c.to_owned()))
        }
        Some(c) => Err(format!("{column} must be a short code without spaces (got {c:?})")),
    }
}

/// A face value cell, in rupees.
fn face_value(cell: Option<&str>, column: &str) -> Result<Option<f64>, String> {
    cell.map(|c| {
        c.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("{column} must be a non-negative number of rupees (got {c:?})"))
    })
    .transpose()
}

/// NSE's `DATE OF LISTING` (`06-OCT-2008`).
fn listing_date(cell: Option<&str>) -> Result<Option<NaiveDate>, String> {
    cell.map(|c| {
        NaiveDate::parse_from_str(c, "%d-%b-%Y")
            .map_err(|_| format!("DATE OF LISTING must be a date such as 06-OCT-2008 (got {c:?})"))
    })
    .transpose()
}

/// Parses NSE's `EQUITY_L.csv`. Every bad row is reported with its line.
pub fn parse_nse_equity_list(bytes: &[u8]) -> Result<NseEquityList, ImportError> {
    parse_listings(bytes, NSE_COLUMNS, 2, |record, col, isin| {
        let symbol = parse_ticker(record.get(col.req(0))).map_err(|e| format!("SYMBOL: {e}"));
        let name = exchange_name(record, col.req(1), "NAME OF COMPANY");
        let series = code(record.opt(col.opt(3)), "SERIES");
        let listed_on = listing_date(record.opt(col.opt(4)));
        let face = face_value(record.opt(col.opt(5)), "FACE VALUE");
        match (isin, symbol, name, series, listed_on, face) {
            (Ok(isin), Ok(symbol), Ok(name), Ok(series), Ok(listed_on), Ok(face_value)) => {
                Ok(NseListing { line: record.line, isin, symbol, name, series, listed_on, face_value })
            }
            (isin, symbol, name, series, listed_on, face) => {
                Err(vec![isin.err(), symbol.err(), name.err(), series.err(), listed_on.err(), face.err()])
            }
        }
    })
}

/// The equity list of an exchange CSV with `columns`, the ISIN in column
/// `isin_col` (of `columns`): rows with a placeholder for an ISIN are
/// recorded as skipped and left out; an ISIN seen on an earlier line is an
/// error; `listing` makes the rest (with the ISIN, or its error, so a row's
/// problems are all reported together). Every bad row is reported.
fn parse_listings<L>(
    bytes: &[u8],
    columns: &[Column],
    isin_col: usize,
    mut listing: impl FnMut(&Record, &Cols, Result<Isin, String>) -> Result<L, Vec<Option<String>>>,
) -> Result<EquityList<L>, ImportError> {
    let mut skipped_without_isin = Vec::new();
    let mut seen = FirstSeen::new();
    let listings = read_rows(bytes, columns, |record, col| {
        match exchange_isin(record, col.req(isin_col), &mut skipped_without_isin)
            .and_then(|isin| first_time(&mut seen, isin, record.line))
        {
            Ok(None) => None,
            Ok(Some(isin)) => Some(listing(record, col, Ok(isin))),
            Err(e) => Some(listing(record, col, Err(e))),
        }
    })?;
    Ok(EquityList { listings, skipped_without_isin })
}

/// The rows of an exchange CSV with `columns`, each made by `row` from its
/// record and the columns' indexes (`None`: the row is left out; `Err`: its
/// problems). Every bad row is reported.
fn read_rows<T>(
    bytes: &[u8],
    columns: &[Column],
    mut row: impl FnMut(&Record, &Cols) -> Option<Result<T, Vec<Option<String>>>>,
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
    Column::optional("Status"),
    Column::optional("Group"),
    Column::optional("Face Value"),
    Column::optional("Sector Name"),
    Column::optional("ISubgroup Name"),
];

/// BSE's `Status` cell; `Active` when the file has no such column.
fn bse_status(cell: Option<&str>) -> Result<ListingStatus, String> {
    match cell.map(str::to_ascii_lowercase).as_deref() {
        None | Some("active") => Ok(ListingStatus::Active),
        Some("suspended") => Ok(ListingStatus::Suspended),
        Some("delisted") => Ok(ListingStatus::Delisted),
        Some(_) => Err(format!("Status must be Active, Suspended or Delisted (got {:?})", cell.unwrap_or_default())),
    }
}

/// BSE's `Security Code`: digits.
fn scrip_code(cell: &str) -> Result<String, String> {
    if !cell.is_empty() && cell.len() <= 12 && cell.bytes().all(|b| b.is_ascii_digit()) {
        Ok(cell.to_owned())
    } else {
        Err(format!("Security Code must be digits (got {cell:?})"))
    }
}

/// Parses BSE's `Equity.csv`. Every bad row is reported with its line.
pub fn parse_bse_equity_list(bytes: &[u8]) -> Result<BseEquityList, ImportError> {
    parse_listings(bytes, BSE_COLUMNS, 3, |record, col, isin| {
        let security_id = record.get(col.req(2));
        let ticker = bse_ticker(security_id, record.get(col.req(0)));
        let name = exchange_name(record, col.req(1), "Issuer Name");
        let industry = classification(record.get(col.req(5)), mds_domain::bounds::INDUSTRY);
        let sector = classification(record.get(col.req(4)), mds_domain::bounds::SECTOR);
        let opt_level = |i: usize| classification(record.opt(col.opt(i)).unwrap_or(""), mds_domain::bounds::SECTOR);
        let (macro_sector, basic_industry) = (opt_level(9), opt_level(10));
        let code = scrip_code(record.get(col.req(0)));
        let status = bse_status(record.opt(col.opt(6)));
        let group = self::code(record.opt(col.opt(7)), "Group");
        let face = face_value(record.opt(col.opt(8)), "Face Value");
        let problems = [
            isin.as_ref().err(),
            ticker.as_ref().err(),
            name.as_ref().err(),
            industry.as_ref().err(),
            sector.as_ref().err(),
            macro_sector.as_ref().err(),
            basic_industry.as_ref().err(),
            code.as_ref().err(),
            status.as_ref().err(),
            group.as_ref().err(),
            face.as_ref().err(),
        ];
        if problems.iter().any(Option::is_some) {
            return Err(problems.into_iter().map(|p| p.cloned()).collect());
        }
        let (ticker, ticker_source) = ticker.expect("checked");
        Ok(BseListing {
            line: record.line,
            isin: isin.expect("checked"),
            ticker,
            ticker_source,
            security_id: security_id.to_owned(),
            name: name.expect("checked"),
            industry: industry.expect("checked"),
            sector: sector.expect("checked"),
            scrip_code: code.expect("checked"),
            status: status.expect("checked"),
            group: group.expect("checked"),
            face_value: face.expect("checked"),
            macro_sector: macro_sector.expect("checked"),
            basic_industry: basic_industry.expect("checked"),
        })
    })
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
        let symbol = parse_ticker(record.get(col.req(0))).map_err(|e| format!("Symbol: {e}")).and_then(|symbol| {
            match seen.insert(symbol.clone(), line) {
                Some(first) => Err(format!("duplicate Symbol {symbol}: it is already on line {first}")),
                None => Ok(symbol),
            }
        });
        let cap = record.get(col.req(1));
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
    Ok(McapList { rows, by_symbol, as_of: None })
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
        let b = on_bse.get(&n.isin).copied();
        let nse_listing = Listing {
            exchange: Exchange::Nse,
            symbol: n.symbol.to_string(),
            scrip_code: None,
            series: n.series.clone(),
            listed_on: n.listed_on,
            face_value: n.face_value,
            status: ListingStatus::Active,
        };
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
            details: CompanyDetails {
                listings: [Some(nse_listing), b.map(bse_listing)].into_iter().flatten().collect(),
                classification: b.map(classification_of).unwrap_or_default(),
                market_cap: mcap.and_then(|m| m.market_cap_of(&n.symbol)),
            },
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
            details: CompanyDetails {
                listings: vec![bse_listing(b)],
                classification: classification_of(b),
                market_cap: None,
            },
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
