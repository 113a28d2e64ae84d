//! NSE's `sec_bhavdata_full` daily file (`SYMBOL, SERIES, DATE1,
//! PREV_CLOSE, OPEN_PRICE, HIGH_PRICE, LOW_PRICE, LAST_PRICE, CLOSE_PRICE,
//! AVG_PRICE, TTL_TRD_QNTY, TURNOVER_LACS, NO_OF_TRADES, DELIV_QTY,
//! DELIV_PER`): keyed by symbol only (no ISIN), cells padded with spaces,
//! `-` for none, `DD-Mon-YYYY` days, turnover in lakh (read into rupees:
//! times 100,000; the file's two decimals of a lakh are whole rupees). Its
//! header may be padded too (NSE's own copies write `SYMBOL, SERIES, …`).
//! `AVG_PRICE` is not read.

use chrono::NaiveDate;

use super::Format;
use super::rows::{Layout, Own, all_required};
use crate::text::Column;

/// Rupees in a lakh.
const LAKH: i64 = 100_000;

const COLUMNS: [Column; 14] = all_required([
    "DATE1",
    "SYMBOL",
    "SERIES",
    "OPEN_PRICE",
    "HIGH_PRICE",
    "LOW_PRICE",
    "CLOSE_PRICE",
    "LAST_PRICE",
    "PREV_CLOSE",
    "TTL_TRD_QNTY",
    "TURNOVER_LACS",
    "NO_OF_TRADES",
    "DELIV_QTY",
    "DELIV_PER",
]);

/// The format as the row loop reads it.
pub(super) const LAYOUT: Layout = Layout {
    format: Format::SecBhavdataFull,
    columns: &COLUMNS,
    date: |cell| NaiveDate::parse_from_str(cell, "%d-%b-%Y").ok(),
    date_example: "12-Feb-2025",
    turnover_unit: LAKH,
    own: Own::Delivery,
};

#[cfg(test)]
mod tests {
    use crate::bhavcopy::{Format, parse_day};

    #[test]
    fn padded_cells_dashes_and_lakh() {
        let text = "SYMBOL, SERIES, DATE1, PREV_CLOSE, OPEN_PRICE, HIGH_PRICE, LOW_PRICE, LAST_PRICE, CLOSE_PRICE, AVG_PRICE, TTL_TRD_QNTY, TURNOVER_LACS, NO_OF_TRADES, DELIV_QTY, DELIV_PER\n\
            20MICRONS, EQ, 01-Jan-2024,176.2,177.2,182.95,176.0, 176.50,176.5,178.22,117885,210.09,7671, -, -\n";
        let day = parse_day("s.csv", text.as_bytes()).unwrap();
        assert_eq!(day.format, Format::SecBhavdataFull);
        assert_eq!(day.date.to_string(), "2024-01-01");
        let row = &day.rows[0];
        assert_eq!((row.symbol.as_str(), row.series.as_str(), row.isin.as_ref()), ("20MICRONS", "EQ", None));
        assert_eq!(row.figures.last.unwrap().units(), 17650);
        assert_eq!(row.figures.turnover.to_string(), "21009000.00");
        assert_eq!((row.figures.delivery_qty, row.figures.delivery_pct), (None, None));
    }

    #[test]
    fn a_row_of_another_day_is_refused() {
        let text = "SYMBOL,SERIES,DATE1,PREV_CLOSE,OPEN_PRICE,HIGH_PRICE,LOW_PRICE,LAST_PRICE,CLOSE_PRICE,AVG_PRICE,TTL_TRD_QNTY,TURNOVER_LACS,NO_OF_TRADES,DELIV_QTY,DELIV_PER\n\
            A, EQ, 01-Jan-2024,1,1,1,1,1,1,1,1,1,1,1,1\n\
            B, EQ, 02-Jan-2024,1,1,1,1,1,1,1,1,1,1,1,1\n\
            B, EQ, 2024-01-01,1,1,1,1,1,1,1,1,1,1,1,1\n";
        let e = parse_day("s.csv", text.as_bytes()).unwrap_err().to_string();
        assert_eq!(
            e,
            "s.csv: line 3: DATE1 is 2024-01-02, but line 2 is of 2024-01-01: a daily file holds one day\n\
             s.csv: line 4: DATE1 must be a date such as 12-Feb-2025 (got \"2024-01-01\")\n\
             s.csv: line 4: B EQ is also on line 3: a file holds one row of each"
        );
    }
}
