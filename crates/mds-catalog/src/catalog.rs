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
//! substring test. A ranked search whose term begins a word of enough rows
//! reads those rows from the word starts instead ([`crate::starts`]). The
//! JSON of a row is written when the page is: field
//! names are constants, values are copied from the arenas (escaped only when
//! they hold a character JSON must escape).

use mds_domain::{
    Company, CompanyFilter, CompanySort, CompanyStatus, Exchange, Isin, MarketCapBand, StatusFilter, Ticker,
};

use crate::build::{CatalogBuilder, ChangeStamp, status_index};
use crate::grams::{bigram, signature, trigram};
use crate::history::day16;
use crate::layout::{CatalogSnapshotError, Layout, SECTION_NAMES, SECTIONS, Section, flag, id_at};
use crate::postings::{ListSeeker, Postings, Seeker, u32_at, u64_at};
use crate::rank::{self, Found, Term};
use crate::starts::Starts;

/// The position of an entry in a list's order: `(ticker, isin)`, or in the
/// relevance order of a search `(rank, ticker, isin)`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SortKey {
    /// Ticker (upper-case).
    pub ticker: String,
    /// ISIN.
    pub isin: String,
    /// In the relevance order, what comes before the ticker: the match's
    /// tier, whether inactive, the market-cap key (see `rank::upper`);
    /// `None` in ticker order.
    pub rank: Option<u64>,
}

impl SortKey {
    /// The key of `(ticker, isin)` in ticker order.
    pub fn new(ticker: impl Into<String>, isin: impl Into<String>) -> Self {
        SortKey { ticker: ticker.into(), isin: isin.into(), rank: None }
    }
}

/// Every company, sorted by `(ticker, isin)`: one buffer and where its
/// sections are.
#[derive(Debug)]
pub struct Catalog {
    buf: Vec<u8>,
    layout: Layout,
    /// Per block of [`FLOOR_BLOCK`] rows, the least relevance key (upper
    /// part, `rank::upper`) a row of that block or a later one can have
    /// without an exact ticker match: what lets a ranked search stop
    /// once its page cannot change. Derived from the buffer when the
    /// catalog is opened; not part of the snapshot.
    floors: Vec<u64>,
    /// The word starts a ranked page reads first ([`crate::starts`]).
    /// Derived from the buffer on first use or by
    /// [`Catalog::prepare_search`] (a node, when it opens the catalog; an
    /// import, which only saves the snapshot, never); not part of the
    /// snapshot.
    starts: std::sync::OnceLock<Starts>,
}

/// Rows per entry of [`Catalog`]'s floors.
const FLOOR_BLOCK: usize = 64;

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
    /// For a search, what each row matched (`rank::Found`), else empty.
    pub(crate) found: Vec<u32>,
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
    /// A search's rows carry `match` (contract section 15).
    pub fn write_rows(&self, out: &mut Vec<u8>) {
        // A `match` adds its fixed text and (most often) the name.
        let matched = |k: usize, r: u32| match self.found.get(k) {
            Some(_) if r & VERSION_BIT == 0 => 48 + self.catalog.name_bytes(r as usize).len(),
            Some(_) => 48,
            None => 0,
        };
        out.reserve(self.rows.iter().enumerate().map(|(k, &r)| self.catalog.entry_size(r) + matched(k, r)).sum());
        for (k, &r) in self.rows.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            self.catalog.write_entry(r, self.found.get(k).map(|&f| Found(f)), out);
        }
    }

    /// Each row's JSON, as a string (for tests and tools).
    pub fn json_rows(&self) -> Vec<String> {
        self.rows
            .iter()
            .enumerate()
            .map(|(k, &r)| {
                let mut out = Vec::new();
                self.catalog.write_entry(r, self.found.get(k).map(|&f| Found(f)), &mut out);
                String::from_utf8(out).expect("the catalog writes UTF-8")
            })
            .collect()
    }
}

/// A match found for a search, with the key that orders it: `(upper key,
/// entry, found)` (see `rank`).
type Ranked = (u64, u32, u32);

thread_local! {
    /// The matches a relevance page ranks, kept per thread between
    /// requests (no allocation per request once grown; shrunk back after
    /// a search that matched very many rows).
    static RANKED: std::cell::RefCell<Vec<Ranked>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Matches a thread keeps room for between searches.
const RANKED_KEPT: usize = 1 << 16;

/// What a walk found: the entries in order (up to `limit + 1`), what each
/// matched (a search), and in the relevance order each one's upper key.
struct Walked {
    entries: Vec<u32>,
    found: Vec<u32>,
    ranks: Vec<u64>,
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

/// What a scan does with a candidate, decided before its name is read.
enum Sift {
    /// Verify it.
    Verify,
    /// Pass it over.
    Skip,
    /// Pass over it and every row before this one (past the scanned
    /// range: end the scan).
    From(u32),
}

/// Search candidates verified together (see [`Catalog::touch_names`]).
const SEARCH_BATCH: usize = 32;

/// The most word starts a ranked page reads to be made from them alone
/// (see [`Catalog::ranked_from_starts`]): a term that begins more words
/// (`ltd`, `india`) is made by the scan, whose floors end it early.
const STARTS_MAX: usize = 4096;

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
    pub fn from_bytes(buf: Vec<u8>) -> Result<Self, CatalogSnapshotError> {
        let layout = Layout::parse(&buf)?;
        let mut catalog = Catalog { buf, layout, floors: Vec::new(), starts: std::sync::OnceLock::new() };
        catalog.floors = catalog.least_keys();
        Ok(catalog)
    }

    /// The catalog's floors (see the field): a row's least key is its
    /// status and market cap at tier 1 if it has aliases (an exact former
    /// ticker), else at tier 2 (tier 0 is an exact ticker, which a ranked
    /// search finds by the rows' order instead); each block's floor is the
    /// least of its rows' and the later blocks' floors.
    fn least_keys(&self) -> Vec<u64> {
        let least = |i: usize| rank::upper(if self.has_aliases(i) { 1 } else { 2 }, self.inactive(i), self.mcap_key(i));
        let mut floors: Vec<u64> = (0..self.len().div_ceil(FLOOR_BLOCK))
            .map(|b| (b * FLOOR_BLOCK..((b + 1) * FLOOR_BLOCK).min(self.len())).map(least).min().unwrap_or(u64::MAX))
            .collect();
        for b in (1..floors.len()).rev() {
            floors[b - 1] = floors[b - 1].min(floors[b]);
        }
        floors
    }

    /// The catalog's bytes: its snapshot.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Bytes held beside the snapshot's, derived from it (the floors, and
    /// the word starts once made).
    pub fn derived_bytes(&self) -> usize {
        self.floors.capacity() * 8 + self.starts.get().map_or(0, Starts::bytes)
    }

    /// Makes the word starts a ranked search reads (else made by the first
    /// one): what a node does when it opens a catalog, so that no request
    /// waits for them.
    pub fn prepare_search(&self) {
        self.starts();
    }

    /// The word starts ([`crate::starts`]), made on first use.
    pub(crate) fn starts(&self) -> &Starts {
        self.starts.get_or_init(|| Starts::of(self))
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

    pub(crate) fn industry(&self, i: usize) -> Option<&[u8]> {
        self.dict(Section::Industry, Section::IndustryNameOff, Section::IndustryNames, i)
    }

    pub(crate) fn sector(&self, i: usize) -> Option<&[u8]> {
        self.dict(Section::Sector, Section::SectorNameOff, Section::SectorNames, i)
    }

    /// An upper bound of row `i`'s JSON size when nothing needs escaping.
    pub(crate) fn row_size(&self, i: usize) -> usize {
        let o = |s: Section| u32_at(self.sec(s), 4 * i + 4) - u32_at(self.sec(s), 4 * i);
        200 + (o(Section::TickerOff) + o(Section::NameOff) + o(Section::LogoOff)) as usize
    }

    /// Writes a list entry: a row, or a version of one (its ticker and
    /// name of an `as_of` day, the rest today's); with `found`, its
    /// `match` last.
    fn write_entry(&self, e: u32, found: Option<Found>, out: &mut Vec<u8>) {
        let (row, ticker, name) = if e & VERSION_BIT == 0 {
            self.write_row_open(e as usize, out);
            (e as usize, self.ticker_bytes(e as usize), self.name_bytes(e as usize))
        } else {
            let v = self.version((e & !VERSION_BIT) as usize);
            self.write_row_as(v.row, v.ticker, v.name, out);
            (v.row, v.ticker, v.name)
        };
        if let Some(f) = found {
            let value = match f.field() {
                rank::FIELD_TICKER => ticker,
                rank::FIELD_NAME => name,
                _ => rank::alias_at(self.aliases(row), f.alias()).map_or(&[][..], |(_, text)| text),
            };
            out.extend_from_slice(b",\"match\":{\"field\":\"");
            out.extend_from_slice(f.field_name());
            out.extend_from_slice(b"\",\"value\":");
            json_str(out, value, !crate::wire::needs_escape(value));
            out.push(b'}');
        }
        out.push(b'}');
    }

    /// Row `i`'s name, as bytes.
    pub(crate) fn name_bytes(&self, i: usize) -> &[u8] {
        self.bytes(Section::NameOff, Section::Names, i)
    }

    /// Row `i`'s aliases' bytes (see `rank`).
    pub(crate) fn aliases(&self, i: usize) -> &[u8] {
        self.bytes(Section::AliasOff, Section::Aliases, i)
    }

    /// Whether row `i` has aliases (former tickers or names a search
    /// matches).
    fn has_aliases(&self, i: usize) -> bool {
        let off = self.sec(Section::AliasOff);
        u32_at(off, 4 * i) != u32_at(off, 4 * i + 4)
    }

    /// Whether row `i` is inactive (superseded or delisted), from its flags.
    fn inactive(&self, i: usize) -> bool {
        self.flags(i) >> flag::STATUS_SHIFT != 0
    }

    /// Row `i`'s market-cap key (see `rank::mcap_key`).
    fn mcap_key(&self, i: usize) -> u32 {
        u32_at(self.sec(Section::McapKeys), 4 * i)
    }

    /// The upper part of row `i`'s relevance key for a match of `tier`.
    pub(crate) fn upper_of(&self, i: usize, tier: u32) -> u64 {
        rank::upper(tier, self.inactive(i), self.mcap_key(i))
    }

    /// The text of row `i`'s `field` (a `rank::FIELD_*`; for a former one,
    /// its `alias`-th alias's).
    pub(crate) fn field_text(&self, i: usize, field: u32, alias: usize) -> &[u8] {
        match field {
            rank::FIELD_TICKER => self.ticker_bytes(i),
            rank::FIELD_NAME => self.name_bytes(i),
            _ => rank::alias_at(self.aliases(i), alias).map_or(&[][..], |(_, text)| text),
        }
    }

    /// What the term matched in row `i`: its ticker or name, or, with
    /// `aliases`, a former one.
    fn match_row(&self, i: u32, term: &Term<'_>, aliases: bool) -> Option<Found> {
        let i = i as usize;
        let current = term.current(self.ticker_bytes(i), self.name_bytes(i));
        if !aliases || current.is_some_and(|f| f.tier() == 0) {
            return current;
        }
        match self.aliases(i) {
            [] => current,
            a => term.former(a, current),
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

    /// Writes row `i` as `V1Company` JSON (field order and form as
    /// `serde_json`), without the closing brace.
    pub(crate) fn write_row_open(&self, i: usize, out: &mut Vec<u8>) {
        let plain = self.flags(i) & flag::ESCAPE == 0;
        self.write_fields(i, self.ticker_bytes(i), self.bytes(Section::NameOff, Section::Names, i), plain, out);
    }

    /// Writes row `i` without the closing brace, with `ticker` and `name`
    /// (those of another day) for its own.
    pub(crate) fn write_row_as(&self, i: usize, ticker: &[u8], name: &[u8], out: &mut Vec<u8>) {
        let plain =
            self.flags(i) & flag::ESCAPE == 0 && !crate::wire::needs_escape(ticker) && !crate::wire::needs_escape(name);
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

    /// The industries the catalog's rows carry, in name order (byte order).
    pub fn industry_names(&self) -> impl Iterator<Item = &str> + '_ {
        let count = self.sec(Section::IndustryNameOff).len() / 4 - 1;
        (0..count).map(|k| self.text(Section::IndustryNameOff, Section::IndustryNames, k))
    }

    /// Whether a row carries the industry `name` (exactly).
    pub fn has_industry(&self, name: &str) -> bool {
        self.industry_index(name).is_some()
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
    /// A search is in the order `filter.order()` says: by relevance
    /// (contract section 15) or by ticker.
    pub fn page(&self, filter: &CompanyFilter, after: Option<&SortKey>, limit: usize) -> ListRows<'_> {
        let day = filter.as_of.map(day16);
        let walked = match (filter.as_of, &filter.search) {
            // Whoever was listed that day was active that day.
            (Some(_), _) if !filter.status.admits(CompanyStatus::Active) => {
                Walked { entries: Vec::new(), found: Vec::new(), ranks: Vec::new() }
            }
            (_, Some(term)) if filter.order() == CompanySort::Relevance => {
                self.ranked(filter, &Term::new(term.as_str()), after, limit, day)
            }
            (None, _) => self.walk(filter, after, limit, None),
            (Some(_), _) => self.walk_on(filter, day.unwrap_or_default(), after, limit),
        };
        self.list_rows(walked, limit)
    }

    /// The page of a walk's entries (up to `limit + 1` in order, the last
    /// one saying more follow).
    fn list_rows(&self, walked: Walked, limit: usize) -> ListRows<'_> {
        let Walked { mut entries, mut found, ranks } = walked;
        let more = entries.len() > limit;
        entries.truncate(limit);
        found.truncate(limit);
        let next = match (more, entries.last()) {
            (true, Some(&e)) => {
                let (t, i) = self.entry_key(e);
                Some(SortKey {
                    ticker: String::from_utf8_lossy(t).into_owned(),
                    isin: String::from_utf8_lossy(i).into_owned(),
                    rank: ranks.get(entries.len() - 1).copied(),
                })
            }
            _ => None,
        };
        ListRows { catalog: self, rows: entries, found, next }
    }

    /// The entries of the master on `day` matching `filter` after `after`,
    /// up to `limit + 1`, in ticker order: the rows listed then as they
    /// are today, merged with the versions (other tickers or names) that
    /// held then.
    fn walk_on(&self, filter: &CompanyFilter, d: u16, after: Option<&SortKey>, limit: usize) -> Walked {
        let rows = self.walk(filter, after, limit, Some(d));
        let versions = self.versions_on(filter, d, after, limit + 1);
        if versions.is_empty() {
            return rows;
        }
        let search = filter.search.is_some();
        let mut out = Walked { entries: Vec::with_capacity(limit + 1), found: Vec::new(), ranks: Vec::new() };
        let mut a = rows.entries.iter().copied().zip(rows.found.iter().copied().chain(std::iter::repeat(0))).peekable();
        let mut b = versions.into_iter().peekable();
        while out.entries.len() <= limit {
            let next = match (a.peek(), b.peek()) {
                (Some(&x), Some(&y)) => {
                    if self.entry_key(x.0) <= self.entry_key(y.0) {
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
                Some((e, f)) => {
                    out.entries.push(e);
                    if search {
                        out.found.push(f);
                    }
                }
                None => break,
            }
        }
        out
    }

    /// Up to `take` versions (as entries, each with what a search matched
    /// in it) that held on `day` and match `filter`, after `after`, in
    /// list order: a scan of the versions in the ticker range the filters
    /// allow.
    fn versions_on(&self, filter: &CompanyFilter, day: u16, after: Option<&SortKey>, take: usize) -> Vec<(u32, u32)> {
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
        let term = filter.search.as_ref().map(|s| Term::new(s.as_str()));
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
                && filter.market_cap.is_none_or(|b| self.band(v.row) == Some(b));
            if !ok {
                continue;
            }
            match &term {
                None => out.push((k as u32 | VERSION_BIT, 0)),
                Some(t) => {
                    if let Some(found) = t.current(v.ticker, v.name) {
                        out.push((k as u32 | VERSION_BIT, found.0));
                    }
                }
            }
        }
        out
    }

    /// The rows matching `filter` (and, with `day`, listed as they are
    /// today on that `u16` day) after `after`, up to `limit + 1`, in
    /// ticker order.
    fn walk(&self, filter: &CompanyFilter, after: Option<&SortKey>, limit: usize, day: Option<u16>) -> Walked {
        let (lo, hi) = self.range(filter);
        let start = match after {
            Some(k) => lo.max(self.partition(|t, i| (t, i) <= (k.ticker.as_bytes(), k.isin.as_bytes()))),
            None => lo,
        };
        let term = filter.search.as_ref().map(|s| Term::new(s.as_str()));
        let mut out = Walked { entries: Vec::with_capacity(limit.min(256) + 1), found: Vec::new(), ranks: Vec::new() };
        // Without a search every candidate matches, and one batch holds the
        // page plus the row that says more.
        let batch = if term.is_some() { SEARCH_BATCH } else { limit + 1 };
        self.scan(
            filter,
            start..hi,
            day,
            batch,
            |_| Sift::Verify,
            |c| {
                match &term {
                    None => out.entries.push(c),
                    Some(t) => {
                        if let Some(f) = self.match_row(c, t, day.is_none()) {
                            out.entries.push(c);
                            out.found.push(f.0);
                        }
                    }
                }
                out.entries.len() <= limit
            },
        );
        out
    }

    /// The entries matching `filter`'s search `term` after `after`, up
    /// to `limit + 1`, by relevance (contract section 15): ordered by
    /// `(upper key, ticker, isin)` (`rank::upper`), the first `limit + 1`
    /// after the cursor's. Every candidate is seen (the order is not the
    /// rows'), but only those that could still make the page are verified.
    /// With `day`, the rows and versions listed then, matched by their
    /// values of that day only, every match ranked.
    fn ranked(
        &self,
        filter: &CompanyFilter,
        term: &Term<'_>,
        after: Option<&SortKey>,
        limit: usize,
        day: Option<u16>,
    ) -> Walked {
        let (lo, hi) = self.range(filter);
        // Rows are in (ticker, isin) order: a row is after the cursor's
        // (ticker, isin) when its index is at least `pos`.
        let cursor = after.map(|k| {
            let pos = self.partition(|t, i| (t, i) <= (k.ticker.as_bytes(), k.isin.as_bytes())) as u32;
            (k.rank.unwrap_or(0), pos, k)
        });
        let past = |key: u64, e: u32| match cursor {
            None => true,
            Some((rank, pos, _)) if e & VERSION_BIT == 0 => (key, e) >= (rank, pos),
            Some((rank, _, k)) => (key, self.entry_key(e)) > (rank, (k.ticker.as_bytes(), k.isin.as_bytes())),
        };
        // Rows compare by index, versions by their (ticker, isin): the
        // same order, as rows are laid out in it.
        let order = |a: &Ranked, b: &Ranked| {
            a.0.cmp(&b.0).then_with(|| {
                if (a.1 | b.1) & VERSION_BIT == 0 {
                    a.1.cmp(&b.1)
                } else {
                    self.entry_key(a.1).cmp(&self.entry_key(b.1))
                }
            })
        };
        RANKED.with(|cell| {
            let mut all = cell.borrow_mut();
            all.clear();
            if day.is_none() && self.ranked_from_starts(filter, term, &past, limit, &mut all) {
                // Made of the rows the term begins a word of (see `starts`).
            } else if day.is_none() {
                // Rows only, ordered by `(upper key, row)`: the best
                // `limit + 1` so far are kept in a max-heap, and a
                // candidate whose key cannot beat the worst of them (its
                // tier at best, with its status and market cap: read
                // without touching its name) is not verified. Once the
                // heap holds good matches, most candidates are dropped so.
                let cap = limit + 1;
                let mut heap = std::collections::BinaryHeap::from(std::mem::take(&mut *all));
                let worst = std::cell::Cell::new((u64::MAX, u32::MAX));
                let best_tier = |i: usize| {
                    if term.ticker_like && self.ticker_bytes(i).len() == term.text.len() {
                        0
                    } else if term.ticker_like && self.has_aliases(i) {
                        1
                    } else {
                        2
                    }
                };
                // Whether row `i`'s best possible key beats the page's last.
                let could_beat =
                    |i: usize| (rank::upper(best_tier(i), self.inactive(i), self.mcap_key(i)), i as u32) < worst.get();
                // The rows an exact ticker match (tier 0) can be in.
                let exact = if term.ticker_like {
                    let t = term.text.to_ascii_uppercase();
                    let t = t.as_bytes();
                    (self.partition(|r, _| r < t) as u32, self.partition(|r, _| r <= t) as u32)
                } else {
                    (0, 0)
                };
                let keep = |c: u32| {
                    let i = c as usize;
                    // Once the page is full, a later row (these are in row
                    // order) makes it only with a key below its last one's:
                    // when no row from here on can (the floors), only the
                    // exact tickers are left to see.
                    let (last, _) = worst.get();
                    if last <= self.floors[i / FLOOR_BLOCK] && !(exact.0..exact.1).contains(&c) {
                        return Sift::From(if c < exact.0 { exact.0 } else { u32::MAX });
                    }
                    let (status, mcap) = (self.inactive(i), self.mcap_key(i));
                    // Before the cursor whatever it matched: the worst tier.
                    let at_worst = rank::upper(5, status, mcap);
                    let verify = could_beat(i) && cursor.is_none_or(|(rank, pos, _)| (at_worst, c) >= (rank, pos));
                    if verify { Sift::Verify } else { Sift::Skip }
                };
                self.scan(filter, lo..hi, None, SEARCH_BATCH, keep, |c| {
                    // Asked again: the page may have filled since the
                    // candidate's batch was gathered.
                    if !could_beat(c as usize) {
                        return true;
                    }
                    if let Some(f) = self.match_row(c, term, true) {
                        let i = c as usize;
                        let key = rank::upper(f.tier(), self.inactive(i), self.mcap_key(i));
                        if past(key, c) && (key, c) < worst.get() {
                            if heap.len() == cap {
                                heap.pop();
                            }
                            heap.push((key, c, f.0));
                            if heap.len() == cap {
                                let &(k, r, _) = heap.peek().expect("full");
                                worst.set((k, r));
                            }
                        }
                    }
                    true
                });
                *all = heap.into_vec();
            } else {
                self.scan(
                    filter,
                    lo..hi,
                    day,
                    SEARCH_BATCH,
                    |_| Sift::Verify,
                    |c| {
                        if let Some(f) = self.match_row(c, term, false) {
                            let key = rank::upper(f.tier(), false, self.mcap_key(c as usize));
                            if past(key, c) {
                                all.push((key, c, f.0));
                            }
                        }
                        true
                    },
                );
            }
            if let Some(d) = day {
                for (e, f) in self.versions_on(filter, d, None, usize::MAX) {
                    let row = self.version((e & !VERSION_BIT) as usize).row;
                    let key = rank::upper(Found(f).tier(), false, self.mcap_key(row));
                    if past(key, e) {
                        all.push((key, e, f));
                    }
                }
            }
            if all.len() > limit + 1 {
                all.select_nth_unstable_by(limit, order);
                all.truncate(limit + 1);
            }
            all.sort_unstable_by(order);
            let out = Walked {
                entries: all.iter().map(|r| r.1).collect(),
                found: all.iter().map(|r| r.2).collect(),
                ranks: all.iter().map(|r| r.0).collect(),
            };
            if all.capacity() > RANKED_KEPT {
                all.clear();
                all.shrink_to(RANKED_KEPT);
            }
            out
        })
    }

    /// The candidates of a ranked page (today's rows; `past` says which
    /// are after the cursor) when the rows whose word the term begins
    /// (tiers 0 to 3) fill it: those rows, each with its best match, in
    /// `out`, and true. False, with `out` empty, when they are too many
    /// to read at once ([`STARTS_MAX`]) or too few to fill the page, which
    /// the scan then makes.
    fn ranked_from_starts(
        &self,
        filter: &CompanyFilter,
        term: &Term<'_>,
        past: &impl Fn(u64, u32) -> bool,
        limit: usize,
        out: &mut Vec<Ranked>,
    ) -> bool {
        #[cfg(test)]
        if crate::starts::SCAN_ONLY.with(std::cell::Cell::get) {
            return false;
        }
        let industry = match &filter.industry {
            Some(name) => match self.industry_index(name.as_str()) {
                Some(k) => Some(k as u32 + 1),
                None => return false,
            },
            None => None,
        };
        let (lo, hi) = self.range(filter);
        // The filters the scan's lists apply, row by row.
        let keep = |r: u32| {
            let i = r as usize;
            let f = self.flags(i);
            (lo..hi).contains(&i)
                && match filter.exchange {
                    Some(Exchange::Bse) => f & flag::BSE != 0,
                    Some(Exchange::Nse) => f & flag::NSE != 0,
                    None => true,
                }
                && filter.market_cap.is_none_or(|b| self.band(i) == Some(b))
                && match filter.status {
                    StatusFilter::Only(s) => f >> flag::STATUS_SHIFT == status_index(s),
                    StatusFilter::Any => true,
                }
                && industry.is_none_or(|id| self.industry_id(i) == id)
        };
        debug_assert!(out.is_empty(), "a page's candidates start from none");
        if !self.starts().hits(self, term, STARTS_MAX, keep, |r| self.match_row(r, term, true), out) {
            return false;
        }
        let full = crate::starts::best_rows(out, limit + 1, past);
        if !full {
            out.clear();
        }
        full
    }

    /// Tests: whether the first ranked page of `filter` is made from the
    /// word starts.
    #[cfg(test)]
    pub(crate) fn made_from_starts(&self, filter: &CompanyFilter, limit: usize) -> bool {
        let Some(term) = &filter.search else { return false };
        self.ranked_from_starts(filter, &Term::new(term.as_str()), &|_, _| true, limit, &mut Vec::new())
    }

    /// Calls `each` with every candidate row in `rows` that the
    /// filter's lists hold (and, with `day`, listed as it is today then)
    /// and `keep` keeps (a cheap test, before the row's name is touched;
    /// it may also skip rows ahead), in order, until it returns false. A
    /// search's candidates are those of a few of its rarest grams whose
    /// signature holds the term's bits: `each` verifies them.
    fn scan(
        &self,
        filter: &CompanyFilter,
        rows: std::ops::Range<usize>,
        day: Option<u16>,
        batch_size: usize,
        mut keep: impl FnMut(u32) -> Sift,
        mut each: impl FnMut(u32) -> bool,
    ) {
        let (start, hi) = (rows.start, rows.end);
        if start >= hi {
            return;
        }
        // The lists every match is in, smallest first.
        let mut lists: Vec<Postings> = Vec::with_capacity(8);
        if let Some(ind) = &filter.industry {
            match self.industry_list(ind.as_str()) {
                Some(p) => lists.push(p),
                None => return,
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
                    None => return,
                }
            }
            // A few of the rarest grams narrow enough; the substring test decides.
            grams.sort_by_key(|p| p.len);
            grams.dedup_by_key(|p| (p.start, p.bitmap));
            lists.extend(grams.into_iter().take(3));
        }
        lists.sort_by_key(|p| p.len);
        let mut seekers: Vec<Seeker<'_>> = lists.iter().map(|p| self.seeker(p)).collect();

        // The term's four-character grams: a candidate whose signature lacks
        // one of their bits cannot match, and is dropped with one sequential
        // read instead of a verification's random ones.
        let wanted = term.map_or(0, |t| signature(t.chars()));
        let sigs = self.sec(Section::Signatures);
        // Candidates come in batches. A search touches every candidate's name
        // before verifying any, so the batch's cache misses overlap instead
        // of being paid one after another.
        let mut batch: Vec<u32> = Vec::with_capacity(batch_size);
        let (mut x, hi) = (start as u32, hi as u32);
        loop {
            batch.clear();
            let mut exhausted = false;
            while batch.len() < batch_size {
                match leapfrog(&mut seekers, x, hi) {
                    Some(c) => {
                        x = c + 1;
                        if (wanted == 0 || u64_at(sigs, 8 * c as usize) & wanted == wanted)
                            && day.is_none_or(|d| self.current_on(c as usize, d))
                        {
                            match keep(c) {
                                Sift::Verify => batch.push(c),
                                Sift::Skip => {}
                                Sift::From(y) => x = y.max(x),
                            }
                        }
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
                if !each(c) {
                    return;
                }
            }
            if exhausted {
                return;
            }
        }
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

    /// A ranked search stops reading rows once its page cannot change
    /// (every later row's best key is no better than its last), but not
    /// before the rows that can still beat it however late they come: an
    /// exact ticker (tier 0) and an exact former ticker (tier 1), after
    /// hundreds of name matches (tier 2) that fill the page.
    #[test]
    fn a_ranked_search_still_sees_the_late_rows_that_beat_a_full_page() {
        use mds_domain::{IdentityChange, IdentityEvent};
        use mds_testkit::fixtures::{bare_company, isin_of};
        // In row order: A000-A299, AETERNAL (formerly ZOMATO), B000-B199,
        // ZOMATO; every A and B row is a name match.
        let mut rows: Vec<(ChangeStamp, Company)> = (0..500)
            .map(|k| {
                let ticker = if k < 300 { format!("A{k:03}") } else { format!("B{:03}", k - 300) };
                let c = Company { name: format!("Zomato Foods {k}"), ..bare_company(isin_of(k), &ticker) };
                (ChangeStamp::default(), c)
            })
            .collect();
        let renamed = isin_of(1000);
        rows.push((ChangeStamp::default(), bare_company(isin_of(1001), "ZOMATO")));
        rows.push((ChangeStamp::default(), bare_company(renamed.clone(), "AETERNAL")));
        let day = chrono::NaiveDate::from_ymd_opt(2025, 3, 20).unwrap();
        let change = IdentityChange::SymbolChanged {
            exchange: Exchange::Nse,
            from: Ticker::parse("ZOMATO").unwrap(),
            to: Ticker::parse("AETERNAL").unwrap(),
        };
        let events = vec![(renamed, IdentityEvent { date: day, exact: true, observed_between: None, change })];
        let c = Catalog::from_stamped_with_history(rows, events);
        let f = CompanyFilter { search: Some(SearchTerm::parse("zomato").unwrap()), ..Default::default() };
        let page = c.page(&f, None, 3);
        let tickers: Vec<&str> = page.rows.iter().map(|&r| c.ticker(r as usize)).collect();
        assert_eq!(tickers, ["ZOMATO", "AETERNAL", "A000"]);
        let fields: Vec<u32> = page.found.iter().map(|&f| Found(f).field()).collect();
        assert_eq!(fields, [rank::FIELD_TICKER, rank::FIELD_FORMER_TICKER, rank::FIELD_NAME]);
        // The next page goes on with the name matches.
        let next = c.page(&f, page.next.as_ref(), 3);
        let tickers: Vec<&str> = next.rows.iter().map(|&r| c.ticker(r as usize)).collect();
        assert_eq!(tickers, ["A001", "A002", "A003"]);
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
        let gone = SortKey::new("ABBA", "INE000000000");
        assert_eq!(tickers(&c.page(&CompanyFilter::default(), Some(&gone), 1)), ["ABBOTINDIA"]);
    }
}
