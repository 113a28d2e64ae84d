//! An NSE market-capitalisation file (`Id,Symbol,Company_Name,
//! Market_capitalization_lakhs`), ranked to give the SEBI-style bands; the
//! figure is kept as each company's market capitalisation, with the day the
//! caller says it is of.

use std::collections::HashMap;

use chrono::NaiveDate;
use mds_domain::{MarketCap, MarketCapBand, Ticker};

use super::table::read_rows;
use crate::error::ImportError;
use crate::fields::parse_ticker;
use crate::text::{Column, FirstSeen};

/// One row of the market-capitalisation file.
#[derive(Debug, Clone, PartialEq)]
pub struct McapRow {
    /// Line of the row.
    pub line: usize,
    /// `Symbol` (NSE).
    pub symbol: Ticker,
    /// `Market_capitalization_lakhs`, in lakh rupees.
    pub market_cap_lakhs: f64,
    /// 1 for the largest market capitalisation in the file.
    pub rank: usize,
}

impl McapRow {
    /// The figure in crore rupees (a crore is 100 lakh).
    /// Rounded to a millionth of a crore (ten rupees), so a figure given
    /// to the lakh's hundredth reads back as written (`50706.70` lakh is
    /// `507.067`, not `507.06699999999995`).
    pub fn inr_crore(&self) -> f64 {
        (self.market_cap_lakhs / 100.0 * 1e6).round() / 1e6
    }
}

/// A market-capitalisation file, ranked.
#[derive(Debug, Clone, PartialEq)]
pub struct McapList {
    /// The rows, largest first (ties by symbol).
    rows: Vec<McapRow>,
    /// Index into `rows` by symbol.
    by_symbol: HashMap<Ticker, usize>,
    /// The day of the figures, when known ([`McapList::as_of`]).
    as_of: Option<NaiveDate>,
}

impl McapList {
    /// The rows, largest first (ties by symbol).
    pub fn rows(&self) -> &[McapRow] {
        &self.rows
    }

    /// The rank of an NSE symbol, `None` when the file does not have it.
    pub fn rank_of(&self, symbol: &Ticker) -> Option<usize> {
        self.by_symbol.get(symbol).map(|&i| self.rows[i].rank)
    }

    /// The band of an NSE symbol by its rank ([`MarketCapBand::from_rank`]).
    pub fn band_of(&self, symbol: &Ticker) -> Option<MarketCapBand> {
        self.rank_of(symbol).map(MarketCapBand::from_rank)
    }

    /// The market capitalisation of an NSE symbol, with the file's day.
    pub fn market_cap_of(&self, symbol: &Ticker) -> Option<MarketCap> {
        self.by_symbol.get(symbol).map(|&i| MarketCap { inr_crore: self.rows[i].inr_crore(), as_of: self.as_of })
    }

    /// The day the figures are of, if known.
    pub fn as_of(&self) -> Option<NaiveDate> {
        self.as_of
    }

    /// The list, its figures being of `day` (`None`: unknown).
    pub fn with_as_of(self, day: Option<NaiveDate>) -> Self {
        McapList { as_of: day, ..self }
    }
}

/// The day a market-capitalisation file's name gives, as NSE and its
/// mirrors write it: `DDMMYYYY` (`MCAP28032024.csv`) or `YYYY-MM-DD`
/// (`nse_mcap_2024-03-28.csv`). `None` when the name holds neither.
pub fn mcap_day_from_file_name(name: &str) -> Option<NaiveDate> {
    let b = name.as_bytes();
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    for i in 0..b.len() {
        if let Some(w) = b.get(i..i + 10) {
            if digits(&w[..4]) && w[4] == b'-' && digits(&w[5..7]) && w[7] == b'-' && digits(&w[8..]) {
                if let Ok(d) = NaiveDate::parse_from_str(&name[i..i + 10], "%Y-%m-%d") {
                    return Some(d);
                }
            }
        }
        if let Some(w) = b.get(i..i + 8) {
            let bounded = (i == 0 || !b[i - 1].is_ascii_digit()) && b.get(i + 8).is_none_or(|c| !c.is_ascii_digit());
            if bounded && digits(w) {
                if let Ok(d) = NaiveDate::parse_from_str(&name[i..i + 8], "%d%m%Y") {
                    return Some(d);
                }
            }
        }
    }
    None
}

const MCAP_COLUMNS: &[Column] = &[Column::required("Symbol"), Column::required("Market_capitalization_lakhs")];

/// Parses a market-capitalisation file and ranks it, largest first.
///
/// The whole file is ranked, as SEBI ranks every listed company, so a symbol
/// missing from the NSE list still takes its place in the ranking.
pub fn parse_nse_mcap(bytes: &[u8]) -> Result<McapList, ImportError> {
    let mut seen = FirstSeen::new();
    let mut rows = read_rows(bytes, MCAP_COLUMNS, |record, col| {
        let line = record.line;
        let symbol = parse_ticker(record.get(col.req(0))).map_err(|e| format!("Symbol: {e}")).and_then(|symbol| {
            match seen.insert(symbol.clone(), line) {
                Some(first) => Err(format!("duplicate Symbol {symbol}: it is already on line {first}")),
                None => Ok(symbol),
            }
        });
        let cap = record.get(col.req(1));
        let cap = cap.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0).ok_or_else(|| {
            format!("Market_capitalization_lakhs must be a non-negative number of lakh rupees (got {cap:?})")
        });
        Some(match (symbol, cap) {
            (Ok(symbol), Ok(market_cap_lakhs)) => Ok(McapRow { line, symbol, market_cap_lakhs, rank: 0 }),
            (symbol, cap) => Err(vec![symbol.err(), cap.err()]),
        })
    })?;
    rows.sort_by(|a, b| b.market_cap_lakhs.total_cmp(&a.market_cap_lakhs).then_with(|| a.symbol.cmp(&b.symbol)));
    for (i, row) in rows.iter_mut().enumerate() {
        row.rank = i + 1;
    }
    let by_symbol = rows.iter().enumerate().map(|(i, r)| (r.symbol.clone(), i)).collect();
    Ok(McapList { rows, by_symbol, as_of: None })
}
