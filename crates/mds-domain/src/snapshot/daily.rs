//! NSE's ISIN-keyed daily price files as a series of their own in the
//! identity history (contract 14.1 and 10.3): what they add to the
//! derivation of [`super::derive`].
//!
//! A daily file is a day of what traded on NSE, each row naming its
//! symbol and ISIN. The history keeps of them only, per `(ISIN, symbol)`
//! pair, the first and last day a file showed it ([`DailySeen`]), and the
//! days of the files ([`Daily::days`]): a compact form however many days
//! are imported, folded a file at a time ([`Daily::fold_day`]).
//!
//! What they make (in [`super::derive`]):
//! - an ISIN seen only there becomes known: `listed` on NSE under its
//!   first symbol on its first day (exact when a file before it did not
//!   show it, else observed), a `symbol_changed` on the first day it traded
//!   under another symbol (exact), and no `delisted` ever (a security may
//!   not trade for days);
//! - a *daily succession*: an ISIN `old` that last traded on `L`, and
//!   another ISIN `new` of its issuer that first traded on `D > L` under
//!   its symbol (followed through the symbol-change rows) and that no list
//!   showed before `D`: an `isin_changed` dated `D`, exact, under both
//!   (the pre-split ISIN of a split that no list showed);
//! - a change the lists only bound (`observed_between`) is dated by the
//!   first day the files show its new state inside the bound: an
//!   `isin_changed`'s new ISIN, a `symbol_changed`'s new symbol, a
//!   `listed`'s ISIN;
//! - each NSE listing's `last_seen` counts the latest file that showed it.

use chrono::NaiveDate;

use crate::company::Ticker;
use crate::isin::Isin;

/// One `(ISIN, symbol)` pair of NSE's ISIN-keyed daily files: the first
/// and last day a file showed it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DailySeen {
    /// The ISIN.
    pub isin: Isin,
    /// The symbol it traded under.
    pub symbol: Ticker,
    /// The first day a file showed the pair.
    pub first: NaiveDate,
    /// The last day a file showed the pair.
    pub last: NaiveDate,
}

/// What the ISIN-keyed daily files say of identity: their pairs (by ISIN,
/// then first day) and their days (ascending).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Daily {
    /// The pairs, by `(ISIN, first, symbol)`.
    pub pairs: Vec<DailySeen>,
    /// The days of the files, ascending, each once.
    pub days: Vec<NaiveDate>,
}

impl Daily {
    /// The pairs and days given (any order), in order.
    pub fn new(mut pairs: Vec<DailySeen>, mut days: Vec<NaiveDate>) -> Self {
        pairs.sort_by(|a, b| (&a.isin, a.first, &a.symbol).cmp(&(&b.isin, b.first, &b.symbol)));
        days.sort_unstable();
        days.dedup();
        Daily { pairs, days }
    }

    /// Whether no file is known.
    pub fn is_empty(&self) -> bool {
        self.days.is_empty()
    }

    /// The pairs of `isin`, by first day.
    pub fn of(&self, isin: &Isin) -> &[DailySeen] {
        let at = self.pairs.partition_point(|p| p.isin < *isin);
        let end = at + self.pairs[at..].partition_point(|p| p.isin == *isin);
        &self.pairs[at..end]
    }

    /// The first day any file showed `isin`.
    pub fn first_of(&self, isin: &Isin) -> Option<NaiveDate> {
        self.of(isin).iter().map(|p| p.first).min()
    }

    /// The last day any file showed `isin`.
    pub fn last_of(&self, isin: &Isin) -> Option<NaiveDate> {
        self.of(isin).iter().map(|p| p.last).max()
    }

    /// The first day a file showed `isin` under `symbol`.
    pub fn first_under(&self, isin: &Isin, symbol: &Ticker) -> Option<NaiveDate> {
        self.of(isin).iter().filter(|p| p.symbol == *symbol).map(|p| p.first).min()
    }

    /// The day of the last file before `day`, if any.
    pub fn day_before(&self, day: NaiveDate) -> Option<NaiveDate> {
        self.days[..self.days.partition_point(|d| *d < day)].last().copied()
    }

    /// Whether `day`, a first day an ISIN or symbol was seen, dates its
    /// change: a file before it did not show it.
    pub fn dates(&self, day: NaiveDate) -> bool {
        self.days.first().is_some_and(|f| *f < day)
    }

    /// Folds one file's day in: `rows` its `(ISIN, symbol)` pairs. Whether
    /// anything changed (a new day, a pair new or seen beyond its days).
    pub fn fold_day<'a>(&mut self, day: NaiveDate, rows: impl IntoIterator<Item = (&'a Isin, &'a Ticker)>) -> bool {
        let seen = |(isin, symbol): (&Isin, &Ticker)| DailySeen {
            isin: isin.clone(),
            symbol: symbol.clone(),
            first: day,
            last: day,
        };
        let mut file = Daily::new(rows.into_iter().map(seen).collect(), vec![day]);
        file.pairs.dedup();
        self.merge(&file)
    }

    /// Folds `other` (another import's files, folded) in: its days, and
    /// its pairs' first and last days. Whether anything changed.
    pub fn merge(&mut self, other: &Daily) -> bool {
        let mut changed = false;
        for d in &other.days {
            if let Err(at) = self.days.binary_search(d) {
                self.days.insert(at, *d);
                changed = true;
            }
        }
        let mut by: std::collections::HashMap<(&Isin, &Ticker), usize> =
            self.pairs.iter().enumerate().map(|(k, p)| ((&p.isin, &p.symbol), k)).collect();
        let mut grow: Vec<(usize, NaiveDate, NaiveDate)> = Vec::new();
        let mut new: Vec<DailySeen> = Vec::new();
        for p in &other.pairs {
            match by.get(&(&p.isin, &p.symbol)) {
                Some(k) => grow.push((*k, p.first, p.last)),
                None => new.push(p.clone()),
            }
        }
        by.clear();
        drop(by);
        for (k, first, last) in grow {
            let p = &mut self.pairs[k];
            if first < p.first || last > p.last {
                p.first = p.first.min(first);
                p.last = p.last.max(last);
                changed = true;
            }
        }
        if !new.is_empty() {
            self.pairs.extend(new);
            self.pairs.sort_by(|a, b| (&a.isin, a.first, &a.symbol).cmp(&(&b.isin, b.first, &b.symbol)));
            changed = true;
        }
        changed
    }

    /// The pairs of the ISINs from `lo` to (not including) `hi` (to the
    /// last when `None`), with the days.
    pub fn range(&self, lo: &str, hi: Option<&str>) -> Daily {
        let pairs = self
            .pairs
            .iter()
            .filter(|p| p.isin.as_str() >= lo && hi.is_none_or(|h| p.isin.as_str() < h))
            .cloned()
            .collect();
        Daily { pairs, days: self.days.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::day;

    #[test]
    fn folding_keeps_the_first_and_last_day_of_each_pair_and_says_what_changed() {
        let (x, s) = (Isin::parse("INE0MJQ01012").unwrap(), Ticker::parse("PRITIKA").unwrap());
        let mut d = Daily::default();
        assert!(d.fold_day(day("2025-01-02"), [(&x, &s)]));
        assert!(d.fold_day(day("2025-01-01"), [(&x, &s)]));
        assert!(d.fold_day(day("2025-02-13"), [(&x, &s)]));
        assert!(!d.fold_day(day("2025-01-02"), [(&x, &s)]), "the same day again changes nothing");
        assert_eq!(d.pairs.len(), 1);
        assert_eq!((d.pairs[0].first, d.pairs[0].last), (day("2025-01-01"), day("2025-02-13")));
        assert_eq!(d.days.len(), 3);
        assert!(d.dates(day("2025-01-02")) && !d.dates(day("2025-01-01")));
        assert_eq!(d.day_before(day("2025-02-13")), Some(day("2025-01-02")));
        // Merged into what another import folded: the same result.
        let mut other = Daily::default();
        other.fold_day(day("2025-01-02"), [(&x, &s)]);
        assert!(other.merge(&d));
        assert_eq!(other, d);
        assert!(!other.merge(&d), "merged again: nothing changes");
    }
}
