//! What the prices role ([`crate::PriceStore`], contract section 14) is
//! given and answers: a bar as stored ([`StoredBar`]), a day of them
//! ([`DayBars`]), what an import did ([`PriceImport`]) and the days held
//! ([`PriceDay`]).
//!
//! A bar is stored as published: prices in whole paise, never adjusted
//! (adjustments are applied when reading, from the corporate actions).

use chrono::{Datelike, NaiveDate};
use mds_domain::prices::{Bar, Figures, IsinSource, Paise, Percent, Series};
use mds_domain::{Isin, Ticker};

use crate::{StoreError, StoreResult};

/// One security's day as stored: its key within the day (ISIN and series),
/// the symbol it was published under, where its ISIN comes from, and the
/// figures as published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredBar {
    /// The security.
    pub isin: Isin,
    /// The series it traded in (an equity one).
    pub series: Series,
    /// The NSE symbol the day's file named it by: what the two formats'
    /// rows of one bar pair on, and what a symbol-keyed row was resolved
    /// from.
    pub symbol: Ticker,
    /// `File` when the day's file named the ISIN, `Symbol` when it was
    /// resolved through the symbol's periods.
    pub isin_source: IsinSource,
    /// The figures, as published.
    pub figures: Figures,
}

impl StoredBar {
    /// The bar as the wire carries it, of `date`, unadjusted.
    pub fn bar(&self, date: NaiveDate) -> Bar {
        Bar::published(date, self.isin.clone(), self.series, self.isin_source, &self.figures)
    }
}

/// The bars of one trading day, in any order; a day holds at most one
/// bar of an ISIN and series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DayBars {
    /// The trading day.
    pub date: NaiveDate,
    /// Its bars.
    pub bars: Vec<StoredBar>,
}

impl DayBars {
    /// Sorts the bars by ISIN, then series: the order the store reads a
    /// day in, so two days compare bar by bar.
    pub fn sort(&mut self) {
        self.bars.sort_unstable_by(|a, b| (a.isin.as_str(), a.series).cmp(&(b.isin.as_str(), b.series)));
    }
}

/// A symbol-keyed row no ISIN held on its day when it was imported: kept
/// (`bars_unresolved`) to be resolved when a later import makes its ISIN
/// known (contract 10.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolRow {
    /// The NSE symbol it was published under.
    pub symbol: Ticker,
    /// The series.
    pub series: Series,
    /// The figures, as published.
    pub figures: Figures,
}

/// The periods of one NSE symbol (section 10.2): each ISIN that carried it,
/// from its first day to the first day it no longer did (`None`: still).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolPeriods {
    /// The symbol.
    pub symbol: Ticker,
    /// `(ISIN, from, to)`, half-open.
    pub periods: Vec<(Isin, NaiveDate, Option<NaiveDate>)>,
    /// The ISINs of its periods before they moved: those its stored
    /// symbol-keyed bars were resolved to.
    pub was: Vec<Isin>,
}

impl SymbolPeriods {
    /// The one ISIN whose period holds `date`: `None` when none does, or
    /// (never guessed) when two ISINs' do. The one rule a symbol-keyed row
    /// is resolved by, at import and again when its periods move.
    pub fn isin_on(&self, date: NaiveDate) -> Option<&Isin> {
        let mut holding = self.periods.iter().filter(|(_, from, to)| *from <= date && to.is_none_or(|t| date < t));
        let first = holding.next()?;
        holding.all(|p| p.0 == first.0).then_some(&first.0)
    }
}

/// What the identity history is within a price import's transaction, once
/// NSE's ISIN-keyed daily files changed it: every company and identity
/// event (what a catalog is built of).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IdentityNow {
    /// Every company.
    pub companies: Vec<mds_domain::Company>,
    /// Every identity event, by ISIN, each ISIN's oldest first.
    pub events: Vec<(Isin, mds_domain::IdentityEvent)>,
}

/// A step of a price import ([`crate::PriceStore::import_prices`]).
#[derive(Debug, Clone, PartialEq)]
pub enum PriceStep {
    /// A day's bars of one format, merged with what the day holds.
    Day(DayBars),
    /// The rows of a day's symbol-keyed file that no ISIN held: they
    /// replace those the day kept.
    Unresolved {
        /// The day.
        date: NaiveDate,
        /// The rows.
        rows: Vec<SymbolRow>,
    },
    /// The ISIN-keyed files' `(ISIN, symbol)` pairs with their first and
    /// last days, and the files' days: folded into the identity history
    /// (14.1), derived again once.
    Daily(mds_domain::snapshot::daily::Daily),
}

/// What resolving symbol-keyed rows again did ([`crate::PriceStore::rebind_symbols`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rebound {
    /// Stored symbol-keyed bars now of another ISIN.
    pub moved: u64,
    /// Kept rows now resolved and stored as bars.
    pub resolved: u64,
    /// Bars or rows now resolved to no ISIN (kept), or to one that day
    /// already holds a bar of in that series.
    pub set_aside: u64,
    /// Days whose bars changed.
    pub days: u64,
}

/// A day held, with how many bars it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PriceDay {
    /// The trading day.
    pub date: NaiveDate,
    /// Its bars.
    pub bars: u64,
}

/// What [`crate::PriceStore::import_days`] did. Each day handed counts
/// once in `new`, `replaced` or `unchanged` (a day handed twice counts
/// twice).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PriceImport {
    /// Days not held before, now written.
    pub new: u64,
    /// Days held before whose bars changed, replaced whole.
    pub replaced: u64,
    /// Days held before exactly as they were made again: not written.
    pub unchanged: u64,
    /// Bars written (the bars of the new and replaced days).
    pub bars_written: u64,
    /// Bars removed (what the replaced days held before).
    pub bars_removed: u64,
    /// Whether NSE's ISIN-keyed files changed the identity history.
    pub identity_changed: bool,
    /// What resolving stored symbol-keyed rows again did, once the history
    /// moved their symbols' periods.
    pub rebound: Rebound,
    /// Symbol-keyed rows kept unresolved by the days handed (their count
    /// after the import).
    pub unresolved_kept: u64,
}

/// A day as stored: the number `YYYYMMDD`.
pub(crate) fn day_number(date: NaiveDate) -> i64 {
    i64::from(date.year()) * 10_000 + i64::from(date.month()) * 100 + i64::from(date.day())
}

/// The day of a stored number `YYYYMMDD`, if it is one.
pub(crate) fn day_of_number(n: i64) -> Option<NaiveDate> {
    let year = i32::try_from(n / 10_000).ok()?;
    let month = u32::try_from(n / 100 % 100).ok()?;
    let day = u32::try_from(n % 100).ok()?;
    NaiveDate::from_ymd_opt(year, month, day)
}

/// The columns of `bars`, in the order [`cells`] gives a bar's values.
pub(crate) const BAR_COLUMNS: &str = "day, isin, series, symbol, isin_source, open, high, low, close, last, \
                                      prev_close, volume, turnover, trades, delivery_qty, delivery_pct";

/// How many columns `bars` has.
pub(crate) const BAR_COLUMN_COUNT: usize = 16;

/// A value of a stored bar's column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cell<'a> {
    /// An integer.
    Int(i64),
    /// A text.
    Text(&'a str),
    /// No value.
    Null,
}

/// A count as stored (`BIGINT`).
fn count(what: &str, n: u64) -> StoreResult<i64> {
    i64::try_from(n).map_err(|_| StoreError::Invalid(format!("{what} {n} is past the largest number stored")))
}

/// The values of a bar of the day `day` (as [`day_number`] gives it), in
/// [`BAR_COLUMNS`] order.
pub(crate) fn cells(day: i64, b: &StoredBar) -> StoreResult<[Cell<'_>; BAR_COLUMN_COUNT]> {
    let f = &b.figures;
    let opt = |v: Option<i64>| v.map_or(Cell::Null, Cell::Int);
    Ok([
        Cell::Int(day),
        Cell::Text(b.isin.as_str()),
        Cell::Text(b.series.as_str()),
        Cell::Text(b.symbol.as_str()),
        Cell::Text(b.isin_source.as_str()),
        Cell::Int(f.open.units()),
        Cell::Int(f.high.units()),
        Cell::Int(f.low.units()),
        Cell::Int(f.close.units()),
        opt(f.last.map(Paise::units)),
        Cell::Int(f.prev_close.units()),
        Cell::Int(count("volume", f.volume)?),
        Cell::Int(f.turnover.units()),
        Cell::Int(count("trades", f.trades)?),
        opt(f.delivery_qty.map(|q| count("delivery_qty", q)).transpose()?),
        opt(f.delivery_pct.map(Percent::units)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_stored_as_yyyymmdd() {
        let d = NaiveDate::from_ymd_opt(2025, 2, 12).unwrap();
        assert_eq!(day_number(d), 20250212);
        assert_eq!(day_of_number(20250212), Some(d));
        assert_eq!(day_of_number(20250230), None);
        assert_eq!(day_of_number(-1), None);
    }
}
