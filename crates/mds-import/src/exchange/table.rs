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
pub(crate) struct Cols(Vec<Option<usize>>);

impl Cols {
    /// Where required column `i` is (a header without it was refused).
    pub(crate) fn req(&self, i: usize) -> usize {
        self.0[i].expect("a required column is in the header")
    }

    /// Where optional column `i` is, if the file has it.
    pub(crate) fn opt(&self, i: usize) -> Option<usize> {
        self.0[i]
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

/// An ISIN's bytes.
fn isin_key(isin: &Isin) -> [u8; 12] {
    isin.as_str().as_bytes().try_into().expect("an ISIN is 12 ASCII characters")
}

/// A required name cell, tidied as the service stores names
/// ([`mds_domain::tidy_name`]).
pub(crate) fn exchange_name(record: &Record, index: usize, column: &str) -> Result<String, String> {
    match mds_domain::tidy_name(record.get(index)) {
        name if name.is_empty() => Err(format!("{column} is empty")),
        name => mds_domain::bounds::COMPANY_NAME.check(&name).map(|()| name).map_err(|e| format!("{column}: {e}")),
    }
}

/// The ISIN, or a duplicate error when an earlier line has it.
/// (The ISINs are keyed by their 12 bytes: a list of a million rows holds
/// them all while it is read.)
fn first_time(seen: &mut FirstSeen<[u8; 12]>, isin: Option<Isin>, line: usize) -> Result<Option<Isin>, String> {
    match isin {
        Some(isin) => match seen.insert(isin_key(&isin), line) {
            Some(first) => Err(format!("duplicate ISIN {isin}: it is already on line {first}")),
            None => Ok(Some(isin)),
        },
        None => Ok(None),
    }
}

/// A short code cell (a series or a group): `-` and empty mean none.
pub(crate) fn code(cell: Option<&str>, column: &str) -> Result<Option<String>, String> {
    match cell.filter(|c| *c != "-") {
        None => Ok(None),
        Some(c) if c.len() <= mds_domain::detail::LISTING_TEXT_MAX && c.bytes().all(|b| b.is_ascii_graphic()) => {
            Ok(Some(c.to_owned()))
        }
        Some(c) => Err(format!("{column} must be a short code without spaces (got {c:?})")),
    }
}

/// A face value cell, in rupees.
pub(crate) fn face_value(cell: Option<&str>, column: &str) -> Result<Option<f64>, String> {
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
    listing: impl FnMut(&Record, &Cols, Result<Isin, String>) -> Result<L, Vec<Option<String>>>,
) -> Result<EquityList<L>, ImportError> {
    let mut listings = Vec::new();
    let skipped_without_isin = parse_listings_into(bytes, columns, isin_col, &mut |l| listings.push(l), listing)?;
    Ok(EquityList { listings, skipped_without_isin })
}

/// [`parse_listings`], each listing handed to `sink` as it is read;
/// returns the rows skipped. `Err` comes after the good rows were handed
/// on (the caller drops them).
pub(super) fn parse_listings_into<L>(
    bytes: &[u8],
    columns: &[Column],
    isin_col: usize,
    sink: &mut dyn FnMut(L),
    mut listing: impl FnMut(&Record, &Cols, Result<Isin, String>) -> Result<L, Vec<Option<String>>>,
) -> Result<Vec<SkippedRow>, ImportError> {
    let mut skipped_without_isin = Vec::new();
    let mut seen = FirstSeen::new();
    for_each_row(
        bytes,
        columns,
        |record, col| match exchange_isin(record, col.req(isin_col), &mut skipped_without_isin)
            .and_then(|isin| first_time(&mut seen, isin, record.line))
        {
            Ok(None) => None,
            Ok(Some(isin)) => Some(listing(record, col, Ok(isin))),
            Err(e) => Some(listing(record, col, Err(e))),
        },
        sink,
    )?;
    Ok(skipped_without_isin)
}

/// A row made of its cells read, or the problems of the cells:
/// `row_of_cells!(Row { field: value, …; cell, … })`, each `cell` a
/// variable holding a `Result<_, String>` and named as its field, is `Ok`
/// with the row when every cell is `Ok`, else `Err` with each cell's
/// problem (`None` where it is good), in the order the cells are given:
/// what a row loop ([`read_rows`], [`parse_listings`]) reports, all of a
/// row's problems together. The fields before the `;` are not cells.
macro_rules! row_of_cells {
    ($row:ident { $($field:ident: $value:expr),* ; $($cell:ident),+ $(,)? }) => {
        match ($($cell,)+) {
            ($(Ok($cell),)+) => Ok($row { $($field: $value,)* $($cell,)+ }),
            ($($cell,)+) => Err(vec![$($cell.err(),)+]),
        }
    };
}
pub(crate) use row_of_cells;

/// The rows of an exchange CSV with `columns`, each made by `row` from its
/// record and the columns' indexes (`None`: the row is left out; `Err`: its
/// problems). Every bad row is reported.
pub(crate) fn read_rows<T>(
    bytes: &[u8],
    columns: &[Column],
    row: impl FnMut(&Record, &Cols) -> Option<Result<T, Vec<Option<String>>>>,
) -> Result<Vec<T>, ImportError> {
    let mut out = Vec::new();
    for_each_row(bytes, columns, row, &mut |r| out.push(r))?;
    Ok(out)
}

/// [`read_rows`], each row handed to `sink` as it is made, the file read a
/// record at a time (its records are never all held). A header without
/// the required columns: its problems, and the records are still read for
/// theirs. `Err` comes after the good rows were handed on.
fn for_each_row<T>(
    bytes: &[u8],
    columns: &[Column],
    mut row: impl FnMut(&Record, &Cols) -> Option<Result<T, Vec<Option<String>>>>,
    sink: &mut dyn FnMut(T),
) -> Result<(), ImportError> {
    let mut errors = Vec::new();
    let text = text::decode(bytes, &mut errors)?;
    let mut records = text::CsvRows::open(&text, true)?;
    let col = match text::map_header(records.header_line, &records.header, columns, HeaderRule::Lenient) {
        Ok(found) => Some(Cols(found)),
        Err(header_errors) => {
            errors.extend(header_errors);
            None
        }
    };
    for record in records.by_ref() {
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        let Some(col) = &col else { continue };
        match row(&record, col) {
            None => {}
            Some(Ok(r)) => sink(r),
            Some(Err(problems)) => RowError::push_all(&mut errors, record.line, problems),
        }
    }
    records.finish()?;
    ImportError::check(errors)
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
