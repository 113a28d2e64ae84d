//! Property tests of the identity derivation (`mds_domain::snapshot::derive`)
//! on random histories: snapshots of one series (ISINs of two issuers that
//! can split, symbols and names that change, securities that come and go)
//! and random change-file rows.
//!
//! Whatever the history: the events do not depend on the order of the
//! inputs; every `isin_changed` stands under both ISINs; each ISIN's events
//! are in date order; every ISIN shown has a status by the contract's rule;
//! and replaying an ISIN's events (listed, symbol changes, and for a
//! successor its predecessor's symbol) gives the symbol the latest
//! snapshot shows.

use std::collections::{BTreeMap, HashMap};

use chrono::NaiveDate;
use mds_domain::snapshot::derive::{Derived, Deriver, derive, issuer};
use mds_domain::snapshot::{Run, Series, SnapshotRow, SymbolChange, apply_snapshot};
use mds_domain::{CompanyStatus, IdentityChange, Isin, Ticker};
use proptest::prelude::*;

/// Valid ISINs, two pairs sharing an issuer (the first 7 characters).
const ISINS: [&str; 7] =
    ["INE296A01024", "INE296A01032", "INE237A01028", "INE237A01036", "INE758T01015", "INE155A01022", "INE1TAE01010"];
const SYMBOLS: [&str; 4] = ["AAA", "BBB", "CCC", "DDD"];
const NAMES: [&str; 3] = ["Alpha Limited", "Beta Limited", "ALPHA LIMITED"];

fn day(n: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2024, 1, 1).unwrap() + chrono::Days::new(u64::from(n) * 30)
}

/// One snapshot: for each ISIN, absent or (symbol, name, face value).
type Shot = Vec<Option<(usize, usize, u8)>>;

fn shot() -> impl Strategy<Value = Shot> {
    prop::collection::vec(prop::option::weighted(0.7, (0..SYMBOLS.len(), 0..NAMES.len(), 1u8..3)), ISINS.len())
}

fn changes() -> impl Strategy<Value = Vec<(usize, usize, u32)>> {
    prop::collection::vec((0..SYMBOLS.len(), 0..SYMBOLS.len(), 0u32..150), 0..5)
}

/// The runs a series of snapshots leaves (as the store keeps them).
fn runs_of(shots: &[Shot]) -> Vec<Run> {
    let mut done: Vec<Run> = Vec::new();
    let mut open: HashMap<Isin, (SnapshotRow, NaiveDate)> = HashMap::new();
    for (k, s) in shots.iter().enumerate() {
        let d = day(k as u32 * 2 + 1);
        let rows: Vec<SnapshotRow> = s
            .iter()
            .enumerate()
            .filter_map(|(i, x)| {
                x.map(|(sy, na, fv)| SnapshotRow {
                    isin: Isin::parse(ISINS[i]).unwrap(),
                    symbol: Ticker::parse(SYMBOLS[sy]).unwrap(),
                    name: NAMES[na].to_owned(),
                    face_value: Some(f64::from(fv)),
                    listed_on: None,
                })
            })
            .collect();
        let rows_open: HashMap<Isin, SnapshotRow> = open.iter().map(|(i, (r, _))| (i.clone(), r.clone())).collect();
        let (closed, opened) = apply_snapshot(&rows_open, &rows);
        for i in closed {
            let (row, since) = open.remove(&i).unwrap();
            done.push(Run { series: Series::NseMain, row, since, until: Some(d) });
        }
        for r in opened {
            open.insert(r.isin.clone(), (r.clone(), d));
        }
    }
    done.extend(open.into_values().map(|(row, since)| Run { series: Series::NseMain, row, since, until: None }));
    done
}

fn rows_of(c: &[(usize, usize, u32)]) -> Vec<SymbolChange> {
    c.iter()
        .map(|(f, t, d)| SymbolChange {
            from: Ticker::parse(SYMBOLS[*f]).unwrap(),
            to: Ticker::parse(SYMBOLS[*t]).unwrap(),
            date: day(0) + chrono::Days::new(u64::from(*d) * 3),
            company: String::new(),
        })
        .collect()
}

/// An ISIN's NSE symbol after its events up to and including `until`,
/// starting from its predecessor's for a successor.
fn replayed_until(d: &Derived, isin: &Isin, until: NaiveDate, depth: usize) -> Option<Ticker> {
    let mut symbol = None;
    for e in d.events.get(isin)?.iter().filter(|e| e.date <= until) {
        match &e.change {
            IdentityChange::Listed { symbol: s, .. } => symbol = Some(s.clone()),
            IdentityChange::SymbolChanged { to, .. } => symbol = Some(to.clone()),
            IdentityChange::IsinChanged { from, to, .. } if to == isin && depth < 8 => {
                symbol = replayed_until(d, from, e.date, depth + 1);
            }
            _ => {}
        }
    }
    symbol
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn derived_events_hold_their_rules(shots in prop::collection::vec(shot(), 1..5), c in changes(), seed in any::<u64>()) {
        let runs = runs_of(&shots);
        let symbols = rows_of(&c);
        let d = derive(&runs, &symbols, &[]);

        // Order of the inputs does not matter.
        let mut r2 = runs.clone();
        let mut s2 = symbols.clone();
        let k = (seed as usize) % (r2.len().max(1));
        r2.rotate_left(k);
        r2.reverse();
        s2.reverse();
        prop_assert_eq!(&derive(&r2, &s2, &[]), &d);

        let mut superseded = BTreeMap::new();
        for (isin, es) in &d.events {
            prop_assert!(es.windows(2).all(|w| w[0].date <= w[1].date), "{isin:?} out of order");
            for e in es {
                if let IdentityChange::IsinChanged { from, to, .. } = &e.change {
                    prop_assert!(from == isin || to == isin);
                    prop_assert_eq!(&from.as_str()[..7], &to.as_str()[..7]);
                    let other = if from == isin { to } else { from };
                    prop_assert!(d.events[other].contains(e), "not under both ISINs");
                    superseded.insert(from.clone(), ());
                }
            }
        }
        for r in &runs {
            let isin = &r.row.isin;
            prop_assert!(d.events.contains_key(isin), "{isin:?} shown but has no event");
            let open = runs.iter().any(|x| &x.row.isin == isin && x.until.is_none());
            let want = CompanyStatus::of(superseded.contains_key(isin), open);
            prop_assert_eq!(d.status[isin], want);
            if r.until.is_none() && want == CompanyStatus::Active {
                prop_assert_eq!(replayed_until(&d, isin, NaiveDate::MAX, 0), Some(r.row.symbol.clone()), "{:?}", d.events[isin]);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// The store derives an import's events a range of issuers at a time
    /// (`Deriver::derive` of the runs of whole issuers, `issuer`): the
    /// union of those derivations, however the issuers are cut into
    /// ranges, is the derivation of every run.
    #[test]
    fn deriving_by_issuer_ranges_is_deriving_everything(
        shots in prop::collection::vec(shot(), 1..5),
        c in changes(),
        cuts in prop::collection::vec(any::<bool>(), ISINS.len()),
    ) {
        let runs = runs_of(&shots);
        let symbols = rows_of(&c);
        let full = derive(&runs, &symbols, &[]);
        let prep = Deriver::new(&symbols, &[]);
        let mut by: BTreeMap<&str, Vec<Run>> = BTreeMap::new();
        for r in &runs {
            by.entry(issuer(&r.row.isin)).or_default().push(r.clone());
        }
        let mut merged = Derived::default();
        let mut batch: Vec<Run> = Vec::new();
        let n = by.len();
        for (k, (_, rs)) in by.into_iter().enumerate() {
            batch.extend(rs);
            if k + 1 == n || cuts[k] {
                let d = prep.derive(&batch);
                for (isin, es) in d.events {
                    prop_assert!(merged.events.insert(isin, es).is_none(), "an ISIN in two ranges");
                }
                merged.status.extend(d.status);
                merged.listings.extend(d.listings);
                batch.clear();
            }
        }
        prop_assert_eq!(merged, full);
    }
}
