//! [`Catalog`]: companies sorted by `(ticker, isin)` in one compact buffer,
//! and the filtered keyset page over them.
//!
//! # Layout (compact, for a million rows)
//! Row `i` (its position in `(ticker, isin)` order, a `u32`) has its ISIN as
//! 12 bytes, its ticker, name and logo URL as slices of arenas, a flag byte
//! (exchanges, band, whether it has a logo) and industry and sector ids into
//! sorted dictionaries (see [`crate::layout`]). Filters are posting lists of
//! row indices ([`crate::postings`]): per industry, per exchange, per
//! market-cap band, and per bigram and trigram of the folded name and
//! ticker (for search). `letter` and `ticker` are contiguous ranges in this
//! order (binary search). The buffer is also the snapshot the store keeps
//! ([`Catalog::as_bytes`], [`Catalog::from_bytes`]).
//!
//! A page intersects its lists lazily (leapfrog: each list seeks to the
//! current candidate by galloping or bitmap scan), starting at the cursor's
//! position, so a deep page costs what the first page costs. A search term's
//! grams only narrow the candidates; a candidate whose row signature (a bit
//! per four-character gram of its name and ticker, 8 bytes a row) lacks one
//! of the term's bits is dropped, and the rest are checked with the real
//! substring test. The JSON of a row is written when the page is: field
//! names are constants, values are copied from the arenas (escaped only when
//! they hold a character JSON must escape).

use chrono::NaiveDate;
use mds_domain::query::fold;
use mds_domain::{Company, CompanyFilter, CompanyStatus, Exchange, Isin, MarketCapBand, StatusFilter, Ticker};
use memchr::memmem::Finder;

use crate::build::{CatalogBuilder, ChangeStamp, status_index};
use crate::grams::{bigram, signature, trigram};
use crate::history::day16;
use crate::layout::{Layout, SECTION_NAMES, SECTIONS, Section, SnapshotError, flag, id_at};
use crate::postings::{ListSeeker, Postings, Seeker, u32_at, u64_at};

/// The position of a row in the catalog's order: `(ticker, isin)`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SortKey {
    /// Ticker (upper-case).
    pub ticker: String,
    /// ISIN.
    pub isin: String,
}

/// Every company, sorted by `(ticker, isin)`: one buffer and where its
/// sections are.
#[derive(Debug)]
pub struct Catalog {
    buf: Vec<u8>,
    layout: Layout,
}

impl Default for Catalog {
    fn default() -> Self {
        CatalogBuilder::default().finish()
    }
}

/// One page of a walk over the catalog's rows, resumed after a key of type
/// `K`: a page of the company list ([`ListRows`]) or of the change feed
/// ([`ChangeRows`](crate::ChangeRows)).
#[derive(Debug)]
pub struct Rows<'a, K> {
    pub(crate) catalog: &'a Catalog,
    /// The matching rows, in order.
    pub(crate) rows: Vec<u32>,
    /// The key of the last row on the page, when more rows follow.
    pub next: Option<K>,
}

/// One page of a filtered walk.
pub type ListRows<'a> = Rows<'a, SortKey>;

impl<K> Rows<'_, K> {
    /// Whether more pages follow.
    pub fn has_more(&self) -> bool {
        self.next.is_some()
    }

    /// How many companies the page holds.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Appends each row as `write` writes it, comma-separated.
    pub(crate) fn write_each(&self, out: &mut Vec<u8>, write: impl Fn(&Catalog, usize, &mut Vec<u8>)) {
        for (k, &r) in self.rows.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            write(self.catalog, r as usize, out);
        }
    }
}

/// The bit of a company list entry that makes it a version of a row (an
/// identity it had on an `as_of` day, see `history`), not a row.
pub(crate) const VERSION_BIT: u32 = 1 << 31;

impl ListRows<'_> {
    /// Appends the rows' `V1Company` JSON objects, comma-separated (the
    /// inside of the `data` array). Byte for byte what `serde_json` writes
    /// for the same [`Company`].
    pub fn write_rows(&self, out: &mut Vec<u8>) {
        out.reserve(self.rows.iter().map(|&r| self.catalog.entry_size(r)).sum());
        self.write_each(out, |c, e, out| c.write_entry(e as u32, out));
    }

    /// Each row's JSON, as a string (for tests and tools).
    pub fn json_rows(&self) -> Vec<String> {
        self.rows
            .iter()
            .map(|&r| {
                let mut out = Vec::new();
                self.catalog.write_entry(r, &mut out);
                String::from_utf8(out).expect("the catalog writes UTF-8")
            })
            .collect()
    }
}

/// Whether ASCII `text`, lower-cased, contains the term `find` looks for
/// (already folded): the text is lower-cased into a stack buffer (a loop
/// that vectorises) and searched with `memchr`'s substring finder.
fn ascii_contains(text: &[u8], find: &Finder<'_>) -> bool {
    let mut buf = [0u8; 256];
    match buf.get_mut(..text.len()) {
        Some(lower) => {
            for (l, &b) in lower.iter_mut().zip(text) {
                *l = b.to_ascii_lowercase();
            }
            find.find(lower).is_some()
        }
        None => find.find(&text.to_ascii_lowercase()).is_some(),
    }
}

/// Appends UTF-8 `s` as a JSON string, as `serde_json` writes it; `plain`
/// says it holds nothing to escape (known per row, see [`flag::ESCAPE`]).
fn json_str(out: &mut Vec<u8>, s: &[u8], plain: bool) {
    if plain {
        crate::wire::plain_json(out, s);
    } else {
        crate::wire::value_json(out, std::str::from_utf8(s).unwrap_or_default());
    }
}

/// Search candidates verified together (see [`Catalog::touch_names`]).
const SEARCH_BATCH: usize = 32;

/// The first row in `x..hi` that every list holds (leapfrog: each list in
/// turn seeks to the current candidate; a list that skips past it proposes
/// the next one). With no lists, `x` itself.
fn leapfrog(seekers: &mut [Seeker<'_>], mut x: u32, hi: u32) -> Option<u32> {
    if x >= hi {
        return None;
    }
    let k = seekers.len();
    let (mut i, mut agreed) = (0, 0);
    while agreed < k {
        match seekers[i].seek(x)? {
            y if y == x => agreed += 1,
            y if y >= hi => return None,
            y => (x, agreed) = (y, 1),
        }
        i = (i + 1) % k;
    }
    Some(x)
}

const BANDS: [MarketCapBand; 3] = [MarketCapBand::Large, MarketCapBand::Mid, MarketCapBand::Small];

impl Catalog {
    /// Builds a catalog from companies in any order. Companies with the same
    /// ISIN must not repeat (the store's primary key guarantees it).
    pub fn new(companies: Vec<Company>) -> Self {
        Self::from_stamped(companies.into_iter().map(|c| (ChangeStamp::default(), c)).collect())
    }

    /// [`Catalog::new`] of companies with their change stamps.
    pub fn from_stamped(rows: Vec<(ChangeStamp, Company)>) -> Self {
        Self::from_stamped_with_history(rows, Vec::new())
    }

    /// [`Catalog::from_stamped`], with the identity events of every ISIN
    /// (see [`CatalogBuilder::history`]).
    pub fn from_stamped_with_history(
        mut rows: Vec<(ChangeStamp, Company)>,
        events: Vec<(mds_domain::Isin, mds_domain::IdentityEvent)>,
    ) -> Self {
        rows.sort_unstable_by(|(_, a), (_, b)| (&a.ticker, &a.isin).cmp(&(&b.ticker, &b.isin)));
        rows.dedup_by(|(_, a), (_, b)| a.isin == b.isin && a.ticker == b.ticker);
        let mut b = CatalogBuilder::with_capacity(rows.len());
        for (s, c) in &rows {
            b.push_stamped(c, *s).expect("sorted and distinct");
        }
        b.history(events);
        b.finish()
    }

    /// A catalog from bytes that [`Catalog::as_bytes`] gave (a snapshot),
    /// checked and used in place (nothing is copied).
    pub fn from_bytes(buf: Vec<u8>) -> Result<Self, SnapshotError> {
        let layout = Layout::parse(&buf)?;
        Ok(Catalog { buf, layout })
    }

    /// The catalog's bytes: its snapshot.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Bytes per section, by name (for benchmarks and logs).
    pub fn sizes(&self) -> Vec<(&'static str, usize)> {
        (0..SECTIONS).map(|s| (SECTION_NAMES[s], self.layout.sections[s].len())).collect()
    }

    /// Bytes of the identity history's sections (the spans, events,
    /// versions, symbol periods and their strings).
    pub fn history_bytes(&self) -> usize {
        self.sizes().iter().filter(|(s, _)| s.starts_with("history") || s.starts_with("symbol")).map(|(_, b)| b).sum()
    }

    pub(crate) fn sec(&self, s: Section) -> &[u8] {
        self.layout.of(&self.buf, s)
    }

    /// String `i` of an arena (`off` offsets into `text`), as bytes: valid
    /// UTF-8, as the whole arena was checked when the buffer was.
    pub(crate) fn bytes(&self, off: Section, text: Section, i: usize) -> &[u8] {
        let o = self.sec(off);
        let (a, b) = (u32_at(o, 4 * i) as usize, u32_at(o, 4 * i + 4) as usize);
        self.sec(text).get(a..b).unwrap_or_default()
    }

    /// String `i` of an arena, as a `str`.
    fn text(&self, off: Section, text: Section, i: usize) -> &str {
        std::str::from_utf8(self.bytes(off, text, i)).unwrap_or_default()
    }

    pub(crate) fn ticker(&self, i: usize) -> &str {
        self.text(Section::TickerOff, Section::Tickers, i)
    }

    fn name(&self, i: usize) -> &str {
        self.text(Section::NameOff, Section::Names, i)
    }

    pub(crate) fn isin(&self, i: usize) -> &str {
        std::str::from_utf8(self.isin_bytes(i)).unwrap_or_default()
    }

    pub(crate) fn isin_bytes(&self, i: usize) -> &[u8] {
        &self.sec(Section::Isins)[12 * i..12 * i + 12]
    }

    pub(crate) fn ticker_bytes(&self, i: usize) -> &[u8] {
        self.bytes(Section::TickerOff, Section::Tickers, i)
    }

    pub(crate) fn flags(&self, i: usize) -> u8 {
        self.sec(Section::Flags)[i]
    }

    fn logo(&self, i: usize) -> Option<&[u8]> {
        (self.flags(i) & flag::LOGO != 0).then(|| self.bytes(Section::LogoOff, Section::Logos, i))
    }

    fn band(&self, i: usize) -> Option<MarketCapBand> {
        match (self.flags(i) >> flag::BAND_SHIFT) & 3 {
            0 => None,
            b => Some(BANDS[b as usize - 1]),
        }
    }

    /// Row `i`'s name in a dictionary (`ids` per row; `off`/`text` the sorted names).
    fn dict(&self, ids: Section, off: Section, text: Section, i: usize) -> Option<&[u8]> {
        let id = id_at(self.sec(ids), self.layout.id_width, i) as usize;
        (id != 0).then(|| self.bytes(off, text, id - 1))
    }

    /// Row `i`'s industry id (0: none, else 1 + its index in name order).
    fn industry_id(&self, i: usize) -> u32 {
        id_at(self.sec(Section::Industry), self.layout.id_width, i)
    }

    fn industry(&self, i: usize) -> Option<&[u8]> {
        self.dict(Section::Industry, Section::IndustryNameOff, Section::IndustryNames, i)
    }

    fn sector(&self, i: usize) -> Option<&[u8]> {
        self.dict(Section::Sector, Section::SectorNameOff, Section::SectorNames, i)
    }

    /// An upper bound of row `i`'s JSON size when nothing needs escaping.
    pub(crate) fn row_size(&self, i: usize) -> usize {
        let o = |s: Section| u32_at(self.sec(s), 4 * i + 4) - u32_at(self.sec(s), 4 * i);
        200 + (o(Section::TickerOff) + o(Section::NameOff) + o(Section::LogoOff)) as usize
    }

    /// Writes row `i` as `V1Company` JSON (field order and form as `serde_json`).
    pub(crate) fn write_row(&self, i: usize, out: &mut Vec<u8>) {
        self.write_row_open(i, out);
        out.push(b'}');
    }

    /// Writes a list entry: a row, or a version of one (its ticker and
    /// name of an `as_of` day, the rest today's).
    fn write_entry(&self, e: u32, out: &mut Vec<u8>) {
        if e & VERSION_BIT == 0 {
            self.write_row(e as usize, out);
        } else {
            let v = self.version((e & !VERSION_BIT) as usize);
            self.write_row_as(v.row, v.ticker, v.name, out);
            out.push(b'}');
        }
    }

    /// [`Catalog::row_size`] of a list entry.
    fn entry_size(&self, e: u32) -> usize {
        if e & VERSION_BIT == 0 { self.row_size(e as usize) } else { 400 }
    }

    /// The sort key of a list entry: its ticker (of the day, for a
    /// version) and ISIN.
    fn entry_key(&self, e: u32) -> (&[u8], &[u8]) {
        if e & VERSION_BIT == 0 {
            (self.ticker_bytes(e as usize), self.isin_bytes(e as usize))
        } else {
            let v = self.version((e & !VERSION_BIT) as usize);
            (v.ticker, self.isin_bytes(v.row))
        }
    }

    /// Writes row `i` as [`Catalog::write_row`] does, without the closing brace.
    pub(crate) fn write_row_open(&self, i: usize, out: &mut Vec<u8>) {
        let plain = self.flags(i) & flag::ESCAPE == 0;
        self.write_fields(i, self.ticker_bytes(i), self.bytes(Section::NameOff, Section::Names, i), plain, out);
    }

    /// Writes row `i` without the closing brace, with `ticker` and `name`
    /// (those of another day) for its own.
    pub(crate) fn write_row_as(&self, i: usize, ticker: &[u8], name: &[u8], out: &mut Vec<u8>) {
        let esc = |s: &[u8]| s.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\');
        let plain = self.flags(i) & flag::ESCAPE == 0 && !esc(ticker) && !esc(name);
        self.write_fields(i, ticker, name, plain, out);
    }

    /// Writes row `i`'s fields, with `ticker` and `name`; `plain`: none of
    /// the strings needs escaping.
    fn write_fields(&self, i: usize, ticker: &[u8], name: &[u8], plain: bool, out: &mut Vec<u8>) {
        let f = self.flags(i);
        let opt = |out: &mut Vec<u8>, v: Option<&[u8]>| match v {
            Some(s) => json_str(out, s, plain),
            None => out.extend_from_slice(b"null"),
        };
        out.extend_from_slice(b"{\"isin\":\"");
        out.extend_from_slice(self.isin_bytes(i));
        out.extend_from_slice(b"\",\"ticker\":");
        json_str(out, ticker, plain);
        out.extend_from_slice(b",\"name\":");
        json_str(out, name, plain);
        out.extend_from_slice(b",\"industry\":");
        opt(out, self.industry(i));
        out.extend_from_slice(b",\"sector\":");
        opt(out, self.sector(i));
        // The two exchange flags: one of four fixed fragments.
        out.extend_from_slice(match f & (flag::BSE | flag::NSE) {
            0 => b",\"is_bse\":false,\"is_nse\":false,\"market_cap_band\":",
            flag::BSE => b",\"is_bse\":true,\"is_nse\":false,\"market_cap_band\":",
            flag::NSE => b",\"is_bse\":false,\"is_nse\":true,\"market_cap_band\":",
            _ => b",\"is_bse\":true,\"is_nse\":true,\"market_cap_band\":",
        });
        out.extend_from_slice(match self.band(i) {
            None => b"null,\"logo_url\":",
            Some(MarketCapBand::Large) => b"\"large_cap\",\"logo_url\":",
            Some(MarketCapBand::Mid) => b"\"mid_cap\",\"logo_url\":",
            Some(MarketCapBand::Small) => b"\"small_cap\",\"logo_url\":",
        });
        opt(out, self.logo(i));
    }

    /// How many companies there are.
    pub fn len(&self) -> usize {
        self.layout.n
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.layout.n == 0
    }

    /// The companies, in order, rebuilt from the catalog's fields (serving
    /// pages never needs this).
    pub fn companies(&self) -> impl Iterator<Item = Company> + '_ {
        (0..self.len()).map(|i| {
            let f = self.flags(i);
            Company {
                isin: Isin::parse(self.isin(i)).expect("the catalog holds valid ISINs"),
                ticker: Ticker::parse(self.ticker(i)).expect("the catalog holds valid tickers"),
                name: self.name(i).to_owned(),
                industry: self.industry(i).map(|b| String::from_utf8_lossy(b).into_owned()),
                sector: self.sector(i).map(|b| String::from_utf8_lossy(b).into_owned()),
                is_bse: f & flag::BSE != 0,
                is_nse: f & flag::NSE != 0,
                market_cap_band: self.band(i),
                logo_url: self.logo(i).map(|b| String::from_utf8_lossy(b).into_owned()),
                details: self.details(i),
            }
        })
    }

    fn seeker(&self, p: &Postings) -> Seeker<'_> {
        if p.bitmap {
            let words = self.len().div_ceil(64);
            Seeker::Bits(&self.sec(Section::Bits)[p.start as usize * 8..(p.start as usize + words) * 8])
        } else {
            Seeker::List(ListSeeker::new(self.sec(Section::Lists), p.start as usize, p.len as usize))
        }
    }

    /// The list of an industry, by exact name.
    fn industry_list(&self, name: &str) -> Option<Postings> {
        self.industry_index(name).map(|k| Postings::read(self.sec(Section::IndustryLists), k))
    }

    /// The index of an industry in name order, by exact name.
    fn industry_index(&self, name: &str) -> Option<usize> {
        let count = self.sec(Section::IndustryNameOff).len() / 4 - 1;
        let (mut lo, mut hi) = (0, count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.text(Section::IndustryNameOff, Section::IndustryNames, mid).cmp(name) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// The list of a gram key.
    fn gram_list(&self, gram: u64) -> Option<Postings> {
        let keys = self.sec(Section::GramKeys);
        let (mut lo, mut hi) = (0, keys.len() / 8);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match u64_at(keys, 8 * mid).cmp(&gram) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(Postings::read(self.sec(Section::GramLists), mid)),
            }
        }
        None
    }

    /// Up to `limit` companies matching `filter`, strictly after `after`;
    /// with `filter.as_of`, the master as it stood at the end of that day.
    pub fn page(&self, filter: &CompanyFilter, after: Option<&SortKey>, limit: usize) -> ListRows<'_> {
        let rows = match filter.as_of {
            None => self.walk(filter, after, limit, None),
            Some(day) => self.walk_on(filter, day, after, limit),
        };
        self.list_rows(rows, limit)
    }

    /// The page of `entries` (up to `limit + 1` in order, the last one
    /// saying more follow).
    fn list_rows(&self, mut entries: Vec<u32>, limit: usize) -> ListRows<'_> {
        let more = entries.len() > limit;
        entries.truncate(limit);
        let next = match (more, entries.last()) {
            (true, Some(&e)) => {
                let (t, i) = self.entry_key(e);
                Some(SortKey {
                    ticker: String::from_utf8_lossy(t).into_owned(),
                    isin: String::from_utf8_lossy(i).into_owned(),
                })
            }
            _ => None,
        };
        ListRows { catalog: self, rows: entries, next }
    }

    /// The entries of the master on `day` matching `filter` after `after`,
    /// up to `limit + 1`: the rows listed then as they are today, merged
    /// with the versions (other tickers or names) that held then.
    fn walk_on(&self, filter: &CompanyFilter, day: NaiveDate, after: Option<&SortKey>, limit: usize) -> Vec<u32> {
        // Whoever was listed that day was active that day.
        if !filter.status.admits(CompanyStatus::Active) {
            return Vec::new();
        }
        let d = day16(day);
        let rows = self.walk(filter, after, limit, Some(d));
        let versions = self.versions_on(filter, d, after, limit + 1);
        if versions.is_empty() {
            return rows;
        }
        let mut out = Vec::with_capacity(limit + 1);
        let (mut a, mut b) = (rows.into_iter().peekable(), versions.into_iter().peekable());
        while out.len() <= limit {
            let next = match (a.peek(), b.peek()) {
                (Some(&x), Some(&y)) => {
                    if self.entry_key(x) <= self.entry_key(y) {
                        a.next()
                    } else {
                        b.next()
                    }
                }
                (Some(_), None) => a.next(),
                (None, Some(_)) => b.next(),
                (None, None) => None,
            };
            match next {
                Some(e) => out.push(e),
                None => break,
            }
        }
        out
    }

    /// Up to `take` versions (as entries) that held on `day` and match
    /// `filter`, after `after`, in list order: a scan of the versions in
    /// the ticker range the filters allow.
    fn versions_on(&self, filter: &CompanyFilter, day: u16, after: Option<&SortKey>, take: usize) -> Vec<u32> {
        let count = self.version_count();
        let split = |before: &dyn Fn(&[u8], &[u8]) -> bool| {
            let (mut lo, mut hi) = (0, count);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                let v = self.version(mid);
                if before(v.ticker, self.isin_bytes(v.row)) { lo = mid + 1 } else { hi = mid }
            }
            lo
        };
        let (mut lo, mut hi) = (0, count);
        if let Some(t) = &filter.ticker {
            let t = t.as_str().as_bytes();
            lo = split(&|r, _| r < t);
            hi = split(&|r, _| r <= t);
        }
        if let Some(l) = filter.letter {
            let b = l.as_char() as u8;
            let first = |r: &[u8]| r.first().copied().unwrap_or(0);
            lo = lo.max(split(&|r, _| first(r) < b));
            hi = hi.min(split(&|r, _| first(r) <= b));
        }
        if let Some(k) = after {
            lo = lo.max(split(&|t, i| (t, i) <= (k.ticker.as_bytes(), k.isin.as_bytes())));
        }
        let industry = match &filter.industry {
            Some(name) => match self.industry_index(name.as_str()) {
                Some(k) => Some(k as u32 + 1),
                None => return Vec::new(),
            },
            None => None,
        };
        let term = filter.search.as_ref().map(|s| s.as_str());
        let ticker_term = term.is_some_and(|t| t.bytes().all(|b| b.is_ascii_graphic()));
        let mut out = Vec::new();
        for k in lo..hi {
            if out.len() == take {
                break;
            }
            let v = self.version(k);
            let f = self.flags(v.row);
            let ok = v.holds(day)
                && industry.is_none_or(|id| self.industry_id(v.row) == id)
                && filter.exchange.is_none_or(|e| {
                    f & match e {
                        Exchange::Bse => flag::BSE,
                        Exchange::Nse => flag::NSE,
                    } != 0
                })
                && filter.market_cap.is_none_or(|b| self.band(v.row) == Some(b))
                && term.is_none_or(|t| {
                    fold(&String::from_utf8_lossy(v.name)).contains(t)
                        || ticker_term && v.ticker.to_ascii_lowercase().windows(t.len()).any(|w| w == t.as_bytes())
                });
            if ok {
                out.push(k as u32 | VERSION_BIT);
            }
        }
        out
    }

    /// The rows matching `filter` (and, with `day`, listed as they are
    /// today on that `u16` day) after `after`, up to `limit + 1`.
    fn walk(&self, filter: &CompanyFilter, after: Option<&SortKey>, limit: usize, day: Option<u16>) -> Vec<u32> {
        let empty = Vec::new();
        let (lo, hi) = self.range(filter);
        let start = match after {
            Some(k) => lo.max(self.partition(|t, i| (t, i) <= (k.ticker.as_bytes(), k.isin.as_bytes()))),
            None => lo,
        };
        if start >= hi {
            return empty;
        }
        // The lists every match is in, smallest first.
        let mut lists: Vec<Postings> = Vec::with_capacity(8);
        if let Some(ind) = &filter.industry {
            match self.industry_list(ind.as_str()) {
                Some(p) => lists.push(p),
                None => return empty,
            }
        }
        let attr = |k: usize| Postings::read(self.sec(Section::AttrLists), k);
        match filter.exchange {
            Some(Exchange::Bse) => lists.push(attr(0)),
            Some(Exchange::Nse) => lists.push(attr(1)),
            None => {}
        }
        if let Some(b) = filter.market_cap {
            lists.push(attr(2 + BANDS.iter().position(|&x| x == b).expect("three bands")));
        }
        // By day, the status of that day (see `walk_on`); else today's,
        // whose list is left out when every row is in it.
        if let (None, StatusFilter::Only(s)) = (day, filter.status) {
            let list = attr(5 + status_index(s) as usize);
            if list.len as usize != self.len() {
                lists.push(list);
            }
        }
        let term = filter.search.as_ref().map(|s| s.as_str());
        if let Some(term) = term {
            let chars: Vec<char> = term.chars().collect();
            let keys = if chars.len() == 2 {
                vec![bigram(chars[0], chars[1])]
            } else {
                chars.windows(3).map(|w| trigram(w[0], w[1], w[2])).collect()
            };
            let mut grams: Vec<Postings> = Vec::with_capacity(keys.len());
            for g in keys {
                match self.gram_list(g) {
                    Some(p) => grams.push(p),
                    None => return empty,
                }
            }
            // A few of the rarest grams narrow enough; the substring test decides.
            grams.sort_by_key(|p| p.len);
            grams.dedup_by_key(|p| (p.start, p.bitmap));
            lists.extend(grams.into_iter().take(3));
        }
        lists.sort_by_key(|p| p.len);
        let mut seekers: Vec<Seeker<'_>> = lists.iter().map(|p| self.seeker(p)).collect();

        let mut rows = Vec::with_capacity(limit.min(256));
        let mut more = false;
        // Tickers are printable ASCII without spaces: other terms cannot match one.
        let ticker_term = term.is_some_and(|t| t.bytes().all(|b| b.is_ascii_graphic()));
        let finder = Finder::new(term.unwrap_or_default().as_bytes());
        // The term's four-character grams: a candidate whose signature lacks
        // one of their bits cannot match, and is dropped with one sequential
        // read instead of a verification's random ones.
        let wanted = term.map_or(0, |t| signature(t.chars()));
        let sigs = self.sec(Section::Signatures);
        let verify = |i: usize| match term {
            Some(t) => {
                // Each check reads a random row: a few cache misses, the cost
                // of a verification. The ticker is read only when it could match.
                let name = self.bytes(Section::NameOff, Section::Names, i);
                let in_name = if name.is_ascii() {
                    t.is_ascii() && ascii_contains(name, &finder)
                } else {
                    fold(std::str::from_utf8(name).unwrap_or_default()).contains(t)
                };
                in_name || ticker_term && ascii_contains(self.ticker_bytes(i), &finder)
            }
            None => true,
        };
        // Candidates come in batches. A search touches every candidate's name
        // before verifying any, so the batch's cache misses overlap instead
        // of being paid one after another; without a search every candidate
        // matches, and one batch holds the page plus the row that says more.
        let batch_size = if term.is_some() { SEARCH_BATCH } else { limit + 1 };
        let mut batch: Vec<u32> = Vec::with_capacity(batch_size);
        let (mut x, hi) = (start as u32, hi as u32);
        let mut exhausted = false;
        while !exhausted && !more {
            batch.clear();
            while batch.len() < batch_size {
                match leapfrog(&mut seekers, x, hi) {
                    Some(c) => {
                        if (wanted == 0 || u64_at(sigs, 8 * c as usize) & wanted == wanted)
                            && day.is_none_or(|d| self.current_on(c as usize, d))
                        {
                            batch.push(c);
                        }
                        x = c + 1;
                    }
                    None => {
                        exhausted = true;
                        break;
                    }
                }
            }
            if term.is_some() {
                self.touch_names(&batch);
            }
            for &c in &batch {
                if verify(c as usize) {
                    rows.push(c);
                    if rows.len() > limit {
                        more = true;
                        break;
                    }
                }
            }
        }
        rows
    }

    /// Reads each row's name offset, then its name's first byte: independent
    /// loads, so their cache misses overlap (a software prefetch).
    fn touch_names(&self, rows: &[u32]) {
        let (o, t) = (self.sec(Section::NameOff), self.sec(Section::Names));
        let mut offsets = [0u32; SEARCH_BATCH];
        for (slot, &r) in offsets.iter_mut().zip(rows) {
            *slot = u32_at(o, 4 * r as usize);
        }
        let touched = offsets[..rows.len().min(SEARCH_BATCH)]
            .iter()
            .fold(0u8, |acc, &a| acc ^ t.get(a as usize).copied().unwrap_or(0));
        std::hint::black_box(touched);
    }

    /// The first row for which `before(ticker, isin)` is false (`before`
    /// must hold for a prefix of the rows).
    fn partition(&self, before: impl Fn(&[u8], &[u8]) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if before(self.ticker_bytes(mid), self.isin_bytes(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The index range that can hold matches: the rows of one ticker, or of
    /// one first letter, are contiguous in this order.
    fn range(&self, filter: &CompanyFilter) -> (usize, usize) {
        let (mut lo, mut hi) = (0, self.len());
        if let Some(t) = &filter.ticker {
            let t = t.as_str().as_bytes();
            lo = self.partition(|r, _| r < t);
            hi = self.partition(|r, _| r <= t);
        }
        if let Some(l) = filter.letter {
            let b = l.as_char() as u8;
            let first = |r: &[u8]| r.first().copied().unwrap_or(0);
            lo = lo.max(self.partition(|r, _| first(r) < b));
            hi = hi.min(self.partition(|r, _| first(r) <= b));
        }
        (lo, hi.max(lo))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mds_domain::{Exchange, Isin, Letter, MarketCapBand, SearchTerm, Ticker};

    /// Valid ISINs with distinct check digits, made with the `isin` crate's rule.
    const ISINS: &[&str] = &[
        "INE117A01022",
        "INE208C01025",
        "INE144J01027",
        "INE239A01024",
        "INE002A01018",
        "INE009A01021",
        "INE040A01034",
        "INE062A01020",
    ];

    fn company(isin: &str, ticker: &str, name: &str, bse: bool, band: Option<MarketCapBand>) -> Company {
        Company {
            isin: Isin::parse(isin).unwrap(),
            ticker: Ticker::parse(ticker).unwrap(),
            name: name.into(),
            industry: Some(if bse { "Banks".into() } else { "Software".into() }),
            sector: None,
            is_bse: bse,
            is_nse: !bse,
            market_cap_band: band,
            logo_url: None,
            details: Default::default(),
        }
    }

    fn sample() -> Catalog {
        Catalog::new(vec![
            company(ISINS[0], "ZETA", "Zeta Ltd", true, None),
            company(ISINS[1], "ABB", "ABB India", true, Some(MarketCapBand::Large)),
            company(ISINS[2], "20MICRONS", "20 Microns", false, Some(MarketCapBand::Small)),
            company(ISINS[3], "NESTLEIND", "Nestlé India", true, Some(MarketCapBand::Large)),
            company(ISINS[4], "DUP", "Dup One", false, None),
            company(ISINS[5], "DUP", "Dup Two", true, None),
            company(ISINS[6], "ABBOTINDIA", "Abbott India", false, Some(MarketCapBand::Mid)),
        ])
    }

    fn tickers(p: &ListRows<'_>) -> Vec<String> {
        p.json_rows()
            .iter()
            .map(|j| serde_json::from_str::<serde_json::Value>(j).unwrap()["ticker"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn walks_in_ticker_then_isin_order() {
        let c = sample();
        let mut all = vec![];
        let mut after = None;
        loop {
            let p = c.page(&CompanyFilter::default(), after.as_ref(), 2);
            all.extend(tickers(&p));
            match p.next {
                Some(k) => after = Some(k),
                None => break,
            }
        }
        assert_eq!(all, ["20MICRONS", "ABB", "ABBOTINDIA", "DUP", "DUP", "NESTLEIND", "ZETA"]);
    }

    #[test]
    fn filters_combine_with_and() {
        let c = sample();
        let f = CompanyFilter {
            letter: Some(Letter::parse("a").unwrap()),
            exchange: Some(Exchange::Nse),
            ..Default::default()
        };
        assert_eq!(tickers(&c.page(&f, None, 50)), ["ABBOTINDIA"]);
        let f = CompanyFilter { ticker: Some(Ticker::parse("dup").unwrap()), ..Default::default() };
        let p = c.page(&f, None, 1);
        assert_eq!(tickers(&p), ["DUP"]);
        assert!(p.has_more());
        let p2 = c.page(&f, p.next.as_ref(), 1);
        assert_eq!(tickers(&p2), ["DUP"]);
        assert!(!p2.has_more());
        let f = CompanyFilter { search: Some(SearchTerm::parse("NESTLÉ").unwrap()), ..Default::default() };
        assert_eq!(tickers(&c.page(&f, None, 50)), ["NESTLEIND"]);
        let f = CompanyFilter { letter: Some(Letter::parse("2").unwrap()), ..Default::default() };
        assert_eq!(tickers(&c.page(&f, None, 50)), ["20MICRONS"]);
        let f = CompanyFilter { industry: mds_domain::Industry::parse("Nope").ok(), ..Default::default() };
        assert!(c.page(&f, None, 50).is_empty());
    }

    #[test]
    fn exact_final_page_has_no_more() {
        let c = sample();
        let p = c.page(&CompanyFilter::default(), None, 7);
        assert_eq!(p.len(), 7);
        assert!(!p.has_more());
    }

    #[test]
    fn cursor_after_a_deleted_row_still_continues() {
        let c = sample();
        let gone = SortKey { ticker: "ABBA".into(), isin: "INE000000000".into() };
        assert_eq!(tickers(&c.page(&CompanyFilter::default(), Some(&gone), 1)), ["ABBOTINDIA"]);
    }
}
