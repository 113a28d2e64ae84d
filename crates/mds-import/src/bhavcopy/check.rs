//! The two formats' rows of the same day compared (contract 14.1: "the two
//! formats' rows of one day are the same bar when date, symbol and series
//! agree: ... a disagreement in price is reported"). Pure: no store.
//!
//! Rows pair by (date, symbol, series). A pair disagrees on a field when
//! the two files publish different values: the prices and the previous
//! close, the volume and the number of trades exactly, the last price when
//! both have one, and the turnover within what rounding it to a hundredth
//! of a lakh (1,000 rupees) can move it (500 rupees).

use std::collections::HashMap;

use chrono::NaiveDate;
use mds_domain::Ticker;
use mds_domain::prices::{Figures, Paise, Series};

use super::BhavRow;

/// The turnover difference that rounding a rupee figure to a hundredth of a
/// lakh explains: half of 1,000 rupees.
const TURNOVER_ROUNDING: Paise = Paise::from_units(500 * 100);

/// One field on which the two rows of a bar differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disagreement {
    /// The day.
    pub date: NaiveDate,
    /// The symbol.
    pub symbol: Ticker,
    /// The series.
    pub series: Series,
    /// The field (a `V1Bar` name: `close`, `volume`, ...).
    pub field: &'static str,
    /// Its value in the ISIN-keyed (UDiFF) row.
    pub isin_keyed: String,
    /// Its value in the symbol-keyed (`sec_bhavdata_full`) row.
    pub symbol_keyed: String,
}

/// What comparing two formats' rows found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Rows found in both.
    pub paired: usize,
    /// ISIN-keyed rows with no symbol-keyed row.
    pub only_isin_keyed: usize,
    /// Symbol-keyed rows with no ISIN-keyed row.
    pub only_symbol_keyed: usize,
    /// Every field of a pair that differs.
    pub disagreements: Vec<Disagreement>,
}

/// Pairs the ISIN-keyed rows with the symbol-keyed ones by (date, symbol,
/// series) and reports the fields that differ.
pub fn compare(isin_keyed: &[BhavRow], symbol_keyed: &[BhavRow]) -> Comparison {
    let by_key: HashMap<(NaiveDate, &str, Series), &BhavRow> =
        symbol_keyed.iter().map(|r| ((r.date, r.symbol.as_str(), r.series), r)).collect();
    let mut out = Comparison::default();
    for a in isin_keyed {
        let Some(b) = by_key.get(&(a.date, a.symbol.as_str(), a.series)) else {
            out.only_isin_keyed += 1;
            continue;
        };
        out.paired += 1;
        for (field, x, y) in differences(&a.figures, &b.figures) {
            out.disagreements.push(Disagreement {
                date: a.date,
                symbol: a.symbol.clone(),
                series: a.series,
                field,
                isin_keyed: x,
                symbol_keyed: y,
            });
        }
    }
    out.only_symbol_keyed = symbol_keyed.len() - out.paired;
    out
}

/// The fields on which `a` and `b` differ, with both values.
fn differences(a: &Figures, b: &Figures) -> Vec<(&'static str, String, String)> {
    let mut out = Vec::new();
    let mut price = |field, x: Paise, y: Paise| {
        if x != y {
            out.push((field, x.to_string(), y.to_string()));
        }
    };
    price("open", a.open, b.open);
    price("high", a.high, b.high);
    price("low", a.low, b.low);
    price("close", a.close, b.close);
    price("prev_close", a.prev_close, b.prev_close);
    if let (Some(x), Some(y)) = (a.last, b.last) {
        price("last", x, y);
    }
    if (a.turnover.units() - b.turnover.units()).abs() > TURNOVER_ROUNDING.units() {
        out.push(("turnover", a.turnover.to_string(), b.turnover.to_string()));
    }
    for (field, x, y) in [("volume", a.volume, b.volume), ("trades", a.trades, b.trades)] {
        if x != y {
            out.push((field, x.to_string(), y.to_string()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bhavcopy::parse_day;

    const UDIFF: &str = "TradDt,BizDt,Sgmt,Src,FinInstrmTp,FinInstrmId,ISIN,TckrSymb,SctySrs,XpryDt,FininstrmActlXpryDt,StrkPric,OptnTp,FinInstrmNm,OpnPric,HghPric,LwPric,ClsPric,LastPric,PrvsClsgPric,UndrlygPric,SttlmPric,OpnIntrst,ChngInOpnIntrst,TtlTradgVol,TtlTrfVal,TtlNbOfTxsExctd,SsnId,NewBrdLotQty,Rmks,Rsvd1,Rsvd2,Rsvd3,Rsvd4\n\
2024-09-27,2024-09-27,CM,NSE,STK,2397,INE278H01035,SANDHAR,EQ,,,,,SANDHAR TECHNOLOGIES LTD,575.05,575.95,557.05,558.65,,571.40,,558.65,,,76194,42902259.10,7512,F1,1,,,,,\n\
2024-09-27,2024-09-27,CM,NSE,STK,308,INE306A01021,BAJAJHIND,EQ,,,,,BAJAJ HINDUSTHAN SUGAR LT,41.00,43.88,41.00,42.66,,40.01,,42.66,,,82838738,3549202368.91,142871,F1,1,,,,,\n";
    const SECBHAV: &str = "SYMBOL,SERIES,DATE1,PREV_CLOSE,OPEN_PRICE,HIGH_PRICE,LOW_PRICE,LAST_PRICE,CLOSE_PRICE,AVG_PRICE,TTL_TRD_QNTY,TURNOVER_LACS,NO_OF_TRADES,DELIV_QTY,DELIV_PER\n\
BAJAJHIND, EQ, 27-Sep-2024,40.01,41.0,43.88,41.0,42.61,42.66,42.84,82838738,35492.02,142871, 26873975, 32.44\n\
SANDHAR, EQ, 27-Sep-2024,571.4,575.05,575.95,557.05,560.0,558.65,563.07,76194,429.02,7512, 44120, 57.90\n\
ZZZ, EQ, 27-Sep-2024,1,1,1,1,1,1,1,1,0.01,1, 1, 100\n";

    #[test]
    fn the_real_rows_of_a_day_agree_and_a_change_is_reported() {
        let a = parse_day("u", UDIFF.as_bytes()).unwrap().rows;
        let b = parse_day("s", SECBHAV.as_bytes()).unwrap().rows;
        let c = compare(&a, &b);
        assert_eq!((c.paired, c.only_isin_keyed, c.only_symbol_keyed), (2, 0, 1));
        assert_eq!(c.disagreements, []);

        let b = parse_day("s", SECBHAV.replace("42.66,42.84", "42.67,42.84").as_bytes()).unwrap().rows;
        let c = compare(&a, &b);
        assert_eq!(c.disagreements.len(), 1);
        let d = &c.disagreements[0];
        assert_eq!(
            (d.symbol.as_str(), d.field, d.isin_keyed.as_str(), d.symbol_keyed.as_str()),
            ("BAJAJHIND", "close", "42.66", "42.67")
        );
    }
}
