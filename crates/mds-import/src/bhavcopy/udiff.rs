//! NSE's UDiFF daily file (`TradDt,BizDt,Sgmt,Src,FinInstrmTp,FinInstrmId,ISIN,TckrSymb,SctySrs,…`):
//! a row per security and series, with its ISIN. The columns read are
//! `TradDt`, `TckrSymb`, `SctySrs`, `ISIN`, `OpnPric`, `HghPric`, `LwPric`,
//! `ClsPric`, `LastPric` (empty in some files: `None`), `PrvsClsgPric`,
//! `TtlTradgVol`, `TtlTrfVal` (rupees) and `TtlNbOfTxsExctd`; the others
//! are ignored. UDiFF has no delivery figures.

use chrono::NaiveDate;

use super::Format;
use super::rows::{Layout, Own, all_required};
use crate::text::Column;

const COLUMNS: [Column; 13] = all_required([
    "TradDt",
    "TckrSymb",
    "SctySrs",
    "OpnPric",
    "HghPric",
    "LwPric",
    "ClsPric",
    "LastPric",
    "PrvsClsgPric",
    "TtlTradgVol",
    "TtlTrfVal",
    "TtlNbOfTxsExctd",
    "ISIN",
]);

/// The format as the row loop reads it.
pub(super) const LAYOUT: Layout = Layout {
    format: Format::Udiff,
    columns: &COLUMNS,
    date: |cell| NaiveDate::parse_from_str(cell, "%Y-%m-%d").ok(),
    date_example: "2025-02-12",
    turnover_unit: 1,
    own: Own::Isin,
};

#[cfg(test)]
mod tests {
    use crate::bhavcopy::{Format, parse_day};

    const OLD: &str = "TradDt,BizDt,Sgmt,Src,FinInstrmTp,FinInstrmId,ISIN,TckrSymb,SctySrs,XpryDt,FininstrmActlXpryDt,StrkPric,OptnTp,FinInstrmNm,OpnPric,HghPric,LwPric,ClsPric,LastPric,PrvsClsgPric,UndrlygPric,SttlmPric,OpnIntrst,ChngInOpnIntrst,TtlTradgVol,TtlTrfVal,TtlNbOfTxsExctd,SsnId,NewBrdLotQty,Rmks,Rsvd01,Rsvd02,Rsvd03,Rsvd04,\n\
2024-01-01,2024-01-01,CM,NSE,STK,13,INE117A01022,ABB,EQ,,,,,ABB INDIA LIMITED,4674.85,4715.00,4653.80,4682.20,4668.00,4674.85,,4682.20,,,84544,395935611.70,12510,F1,1,,,,,\n\
2024-01-01,2024-01-01,CM,NSE,STK,1,IN0020230010,GS2033,GS,,,,,GOI,99.00,99.00,99.00,99.00,,99.00,,99.00,,,10,990.00,1,F1,1,,,,,\n";

    #[test]
    fn the_header_with_a_trailing_comma_is_read() {
        let day = parse_day("old.csv", OLD.as_bytes()).unwrap();
        assert_eq!(day.format, Format::Udiff);
        assert_eq!(day.rows.len(), 1);
        let abb = &day.rows[0];
        assert_eq!(abb.isin.as_ref().unwrap().as_str(), "INE117A01022");
        assert_eq!(abb.figures.close.to_string(), "4682.20");
        assert_eq!(abb.figures.turnover.units(), 39_593_561_170);
        assert_eq!(day.skipped.total(), 1);
    }

    #[test]
    fn a_bad_row_is_refused_with_its_line_and_columns() {
        let text = OLD.replace("4715.00", "47x5").replace("INE117A01022", "INE117A01023");
        let e = parse_day("old.csv", text.as_bytes()).unwrap_err().to_string();
        assert!(e.starts_with("old.csv: line 2: ISIN: isin: not a valid ISIN"), "{e}");
        assert!(e.contains("\nold.csv: line 2: HghPric: must be a number such as 176.25 (got \"47x5\")"), "{e}");
    }
}
