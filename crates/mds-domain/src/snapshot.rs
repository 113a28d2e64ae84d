//! Exchange snapshots and NSE's change files (contract section 10.1): the
//! records the importer reads and the store keeps, and the pure rules that
//! turn them into identity events and statuses.
//!
//! An exchange file is a full snapshot of one *series* ([`Series`]: NSE main
//! board, NSE SME, BSE) as of a day. The store does not keep every snapshot:
//! per series it keeps the days of the snapshots and, per ISIN, *runs*
//! ([`Run`]): a row as it stood unchanged from the snapshot of `since` up to
//! (not including) the snapshot of `until` (`None` while the latest snapshot
//! still shows it). A snapshot whose rows did not change adds only its day.
//!
//! # Layout
//! - The records: [`Series`], [`SnapshotRow`], [`Run`], [`SymbolChange`],
//!   [`NameChange`], and [`SnapshotImport`], what an exchange import hands
//!   the store: its rows packed ([`SnapshotRows`]) and its companies made
//!   an ISIN range at a time ([`Companies`], [`CompanySource`]), in
//!   [`rows`](mod@rows).
//! - [`apply_snapshot`]: what a new snapshot does to a series' open runs.
//! - [`derive`](mod@derive): the events and statuses made of the runs and
//!   the change files ([`derive::derive`]; a range of issuers at a time,
//!   [`derive::Deriver`] and [`derive::issuer`]).
//! - [`carry_over`]: what an exchange import keeps of a stored company
//!   that the files it was given do not say; [`apply_listings`]: its
//!   listings as the snapshots leave them ([`ListingSeen`]);
//!   [`take_last_day`]: a superseded company's ticker and name of its last
//!   day; [`inherit`]: what a successor ISIN takes of the one it replaced.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use chrono::NaiveDate;

use crate::company::{Company, Exchange, Ticker};
use crate::detail::{Classification, Listing, ListingStatus};
use crate::identity::{IdentityChange, IdentityEvent};
use crate::isin::Isin;

pub mod daily;
pub mod derive;
pub mod rows;

pub use rows::{Companies, CompanySource, SnapshotRows, SnapshotRowsBuilder};

/// One of the three lists that are snapshot series of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Series {
    /// NSE's main board (`EQUITY_L.csv`).
    NseMain,
    /// NSE's SME platform (`SME_EQUITY_L.csv`).
    NseSme,
    /// BSE (`Equity.csv`).
    Bse,
}

impl Series {
    /// Every series, in stored order.
    pub const ALL: [Series; 3] = [Series::NseMain, Series::NseSme, Series::Bse];

    /// The stored value (and the name operators read).
    pub fn as_str(self) -> &'static str {
        match self {
            Series::NseMain => "nse",
            Series::NseSme => "nse_sme",
            Series::Bse => "bse",
        }
    }

    /// The exchange it lists on.
    pub fn exchange(self) -> Exchange {
        match self {
            Series::NseMain | Series::NseSme => Exchange::Nse,
            Series::Bse => Exchange::Bse,
        }
    }

    /// What an operator calls its file, for sentences.
    pub fn file(self) -> &'static str {
        match self {
            Series::NseMain => "NSE main board list (--nse)",
            Series::NseSme => "NSE SME list (--nse-sme)",
            Series::Bse => "BSE list (--bse)",
        }
    }
}

impl fmt::Display for Series {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Series {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Series::ALL.into_iter().find(|x| x.as_str() == s).ok_or_else(|| format!("unknown snapshot series {s:?}"))
    }
}

/// One security as an exchange snapshot shows it: what identity events are
/// made of.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotRow {
    /// Its ISIN.
    pub isin: Isin,
    /// NSE symbol, or BSE's ticker (security id, else security code).
    pub symbol: Ticker,
    /// The company name the list gives.
    pub name: String,
    /// Face value per share, INR, when the list gives it.
    pub face_value: Option<f64>,
    /// Date of listing, when the list gives it (NSE does).
    pub listed_on: Option<NaiveDate>,
}

impl SnapshotRow {
    /// Whether `other` shows the security the same (ISIN aside).
    pub fn same_as(&self, other: &SnapshotRow) -> bool {
        self.symbol == other.symbol
            && self.name == other.name
            && self.face_value == other.face_value
            && self.listed_on == other.listed_on
    }
}

/// A row as it stood, unchanged, from the snapshot of `since` up to (not
/// including) the snapshot of `until` of its series; `until` is `None`
/// while the series' latest snapshot shows it so.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The series.
    pub series: Series,
    /// The row.
    pub row: SnapshotRow,
    /// The day of the first snapshot showing it so.
    pub since: NaiveDate,
    /// The day of the first later snapshot not showing it so.
    pub until: Option<NaiveDate>,
}

/// A row of NSE's symbol-change file: `old` became `new` on `date`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SymbolChange {
    /// The old symbol.
    pub from: Ticker,
    /// The new symbol.
    pub to: Ticker,
    /// The day it applies from.
    pub date: NaiveDate,
    /// The company name the row gives.
    pub company: String,
}

/// A row of NSE's name-change file: the company of `symbol` (its symbol
/// when the file was made) changed its name on `date`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NameChange {
    /// The symbol when the file was made (`NCH_SYMBOL`).
    pub symbol: Ticker,
    /// The old name.
    pub from: String,
    /// The new name.
    pub to: String,
    /// The day of the change.
    pub date: NaiveDate,
}

/// Exchange snapshots as of one day, with the companies made of them: what
/// `mds import exchanges` hands the store (`IdentityStore::import_snapshots`).
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotImport {
    /// The day the snapshots are of.
    pub as_of: NaiveDate,
    /// Each series given, with its rows (an ISIN at most once per series).
    pub series: Vec<(Series, SnapshotRows)>,
    /// The companies made of the files (as `mds_import::merge` makes
    /// them), an ISIN range at a time.
    pub companies: Companies,
    /// Whether a BSE file was given (else a stored company keeps its BSE
    /// listing and classification, [`carry_over`]).
    pub bse_given: bool,
    /// Whether a market-cap file was given (else a stored company keeps
    /// its band and market cap).
    pub mcap_given: bool,
}

/// What a snapshot of one series as of `as_of` does to that series' open
/// runs (`open`, by ISIN): the ISINs whose open run ends (`until = as_of`:
/// gone, or shown otherwise) and the rows that open a run (`since =
/// as_of`). A row shown as its open run shows it changes nothing.
pub fn apply_snapshot<'a>(
    open: &HashMap<Isin, SnapshotRow>,
    rows: impl IntoIterator<Item = &'a SnapshotRow>,
) -> (Vec<Isin>, Vec<&'a SnapshotRow>) {
    let rows = rows.into_iter();
    let mut shown: HashMap<&Isin, &SnapshotRow> = HashMap::with_capacity(rows.size_hint().0);
    let mut opened = Vec::new();
    for r in rows {
        shown.insert(&r.isin, r);
        match open.get(&r.isin) {
            Some(o) if o.same_as(r) => {}
            _ => opened.push(r),
        }
    }
    let mut closed: Vec<Isin> =
        open.iter().filter(|(isin, o)| shown.get(isin).is_none_or(|r| !o.same_as(r))).map(|(i, _)| i.clone()).collect();
    closed.sort();
    (closed, opened)
}

/// An ISIN's listing on one exchange as its snapshot series leave it
/// (contract section 10.3): whether the latest snapshot of a series of that
/// exchange shows it, and the day of the latest snapshot that did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListingSeen {
    /// The exchange (NSE's two series together).
    pub exchange: Exchange,
    /// Whether the latest snapshot of one of its series shows it.
    pub listed: bool,
    /// The day of the latest snapshot that showed it.
    pub last_seen: NaiveDate,
}

/// `company`'s listings as the snapshots leave them (`seen`, per
/// exchange): each gets its `last_seen`; one gone from its series' latest
/// snapshot is `delisted` and its exchange flag (`is_nse`, `is_bse`) false,
/// whatever another exchange says; one shown again is `active` again. A
/// listing of an exchange no snapshot showed is left as it is.
pub fn apply_listings(company: &mut Company, seen: &[ListingSeen]) {
    for s in seen {
        let Some(l) = company.details.listings.iter_mut().find(|l| l.exchange == s.exchange) else { continue };
        l.last_seen = Some(s.last_seen);
        match (s.listed, l.status) {
            (false, _) => l.status = ListingStatus::Delisted,
            (true, ListingStatus::Delisted) => l.status = ListingStatus::Active,
            (true, _) => {}
        }
        match s.exchange {
            Exchange::Nse => company.is_nse = s.listed,
            Exchange::Bse => company.is_bse = s.listed,
        }
    }
}

/// A superseded company's ticker and name as they stood on its last day
/// (contract section 10.3): those of its own latest `symbol_changed` (its
/// NSE one when it has an NSE listing, else its BSE one; each listing's
/// symbol likewise) and `name_changed` among `events` (its own, oldest
/// first), else what `last` says it was before changes that became its
/// successor's ([`derive::Derived::last_day`]), not a stale list's.
pub fn take_last_day(company: &mut Company, events: &[IdentityEvent], last: Option<&derive::LastDay>) {
    let last_symbol = |x: Exchange| {
        events
            .iter()
            .rev()
            .find_map(|e| match &e.change {
                IdentityChange::SymbolChanged { exchange, to, .. } if *exchange == x => Some(to),
                _ => None,
            })
            .or_else(|| last?.symbols.iter().find(|(e, _)| *e == x).map(|(_, t)| t))
    };
    for l in &mut company.details.listings {
        if let Some(to) = last_symbol(l.exchange) {
            l.symbol = to.as_str().to_owned();
        }
    }
    let on_nse = company.is_nse || company.details.listings.iter().any(|l| l.exchange == Exchange::Nse);
    let ticker = if on_nse { last_symbol(Exchange::Nse) } else { last_symbol(Exchange::Bse) };
    if let Some(t) = ticker {
        company.ticker = t.clone();
    }
    let name = events
        .iter()
        .rev()
        .find_map(|e| match &e.change {
            IdentityChange::NameChanged { to, .. } => Some(to),
            _ => None,
        })
        .or_else(|| last?.name.as_ref());
    if let Some(n) = name {
        company.name.clone_from(n);
    }
}

/// What a successor ISIN (the `to` of an `isin_changed`) takes of the
/// company it replaced when its own files gave none (contract section
/// 10.3), so a split drops no company out of a band or an industry: the
/// classification (with industry and sector), the market cap with its
/// band, and the logo.
pub fn inherit(successor: &mut Company, predecessor: &Company) {
    let s = successor;
    if s.industry.is_none() && s.sector.is_none() && s.details.classification == Classification::default() {
        s.industry.clone_from(&predecessor.industry);
        s.sector.clone_from(&predecessor.sector);
        s.details.classification = predecessor.details.classification.clone();
    }
    if s.market_cap_band.is_none() && s.details.market_cap.is_none() {
        s.market_cap_band = predecessor.market_cap_band;
        s.details.market_cap.clone_from(&predecessor.details.market_cap);
    }
    if s.logo_url.is_none() {
        s.logo_url.clone_from(&predecessor.logo_url);
    }
}

/// An exchange import's company for `stored`'s ISIN, keeping what the
/// import's files do not say: without a BSE file, the stored BSE listing
/// and classification (and `is_bse`, industry, sector); without a
/// market-cap file, the stored band and market cap. The status is left to
/// the derivation.
pub fn carry_over(new: &mut Company, stored: &Company, bse_given: bool, mcap_given: bool) {
    if !bse_given {
        let bse: Vec<Listing> =
            stored.details.listings.iter().filter(|l| l.exchange == Exchange::Bse).cloned().collect();
        if !bse.is_empty() || stored.is_bse {
            new.details.listings.retain(|l| l.exchange != Exchange::Bse);
            new.details.listings.extend(bse);
            new.is_bse = stored.is_bse;
            new.industry.clone_from(&stored.industry);
            new.sector.clone_from(&stored.sector);
            new.details.classification = stored.details.classification.clone();
        }
    }
    if !mcap_given {
        new.market_cap_band = stored.market_cap_band;
        new.details.market_cap.clone_from(&stored.details.market_cap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(isin: &str, symbol: &str, name: &str) -> SnapshotRow {
        SnapshotRow {
            isin: Isin::parse(isin).unwrap(),
            symbol: Ticker::parse(symbol).unwrap(),
            name: name.into(),
            face_value: Some(1.0),
            listed_on: None,
        }
    }

    #[test]
    fn listings_take_what_the_snapshots_say_and_only_theirs() {
        let d = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
        let mut c = Company {
            isin: Isin::parse("INE253A01025").unwrap(),
            ticker: Ticker::parse("HINDMOTORS").unwrap(),
            name: "Hindustan Motors Limited".into(),
            industry: None,
            sector: None,
            is_bse: true,
            is_nse: true,
            market_cap_band: None,
            logo_url: None,
            details: crate::detail::CompanyDetails::default(),
        };
        c.details.listings =
            vec![Listing::bare(Exchange::Nse, "HINDMOTORS"), Listing::bare(Exchange::Bse, "HINDMOTORS")];
        let seen = [
            ListingSeen { exchange: Exchange::Nse, listed: false, last_seen: d("2024-01-30") },
            ListingSeen { exchange: Exchange::Bse, listed: true, last_seen: d("2024-01-30") },
        ];
        apply_listings(&mut c, &seen);
        assert_eq!((c.is_nse, c.is_bse), (false, true));
        let statuses: Vec<_> = c.details.listings.iter().map(|l| (l.status, l.last_seen)).collect();
        assert_eq!(
            statuses,
            vec![(ListingStatus::Delisted, Some(d("2024-01-30"))), (ListingStatus::Active, Some(d("2024-01-30")))]
        );
        // Listed again: active again. An exchange no snapshot showed is left.
        let again = [ListingSeen { exchange: Exchange::Nse, listed: true, last_seen: d("2026-05-17") }];
        apply_listings(&mut c, &again);
        assert_eq!((c.is_nse, c.details.listings[0].status), (true, ListingStatus::Active));
        assert_eq!(c.details.listings[1].last_seen, Some(d("2024-01-30")));
    }

    #[test]
    fn a_snapshot_closes_gone_and_changed_runs_and_opens_new_and_changed_rows() {
        let a = row("INE296A01024", "BAJFINANCE", "Bajaj Finance Limited");
        let b = row("INE758T01015", "ZOMATO", "Zomato Limited");
        let c = row("INE155A01022", "TATAMOTORS", "Tata Motors Limited");
        let open: HashMap<Isin, SnapshotRow> = [&a, &b, &c].iter().map(|r| (r.isin.clone(), (*r).clone())).collect();
        let b2 = row("INE758T01015", "ETERNAL", "Eternal Limited");
        let d = row("INE1TAE01010", "TMCV", "Tata Motors Limited");
        let rows = vec![c.clone(), b2.clone(), d.clone()];
        let (closed, opened) = apply_snapshot(&open, &rows);
        assert_eq!(closed, vec![a.isin.clone(), b.isin.clone()]);
        assert_eq!(opened, vec![&b2, &d]);
        let same = [a, b, c];
        let (closed, opened) = apply_snapshot(&open, &same);
        assert!(closed.is_empty() && opened.is_empty());
    }

    #[test]
    fn series_read_back() {
        for s in Series::ALL {
            assert_eq!(s.as_str().parse::<Series>().unwrap(), s);
        }
        assert!("NSE".parse::<Series>().is_err());
    }
}
