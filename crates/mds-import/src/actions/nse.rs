//! NSE's corporate-actions CSV: `"SYMBOL","COMPANY NAME","SERIES",
//! "PURPOSE","FACE VALUE","EX-DATE","RECORD DATE","BOOK CLOSURE START
//! DATE","BOOK CLOSURE END DATE"`, a UTF-8 BOM, dates `DD-Mon-YYYY`, `-`
//! for none. Columns are found by name (ignoring case and surrounding
//! white space); a repeated row is just a row (merged later).

use chrono::NaiveDate;
use mds_domain::Ticker;

use super::{date, purpose_text};
use crate::error::ImportError;
use crate::exchange::table::{code, exchange_name, face_value, read_rows, row_of_cells};
use crate::fields::parse_ticker;
use crate::text::Column;

/// One row of NSE's file.
#[derive(Debug, Clone, PartialEq)]
pub struct NseActionRow {
    /// Line of the row.
    pub line: usize,
    /// `SYMBOL`: the symbol current when the file was made.
    pub symbol: Ticker,
    /// `COMPANY NAME`.
    pub company: String,
    /// `SERIES` (`EQ`, `GS`, `IV`, …); `None` for `-` or empty.
    pub series: Option<String>,
    /// `PURPOSE`, trimmed.
    pub purpose: String,
    /// `FACE VALUE`, INR, when given.
    pub face_value: Option<f64>,
    /// `EX-DATE`.
    pub ex_date: NaiveDate,
    /// `RECORD DATE`, when given.
    pub record_date: Option<NaiveDate>,
    /// `BOOK CLOSURE START DATE`, when given.
    pub book_closure_start: Option<NaiveDate>,
    /// `BOOK CLOSURE END DATE`, when given.
    pub book_closure_end: Option<NaiveDate>,
}

const COLUMNS: &[Column] = &[
    Column::required("SYMBOL"),
    Column::required("COMPANY NAME"),
    Column::required("SERIES"),
    Column::required("PURPOSE"),
    Column::required("FACE VALUE"),
    Column::required("EX-DATE"),
    Column::optional("RECORD DATE"),
    Column::optional("BOOK CLOSURE START DATE"),
    Column::optional("BOOK CLOSURE END DATE"),
];

/// Reads NSE's file: every row, or every bad line with its number.
pub fn read(bytes: &[u8]) -> Result<Vec<NseActionRow>, ImportError> {
    read_rows(bytes, COLUMNS, |record, col| {
        let day = |i: usize, name: &str| date(record.opt(col.opt(i)), "%d-%b-%Y", "05-Jan-2016", name);
        let symbol = parse_ticker(record.get(col.req(0))).map_err(|e| format!("SYMBOL: {e}"));
        let company = exchange_name(record, col.req(1), "COMPANY NAME");
        let series = code(record.opt(col.opt(2)), "SERIES");
        let purpose = purpose_text(record.get(col.req(3)), "PURPOSE");
        let face_value = face_value(record.opt(col.opt(4)).filter(|c| *c != "-"), "FACE VALUE");
        let ex_date = day(5, "EX-DATE").and_then(|d| d.ok_or_else(|| "EX-DATE is empty".to_owned()));
        let (record_date, book_closure_start, book_closure_end) =
            (day(6, "RECORD DATE"), day(7, "BOOK CLOSURE START DATE"), day(8, "BOOK CLOSURE END DATE"));
        Some(row_of_cells!(NseActionRow {
            line: record.line;
            symbol, company, series, purpose, face_value, ex_date, record_date, book_closure_start, book_closure_end
        }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "\u{feff}\"SYMBOL\",\"COMPANY NAME\",\"SERIES\",\"PURPOSE\",\"FACE VALUE\",\"EX-DATE\",\"RECORD DATE\",\"BOOK CLOSURE START DATE\",\"BOOK CLOSURE END DATE\"\n";

    #[test]
    fn reads_a_row() {
        let text = format!(
            "{HEADER}\"KOTHARIPRO\",\"Kothari Products Limited\",\"EQ\",\" Bonus 1:2\",\"10\",\"05-Jan-2016\",\"06-Jan-2016\",\"-\",\"-\"\n"
        );
        let rows = read(text.as_bytes()).unwrap();
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!((r.line, r.symbol.as_str(), r.purpose.as_str()), (2, "KOTHARIPRO", "Bonus 1:2"));
        assert_eq!(r.face_value, Some(10.0));
        assert_eq!(r.ex_date, NaiveDate::from_ymd_opt(2016, 1, 5).unwrap());
        assert_eq!(r.record_date, NaiveDate::from_ymd_opt(2016, 1, 6));
        assert_eq!((r.book_closure_start, r.book_closure_end), (None, None));
    }

    #[test]
    fn bad_lines_are_named() {
        let text = format!(
            "{HEADER}\"A\",\"A Ltd\",\"EQ\",\"Bonus 1:2\",\"10\",\"2016-01-05\",\"-\",\"-\",\"-\"\n\
             \"B\",\"B Ltd\",\"EQ\",\"\",\"x\",\"05-Jan-2016\",\"-\",\"-\",\"-\"\n\
             \"C\",\"C Ltd\",\"EQ\",\"Bonus 1:2\",\"10\",\"05-Jan-2016\",\"-\",\"-\",\"-\"\n\
             \"D\",\"D Ltd\",\"EQ\",\"Bonus 1:2\",\"10\",\"-\"\n"
        );
        let err = read(text.as_bytes()).unwrap_err();
        assert_eq!(err.lines(), vec![2, 3, 5], "{err}");
        assert!(err.to_string().contains("line 2: EX-DATE must be a day such as 05-Jan-2016"), "{err}");
        assert!(err.to_string().contains("line 3: PURPOSE is empty"), "{err}");
    }

    #[test]
    fn a_missing_column_is_named() {
        let err = read(b"\"SYMBOL\",\"PURPOSE\"\n\"A\",\"Bonus 1:1\"\n").unwrap_err();
        assert!(err.to_string().contains("required column \"EX-DATE\" is missing"), "{err}");
    }
}
