//! What `mds import exchanges` holds of the lists, kept small: an NSE list
//! read packed ([`NseRows`]: its rows as a snapshot series, with each
//! row's `SERIES` and line, instead of a `Vec` of [`NseListing`]), and
//! [`ExchangeCompanies`], the companies [`merge`](super::merge) makes of
//! the lists, made an ISIN range at a time when the store asks for them.

use std::collections::HashMap;

use mds_domain::Company;
use mds_domain::snapshot::{CompanySource, SnapshotRows, SnapshotRowsBuilder};

use super::bse::BseListing;
use super::mcap::McapList;
use super::merge::{bse_company, nse_company};
use super::nse::{NSE_COLUMNS, NseListing, listing_date, parse_nse_shaped_into};
use super::sme::{SME_COLUMNS, sme_listing_date};
use super::table::SkippedRow;
use crate::error::ImportError;

/// An NSE list (main board or SME), packed: about 80 bytes a row.
#[derive(Debug, Clone, PartialEq)]
pub struct NseRows {
    /// The rows as a snapshot of their series, in ISIN order.
    pub rows: SnapshotRows,
    /// Each row's `SERIES` (as pushed): its place in `codes`, 0 for none.
    series: Vec<u32>,
    /// The `SERIES` codes seen; the first is a placeholder for none.
    codes: Vec<String>,
    /// Each row's line (as pushed).
    lines: Vec<u32>,
    /// Rows without a real ISIN.
    pub skipped_without_isin: Vec<SkippedRow>,
}

impl NseRows {
    /// Packs the listings `each` gives, one at a time.
    fn pack(
        each: impl FnOnce(&mut dyn FnMut(NseListing)) -> Result<Vec<SkippedRow>, ImportError>,
    ) -> Result<Self, ImportError> {
        let mut rows = SnapshotRowsBuilder::default();
        let (mut series, mut codes, mut lines) = (Vec::new(), vec![String::new()], Vec::new());
        let mut code_ids: HashMap<String, u32> = HashMap::new();
        let skipped_without_isin = each(&mut |n: NseListing| {
            rows.push(&n.isin, &n.symbol, &n.name, n.face_value, n.listed_on);
            series.push(match n.series {
                None => 0,
                Some(s) => *code_ids.entry(s).or_insert_with_key(|s| {
                    codes.push(s.clone());
                    codes.len() as u32 - 1
                }),
            });
            lines.push(u32::try_from(n.line).unwrap_or(u32::MAX));
        })?;
        Ok(NseRows { rows: rows.finish(), series, codes, lines, skipped_without_isin })
    }

    /// How many rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The `i`th listing by ISIN, made whole.
    pub fn listing(&self, i: usize) -> NseListing {
        let k = self.rows.pushed(i);
        let r = self.rows.get(i);
        NseListing {
            line: self.lines[k] as usize,
            isin: r.isin,
            symbol: r.symbol,
            name: r.name,
            series: Some(self.series[k]).filter(|c| *c != 0).map(|c| self.codes[c as usize].clone()),
            listed_on: r.listed_on,
            face_value: r.face_value,
        }
    }

    /// The line of the `i`th row by ISIN.
    pub fn line(&self, i: usize) -> usize {
        self.lines[self.rows.pushed(i)] as usize
    }

    /// Where `isin` is among the rows (by ISIN), if it is.
    pub fn find(&self, isin: &str) -> Option<usize> {
        let i = self.rows.below(isin);
        (i < self.len() && self.rows.isin(i) == isin).then_some(i)
    }

    /// The rows from the first whose ISIN is at or after `lo` to the last
    /// before `hi` (to the end when `None`).
    fn range(&self, lo: &str, hi: Option<&str>) -> std::ops::Range<usize> {
        let a = self.rows.below(lo);
        a..hi.map_or(self.len(), |h| self.rows.below(h)).max(a)
    }
}

/// Parses NSE's `EQUITY_L.csv`, packed ([`NseRows`]; the rules of
/// [`parse_nse_equity_list`](super::parse_nse_equity_list)), reading a
/// record at a time.
pub fn parse_nse_rows(bytes: &[u8]) -> Result<NseRows, ImportError> {
    NseRows::pack(|sink| parse_nse_shaped_into(bytes, &NSE_COLUMNS, listing_date, sink))
}

/// Parses NSE's `SME_EQUITY_L.csv`, packed ([`NseRows`]; the rules of
/// [`parse_nse_sme_equity_list`](super::parse_nse_sme_equity_list)).
pub fn parse_nse_sme_rows(bytes: &[u8]) -> Result<NseRows, ImportError> {
    NseRows::pack(|sink| parse_nse_shaped_into(bytes, &SME_COLUMNS, sme_listing_date, sink))
}

/// The companies of an exchange import: what [`merge`](super::merge)
/// makes of the NSE lists, BSE's and the market caps, made an ISIN range
/// at a time ([`CompanySource`]).
pub struct ExchangeCompanies {
    /// The NSE lists (no ISIN on two of them).
    nse: Vec<NseRows>,
    /// BSE's list, by ISIN.
    bse: Vec<BseListing>,
    /// How many of BSE's are on no NSE list.
    bse_only: usize,
    /// The market caps, by NSE symbol.
    mcap: Option<McapList>,
}

impl ExchangeCompanies {
    /// The companies of `nse` (NSE lists sharing no ISIN), `bse` and `mcap`.
    pub fn new(nse: Vec<NseRows>, mut bse: Vec<BseListing>, mcap: Option<McapList>) -> Self {
        bse.sort_by(|a, b| a.isin.cmp(&b.isin));
        let mut c = ExchangeCompanies { nse, bse, bse_only: 0, mcap };
        c.bse_only = c.bse.iter().filter(|b| !c.on_nse(b.isin.as_str())).count();
        c
    }

    /// Whether an NSE list has `isin`.
    fn on_nse(&self, isin: &str) -> bool {
        self.nse.iter().any(|l| l.find(isin).is_some())
    }

    /// BSE's listing of `isin`.
    fn bse_of(&self, isin: &str) -> Option<&BseListing> {
        let i = self.bse.partition_point(|b| b.isin.as_str() < isin);
        self.bse.get(i).filter(|b| b.isin.as_str() == isin)
    }
}

impl CompanySource for ExchangeCompanies {
    fn len(&self) -> usize {
        self.nse.iter().map(NseRows::len).sum::<usize>() + self.bse_only
    }

    fn companies_in(&self, lo: &str, hi: Option<&str>) -> Vec<Company> {
        let mut out = Vec::new();
        for list in &self.nse {
            for i in list.range(lo, hi) {
                let n = list.listing(i);
                let b = self.bse_of(n.isin.as_str());
                out.push(nse_company(&n, b, self.mcap.as_ref()));
            }
        }
        let a = self.bse.partition_point(|b| b.isin.as_str() < lo);
        let z = hi.map_or(self.bse.len(), |h| self.bse.partition_point(|b| b.isin.as_str() < h)).max(a);
        out.extend(self.bse[a..z].iter().filter(|b| !self.on_nse(b.isin.as_str())).map(bse_company));
        out.sort_by(|a, b| a.isin.cmp(&b.isin));
        out
    }
}
