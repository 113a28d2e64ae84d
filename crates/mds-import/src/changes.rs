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
use crate::text;

/// A change file's date (`09-APR-2025`).
fn change_date(cell: &str) -> Result<NaiveDate, String> {
    NaiveDate::parse_from_str(cell, "%d-%b-%Y")
        .map_err(|_| format!("the date must be a day such as 09-APR-2025 (got {cell:?})"))
}

/// A name cell: not empty, within the bound of company names.
fn name(cell: &str, what: &str) -> Result<String, String> {
    if cell.is_empty() {
        return Err(format!("{what} is empty"));
    }
    mds_domain::bounds::COMPANY_NAME.check(cell).map(|()| cell.to_owned()).map_err(|e| format!("{what}: {e}"))
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

/// Parses NSE's symbol-change file. Every bad line is reported.
pub fn parse_symbol_changes(bytes: &[u8]) -> Result<Vec<SymbolChange>, ImportError> {
    let mut errors = Vec::new();
    let mut out = Vec::new();
    for (line, [company, from, to, date]) in lines(bytes, &mut errors)? {
        // NSE's file has a row without one (`,780LTFL30,799LTFL30,…`): kept.
        let company = mds_domain::bounds::COMPANY_NAME
            .check(&company)
            .map(|()| company.clone())
            .map_err(|e| format!("the company name: {e}"));
        let from = parse_ticker(&from).map_err(|e| format!("old symbol: {e}"));
        let to = parse_ticker(&to).map_err(|e| format!("new symbol: {e}"));
        let date = change_date(&date);
        match (company, from, to, date) {
            (Ok(company), Ok(from), Ok(to), Ok(date)) => out.push(SymbolChange { from, to, date, company }),
            (c, f, t, d) => RowError::push_all(&mut errors, line, vec![c.err(), f.err(), t.err(), d.err()]),
        }
    }
    ImportError::check(errors)?;
    out.sort();
    out.dedup_by(|a, b| (&a.from, &a.to, a.date) == (&b.from, &b.to, b.date));
    Ok(out)
}

/// Parses NSE's name-change file. Every bad line is reported.
pub fn parse_name_changes(bytes: &[u8]) -> Result<Vec<NameChange>, ImportError> {
    let mut errors = Vec::new();
    let mut out = Vec::new();
    for (line, [symbol, from, to, date]) in lines(bytes, &mut errors)? {
        let symbol = parse_ticker(&symbol).map_err(|e| format!("symbol: {e}"));
        let from = name(&from, "the previous name");
        let to = name(&to, "the new name");
        let date = change_date(&date);
        match (symbol, from, to, date) {
            (Ok(symbol), Ok(from), Ok(to), Ok(date)) => out.push(NameChange { symbol, from, to, date }),
            (s, f, t, d) => RowError::push_all(&mut errors, line, vec![s.err(), f.err(), t.err(), d.err()]),
        }
    }
    ImportError::check(errors)?;
    out.sort();
    out.dedup();
    Ok(out)
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
