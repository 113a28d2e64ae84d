//! The catalog's detail records and change feed (contract sections 7.1 and
//! 7.2): one company by ISIN, and every company in change order.
//!
//! A row's `V1CompanyDetail` JSON is its list JSON without the closing
//! brace, then its details (kept per row in a few bytes, see `tail`;
//! listings made from its flags when none were given), then `updated_at`
//! from its change stamp.
//! Finding a row by ISIN is a binary search of the rows in ISIN order; the
//! change feed is a walk of the rows in `(stamp, ISIN)` order from a binary
//! search, so a deep page costs what the first costs.

use chrono::{DateTime, NaiveDate};
use mds_domain::time::format_utc;
use mds_domain::{CompanyDetails, CompanyStatus, Exchange};

use crate::build::ChangeStamp;
use crate::catalog::{Catalog, Rows};
use crate::layout::{Section, flag};
use crate::postings::{u32_at, u64_at};
use crate::tail::{self, ListingParts, Lookup};

/// The position of a row in change order: its change generation and ISIN.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ChangeKey {
    /// The `companies` generation of the row's last change.
    pub seq: i64,
    /// Its ISIN.
    pub isin: String,
}

/// One page of the change feed.
pub type ChangeRows<'a> = Rows<'a, ChangeKey>;

impl ChangeRows<'_> {
    /// Appends the rows' `V1CompanyDetail` JSON objects, comma-separated.
    pub fn write_rows(&self, out: &mut Vec<u8>) {
        self.write_each(out, Catalog::write_detail);
    }
}

impl Lookup for Catalog {
    fn string(&self, id: u64) -> Option<&str> {
        let id = usize::try_from(id).ok()?;
        (id + 1 < self.sec(Section::DetailStringOff).len() / 4)
            .then(|| std::str::from_utf8(self.bytes(Section::DetailStringOff, Section::DetailStrings, id)).ok())
            .flatten()
    }

    fn number(&self, id: u64) -> Option<f64> {
        let at = usize::try_from(id).ok()?.checked_mul(8)?;
        let b = self.sec(Section::DetailNumbers).get(at..at + 8)?;
        Some(f64::from_le_bytes(b.try_into().ok()?))
    }
}

impl Catalog {
    /// Row `i`'s change stamp.
    pub(crate) fn stamp(&self, i: usize) -> ChangeStamp {
        let id = u32_at(self.sec(Section::StampIds), 4 * i) as usize;
        let s = self.sec(Section::Stamps);
        ChangeStamp { seq: u64_at(s, 16 * id) as i64, updated_unix: u64_at(s, 16 * id + 8) as i64 }
    }

    /// Row `i`'s details, decoded from its tail (none for a damaged one:
    /// the snapshot's checksum makes that a bug, not a state).
    pub(crate) fn details(&self, i: usize) -> CompanyDetails {
        let tail = self.bytes(Section::DetailOff, Section::Details, i);
        CompanyDetails { status: self.status(i), ..tail::decode(tail, self.ticker(i), self).unwrap_or_default() }
    }

    /// Row `i`'s status, from its flags.
    pub(crate) fn status(&self, i: usize) -> CompanyStatus {
        match self.flags(i) >> flag::STATUS_SHIFT {
            1 => CompanyStatus::Superseded,
            2 => CompanyStatus::Delisted,
            _ => CompanyStatus::Active,
        }
    }

    /// Writes row `i` as `V1CompanyDetail` JSON, byte for byte what
    /// `serde_json` writes for [`mds_domain::CompanyDetail::of`] the same
    /// company, with `superseded_by` and `supersedes` from its history.
    pub fn write_detail(&self, i: usize, out: &mut Vec<u8>) {
        self.write_detail_with(i, None, out);
    }

    /// Writes row `i` as it stood at the end of `day` (contract 10.2): its
    /// ticker and name of that day, `status` `active`, `superseded_by` and
    /// `supersedes` by its events up to that day; the rest today's. `false`
    /// (nothing written) when it was not listed then.
    pub fn write_detail_on(&self, i: usize, day: NaiveDate, out: &mut Vec<u8>) -> bool {
        match self.identity_on(i, day) {
            Some((ticker, name)) => {
                self.write_detail_with(i, Some((ticker, name, day)), out);
                true
            }
            None => false,
        }
    }

    fn write_detail_with(&self, i: usize, on: Option<(&[u8], &[u8], NaiveDate)>, out: &mut Vec<u8>) {
        out.reserve(self.row_size(i) + 500);
        match on {
            None => self.write_row_open(i, out),
            Some((ticker, name, _)) => self.write_row_as(i, ticker, name, out),
        }
        let tail = self.bytes(Section::DetailOff, Section::Details, i);
        let mut parts = if tail.is_empty() { None } else { tail::parts(tail, self) }.unwrap_or(tail::Parts {
            listings: [None, None],
            classification: None,
            market_cap: None,
        });
        // No listing given: those the flags imply, bare.
        if parts.listings.iter().all(Option::is_none) {
            let f = self.flags(i);
            parts.listings = [
                (f & flag::NSE != 0).then(|| ListingParts::bare(Exchange::Nse)),
                (f & flag::BSE != 0).then(|| ListingParts::bare(Exchange::Bse)),
            ];
        }
        tail::write_json(out, &parts, self.ticker(i));
        let (status, (by, from)) = match on {
            None => (self.status(i), self.links(i, None)),
            Some((_, _, day)) => (CompanyStatus::Active, self.links(i, Some(day))),
        };
        out.extend_from_slice(b",\"status\":\"");
        out.extend_from_slice(status.as_str().as_bytes());
        out.extend_from_slice(b"\",\"superseded_by\":");
        match by {
            Some(isin) => {
                out.push(b'"');
                out.extend_from_slice(isin.as_str().as_bytes());
                out.push(b'"');
            }
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"supersedes\":[");
        for (k, isin) in from.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            out.push(b'"');
            out.extend_from_slice(isin.as_str().as_bytes());
            out.push(b'"');
        }
        out.extend_from_slice(b"],\"updated_at\":\"");
        let at = DateTime::from_timestamp(self.stamp(i).updated_unix, 0).unwrap_or_default();
        out.extend_from_slice(format_utc(&at).as_bytes());
        out.extend_from_slice(b"\"}");
    }

    /// The row of the company with `isin` (upper-case, as ISINs are kept).
    pub fn find_isin(&self, isin: &str) -> Option<usize> {
        let order = self.sec(Section::IsinOrder);
        let row = |k: usize| u32_at(order, 4 * k) as usize;
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.isin_bytes(row(mid)).cmp(isin.as_bytes()) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(row(mid)),
            }
        }
        None
    }

    /// The `V1CompanyDetail` JSON of the company with `isin`, if there is one.
    pub fn detail(&self, isin: &str) -> Option<Vec<u8>> {
        self.find_isin(isin).map(|i| {
            let mut out = Vec::new();
            self.write_detail(i, &mut out);
            out
        })
    }

    /// The highest change generation of any row (0 when empty).
    pub fn last_change(&self) -> i64 {
        let s = self.sec(Section::Stamps);
        if s.is_empty() { 0 } else { u64_at(s, s.len() - 16) as i64 }
    }

    /// Up to `limit` companies changed after generation `since`, in change
    /// order, strictly after `after`.
    pub fn changes(&self, since: i64, after: Option<&ChangeKey>, limit: usize) -> ChangeRows<'_> {
        let order = self.sec(Section::ChangeOrder);
        let row = |k: usize| u32_at(order, 4 * k) as usize;
        let before = |k: usize| {
            let r = row(k);
            let seq = self.stamp(r).seq;
            seq <= since || after.is_some_and(|a| (seq, self.isin_bytes(r)) <= (a.seq, a.isin.as_bytes()))
        };
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if before(mid) { lo = mid + 1 } else { hi = mid }
        }
        let end = self.len().min(lo.saturating_add(limit));
        let rows: Vec<u32> = (lo..end).map(|k| row(k) as u32).collect();
        let next = match rows.last() {
            Some(&r) if end < self.len() => {
                Some(ChangeKey { seq: self.stamp(r as usize).seq, isin: self.isin(r as usize).to_owned() })
            }
            _ => None,
        };
        ChangeRows { catalog: self, rows, found: Vec::new(), next }
    }
}

#[cfg(test)]
mod tests {
    use chrono::{NaiveDate, Utc};
    use mds_domain::{Company, CompanyDetail, Listing, ListingStatus, MarketCap};
    use mds_testkit::fixtures::company;

    use super::*;
    use crate::CatalogBuilder;

    fn stamped(rows: &[(Company, ChangeStamp)]) -> Catalog {
        let mut rows = rows.to_vec();
        rows.sort_by(|a, b| (&a.0.ticker, &a.0.isin).cmp(&(&b.0.ticker, &b.0.isin)));
        let mut b = CatalogBuilder::default();
        for (c, s) in &rows {
            b.push_stamped(c, *s).unwrap();
        }
        b.finish()
    }

    fn with_details(mut c: Company) -> Company {
        c.is_nse = true;
        c.is_bse = true;
        c.details.listings = vec![
            Listing::bare(Exchange::Nse, c.ticker.as_str()),
            Listing {
                exchange: Exchange::Bse,
                symbol: "X\"Y".into(),
                scrip_code: Some("500002".into()),
                series: Some("A".into()),
                listed_on: NaiveDate::from_ymd_opt(2001, 2, 3),
                face_value: Some(2.0),
                status: ListingStatus::Suspended,
                last_seen: NaiveDate::from_ymd_opt(2024, 1, 30),
            },
        ];
        c.details.classification.basic_industry = Some("Heavy Electrical Equipment".into());
        c.details.market_cap = Some(MarketCap { inr_crore: 84146.25, as_of: None });
        c
    }

    /// The written detail is serde's, for rows with and without details and
    /// on either exchange; and the details read back as given.
    #[test]
    fn details_are_written_as_serde_writes_them() {
        let mut rows = Vec::new();
        for i in 0..8 {
            let mut c = company(i, &format!("T{i}"));
            c.is_bse = i % 2 == 0;
            c.is_nse = i % 3 == 0;
            if i % 4 == 1 {
                c = with_details(c);
            }
            rows.push((c, ChangeStamp { seq: i as i64 % 3, updated_unix: 1_700_000_000 + i as i64 }));
        }
        let cat = stamped(&rows);
        for (c, s) in &rows {
            let at = DateTime::from_timestamp(s.updated_unix, 0).unwrap().with_timezone(&Utc);
            let want = serde_json::to_vec(&CompanyDetail::of(c, at)).unwrap();
            let got = cat.detail(c.isin.as_str()).unwrap();
            assert_eq!(String::from_utf8(got).unwrap(), String::from_utf8(want).unwrap());
        }
        let back: Vec<Company> = cat.companies().collect();
        for (c, _) in &rows {
            assert_eq!(back.iter().find(|b| b.isin == c.isin).unwrap(), c);
        }
        assert!(cat.detail("INE000000000").is_none());
    }

    /// The feed walks rows by (generation, ISIN) after `since`, in pages
    /// that neither repeat nor skip.
    #[test]
    fn changes_walk_in_change_order() {
        let rows: Vec<(Company, ChangeStamp)> = (0..50)
            .map(|i| (company(i, &format!("T{}", 50 - i)), ChangeStamp { seq: (i as i64 * 7) % 5, updated_unix: 0 }))
            .collect();
        let cat = stamped(&rows);
        assert_eq!(cat.last_change(), 4);
        for since in [-1, 0, 2, 4] {
            let mut want: Vec<(i64, String)> =
                rows.iter().filter(|(_, s)| s.seq > since).map(|(c, s)| (s.seq, c.isin.as_str().to_owned())).collect();
            want.sort();
            for limit in [1, 3, 50] {
                let mut got = Vec::new();
                let mut after = None;
                loop {
                    let page = cat.changes(since, after.as_ref(), limit);
                    got.extend(page.rows.iter().map(|&r| (cat.stamp(r as usize).seq, cat.isin(r as usize).to_owned())));
                    match page.next {
                        Some(k) => after = Some(k),
                        None => break,
                    }
                }
                assert_eq!(got, want, "since {since} limit {limit}");
            }
        }
    }
}
