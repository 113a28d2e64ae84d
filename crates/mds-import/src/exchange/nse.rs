//! NSE's `EQUITY_L.csv`: every equity listed on NSE (symbol, name, ISIN;
//! series, date of listing and face value when the file has them).

use chrono::NaiveDate;
use mds_domain::{Isin, Ticker};

use super::table::{EquityList, SkippedRow, code, exchange_name, face_value, parse_listings_into, row_of_cells};
use crate::error::ImportError;
use crate::fields::parse_ticker;
use crate::text::Column;

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

/// NSE's equity list (`EQUITY_L.csv`).
pub type NseEquityList = EquityList<NseListing>;

pub(super) const NSE_COLUMNS: [Column; 6] =
    nse_shaped_columns(["SYMBOL", "NAME OF COMPANY", "ISIN NUMBER", "SERIES", "DATE OF LISTING", "FACE VALUE"]);

/// NSE's `DATE OF LISTING` (`06-OCT-2008`).
pub(super) fn listing_date(cell: Option<&str>) -> Result<Option<NaiveDate>, String> {
    cell.map(|c| {
        NaiveDate::parse_from_str(c, "%d-%b-%Y")
            .map_err(|_| format!("DATE OF LISTING must be a date such as 06-OCT-2008 (got {c:?})"))
    })
    .transpose()
}

/// Parses NSE's `EQUITY_L.csv`. Every bad row is reported with its line.
pub fn parse_nse_equity_list(bytes: &[u8]) -> Result<NseEquityList, ImportError> {
    parse_nse_shaped(bytes, &NSE_COLUMNS, listing_date)
}

/// The columns of a list of NSE's shape, named as the file spells them:
/// symbol, name and ISIN, which a file must have, then series, date of
/// listing and face value, which it may leave out (the order
/// [`parse_nse_shaped`] reads them in).
pub(super) const fn nse_shaped_columns(names: [&'static str; 6]) -> [Column; 6] {
    let [symbol, name, isin, series, listed_on, face_value] = names;
    [
        Column::required(symbol),
        Column::required(name),
        Column::required(isin),
        Column::optional(series),
        Column::optional(listed_on),
        Column::optional(face_value),
    ]
}

/// Parses a list of NSE's shape: `columns` are symbol, name, ISIN, series,
/// date of listing and face value, in that order (the names as the file
/// spells them), `date` reads the date of listing.
pub(super) fn parse_nse_shaped(
    bytes: &[u8],
    columns: &[Column],
    date: fn(Option<&str>) -> Result<Option<NaiveDate>, String>,
) -> Result<NseEquityList, ImportError> {
    let mut listings = Vec::new();
    let skipped_without_isin = parse_nse_shaped_into(bytes, columns, date, &mut |l| listings.push(l))?;
    Ok(EquityList { listings, skipped_without_isin })
}

/// [`parse_nse_shaped`], each listing handed to `sink` as it is read (a
/// record at a time: the file's records are never all held); returns the
/// rows skipped for want of an ISIN. `Err` (every bad row reported) comes
/// after the good rows were handed on: the caller drops what it was given.
pub(super) fn parse_nse_shaped_into(
    bytes: &[u8],
    columns: &[Column],
    date: fn(Option<&str>) -> Result<Option<NaiveDate>, String>,
    sink: &mut dyn FnMut(NseListing),
) -> Result<Vec<SkippedRow>, ImportError> {
    parse_listings_into(bytes, columns, 2, sink, |record, col, isin| {
        let symbol = parse_ticker(record.get(col.req(0))).map_err(|e| format!("{}: {e}", columns[0].name));
        let name = exchange_name(record, col.req(1), columns[1].name);
        let series = code(record.opt(col.opt(3)), columns[3].name);
        let listed_on = date(record.opt(col.opt(4)));
        let face_value = face_value(record.opt(col.opt(5)), columns[5].name);
        row_of_cells!(NseListing { line: record.line; isin, symbol, name, series, listed_on, face_value })
    })
}
