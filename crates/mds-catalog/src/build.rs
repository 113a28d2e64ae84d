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
use crate::history::{self, RowFacts};
use crate::layout::{ATTR_LISTS, SECTIONS, Section, assemble, flag};
use crate::postings::{Postings, encode};
use crate::tail::{self, Dictionaries};

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
        let at = |k: usize| u32::from_le_bytes(self.off[4 * k..4 * k + 4].try_into().expect("4 bytes")) as usize;
        std::str::from_utf8(&self.text[at(i)..at(i + 1)]).expect("an arena holds whole strings")
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
fn needs_escape(c: &Company) -> bool {
    let esc = |s: &str| s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\');
    [Some(c.ticker.as_str()), Some(&c.name), c.industry.as_deref(), c.sector.as_deref(), c.logo_url.as_deref()]
        .into_iter()
        .flatten()
        .any(esc)
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
                | if needs_escape(c) { flag::ESCAPE } else { 0 }
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
        Ok(())
    }

    /// The grams of row `i`'s folded name and ticker (with repeats).
    fn row_grams(&self, i: usize, buf: &mut Vec<u64>) {
        buf.clear();
        let name = self.names.get(i);
        if name.is_ascii() {
            ascii_grams(name.as_bytes(), buf);
        } else {
            grams_of(&fold(name), buf);
        }
        ascii_grams(self.tickers.get(i).as_bytes(), buf);
    }

    /// The change sections: the distinct stamps sorted, each row's stamp
    /// index, the rows by (stamp, ISIN), and the rows by ISIN.
    fn orders(&self) -> (Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>) {
        let mut distinct = self.stamps.clone();
        distinct.sort_unstable();
        distinct.dedup();
        let index: HashMap<ChangeStamp, u32> = distinct.iter().enumerate().map(|(i, s)| (*s, i as u32)).collect();
        let ids: Vec<u32> = self.stamps.iter().map(|s| index[s]).collect();
        let isin = |r: u32| &self.isins[12 * r as usize..12 * r as usize + 12];
        let mut by_change: Vec<u32> = (0..self.len() as u32).collect();
        by_change.sort_unstable_by(|&a, &b| (ids[a as usize], isin(a)).cmp(&(ids[b as usize], isin(b))));
        let mut by_isin: Vec<u32> = (0..self.len() as u32).collect();
        by_isin.sort_unstable_by(|&a, &b| isin(a).cmp(isin(b)));
        let le = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let stamps =
            distinct.iter().flat_map(|s| [s.seq.to_le_bytes(), s.updated_unix.to_le_bytes()]).flatten().collect();
        (stamps, le(&ids), le(&by_change), le(&by_isin))
    }

    /// Lays out the catalog.
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
        let industry = ids(&self.industry, &ind_remap);
        let sector = ids(&self.sector, &sec_remap);

        // Attribute lists: 0 BSE, 1 NSE, 2..5 the bands, 5..8 the
        // statuses, then one per industry (sorted id - 1).
        let industries = ind_remap.len() - 1;
        let mut lists = Lists::new(n, ATTR_LISTS + industries);
        let attrs = |i: usize| -> [Option<usize>; 5] {
            let f = self.flags[i];
            let band = (f >> flag::BAND_SHIFT) & 3;
            let ind = ind_remap[self.industry[i] as usize] as usize;
            [
                (f & flag::BSE != 0).then_some(0),
                (f & flag::NSE != 0).then_some(1),
                (band != 0).then_some(1 + band as usize),
                Some(5 + (f >> flag::STATUS_SHIFT) as usize),
                (ind != 0).then_some(ATTR_LISTS - 1 + ind),
            ]
        };
        for i in 0..n {
            for slot in attrs(i).into_iter().flatten() {
                lists.count(slot, i as u32);
            }
        }
        // Gram lists: number each distinct gram as first seen.
        let mut gram_slots: HashMap<u64, u32, BuildHasherDefault<GramHasher>> = HashMap::default();
        let mut buf = Vec::with_capacity(256);
        for i in 0..n {
            self.row_grams(i, &mut buf);
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
        for i in 0..n {
            for slot in attrs(i).into_iter().flatten() {
                lists.fill(slot, i as u32);
            }
            self.row_grams(i, &mut buf);
            for &g in &buf {
                lists.fill(gram_slots[&g] as usize, i as u32);
            }
        }
        let (records, compressed, bits) = lists.finish();
        let table = |slots: &mut dyn Iterator<Item = usize>| -> Vec<u8> {
            let mut out = Vec::new();
            slots.for_each(|s| records[s].write(&mut out));
            out
        };
        let attr_lists = table(&mut (0..ATTR_LISTS));
        let industry_lists = table(&mut (ATTR_LISTS..ATTR_LISTS + industries));
        let mut grams: Vec<(u64, u32)> = gram_slots.into_iter().collect();
        grams.sort_unstable();
        let gram_keys: Vec<u8> = grams.iter().flat_map(|(g, _)| g.to_le_bytes()).collect();
        let gram_lists = table(&mut grams.iter().map(|&(_, s)| s as usize));

        let (stamps, stamp_ids, change_order, isin_order) = self.orders();
        let (strings, numbers) = std::mem::take(&mut self.dict).finish();
        let mut detail_strings = Arena::with_capacity(strings.len());
        strings.iter().for_each(|s| detail_strings.push(s));
        let row_of = |i: usize| RowFacts {
            isin: std::str::from_utf8(&self.isins[12 * i..12 * i + 12]).expect("ISINs are ASCII"),
            ticker: self.tickers.get(i),
            name: self.names.get(i),
            active: self.flags[i] >> flag::STATUS_SHIFT == 0,
        };
        let h = history::build(n, row_of, &self.events);
        drop(std::mem::take(&mut self.events));

        // Every section moved out of the builder, so that `assemble` drops
        // each once it is copied.
        let mut sections: [Vec<u8>; SECTIONS] = std::array::from_fn(|_| Vec::new());
        let take = std::mem::take::<Arena>;
        for (off, text, arena) in [
            (Section::TickerOff, Section::Tickers, take(&mut self.tickers)),
            (Section::NameOff, Section::Names, take(&mut self.names)),
            (Section::LogoOff, Section::Logos, take(&mut self.logos)),
            (Section::IndustryNameOff, Section::IndustryNames, industry_names),
            (Section::SectorNameOff, Section::SectorNames, sector_names),
            (Section::DetailOff, Section::Details, take(&mut self.tails)),
            (Section::DetailStringOff, Section::DetailStrings, detail_strings),
        ] {
            sections[off as usize] = arena.off;
            sections[text as usize] = arena.text;
        }
        // The other sections by where they come from: the rows' columns,
        // the posting lists, the details' numbers, the change orders, then
        // the identity history.
        for (s, bytes) in [
            (Section::Isins, std::mem::take(&mut self.isins)),
            (Section::Flags, std::mem::take(&mut self.flags)),
            (Section::Industry, industry),
            (Section::Sector, sector),
            (Section::Signatures, std::mem::take(&mut self.signatures)),
            (Section::IndustryLists, industry_lists),
            (Section::AttrLists, attr_lists),
            (Section::GramKeys, gram_keys),
            (Section::GramLists, gram_lists),
            (Section::Lists, compressed),
            (Section::Bits, bits),
            (Section::DetailNumbers, numbers),
            (Section::Stamps, stamps),
            (Section::StampIds, stamp_ids),
            (Section::ChangeOrder, change_order),
            (Section::IsinOrder, isin_order),
        ]
        .into_iter()
        .chain(h.into_sections())
        {
            sections[s as usize] = bytes;
        }
        drop(self);
        let buf = assemble(n, id_width, sections);
        crate::Catalog::from_bytes(buf).expect("a freshly built catalog is valid")
    }
}

/// Posting lists under construction: counted, laid out (a bitmap or a range
/// of a shared `u32` array each), filled in row order, then compressed.
struct Lists {
    n: usize,
    counts: Vec<u32>,
    /// Per list, the last row counted or filled (a row's repeated gram counts once).
    last: Vec<u32>,
    records: Vec<Postings>,
    ids: Vec<u32>,
    bits: Vec<u64>,
}

impl Lists {
    fn new(n: usize, lists: usize) -> Self {
        Lists {
            n,
            counts: vec![0; lists],
            last: vec![u32::MAX; lists],
            records: Vec::new(),
            ids: Vec::new(),
            bits: Vec::new(),
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

    /// Gives each list its place: a bitmap if dense, else a range of `ids`.
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
        self.ids = vec![0; at_ids];
        self.bits = vec![0; at_bits];
        self.counts.iter_mut().for_each(|k| *k = 0);
        self.last.iter_mut().for_each(|r| *r = u32::MAX);
    }

    fn fill(&mut self, slot: usize, row: u32) {
        if self.last[slot] == row {
            return;
        }
        self.last[slot] = row;
        let p = self.records[slot];
        if p.bitmap {
            self.bits[p.start as usize + (row / 64) as usize] |= 1 << (row % 64);
        } else {
            self.ids[(p.start + self.counts[slot]) as usize] = row;
            self.counts[slot] += 1;
        }
    }

    /// The final records (compressed lists' starts are byte offsets), the
    /// compressed lists and the bitmaps' bytes.
    fn finish(mut self) -> (Vec<Postings>, Vec<u8>, Vec<u8>) {
        let mut compressed = Vec::with_capacity(self.ids.len() * 3 / 2);
        for p in self.records.iter_mut().filter(|p| !p.bitmap) {
            let rows = &self.ids[p.start as usize..(p.start + p.len) as usize];
            p.start = u32::try_from(compressed.len()).expect("compressed lists fit 4 GiB");
            encode(rows, &mut compressed);
        }
        drop(self.ids);
        let bits = self.bits.iter().flat_map(|w| w.to_le_bytes()).collect();
        (self.records, compressed, bits)
    }
}
