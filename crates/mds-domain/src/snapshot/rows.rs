//! What an exchange import hands the store, kept small: a snapshot's rows
//! packed and ordered by ISIN ([`SnapshotRows`]), and the companies made
//! of the files an ISIN range at a time ([`Companies`], from a
//! [`CompanySource`]), so that a list of a million rows is never held as
//! a million [`SnapshotRow`]s or [`Company`]s.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use chrono::NaiveDate;

use super::SnapshotRow;
use crate::company::{Company, Ticker};
use crate::isin::Isin;

/// A snapshot's rows (an ISIN at most once), in ISIN order, packed: the
/// ISINs, symbols and names back to back in byte arrays, about 70 bytes a
/// row instead of the 170 of a [`SnapshotRow`] with its strings. A row is
/// made whole only when asked for ([`SnapshotRows::get`]).
///
/// Cheap to clone (the rows are shared), so the series of an import and
/// the [`CompanySource`] made of the same list can both keep them.
#[derive(Clone, Default)]
pub struct SnapshotRows(Arc<Packed>);

/// The rows in the order they were pushed, and that order sorted by ISIN.
#[derive(Default)]
struct Packed {
    /// Each row's ISIN, 12 bytes each.
    isins: Vec<u8>,
    /// Each row's symbol, then its name.
    text: Vec<u8>,
    /// Per row, where its symbol ends and where its name ends in `text`
    /// (its symbol starts where the previous row's name ends).
    ends: Vec<[u32; 2]>,
    /// Each row's face value.
    face_values: Vec<Option<f64>>,
    /// Each row's listing date.
    listed_on: Vec<Option<NaiveDate>>,
    /// The rows' places (as pushed), by ISIN.
    order: Vec<u32>,
}

/// Makes [`SnapshotRows`] a row at a time (in any order).
#[derive(Default)]
pub struct SnapshotRowsBuilder(Packed);

impl SnapshotRowsBuilder {
    /// Adds a row.
    pub fn push(
        &mut self,
        isin: &Isin,
        symbol: &Ticker,
        name: &str,
        face_value: Option<f64>,
        listed_on: Option<NaiveDate>,
    ) {
        let p = &mut self.0;
        assert!(p.ends.len() < u32::MAX as usize, "fewer than 2^32 rows");
        p.isins.extend_from_slice(isin.as_str().as_bytes());
        p.text.extend_from_slice(symbol.as_str().as_bytes());
        let symbol_end = u32::try_from(p.text.len()).expect("a snapshot's text fits 4 GiB");
        p.text.extend_from_slice(name.as_bytes());
        let name_end = u32::try_from(p.text.len()).expect("a snapshot's text fits 4 GiB");
        p.ends.push([symbol_end, name_end]);
        p.face_values.push(face_value);
        p.listed_on.push(listed_on);
    }

    /// The rows, ordered by ISIN.
    pub fn finish(mut self) -> SnapshotRows {
        let p = &mut self.0;
        let mut order: Vec<u32> = (0..p.ends.len() as u32).collect();
        let isins = &p.isins;
        order.sort_unstable_by(|&a, &b| isin_at(isins, a as usize).cmp(isin_at(isins, b as usize)));
        p.order = order;
        for v in [&mut p.isins, &mut p.text] {
            v.shrink_to_fit();
        }
        p.ends.shrink_to_fit();
        p.face_values.shrink_to_fit();
        p.listed_on.shrink_to_fit();
        SnapshotRows(Arc::new(self.0))
    }
}

/// The ISIN of the row pushed `k`th.
fn isin_at(isins: &[u8], k: usize) -> &[u8] {
    &isins[Isin::LEN * k..Isin::LEN * (k + 1)]
}

impl SnapshotRows {
    /// How many rows.
    pub fn len(&self) -> usize {
        self.0.order.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.order.is_empty()
    }

    /// Where the `i`th row by ISIN was pushed ([`SnapshotRowsBuilder::push`]).
    pub fn pushed(&self, i: usize) -> usize {
        self.0.order[i] as usize
    }

    /// The ISIN of the `i`th row by ISIN.
    pub fn isin(&self, i: usize) -> &str {
        std::str::from_utf8(isin_at(&self.0.isins, self.pushed(i))).expect("ISINs are ASCII")
    }

    /// The symbol and name of the `i`th row by ISIN.
    pub fn symbol_and_name(&self, i: usize) -> (&str, &str) {
        let p = &self.0;
        let k = self.pushed(i);
        let start = if k == 0 { 0 } else { p.ends[k - 1][1] as usize };
        let [s, n] = p.ends[k];
        let text = |a: usize, b: usize| std::str::from_utf8(&p.text[a..b]).expect("pushed as strings");
        (text(start, s as usize), text(s as usize, n as usize))
    }

    /// The `i`th row by ISIN, made whole.
    pub fn get(&self, i: usize) -> SnapshotRow {
        let k = self.pushed(i);
        let (symbol, name) = self.symbol_and_name(i);
        SnapshotRow {
            isin: Isin::parse(self.isin(i)).expect("pushed as an ISIN"),
            symbol: Ticker::parse(symbol).expect("pushed as a ticker"),
            name: name.to_owned(),
            face_value: self.0.face_values[k],
            listed_on: self.0.listed_on[k],
        }
    }

    /// How many rows come before the first whose ISIN is not below `isin`
    /// (the rows are in ISIN order).
    pub fn below(&self, isin: &str) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.isin(mid) < isin { lo = mid + 1 } else { hi = mid }
        }
        lo
    }

    /// [`apply_snapshot`](super::apply_snapshot) of the rows `range` (by
    /// ISIN) to the open runs `open` that their ISINs' range holds: the
    /// ISINs whose open run ends, sorted, and the rows (by ISIN) that open
    /// a run. The rows are made whole one at a time.
    pub fn apply_to(&self, open: &HashMap<Isin, SnapshotRow>, range: Range<usize>) -> (Vec<Isin>, Vec<usize>) {
        let mut kept: HashSet<&Isin> = HashSet::new();
        let mut opened = Vec::new();
        for i in range {
            let r = self.get(i);
            match open.get_key_value(&r.isin) {
                Some((isin, o)) if o.same_as(&r) => {
                    kept.insert(isin);
                }
                _ => opened.push(i),
            }
        }
        let mut closed: Vec<Isin> = open.keys().filter(|i| !kept.contains(i)).cloned().collect();
        closed.sort();
        (closed, opened)
    }

    /// The rows in ISIN order, each made whole.
    pub fn iter(&self) -> impl Iterator<Item = SnapshotRow> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

impl FromIterator<SnapshotRow> for SnapshotRows {
    fn from_iter<I: IntoIterator<Item = SnapshotRow>>(rows: I) -> Self {
        let mut b = SnapshotRowsBuilder::default();
        for r in rows {
            b.push(&r.isin, &r.symbol, &r.name, r.face_value, r.listed_on);
        }
        b.finish()
    }
}

impl From<Vec<SnapshotRow>> for SnapshotRows {
    fn from(rows: Vec<SnapshotRow>) -> Self {
        rows.into_iter().collect()
    }
}

impl PartialEq for SnapshotRows {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl fmt::Debug for SnapshotRows {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// What makes the companies of an exchange import, an ISIN range at a
/// time: the store asks for the range it is deriving
/// (`IdentityStore::import_snapshots`), so the companies of a million-row
/// list are never all held at once.
pub trait CompanySource: Send + Sync {
    /// How many companies there are.
    fn len(&self) -> usize;

    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The companies whose ISIN is at or after `lo` and before `hi` (to
    /// the last when `None`), in ISIN order.
    fn companies_in(&self, lo: &str, hi: Option<&str>) -> Vec<Company>;
}

/// The companies of an exchange import, made by a [`CompanySource`] when
/// asked for. Collected from companies, it holds them (sorted by ISIN).
#[derive(Clone)]
pub struct Companies(Arc<dyn CompanySource>);

impl Companies {
    /// The companies `source` makes.
    pub fn new(source: impl CompanySource + 'static) -> Self {
        Companies(Arc::new(source))
    }

    /// How many companies there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.len() == 0
    }

    /// The companies whose ISIN is at or after `lo` and before `hi` (to
    /// the last when `None`), in ISIN order.
    pub fn range(&self, lo: &str, hi: Option<&str>) -> Vec<Company> {
        self.0.companies_in(lo, hi)
    }

    /// Every company, in ISIN order.
    pub fn all(&self) -> Vec<Company> {
        self.range("", None)
    }
}

/// Companies held whole, sorted by ISIN.
struct Held(Vec<Company>);

impl CompanySource for Held {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn companies_in(&self, lo: &str, hi: Option<&str>) -> Vec<Company> {
        let a = self.0.partition_point(|c| c.isin.as_str() < lo);
        let b = hi.map_or(self.0.len(), |h| self.0.partition_point(|c| c.isin.as_str() < h));
        self.0[a..b.max(a)].to_vec()
    }
}

impl FromIterator<Company> for Companies {
    fn from_iter<I: IntoIterator<Item = Company>>(companies: I) -> Self {
        let mut v: Vec<Company> = companies.into_iter().collect();
        v.sort_by(|a, b| a.isin.cmp(&b.isin));
        Companies::new(Held(v))
    }
}

impl IntoIterator for Companies {
    type Item = Company;
    type IntoIter = std::vec::IntoIter<Company>;

    /// Every company, in ISIN order ([`Companies::all`]).
    fn into_iter(self) -> Self::IntoIter {
        self.all().into_iter()
    }
}

impl PartialEq for Companies {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.all() == other.all()
    }
}

impl fmt::Debug for Companies {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Companies").field("len", &self.len()).finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(isin: &str, symbol: &str, name: &str, face: Option<f64>) -> SnapshotRow {
        SnapshotRow {
            isin: Isin::parse(isin).unwrap(),
            symbol: Ticker::parse(symbol).unwrap(),
            name: name.into(),
            face_value: face,
            listed_on: NaiveDate::from_ymd_opt(2008, 10, 6).filter(|_| face.is_some()),
        }
    }

    #[test]
    fn packed_rows_read_back_in_isin_order() {
        let rows = vec![
            row("INE758T01015", "ETERNAL", "Eternal Limited", Some(1.0)),
            row("INE155A01022", "TATAMOTORS", "Tata Motors Limited", None),
            row("INE296A01024", "BAJFINANCE", "Bajaj Finance Limité", Some(2.0)),
        ];
        let packed: SnapshotRows = rows.clone().into();
        let mut sorted = rows.clone();
        sorted.sort_by(|a, b| a.isin.cmp(&b.isin));
        assert_eq!(packed.iter().collect::<Vec<_>>(), sorted);
        assert_eq!(packed.len(), 3);
        assert_eq!(packed.pushed(0), 1);
        assert_eq!(packed.symbol_and_name(2), ("ETERNAL", "Eternal Limited"));
        assert_eq!(packed.below("INE296A01024"), 1);
        assert_eq!(packed.below("INE296A01025"), 2);
        assert_eq!(packed.below(""), 0);
        assert_eq!(packed.below("Z"), 3);
        assert!(SnapshotRows::default().is_empty());
    }

    #[test]
    fn packed_rows_apply_as_apply_snapshot_does() {
        let open_rows = [
            row("INE296A01024", "BAJFINANCE", "Bajaj Finance Limited", Some(2.0)),
            row("INE758T01015", "ZOMATO", "Zomato Limited", Some(1.0)),
            row("INE155A01022", "TATAMOTORS", "Tata Motors Limited", Some(2.0)),
        ];
        let open: HashMap<Isin, SnapshotRow> = open_rows.iter().map(|r| (r.isin.clone(), r.clone())).collect();
        let rows = vec![
            open_rows[2].clone(),
            row("INE758T01015", "ETERNAL", "Eternal Limited", Some(1.0)),
            row("INE1TAE01010", "TMCV", "Tata Motors Limited", Some(2.0)),
        ];
        let packed: SnapshotRows = rows.clone().into();
        let (closed, opened) = packed.apply_to(&open, 0..packed.len());
        let (want_closed, want_opened) = super::super::apply_snapshot(&open, &rows);
        assert_eq!(closed, want_closed);
        let opened: Vec<SnapshotRow> = opened.into_iter().map(|i| packed.get(i)).collect();
        let mut want: Vec<SnapshotRow> = want_opened.into_iter().cloned().collect();
        want.sort_by(|a, b| a.isin.cmp(&b.isin));
        assert_eq!(opened, want);
    }

    #[test]
    fn held_companies_are_given_by_isin_range() {
        let one: Company = serde_json::from_str(
            r#"{"isin": "INE758T01015", "ticker": "X", "name": "X", "industry": null, "sector": null,
                "is_bse": false, "is_nse": true, "market_cap_band": null, "logo_url": null}"#,
        )
        .unwrap();
        let c = |isin: &str| Company { isin: Isin::parse(isin).unwrap(), ..one.clone() };
        let all: Companies = ["INE758T01015", "INE155A01022", "INE296A01024"].into_iter().map(c).collect();
        let isins = |v: Vec<Company>| v.into_iter().map(|c| c.isin.to_string()).collect::<Vec<_>>();
        assert_eq!(isins(all.all()), ["INE155A01022", "INE296A01024", "INE758T01015"]);
        assert_eq!(isins(all.range("INE2", Some("INE7"))), ["INE296A01024"]);
        assert_eq!(isins(all.range("INE7", None)), ["INE758T01015"]);
        assert!(all.range("INE8", Some("INE1")).is_empty());
    }
}
