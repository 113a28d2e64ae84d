//! NSE's `SME_EQUITY_L.csv`: every equity on NSE's SME platform. The columns
//! are those of `EQUITY_L.csv` spelt with underscores (`NAME_OF_COMPANY`,
//! `ISIN_NUMBER`, …), the date of listing has a two-digit year
//! (`15-May-26`), and every line ends with a comma.

use chrono::NaiveDate;

use super::nse::{NseEquityList, nse_shaped_columns, parse_nse_shaped};
use crate::error::ImportError;
use crate::text::Column;

pub(super) const SME_COLUMNS: [Column; 6] =
    nse_shaped_columns(["SYMBOL", "NAME_OF_COMPANY", "ISIN_NUMBER", "SERIES", "DATE_OF_LISTING", "FACE_VALUE"]);

/// The SME list's `DATE_OF_LISTING` (`15-May-26`; a four-digit year is
/// read too). A two-digit year is of this century (the platform opened in
/// 2012).
pub(super) fn sme_listing_date(cell: Option<&str>) -> Result<Option<NaiveDate>, String> {
    cell.map(|c| {
        let four = c.rsplit('-').next().is_some_and(|y| y.len() == 4);
        let format = if four { "%d-%b-%Y" } else { "%d-%b-%y" };
        NaiveDate::parse_from_str(c, format)
            .map_err(|_| format!("DATE_OF_LISTING must be a date such as 15-May-26 (got {c:?})"))
    })
    .transpose()
}

/// Parses NSE's `SME_EQUITY_L.csv` into the shape of the main board's list.
/// Every bad row is reported with its line.
pub fn parse_nse_sme_equity_list(bytes: &[u8]) -> Result<NseEquityList, ImportError> {
    parse_nse_shaped(bytes, &SME_COLUMNS, sme_listing_date)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sme_list_has_two_digit_years_and_trailing_commas() {
        let csv = b"SYMBOL,NAME_OF_COMPANY,SERIES,DATE_OF_LISTING,PAID_UP_VALUE,ISIN_NUMBER,FACE_VALUE,\n\
SIMCA,Simca Advertising Limited,ST,15-May-26,10,INE1K4J01018,10,\n";
        let list = parse_nse_sme_equity_list(csv).unwrap();
        let l = &list.listings[0];
        assert_eq!(l.symbol.as_str(), "SIMCA");
        assert_eq!(l.listed_on, NaiveDate::from_ymd_opt(2026, 5, 15));
        assert_eq!(l.series.as_deref(), Some("ST"));
        assert_eq!(l.face_value, Some(10.0));
        let bad = b"SYMBOL,NAME_OF_COMPANY,SERIES,DATE_OF_LISTING,PAID_UP_VALUE,ISIN_NUMBER,FACE_VALUE,\n\
SIMCA,Simca Advertising Limited,ST,31-Feb-26,10,INE1K4J01018,10,\n";
        assert_eq!(parse_nse_sme_equity_list(bad).unwrap_err().lines(), vec![2]);
    }
}
