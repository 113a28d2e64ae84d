//! [`CatalogBuilder`]: takes companies one at a time in `(ticker, isin)`
//! order (as the store streams them) and lays out the catalog's buffer:
//! the row fields in arenas, the industry and sector dictionaries, and the
//! posting lists (counted in one pass over the rows' grams, filled in a
//! second, then compressed).

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use mds_domain::query::fold;
use mds_domain::{Company, CompanyStatus, IdentityEvent, Isin, MarketCapBand};

use crate::events::PackedEvents;
use crate::grams::{GramHasher, ascii_grams, grams_of, signature};
use crate::history::{self, HistorySections, RowFacts};
use crate::layout::{ATTR_LISTS, Section, Writer, flag, id_at};
use crate::postings::{Postings, encode};
use crate::rank;
use crate::tail::{self, Dictionaries, Reader};

/// A company arrived out of `(ticker, isin)` order (or twice).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("companies must come in strictly increasing (ticker, isin) order: {ticker} {isin} came after its successor")]
pub struct OrderError {
    /// The offending row's ticker.
    pub ticker: String,
    /// Its ISIN.
    pub isin: String,
}

/// A dictionary of names (industries or sectors) numbered as first seen.
#[derive(Default)]
struct Dictionary {
    ids: HashMap<String, u32>,
}

impl Dictionary {
    /// The name's id: 0 for none, else 1 + first-seen index.
    fn id(&mut self, name: Option<&str>) -> u32 {
        let Some(name) = name else { return 0 };
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.ids.len() as u32 + 1;
        self.ids.insert(name.to_owned(), id);
        id
    }

    /// Names in byte order, and each first-seen id's sorted id.
    fn sorted(self) -> (Arena, Vec<u32>) {
        let mut names: Vec<(String, u32)> = self.ids.into_iter().collect();
        names.sort_unstable();
        let mut remap = vec![0; names.len() + 1];
        let mut arena = Arena::with_capacity(names.len());
        for (sorted, (name, first_seen)) in names.iter().enumerate() {
            remap[*first_seen as usize] = sorted as u32 + 1;
            arena.push(name);
        }
        (arena, remap)
    }
}

/// A text arena: strings (or byte strings) back to back, and `u32` offsets
/// (n + 1 of them): two sections of a catalog, the offsets and the text.
#[derive(Default)]
struct Arena {
    off: Vec<u8>,
    text: Vec<u8>,
}

impl Arena {
    fn with_capacity(n: usize) -> Self {
        let mut off = Vec::with_capacity(4 * (n + 1));
        off.extend_from_slice(&0u32.to_le_bytes());
        Arena { off, text: Vec::new() }
    }

    fn push(&mut self, s: &str) {
        self.text.extend_from_slice(s.as_bytes());
        self.close();
    }

    /// Ends the entry whose bytes were written to `text` since the last one.
    fn close(&mut self) {
        self.off.extend_from_slice(&u32::try_from(self.text.len()).expect("an arena fits 4 GiB").to_le_bytes());
    }

    fn get(&self, i: usize) -> &str {
        ArenaRef { off: &self.off, text: &self.text }.get(i)
    }

    /// Puts the arena's two sections.
    fn put(self, w: &mut Writer, off: Section, text: Section) {
        w.put(off, self.off);
        w.put(text, self.text);
    }
}

/// An arena's two sections, read back from a [`Writer`].
#[derive(Clone, Copy)]
struct ArenaRef<'a> {
    off: &'a [u8],
    text: &'a [u8],
}

impl<'a> ArenaRef<'a> {
    fn of(w: &'a Writer, off: Section, text: Section) -> Self {
        ArenaRef { off: w.get(off), text: w.get(text) }
    }

    fn get(&self, i: usize) -> &'a str {
        let at = |k: usize| u32::from_le_bytes(self.off[4 * k..4 * k + 4].try_into().expect("4 bytes")) as usize;
        std::str::from_utf8(&self.text[at(i)..at(i + 1)]).expect("an arena holds whole strings")
    }
}

/// The rows' columns, laid out and read back, that the posting lists, the
/// change orders and the history are made of.
struct Rows<'a> {
    isins: &'a [u8],
    tickers: ArenaRef<'a>,
    names: ArenaRef<'a>,
    flags: &'a [u8],
    /// The sorted industry id per row, `id_width` bytes each.
    industry: &'a [u8],
    id_width: usize,
    /// Each row's aliases (offsets and bytes), once laid out.
    aliases: Option<(&'a [u8], &'a [u8])>,
    /// Each row's detail tail (offsets and bytes), once laid out.
    tails: Option<(&'a [u8], &'a [u8])>,
}

impl<'a> Rows<'a> {
    fn of(w: &'a Writer, id_width: usize) -> Self {
        Rows {
            isins: w.get(Section::Isins),
            tickers: ArenaRef::of(w, Section::TickerOff, Section::Tickers),
            names: ArenaRef::of(w, Section::NameOff, Section::Names),
            flags: w.get(Section::Flags),
            industry: w.get(Section::Industry),
            id_width,
            aliases: w.has(Section::Aliases).then(|| (w.get(Section::AliasOff), w.get(Section::Aliases))),
            tails: w.has(Section::Details).then(|| (w.get(Section::DetailOff), w.get(Section::Details))),
        }
    }

    /// Row `i`'s detail tail (empty before the tails are laid out).
    fn tail(&self, i: usize) -> &'a [u8] {
        let Some((off, bytes)) = self.tails else { return &[] };
        let at = |k: usize| u32::from_le_bytes(off[4 * k..4 * k + 4].try_into().expect("4 bytes")) as usize;
        &bytes[at(i)..at(i + 1)]
    }

    /// Row `i`'s aliases' bytes (see `rank`; empty before they are laid out).
    fn aliases(&self, i: usize) -> &'a [u8] {
        let Some((off, text)) = self.aliases else { return &[] };
        let at = |k: usize| u32::from_le_bytes(off[4 * k..4 * k + 4].try_into().expect("4 bytes")) as usize;
        &text[at(i)..at(i + 1)]
    }

    fn isin(&self, i: usize) -> &'a [u8] {
        &self.isins[12 * i..12 * i + 12]
    }

    /// Row `i`'s sorted industry id (0: none).
    fn industry(&self, i: usize) -> usize {
        id_at(self.industry, self.id_width, i) as usize
    }

    /// The grams of row `i`'s folded name and ticker (with repeats).
    fn grams(&self, i: usize, buf: &mut Vec<u64>) {
        buf.clear();
        let name = self.names.get(i);
        if name.is_ascii() {
            ascii_grams(name.as_bytes(), buf);
        } else {
            grams_of(&fold(name), buf);
        }
        ascii_grams(self.tickers.get(i).as_bytes(), buf);
        // A former ticker or name finds the row too.
        for (_, text) in rank::Aliases(Reader(self.aliases(i))) {
            let text = std::str::from_utf8(text).unwrap_or_default();
            if text.is_ascii() {
                ascii_grams(text.as_bytes(), buf);
            } else {
                grams_of(&fold(text), buf);
            }
        }
    }

    /// What the history's build knows of row `i`.
    fn facts(&self, i: usize) -> RowFacts<'a> {
        RowFacts {
            isin: std::str::from_utf8(self.isin(i)).expect("ISINs are ASCII"),
            ticker: self.tickers.get(i),
            name: self.names.get(i),
            active: self.flags[i] >> flag::STATUS_SHIFT == 0,
            listings: crate::tail::listing_exchanges(self.tail(i)),
        }
    }
}

/// Builds a [`crate::Catalog`] from companies pushed in `(ticker, isin)` order.
pub struct CatalogBuilder {
    isins: Vec<u8>,
    tickers: Arena,
    names: Arena,
    logos: Arena,
    flags: Vec<u8>,
    industry: Vec<u32>,
    sector: Vec<u32>,
    industries: Dictionary,
    sectors: Dictionary,
    /// Each row's signature, little-endian.
    signatures: Vec<u8>,
    /// Each row's detail tail (empty when it has no details).
    tails: Arena,
    /// What the tails name by number.
    dict: Dictionaries,
    /// Each row's change stamp.
    stamps: Vec<ChangeStamp>,
    /// The identity events of every ISIN, packed (see
    /// [`CatalogBuilder::history`]).
    events: PackedEvents,
    /// Row ids a pass of the posting lists' fill holds at most.
    pass_ids: usize,
    /// Each row's market-cap key (`rank::mcap_key`), little-endian.
    mcaps: Vec<u8>,
}

/// When, and in which store generation, a company's record last changed
/// (contract section 7.2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ChangeStamp {
    /// The `companies` generation of the change.
    pub seq: i64,
    /// Its time, in Unix seconds.
    pub updated_unix: i64,
}

/// A status's number in a row's flags (and its attribute list, after the
/// bands).
pub(crate) fn status_index(s: CompanyStatus) -> u8 {
    match s {
        CompanyStatus::Active => 0,
        CompanyStatus::Superseded => 1,
        CompanyStatus::Delisted => 2,
    }
}

fn band_index(b: MarketCapBand) -> u8 {
    match b {
        MarketCapBand::Large => 0,
        MarketCapBand::Mid => 1,
        MarketCapBand::Small => 2,
    }
}

/// Whether one of the company's strings holds a character JSON escapes.
fn escapes(c: &Company) -> bool {
    [Some(c.ticker.as_str()), Some(&c.name), c.industry.as_deref(), c.sector.as_deref(), c.logo_url.as_deref()]
        .into_iter()
        .flatten()
        .any(|s| crate::wire::needs_escape(s.as_bytes()))
}

impl Default for CatalogBuilder {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

impl CatalogBuilder {
    /// A builder with room for `n` companies.
    pub fn with_capacity(n: usize) -> Self {
        CatalogBuilder {
            isins: Vec::with_capacity(12 * n),
            tickers: Arena::with_capacity(n),
            names: Arena::with_capacity(n),
            logos: Arena::with_capacity(n),
            flags: Vec::with_capacity(n),
            industry: Vec::with_capacity(n),
            sector: Vec::with_capacity(n),
            industries: Dictionary::default(),
            sectors: Dictionary::default(),
            signatures: Vec::with_capacity(8 * n),
            tails: Arena::with_capacity(n),
            dict: Dictionaries::default(),
            stamps: Vec::with_capacity(n),
            events: PackedEvents::default(),
            pass_ids: PASS_IDS,
            mcaps: Vec::with_capacity(4 * n),
        }
    }

    /// Gives the identity events of every ISIN (grouped by ISIN, each
    /// ISIN's oldest first, as `IdentityStore::identity_events` returns
    /// them), from which the catalog answers `as_of`, the history, the
    /// symbols and each detail's `superseded_by` and `supersedes`.
    pub fn history(&mut self, events: Vec<(Isin, IdentityEvent)>) {
        self.events = events.into_iter().collect();
    }

    /// Adds one identity event of `isin` ([`CatalogBuilder::history`] an
    /// event at a time, as the store streams them: grouped by ISIN, each
    /// ISIN's oldest first). Kept packed ([`PackedEvents`]), so a million
    /// ISINs' events are not held as records.
    pub fn push_event(&mut self, isin: &Isin, event: &IdentityEvent) {
        self.events.push(isin, event);
    }

    /// How many companies were pushed.
    pub fn len(&self) -> usize {
        self.flags.len()
    }

    /// Whether none were.
    pub fn is_empty(&self) -> bool {
        self.flags.is_empty()
    }

    /// Adds the next company, which must sort after the previous one, with
    /// no change stamp (generation 0 at the epoch).
    pub fn push(&mut self, c: &Company) -> Result<(), OrderError> {
        self.push_stamped(c, ChangeStamp::default())
    }

    /// Adds the next company, which must sort after the previous one, last
    /// changed as `stamp` says.
    pub fn push_stamped(&mut self, c: &Company, stamp: ChangeStamp) -> Result<(), OrderError> {
        let n = self.len();
        if n > 0 {
            let last = (self.tickers.get(n - 1).as_bytes(), &self.isins[12 * (n - 1)..]);
            if (c.ticker.as_str().as_bytes(), c.isin.as_str().as_bytes()) <= last {
                return Err(OrderError { ticker: c.ticker.to_string(), isin: c.isin.as_str().to_owned() });
            }
        }
        assert!(n < u32::MAX as usize - 1, "a catalog holds fewer than 2^32 - 1 rows");
        self.isins.extend_from_slice(&c.isin.as_str().as_bytes()[..12]);
        self.tickers.push(c.ticker.as_str());
        self.names.push(&c.name);
        self.logos.push(c.logo_url.as_deref().unwrap_or(""));
        self.flags.push(
            if c.is_bse { flag::BSE } else { 0 }
                | if c.is_nse { flag::NSE } else { 0 }
                | c.market_cap_band.map_or(0, |b| band_index(b) + 1) << flag::BAND_SHIFT
                | if c.logo_url.is_some() { flag::LOGO } else { 0 }
                | if escapes(c) { flag::ESCAPE } else { 0 }
                | status_index(c.details.status) << flag::STATUS_SHIFT,
        );
        self.industry.push(self.industries.id(c.industry.as_deref()));
        self.sector.push(self.sectors.id(c.sector.as_deref()));
        // What a search checks: the folded name, and the ticker lower-cased.
        let name = if c.name.is_ascii() {
            signature(c.name.chars().map(|ch| ch.to_ascii_lowercase()))
        } else {
            signature(fold(&c.name).chars())
        };
        let ticker = signature(c.ticker.as_str().chars().map(|ch| ch.to_ascii_lowercase()));
        self.signatures.extend_from_slice(&(name | ticker).to_le_bytes());
        tail::encode(&c.details, c.ticker.as_str(), &mut self.dict, &mut self.tails.text);
        self.tails.close();
        self.stamps.push(stamp);
        self.mcaps.extend_from_slice(&rank::mcap_key(c.details.market_cap.as_ref()).to_le_bytes());
        Ok(())
    }

    /// Lays out the catalog: the rows' columns first, then what is made
    /// of them (read back from the buffer: the change orders, the posting
    /// lists, the history), each section dropped once laid out.
    pub fn finish(mut self) -> crate::Catalog {
        let n = self.len();
        let (industry_names, ind_remap) = std::mem::take(&mut self.industries).sorted();
        let (sector_names, sec_remap) = std::mem::take(&mut self.sectors).sorted();
        let id_width = if ind_remap.len().max(sec_remap.len()) <= 1 << 16 { 2 } else { 4 };
        let ids = |rows: &[u32], remap: &[u32]| -> Vec<u8> {
            let mut out = Vec::with_capacity(rows.len() * id_width);
            for &r in rows {
                out.extend_from_slice(&remap[r as usize].to_le_bytes()[..id_width]);
            }
            out
        };
        // About what a company takes, with its history: room enough that
        // the buffer seldom grows.
        let mut w = Writer::new(n, id_width, 224 * n);
        let take = std::mem::take::<Arena>;
        w.put(Section::Isins, std::mem::take(&mut self.isins));
        take(&mut self.tickers).put(&mut w, Section::TickerOff, Section::Tickers);
        take(&mut self.names).put(&mut w, Section::NameOff, Section::Names);
        take(&mut self.logos).put(&mut w, Section::LogoOff, Section::Logos);
        w.put(Section::Flags, std::mem::take(&mut self.flags));
        w.put(Section::Industry, ids(&std::mem::take(&mut self.industry), &ind_remap));
        w.put(Section::Sector, ids(&std::mem::take(&mut self.sector), &sec_remap));
        // The rows' aliases (their former tickers and names, from the
        // identity events), then each row's signature with theirs.
        let (alias_off, aliases) = {
            let rows = Rows::of(&w, id_width);
            rank::build_aliases(n, |i| rows.facts(i), &self.events)
        };
        w.put(Section::AliasOff, alias_off);
        w.put(Section::Aliases, aliases);
        let mut signatures = std::mem::take(&mut self.signatures);
        {
            let rows = Rows::of(&w, id_width);
            for i in 0..n {
                for (_, text) in rank::Aliases(Reader(rows.aliases(i))) {
                    let text = std::str::from_utf8(text).unwrap_or_default();
                    let sig = if text.is_ascii() {
                        signature(text.chars().map(|ch| ch.to_ascii_lowercase()))
                    } else {
                        signature(fold(text).chars())
                    };
                    let at = 8 * i;
                    let old = u64::from_le_bytes(signatures[at..at + 8].try_into().expect("8 bytes"));
                    signatures[at..at + 8].copy_from_slice(&(old | sig).to_le_bytes());
                }
            }
        }
        w.put(Section::Signatures, signatures);
        w.put(Section::McapKeys, std::mem::take(&mut self.mcaps));
        take(&mut self.tails).put(&mut w, Section::DetailOff, Section::Details);
        industry_names.put(&mut w, Section::IndustryNameOff, Section::IndustryNames);
        sector_names.put(&mut w, Section::SectorNameOff, Section::SectorNames);
        let (strings, numbers) = std::mem::take(&mut self.dict).finish();
        let mut detail_strings = Arena::with_capacity(strings.len());
        strings.iter().for_each(|s| detail_strings.push(s));
        drop(strings);
        detail_strings.put(&mut w, Section::DetailStringOff, Section::DetailStrings);
        w.put(Section::DetailNumbers, numbers);

        let stamps = std::mem::take(&mut self.stamps);
        let sections = orders(&Rows::of(&w, id_width), &stamps);
        drop(stamps);
        for (s, bytes) in
            [Section::Stamps, Section::StampIds, Section::ChangeOrder, Section::IsinOrder].into_iter().zip(sections)
        {
            w.put(s, bytes);
        }
        let mut plan = plan(&Rows::of(&w, id_width), ind_remap.len() - 1);
        w.put(Section::Bits, plan.take_bits());
        for (s, bytes) in plan.compress(&Rows::of(&w, id_width), self.pass_ids) {
            w.put(s, bytes);
        }
        let events = std::mem::take(&mut self.events);
        let h = {
            let rows = Rows::of(&w, id_width);
            history::build(n, |i| rows.facts(i), &events)
        };
        drop(events);
        let (sections, periods) = h.into_sections();
        for (s, bytes) in sections {
            w.put(s, bytes);
        }
        w.put_bytes(Section::Periods, HistorySections::period_bytes(&periods));
        crate::Catalog::from_bytes(w.finish()).expect("a freshly built catalog is valid")
    }
}

/// The change sections of `rows` stamped `stamps`: the distinct stamps
/// sorted, each row's stamp index, the rows by (stamp, ISIN), and the rows
/// by ISIN.
fn orders(rows: &Rows<'_>, stamps: &[ChangeStamp]) -> [Vec<u8>; 4] {
    let mut distinct = stamps.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let index: HashMap<ChangeStamp, u32> = distinct.iter().enumerate().map(|(i, s)| (*s, i as u32)).collect();
    let ids: Vec<u32> = stamps.iter().map(|s| index[s]).collect();
    drop(index);
    let n = stamps.len() as u32;
    let mut by_change: Vec<u32> = (0..n).collect();
    by_change.sort_unstable_by(|&a, &b| {
        (ids[a as usize], rows.isin(a as usize)).cmp(&(ids[b as usize], rows.isin(b as usize)))
    });
    let mut by_isin: Vec<u32> = (0..n).collect();
    by_isin.sort_unstable_by(|&a, &b| rows.isin(a as usize).cmp(rows.isin(b as usize)));
    let le = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let stamps = distinct.iter().flat_map(|s| [s.seq.to_le_bytes(), s.updated_unix.to_le_bytes()]).flatten().collect();
    [stamps, le(&ids), le(&by_change), le(&by_isin)]
}

/// Row `i`'s attribute lists (see [`plan`]).
fn attrs(rows: &Rows<'_>, i: usize) -> [Option<usize>; 5] {
    let f = rows.flags[i];
    let band = (f >> flag::BAND_SHIFT) & 3;
    let ind = rows.industry(i);
    [
        (f & flag::BSE != 0).then_some(0),
        (f & flag::NSE != 0).then_some(1),
        (band != 0).then_some(1 + band as usize),
        Some(5 + (f >> flag::STATUS_SHIFT) as usize),
        (ind != 0).then_some(ATTR_LISTS - 1 + ind),
    ]
}

/// The posting lists of a catalog's rows, counted and laid out, with their
/// bitmaps filled: the attribute lists (0 BSE, 1 NSE, 2..5 the bands, 5..8
/// the statuses), then one per industry (sorted id - 1), then one per gram
/// of the rows' folded names and tickers (numbered as first seen).
struct Plan {
    lists: Lists,
    gram_slots: HashMap<u64, u32, BuildHasherDefault<GramHasher>>,
    industries: usize,
}

/// Counts and lays out the posting lists of `rows` (with `industries`
/// industries), and fills their bitmaps.
fn plan(rows: &Rows<'_>, industries: usize) -> Plan {
    let n = rows.flags.len();
    let mut lists = Lists::new(n, ATTR_LISTS + industries);
    let mut gram_slots: HashMap<u64, u32, BuildHasherDefault<GramHasher>> = HashMap::default();
    let mut buf = Vec::with_capacity(256);
    for i in 0..n {
        for slot in attrs(rows, i).into_iter().flatten() {
            lists.count(slot, i as u32);
        }
        rows.grams(i, &mut buf);
        for &g in &buf {
            let next = lists.counts.len() as u32;
            let slot = *gram_slots.entry(g).or_insert(next);
            if slot == next {
                lists.add_list();
            }
            lists.count(slot as usize, i as u32);
        }
    }
    lists.lay_out();
    let mut plan = Plan { lists, gram_slots, industries };
    plan.fill(rows, &mut buf);
    plan
}

/// Row ids a pass of [`Plan::compress`] holds at most: 32 MB (a million
/// companies' lists hold about 25 million).
const PASS_IDS: usize = 8 << 20;

impl Plan {
    /// One pass over the rows, filling what `lists` is set to fill.
    fn fill(&mut self, rows: &Rows<'_>, buf: &mut Vec<u64>) {
        self.lists.last.iter_mut().for_each(|r| *r = u32::MAX);
        for i in 0..rows.flags.len() {
            for slot in attrs(rows, i).into_iter().flatten() {
                self.lists.fill(slot, i as u32);
            }
            rows.grams(i, buf);
            for &g in buf.iter() {
                self.lists.fill(self.gram_slots[&g] as usize, i as u32);
            }
        }
    }

    /// The bitmaps' bytes (filled by [`plan`]).
    fn take_bits(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.lists.bits).iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// Fills and compresses the lists that are not bitmaps, a run of them
    /// at a time (at most `pass_ids` row ids, or one list, per pass over
    /// the rows), and makes the tables of every list: the posting sections
    /// but the bitmaps.
    fn compress(mut self, rows: &Rows<'_>, pass_ids: usize) -> [(Section, Vec<u8>); 5] {
        let mut compressed = Vec::new();
        let mut buf = Vec::with_capacity(256);
        let slots = self.lists.records.len();
        let mut a = 0;
        while a < slots {
            let mut b = a;
            let mut ids = 0usize;
            while b < slots {
                let p = self.lists.records[b];
                if !p.bitmap {
                    if ids > 0 && ids + p.len as usize > pass_ids {
                        break;
                    }
                    ids += p.len as usize;
                }
                b += 1;
            }
            if ids > 0 {
                let base = self.lists.records[a..b].iter().find(|p| !p.bitmap).map_or(0, |p| p.start);
                self.lists.batch(a..b, base, ids);
                self.fill(rows, &mut buf);
                for p in self.lists.records[a..b].iter_mut().filter(|p| !p.bitmap) {
                    let at = (p.start - base) as usize;
                    p.start = u32::try_from(compressed.len()).expect("compressed lists fit 4 GiB");
                    encode(&self.lists.ids[at..at + p.len as usize], &mut compressed);
                }
            }
            a = b;
        }
        self.lists.batch(0..0, 0, 0);
        let records = &self.lists.records;
        let table = |slots: &mut dyn Iterator<Item = usize>| -> Vec<u8> {
            let mut out = Vec::new();
            slots.for_each(|s| records[s].write(&mut out));
            out
        };
        let attr_lists = table(&mut (0..ATTR_LISTS));
        let industry_lists = table(&mut (ATTR_LISTS..ATTR_LISTS + self.industries));
        let mut grams: Vec<(u64, u32)> = self.gram_slots.into_iter().collect();
        grams.sort_unstable();
        let gram_keys: Vec<u8> = grams.iter().flat_map(|(g, _)| g.to_le_bytes()).collect();
        let gram_lists = table(&mut grams.iter().map(|&(_, s)| s as usize));
        [
            (Section::IndustryLists, industry_lists),
            (Section::AttrLists, attr_lists),
            (Section::GramKeys, gram_keys),
            (Section::GramLists, gram_lists),
            (Section::Lists, compressed),
        ]
    }
}

/// Posting lists under construction: counted, laid out (a bitmap or a range
/// of row ids each), filled in row order: the bitmaps in one pass, the
/// other lists a run of them at a time ([`Lists::batch`]), each run then
/// compressed.
struct Lists {
    n: usize,
    counts: Vec<u32>,
    /// Per list, the last row counted or filled (a row's repeated gram counts once).
    last: Vec<u32>,
    records: Vec<Postings>,
    bits: Vec<u64>,
    /// Whether a pass fills the bitmaps (the first pass only).
    fill_bits: bool,
    /// The lists whose row ids a pass fills, into `ids` from their start
    /// less `base`.
    batch: std::ops::Range<usize>,
    base: u32,
    ids: Vec<u32>,
}

impl Lists {
    fn new(n: usize, lists: usize) -> Self {
        Lists {
            n,
            counts: vec![0; lists],
            last: vec![u32::MAX; lists],
            records: Vec::new(),
            bits: Vec::new(),
            fill_bits: false,
            batch: 0..0,
            base: 0,
            ids: Vec::new(),
        }
    }

    fn add_list(&mut self) {
        self.counts.push(0);
        self.last.push(u32::MAX);
    }

    fn count(&mut self, slot: usize, row: u32) {
        if self.last[slot] != row {
            self.last[slot] = row;
            self.counts[slot] += 1;
        }
    }

    /// Gives each list its place: a bitmap if dense, else a range of row
    /// ids (numbered across all lists); the next pass fills the bitmaps.
    fn lay_out(&mut self) {
        let words = self.n.div_ceil(64);
        let (mut at_ids, mut at_bits) = (0usize, 0usize);
        self.records = self
            .counts
            .iter()
            .map(|&k| {
                if Postings::is_dense(k as usize, self.n) {
                    at_bits += words;
                    Postings { start: (at_bits - words) as u32, len: k, bitmap: true }
                } else {
                    at_ids += k as usize;
                    Postings { start: (at_ids - k as usize) as u32, len: k, bitmap: false }
                }
            })
            .collect();
        self.bits = vec![0; at_bits];
        self.fill_bits = true;
    }

    /// Sets the next pass to fill the row ids of the lists `slots` (`ids`
    /// of them, the first at `base`), and no bitmap.
    fn batch(&mut self, slots: std::ops::Range<usize>, base: u32, ids: usize) {
        self.fill_bits = false;
        for s in slots.clone() {
            self.counts[s] = 0;
        }
        self.batch = slots;
        self.base = base;
        self.ids = vec![0; ids];
    }

    fn fill(&mut self, slot: usize, row: u32) {
        if self.last[slot] == row {
            return;
        }
        self.last[slot] = row;
        let p = self.records[slot];
        if p.bitmap {
            if self.fill_bits {
                self.bits[p.start as usize + (row / 64) as usize] |= 1 << (row % 64);
            }
        } else if self.batch.contains(&slot) {
            self.ids[(p.start - self.base + self.counts[slot]) as usize] = row;
            self.counts[slot] += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mds_testkit::fixtures;

    /// The lists filled a few at a time (one pass over the rows each) are
    /// the lists filled at once: the same bytes.
    #[test]
    fn lists_filled_in_passes_are_the_lists_filled_at_once() {
        let names = ["Alpha Steel", "Beta Steel Tubes", "Gamma Software", "Alpha Beta Foods", "Delta Steel"];
        let mut companies: Vec<Company> = (0..400u32)
            .map(|i| {
                let mut c = fixtures::company(i, &format!("T{i:04}"));
                c.name = format!("{} {}", names[i as usize % names.len()], i % 7);
                c
            })
            .collect();
        companies.sort_by(|a, b| (&a.ticker, &a.isin).cmp(&(&b.ticker, &b.isin)));
        let build = |pass_ids: usize| {
            let mut b = CatalogBuilder::with_capacity(companies.len());
            b.pass_ids = pass_ids;
            companies.iter().for_each(|c| b.push(c).unwrap());
            b.finish()
        };
        let at_once = build(PASS_IDS);
        for pass_ids in [1, 7, 100, 1000] {
            assert!(build(pass_ids).as_bytes() == at_once.as_bytes(), "{pass_ids} ids a pass");
        }
    }
}
