//! BSE's corporate-actions CSV. BSE publishes it in more than one column
//! order and with stray spaces and tabs in the header cells, so columns
//! are found by name (trimmed, ignoring case), in any order (contract
//! 13.1): required `Security Code`, `Security Name`, `Ex Date`, `Purpose`;
//! optional `Company Name`, `Record Date`, the book-closure and
//! no-delivery dates (`BC Start Date` or `BC Start`, …) and `Actual
//! Payment Date` or `Actual Payment`. Dates are `DD Mon YYYY`, `-` or
//! empty for none.

use chrono::NaiveDate;

use super::{date, purpose_text};
use crate::error::ImportError;
use crate::exchange::bse::scrip_code;
use crate::exchange::table::{Cols, exchange_name, read_rows, row_of_cells};
use crate::text::{Column, Record};

/// One row of BSE's file.
#[derive(Debug, Clone, PartialEq)]
pub struct BseActionRow {
    /// Line of the row.
    pub line: usize,
    /// `Security Code`, BSE's numeric id (`500034`).
    pub security_code: String,
    /// `Security Name`: BSE's security id (`BAJFINANCE`), as written.
    pub security_name: String,
    /// `Company Name`, when the file has it.
    pub company: Option<String>,
    /// `Purpose`, trimmed.
    pub purpose: String,
    /// `Ex Date`.
    pub ex_date: NaiveDate,
    /// `Record Date`, when given.
    pub record_date: Option<NaiveDate>,
    /// `BC Start Date`, when given.
    pub book_closure_start: Option<NaiveDate>,
    /// `BC End Date`, when given.
    pub book_closure_end: Option<NaiveDate>,
    /// `ND Start Date` (no-delivery period), when given.
    pub no_delivery_start: Option<NaiveDate>,
    /// `ND End Date`, when given.
    pub no_delivery_end: Option<NaiveDate>,
    /// `Actual Payment Date`, when given.
    pub payment_date: Option<NaiveDate>,
}

const COLUMNS: &[Column] = &[
    Column::required("Security Code"),
    Column::required("Security Name"),
    Column::required("Ex Date"),
    Column::required("Purpose"),
    Column::optional("Company Name"),
    Column::optional("Record Date"),
    // Optional dates, each under either name: (long, short) at 6 + 2k.
    Column::optional("BC Start Date"),
    Column::optional("BC Start"),
    Column::optional("BC End Date"),
    Column::optional("BC End"),
    Column::optional("ND Start Date"),
    Column::optional("ND Start"),
    Column::optional("ND End Date"),
    Column::optional("ND End"),
    Column::optional("Actual Payment Date"),
    Column::optional("Actual Payment"),
];

/// The optional dates with two names: their display names.
const TWO_NAMED: [&str; 5] = ["BC Start Date", "BC End Date", "ND Start Date", "ND End Date", "Actual Payment Date"];

/// A date cell of BSE's (`15 Jul 2025`).
fn day(record: &Record, index: Option<usize>, name: &str) -> Result<Option<NaiveDate>, String> {
    date(record.opt(index), "%d %b %Y", "15 Jul 2025", name)
}

/// Reads BSE's file: every row, or every bad line with its number.
pub fn read(bytes: &[u8]) -> Result<Vec<BseActionRow>, ImportError> {
    read_rows(bytes, COLUMNS, |record, col: &Cols| {
        let security_code = scrip_code(record.get(col.req(0)));
        let security_name = match record.get(col.req(1)) {
            "" => Err("Security Name is empty".to_owned()),
            n => Ok(n.to_owned()),
        };
        let ex_date = day(record, col.opt(2), "Ex Date").and_then(|d| d.ok_or_else(|| "Ex Date is empty".to_owned()));
        let purpose = purpose_text(record.get(col.req(3)), "Purpose");
        let company = match col.opt(4).filter(|&i| !record.get(i).is_empty()) {
            Some(i) => exchange_name(record, i, "Company Name").map(Some),
            None => Ok(None),
        };
        let record_date = day(record, col.opt(5), "Record Date");
        let [book_closure_start, book_closure_end, no_delivery_start, no_delivery_end, payment_date]: [_; 5] =
            std::array::from_fn(|k| day(record, col.opt(6 + 2 * k).or(col.opt(7 + 2 * k)), TWO_NAMED[k]));
        Some(row_of_cells!(BseActionRow {
            line: record.line;
            security_code, security_name, ex_date, purpose, company, record_date,
            book_closure_start, book_closure_end, no_delivery_start, no_delivery_end, payment_date
        }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_layouts_read_alike() {
        let a = "Security Code,Security Name,Company Name,Ex Date,Purpose,Record Date,BC Start Date, BC End Date\t,ND Start Date,ND End Date,Actual Payment Date\r\n\
500040,ABREL,Aditya Birla Real Estate Ltd,15 Jul 2025,Final Dividend - Rs. - 2.0000,15 Jul 2025,-,-,15 Jul 2025,16 Jul 2025,-\r\n";
        let b = "Company Name,Security Code,Security Name,Ex Date,Record Date,BC Start,BC End,ND Start,ND End,Actual Payment,Purpose\r\n\
Aditya Birla Real Estate Ltd,500040,ABREL,15 Jul 2025,15 Jul 2025,,,15 Jul 2025,16 Jul 2025,,Final Dividend - Rs. - 2.0000\r\n";
        let (a, b) = (read(a.as_bytes()).unwrap(), read(b.as_bytes()).unwrap());
        assert_eq!(a, b);
        let r = &a[0];
        assert_eq!((r.security_code.as_str(), r.security_name.as_str()), ("500040", "ABREL"));
        assert_eq!(r.no_delivery_end, NaiveDate::from_ymd_opt(2025, 7, 16));
        assert_eq!(r.book_closure_start, None);
    }

    #[test]
    fn bad_lines_are_named() {
        let text = "Security Code,Security Name,Ex Date,Purpose\n\
500040,ABREL,15-Jul-2025,Bonus 1:1\n\
50004X,ABREL,15 Jul 2025,Bonus 1:1\n\
500040,ABREL,15 Jul 2025,Bonus 1:1\n\
500040,,15 Jul 2025,\n";
        let err = read(text.as_bytes()).unwrap_err();
        assert_eq!(err.lines(), vec![2, 3, 5], "{err}");
        assert!(err.to_string().contains("line 2: Ex Date must be a day such as 15 Jul 2025"), "{err}");
        assert!(
            read(b"Security Code,Ex Date,Purpose\n1,15 Jul 2025,x\n")
                .unwrap_err()
                .to_string()
                .contains("Security Name")
        );
    }
}
