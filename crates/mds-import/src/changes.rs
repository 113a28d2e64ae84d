//! NSE's cumulative change files, read by `mds import nse-changes`:
//!
//! - `symbolchange.csv`: company name, old symbol, new symbol, the day the
//!   new symbol applies from (`DD-MON-YYYY`). NSE's current file has no
//!   header line; an older one had `SYMB_COMPANY_NAME, SM_KEY_SYMBOL,
//!   SM_NEW_SYMBOL, SM_APPLICABLE_FROM`.
//! - `namechange.csv`: `NCH_SYMBOL` (the symbol when the file was made),
//!   `NCH_PREV_NAME`, `NCH_NEW_NAME`, `NCH_DT` (`DD-MON-YYYY`), with or
//!   without that header line.
//!
//! Four cells a line, by position. The first line is a header when its
//! last cell is not a date. Rows whose old and new symbols are equal are
//! read (the derivation ignores them), as are rows repeated (kept once).
//! Every bad line is reported with its number; a file with any is refused
//! whole.

use chrono::NaiveDate;
use mds_domain::snapshot::{NameChange, SymbolChange};

use crate::error::{ImportError, RowError};
use crate::fields::parse_ticker;
use crate::format::{Arg, ArgKind, Format, Given, Input, Read, Refusal};
use crate::text;

/// A change file's date (`09-APR-2025`).
fn change_date(cell: &str) -> Result<NaiveDate, String> {
    NaiveDate::parse_from_str(cell, "%d-%b-%Y")
        .map_err(|_| format!("the date must be a day such as 09-APR-2025 (got {cell:?})"))
}

/// A name cell, tidied as the service stores names
/// ([`mds_domain::tidy_name`]): not empty, within the bound of company names.
fn name(cell: &str, what: &str) -> Result<String, String> {
    let cell = mds_domain::tidy_name(cell);
    if cell.is_empty() {
        return Err(format!("{what} is empty"));
    }
    mds_domain::bounds::COMPANY_NAME.check(&cell).map(|()| cell).map_err(|e| format!("{what}: {e}"))
}

/// The data lines of a change file as `(line, four trimmed cells)`, the
/// header (if any) left out; a line without four cells is an error.
fn lines(bytes: &[u8], errors: &mut Vec<RowError>) -> Result<Vec<(usize, [String; 4])>, ImportError> {
    let text = text::decode(bytes, errors)?;
    let mut reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(text.as_bytes());
    let mut out = Vec::new();
    let mut first = true;
    for record in reader.records() {
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line() as usize);
                errors.push(RowError::new(line, format!("not a CSV line: {e}")));
                continue;
            }
        };
        let line = record.position().map_or(0, |p| p.line() as usize);
        let cells: Vec<&str> = record.iter().map(str::trim).collect();
        if cells.iter().all(|c| c.is_empty()) {
            continue;
        }
        let is_first = std::mem::take(&mut first);
        if cells.len() != 4 {
            errors.push(RowError::new(line, format!("expected 4 cells, found {}", cells.len())));
            continue;
        }
        if is_first && change_date(cells[3]).is_err() {
            continue;
        }
        out.push((line, [cells[0], cells[1], cells[2], cells[3]].map(str::to_owned)));
    }
    if out.is_empty() && errors.is_empty() {
        return Err(ImportError::file("no rows: the file has no change lines"));
    }
    Ok(out)
}

/// A line's four cells made into a row: the row, or each cell's error
/// (`None` for a good cell).
type Row<T> = Result<T, [Option<String>; 4]>;

/// The four cells' values, or the errors of those that are wrong.
fn four<A, B, C, D>(
    a: Result<A, String>,
    b: Result<B, String>,
    c: Result<C, String>,
    d: Result<D, String>,
) -> Row<(A, B, C, D)> {
    match (a, b, c, d) {
        (Ok(a), Ok(b), Ok(c), Ok(d)) => Ok((a, b, c, d)),
        (a, b, c, d) => Err([a.err(), b.err(), c.err(), d.err()]),
    }
}

/// Every line of a change file made into a row by `row`, sorted; every bad
/// line is reported, and a file with any gives nothing.
fn parse_rows<T: Ord>(bytes: &[u8], row: impl Fn([String; 4]) -> Row<T>) -> Result<Vec<T>, ImportError> {
    let mut errors = Vec::new();
    let mut out = Vec::new();
    for (line, cells) in lines(bytes, &mut errors)? {
        match row(cells) {
            Ok(r) => out.push(r),
            Err(e) => RowError::push_all(&mut errors, line, e),
        }
    }
    ImportError::check(errors)?;
    out.sort();
    Ok(out)
}

/// Parses NSE's symbol-change file. Every bad line is reported.
pub fn parse_symbol_changes(bytes: &[u8]) -> Result<Vec<SymbolChange>, ImportError> {
    let mut out = parse_rows(bytes, |[company, from, to, date]| {
        // NSE's file has a row without one (`,780LTFL30,799LTFL30,…`): kept.
        let company = mds_domain::bounds::COMPANY_NAME
            .check(&company)
            .map(|()| company.clone())
            .map_err(|e| format!("the company name: {e}"));
        let from = parse_ticker(&from).map_err(|e| format!("old symbol: {e}"));
        let to = parse_ticker(&to).map_err(|e| format!("new symbol: {e}"));
        let (company, from, to, date) = four(company, from, to, change_date(&date))?;
        Ok(SymbolChange { from, to, date, company })
    })?;
    out.dedup_by(|a, b| (&a.from, &a.to, a.date) == (&b.from, &b.to, b.date));
    Ok(out)
}

/// Parses NSE's name-change file. Every bad line is reported.
pub fn parse_name_changes(bytes: &[u8]) -> Result<Vec<NameChange>, ImportError> {
    let mut out = parse_rows(bytes, |[symbol, from, to, date]| {
        let symbol = parse_ticker(&symbol).map_err(|e| format!("symbol: {e}"));
        let (symbol, from, to, date) =
            four(symbol, name(&from, "the previous name"), name(&to, "the new name"), change_date(&date))?;
        Ok(NameChange { symbol, from, to, date })
    })?;
    out.dedup();
    Ok(out)
}

/// `mds import nse-changes --symbols FILE --names FILE` (either or both).
pub const FORMAT: Format = Format {
    name: "nse-changes",
    about: "NSE's cumulative change files (symbolchange.csv, namechange.csv), with or without their header \
            line; rows already stored are skipped, and the identity events are derived again. A bad line: its \
            number, nothing imported.",
    args: &[
        Arg { name: "symbols", kind: ArgKind::FileOption { required: false }, help: "The symbol-change file." },
        Arg { name: "names", kind: ArgKind::FileOption { required: false }, help: "The name-change file." },
    ],
    read: read_format,
};

/// [`FORMAT`]'s reading: both files parsed whole.
fn read_format(given: &Given, _today: NaiveDate) -> Result<Read, Refusal> {
    let (symbols, names) = (given.one("symbols"), given.one("names"));
    if symbols.is_none() && names.is_none() {
        return Err(Refusal::message("give --symbols, --names or both"));
    }
    Ok(Input::Changes {
        symbols: symbols.map(|f| f.parse(parse_symbol_changes)).transpose()?.unwrap_or_default(),
        names: names.map(|f| f.parse(parse_name_changes)).transpose()?.unwrap_or_default(),
    }
    .into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbol_changes_with_or_without_a_header() {
        let bare = b"ETERNAL LIMITED,ZOMATO,ETERNAL,09-APR-2025\nInterise Trust,INTERISE,INTERISE,12-NOV-2024\n";
        let with = b"SYMB_COMPANY_NAME, SM_KEY_SYMBOL, SM_NEW_SYMBOL, SM_APPLICABLE_FROM\n\
ETERNAL LIMITED,ZOMATO,ETERNAL,09-APR-2025\nInterise Trust,INTERISE,INTERISE,12-NOV-2024\n";
        let a = parse_symbol_changes(bare).unwrap();
        assert_eq!(a, parse_symbol_changes(with).unwrap());
        assert_eq!(a.len(), 2);
        let z = a.iter().find(|s| s.from.as_str() == "ZOMATO").unwrap();
        assert_eq!((z.to.as_str(), z.date), ("ETERNAL", NaiveDate::from_ymd_opt(2025, 4, 9).unwrap()));
    }

    #[test]
    fn a_bad_line_is_named_and_nothing_is_read() {
        let bad = b"ETERNAL LIMITED,ZOMATO,ETERNAL,09-APR-2025\nX,A,B,2025-04-09\nY,A,B\n,A,B,09-APR-2025\nZ,,B,09-APR-2025\n";
        assert_eq!(parse_symbol_changes(bad).unwrap_err().lines(), vec![2, 3, 5]);
        let names = b"NCH_SYMBOL, NCH_PREV_NAME, NCH_NEW_NAME, NCH_DT\n\
ETERNAL,Zomato Limited,ETERNAL LIMITED,09-APR-2025\nTMPV,,Tata Motors Limited,24-NOV-2003\n";
        assert_eq!(parse_name_changes(names).unwrap_err().lines(), vec![3]);
        assert!(parse_name_changes(b"").is_err());
    }
}
