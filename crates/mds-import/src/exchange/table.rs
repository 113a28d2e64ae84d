//! What the exchange CSVs share: the table read with lenient headers, the
//! ISIN cell (a placeholder skips the row, a repeat is an error), names,
//! short codes and face values, and the row loop that reports every bad row.

use mds_domain::Isin;

use crate::error::{ImportError, RowError};
use crate::fields::parse_isin;
use crate::text::{self, Column, FirstSeen, HeaderRule, Record};

/// A row left out because it has no real ISIN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedRow {
    /// Line of the row.
    pub line: usize,
    /// The ISIN cell as written (trimmed): `-`, `NA` or empty.
    pub isin: String,
}

/// An exchange's equity list: its securities (`L`: [`NseListing`](super::NseListing) or
/// [`BseListing`](super::BseListing)) and the rows left out.
#[derive(Debug, Clone, PartialEq)]
pub struct EquityList<L> {
    /// The securities, in file order.
    pub listings: Vec<L>,
    /// Rows without a real ISIN.
    pub skipped_without_isin: Vec<SkippedRow>,
}

/// ISIN cells that mean "no ISIN".
fn is_placeholder(isin: &str) -> bool {
    ["", "-", "NA", "N/A"].iter().any(|p| p.eq_ignore_ascii_case(isin))
}

/// Where the columns asked for are in a file, in the order asked.
pub(super) struct Cols(Vec<Option<usize>>);

impl Cols {
    /// Where required column `i` is (a header without it was refused).
    pub(super) fn req(&self, i: usize) -> usize {
        self.0[i].expect("a required column is in the header")
    }

    /// Where optional column `i` is, if the file has it.
    pub(super) fn opt(&self, i: usize) -> Option<usize> {
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
pub(super) fn exchange_name(record: &Record, index: usize, column: &str) -> Result<String, String> {
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

/// A short code cell (a series or a group): `-` and empty mean none.
pub(super) fn code(cell: Option<&str>, column: &str) -> Result<Option<String>, String> {
    match cell.filter(|c| *c != "-") {
        None => Ok(None),
        Some(c) if c.len() <= mds_domain::detail::LISTING_TEXT_MAX && c.bytes().all(|b| b.is_ascii_graphic()) => {
            Ok(Some(c.to_owned()))
        }
        Some(c) => Err(format!("{column} must be a short code without spaces (got {c:?})")),
    }
}

/// A face value cell, in rupees.
pub(super) fn face_value(cell: Option<&str>, column: &str) -> Result<Option<f64>, String> {
    cell.map(|c| {
        c.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("{column} must be a non-negative number of rupees (got {c:?})"))
    })
    .transpose()
}

/// The equity list of an exchange CSV with `columns`, the ISIN in column
/// `isin_col` (of `columns`): rows with a placeholder for an ISIN are
/// recorded as skipped and left out; an ISIN seen on an earlier line is an
/// error; `listing` makes the rest (with the ISIN, or its error, so a row's
/// problems are all reported together). Every bad row is reported.
pub(super) fn parse_listings<L>(
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
pub(super) fn read_rows<T>(
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
}
