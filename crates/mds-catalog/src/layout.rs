//! The catalog's byte layout: one buffer of sections behind a header. The
//! same bytes are the in-memory catalog and its snapshot in the store, so a
//! node loads a snapshot without decoding or copying it.
//!
//! ```text
//! magic "MDSCAT\0" + version (8) | crc32 of the rest (4) | rows n (4)
//! | id width (4) | reserved (4) | SECTIONS × (start u64, len u64)
//! | the sections, each starting on an 8-byte boundary, in the order the
//!   build made them
//! ```
//! All numbers are little-endian. [`Layout::parse`] checks the checksum
//! and every size and offset the readers rely on, so a damaged or foreign
//! snapshot is refused with a reason instead of being served.

use std::ops::Range;

use crate::postings::{Postings, u32_at, u64_at};

/// The first 8 bytes of every snapshot: a name and the format version.
const MAGIC: &[u8; 8] = b"MDSCAT\0\x0a";

/// Bytes before the section table.
const FIXED: usize = 24;

/// The sections, in buffer order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Section {
    /// 12 bytes per row.
    Isins,
    /// `u32` × (n + 1) offsets into [`Section::Tickers`].
    TickerOff,
    /// Tickers, back to back.
    Tickers,
    /// `u32` × (n + 1) offsets into [`Section::Names`].
    NameOff,
    /// Names as imported, back to back.
    Names,
    /// `u32` × (n + 1) offsets into [`Section::Logos`].
    LogoOff,
    /// Logo URLs, back to back.
    Logos,
    /// One byte per row: see [`flag`].
    Flags,
    /// Industry id per row (0 = none, else 1 + index in [`Section::IndustryNames`]).
    Industry,
    /// Sector id per row, likewise.
    Sector,
    /// `u32` offsets of the sorted industry names.
    IndustryNameOff,
    /// Industry names, sorted, back to back.
    IndustryNames,
    /// `u32` offsets of the sorted sector names.
    SectorNameOff,
    /// Sector names, sorted.
    SectorNames,
    /// A [`Postings`] record per industry, in name order.
    IndustryLists,
    /// [`Postings`] records: BSE, NSE, then the three bands.
    AttrLists,
    /// Sorted gram keys (`u64`).
    GramKeys,
    /// A [`Postings`] record per gram key.
    GramLists,
    /// The compressed posting lists.
    Lists,
    /// The bitmaps (`u64` words).
    Bits,
    /// A `u64` per row: the signature of its folded name, OR that of its
    /// lower-cased ticker (see `grams::signature`).
    Signatures,
    /// `u32` × (n + 1) offsets into [`Section::Details`].
    DetailOff,
    /// Per row, its details in a few bytes (see `tail`); empty when the
    /// company has none.
    Details,
    /// `u32` offsets into [`Section::DetailStrings`].
    DetailStringOff,
    /// The strings rows' details name by number (series, groups,
    /// classification objects), back to back.
    DetailStrings,
    /// The numbers rows' details name by number (face values), `f64` each.
    DetailNumbers,
    /// The distinct change stamps, sorted: `(change_seq i64, updated_at
    /// unix seconds i64)` each.
    Stamps,
    /// A `u32` per row: its stamp's index in [`Section::Stamps`].
    StampIds,
    /// The rows (`u32`) in change order: by stamp, then ISIN.
    ChangeOrder,
    /// The rows (`u32`) in ISIN order.
    IsinOrder,
    /// Per row, the `u16` days `[from, to)` (since 1990-01-01, `0xFFFF`
    /// open) on which it was listed as it is today (see `history`).
    Spans,
    /// `u32` × (n + 1) offsets into [`Section::Events`].
    EventOff,
    /// Per row, its identity events, encoded (see `history`).
    Events,
    /// `u32` offsets into [`Section::IdStrings`].
    IdStringOff,
    /// The symbols and names the history names by number, back to back.
    IdStrings,
    /// Version records (see `history`): row, ticker and name ids (`u32`
    /// each), `u16` days from and to; in `(ticker, ISIN, from)` order.
    Versions,
    /// The versions (`u32` indices) in `(row, from)` order.
    VersionsByRow,
    /// Symbol period records (see `history`): symbol id (top bit: BSE),
    /// row, name id, from and to (days from 0001-01-01, 0 = open), `u32`
    /// each.
    Periods,
    /// `u32` × (n + 1) offsets into [`Section::Aliases`].
    AliasOff,
    /// Per row, the former tickers and names a search also matches (see
    /// `rank`): a kind byte and a varint length before each string.
    Aliases,
    /// A `u32` per row: its market cap as a key that sorts the largest
    /// first (see `rank::mcap_key`), `u32::MAX` when it has none.
    McapKeys,
}

/// How many sections there are.
pub(crate) const SECTIONS: usize = Section::McapKeys as usize + 1;

/// Section names, for reports ([`crate::Catalog::sizes`]).
pub(crate) const SECTION_NAMES: [&str; SECTIONS] = [
    "isins",
    "ticker offsets",
    "tickers",
    "name offsets",
    "names",
    "logo offsets",
    "logos",
    "flags",
    "industry ids",
    "sector ids",
    "industry name offsets",
    "industry names",
    "sector name offsets",
    "sector names",
    "industry lists",
    "attribute lists",
    "gram keys",
    "gram lists",
    "compressed lists",
    "bitmaps",
    "signatures",
    "detail offsets",
    "details",
    "detail string offsets",
    "detail strings",
    "detail numbers",
    "change stamps",
    "stamp ids",
    "change order",
    "isin order",
    "history spans",
    "history event offsets",
    "history events",
    "history string offsets",
    "history strings",
    "history versions",
    "history versions by row",
    "symbol periods",
    "alias offsets",
    "aliases",
    "market cap keys",
];

/// The bits of a row's flag byte.
pub(crate) mod flag {
    /// Listed on BSE.
    pub(crate) const BSE: u8 = 1;
    /// Listed on NSE.
    pub(crate) const NSE: u8 = 2;
    /// Bits 2–3: 0 = no band, else 1 + band index.
    pub(crate) const BAND_SHIFT: u8 = 2;
    /// Has a logo URL (an empty one is still a URL).
    pub(crate) const LOGO: u8 = 16;
    /// One of the row's strings holds a character JSON must escape.
    pub(crate) const ESCAPE: u8 = 32;
    /// Bits 6–7: the company's status (0 active, 1 superseded, 2 delisted).
    pub(crate) const STATUS_SHIFT: u8 = 6;
}

/// Row `i`'s industry or sector id in `ids`, `width` (2 or 4) bytes a row.
pub(crate) fn id_at(ids: &[u8], width: usize, i: usize) -> u32 {
    match width {
        2 => u32::from(u16::from_le_bytes([ids[2 * i], ids[2 * i + 1]])),
        _ => u32_at(ids, 4 * i),
    }
}

/// Why bytes are not a catalog snapshot this build can serve.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("catalog snapshot refused: {0}")]
pub struct CatalogSnapshotError(pub(crate) String);

/// Where each section is, and the header's numbers.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pub(crate) n: usize,
    /// Bytes per industry/sector id: 2, or 4 when there are more than 65,535 names.
    pub(crate) id_width: usize,
    pub(crate) sections: [Range<usize>; SECTIONS],
}

/// Lays a catalog out as its sections are made: each is appended behind
/// the header (on an 8-byte boundary) and dropped, so a build holds the
/// buffer and the section it is making, not every section and then a copy
/// of them (a million companies' catalog, with their history, is about
/// 200 MB). Sections lie in the order they are put; the header's table
/// says where. What a later section is made of can be read back
/// ([`Writer::get`]).
pub(crate) struct Writer {
    buf: Vec<u8>,
    sections: [Option<Range<usize>>; SECTIONS],
}

impl Writer {
    /// A buffer with the header of a catalog of `n` rows, with room for
    /// about `capacity` bytes of sections.
    pub(crate) fn new(n: usize, id_width: usize, capacity: usize) -> Self {
        let header = FIXED + SECTIONS * 16;
        let mut buf = Vec::with_capacity(header + capacity);
        buf.extend_from_slice(MAGIC);
        buf.extend_from_slice(&[0; 4]); // the checksum, in `finish`
        buf.extend_from_slice(&u32::try_from(n).expect("rows fit u32").to_le_bytes());
        buf.extend_from_slice(&(id_width as u32).to_le_bytes());
        buf.extend_from_slice(&[0; 4]);
        buf.resize(header, 0); // the section table, in `finish`
        Writer { buf, sections: std::array::from_fn(|_| None) }
    }

    /// Appends section `s` (each is put once).
    pub(crate) fn put(&mut self, s: Section, bytes: Vec<u8>) {
        self.put_bytes(s, bytes.into_iter());
    }

    /// Appends section `s` from `bytes`, made as they are copied (no
    /// second copy of the section is held).
    pub(crate) fn put_bytes(&mut self, s: Section, bytes: impl Iterator<Item = u8>) {
        assert!(self.sections[s as usize].is_none(), "section {} put twice", SECTION_NAMES[s as usize]);
        let at = self.buf.len();
        self.buf.extend(bytes);
        self.sections[s as usize] = Some(at..self.buf.len());
        self.buf.resize(self.buf.len().next_multiple_of(8), 0);
    }

    /// Whether section `s` was put.
    pub(crate) fn has(&self, s: Section) -> bool {
        self.sections[s as usize].is_some()
    }

    /// The bytes of section `s`, put before.
    pub(crate) fn get(&self, s: Section) -> &[u8] {
        let r = self.sections[s as usize].clone().expect("a section is read after it is put");
        &self.buf[r]
    }

    /// The buffer, with its section table and checksum.
    pub(crate) fn finish(mut self) -> Vec<u8> {
        for (i, r) in self.sections.iter().enumerate() {
            let r = r.clone().unwrap_or_else(|| panic!("section {} was not put", SECTION_NAMES[i]));
            self.buf[FIXED + 16 * i..FIXED + 16 * i + 8].copy_from_slice(&(r.start as u64).to_le_bytes());
            self.buf[FIXED + 16 * i + 8..FIXED + 16 * i + 16].copy_from_slice(&(r.len() as u64).to_le_bytes());
        }
        let crc = crc32fast::hash(&self.buf[12..]);
        self.buf[8..12].copy_from_slice(&crc.to_le_bytes());
        self.buf
    }
}

impl Layout {
    /// Reads and checks the header and sections of `buf`.
    pub(crate) fn parse(buf: &[u8]) -> Result<Layout, CatalogSnapshotError> {
        let bad = |why: &str| Err(CatalogSnapshotError(why.to_owned()));
        if buf.len() < FIXED + SECTIONS * 16 || buf[..6] != MAGIC[..6] {
            return bad("not a catalog snapshot");
        }
        if buf[..8] != MAGIC[..] {
            return bad("written by a different catalog format version");
        }
        if crc32fast::hash(&buf[12..]) != u32_at(buf, 8) {
            return bad("checksum mismatch (damaged)");
        }
        let n = u32_at(buf, 12) as usize;
        let id_width = u32_at(buf, 16) as usize;
        if id_width != 2 && id_width != 4 {
            return bad("bad id width");
        }
        let mut sections: [Range<usize>; SECTIONS] = std::array::from_fn(|_| 0..0);
        for (i, s) in sections.iter_mut().enumerate() {
            let start = usize::try_from(u64_at(buf, FIXED + i * 16)).unwrap_or(usize::MAX);
            let len = usize::try_from(u64_at(buf, FIXED + i * 16 + 8)).unwrap_or(usize::MAX);
            if start.checked_add(len).is_none_or(|end| end > buf.len()) {
                return bad("a section lies outside the snapshot");
            }
            *s = start..start + len;
        }
        let layout = Layout { n, id_width, sections };
        layout.check(buf)?;
        Ok(layout)
    }

    /// The bytes of section `s`.
    pub(crate) fn of<'a>(&self, buf: &'a [u8], s: Section) -> &'a [u8] {
        &buf[self.sections[s as usize].clone()]
    }

    /// Checks what the readers assume: sizes per row, offsets in order and
    /// on character boundaries, names sorted, lists inside their sections.
    fn check(&self, buf: &[u8]) -> Result<(), CatalogSnapshotError> {
        use Section::*;
        let n = self.n;
        let len = |s: Section| self.sections[s as usize].len();
        let fail = |why: String| Err(CatalogSnapshotError(why));
        for (s, want) in [
            (Isins, 12 * n),
            (Flags, n),
            (Industry, self.id_width * n),
            (Sector, self.id_width * n),
            (Signatures, 8 * n),
            (StampIds, 4 * n),
            (ChangeOrder, 4 * n),
            (IsinOrder, 4 * n),
            (Spans, 4 * n),
            (McapKeys, 4 * n),
        ] {
            if len(s) != want {
                return fail(format!("section {} has {} bytes, not {want}", SECTION_NAMES[s as usize], len(s)));
            }
        }
        let (Some(industries), Some(sectors)) =
            ((len(IndustryNameOff) / 4).checked_sub(1), (len(SectorNameOff) / 4).checked_sub(1))
        else {
            return fail("a name table has no offsets".into());
        };
        for (off, text, rows) in [
            (TickerOff, Tickers, n),
            (NameOff, Names, n),
            (LogoOff, Logos, n),
            (IndustryNameOff, IndustryNames, industries),
            (SectorNameOff, SectorNames, sectors),
        ] {
            let (o, t) = (self.of(buf, off), self.of(buf, text));
            let Ok(t) = std::str::from_utf8(t) else {
                return fail(format!("{} are not UTF-8", SECTION_NAMES[text as usize]));
            };
            let ok = o.len() == 4 * (rows + 1)
                && u32_at(o, 0) == 0
                && u32_at(o, 4 * rows) as usize == t.len()
                && (0..rows)
                    .all(|i| u32_at(o, 4 * i) <= u32_at(o, 4 * i + 4) && t.is_char_boundary(u32_at(o, 4 * i) as usize));
            if !ok {
                return fail(format!("{} are out of order", SECTION_NAMES[off as usize]));
            }
        }
        let Some(detail_strings) = (len(DetailStringOff) / 4).checked_sub(1) else {
            return fail("the detail strings have no offsets".into());
        };
        let Some(id_strings) = (len(IdStringOff) / 4).checked_sub(1) else {
            return fail("the history strings have no offsets".into());
        };
        for (off, text, rows, utf8) in [
            (DetailOff, Details, n, false),
            (DetailStringOff, DetailStrings, detail_strings, true),
            (EventOff, Events, n, false),
            (IdStringOff, IdStrings, id_strings, true),
            (AliasOff, Aliases, n, false),
        ] {
            let (o, t) = (self.of(buf, off), self.of(buf, text));
            let ok = o.len() == 4 * (rows + 1)
                && u32_at(o, 0) == 0
                && u32_at(o, 4 * rows) as usize == t.len()
                && (0..rows).all(|i| u32_at(o, 4 * i) <= u32_at(o, 4 * i + 4))
                && (!utf8
                    || std::str::from_utf8(t)
                        .is_ok_and(|t| (0..rows).all(|i| t.is_char_boundary(u32_at(o, 4 * i) as usize))));
            if !ok {
                return fail(format!("{} are out of order", SECTION_NAMES[off as usize]));
            }
        }
        if len(DetailNumbers) % 8 != 0 {
            return fail("detail numbers are not whole".into());
        }
        let stamps = len(Stamps) / 16;
        if len(Stamps) % 16 != 0 || (0..n).any(|i| u32_at(self.of(buf, StampIds), 4 * i) as usize >= stamps) {
            return fail("a row's change stamp is missing".into());
        }
        for order in [ChangeOrder, IsinOrder] {
            let o = self.of(buf, order);
            if (0..n).any(|i| u32_at(o, 4 * i) as usize >= n) {
                return fail(format!("{} names a row that does not exist", SECTION_NAMES[order as usize]));
            }
        }
        self.check_history(buf, id_strings)?;
        let attrs = self.of(buf, AttrLists);
        let grams = len(GramKeys) / 8;
        if len(IndustryLists) != industries * Postings::SIZE
            || attrs.len() != ATTR_LISTS * Postings::SIZE
            || len(GramLists) != grams * Postings::SIZE
            || len(GramKeys) % 8 != 0
        {
            return fail("posting tables do not match their keys".into());
        }
        let keys = self.of(buf, GramKeys);
        if (1..grams).any(|i| u64_at(keys, 8 * (i - 1)) >= u64_at(keys, 8 * i)) {
            return fail("gram keys are not sorted".into());
        }
        let (lists, bits) = (len(Lists), len(Bits));
        let words = n.div_ceil(64);
        let tables = [(IndustryLists, industries), (AttrLists, ATTR_LISTS), (GramLists, grams)];
        for (table, count) in tables {
            let t = self.of(buf, table);
            for i in 0..count {
                let p = Postings::read(t, i);
                let end = if p.bitmap {
                    (p.start as usize + words) * 8 <= bits
                } else {
                    p.start as usize + (p.len as usize).div_ceil(crate::postings::BLOCK) * 8 <= lists
                };
                if !end || p.len as usize > n {
                    return fail(format!("a list in {} lies outside its section", SECTION_NAMES[table as usize]));
                }
            }
        }
        Ok(())
    }

    /// Checks the history's records: rows and string ids that exist, and
    /// the versions by row a permutation's worth of valid indices.
    fn check_history(&self, buf: &[u8], strings: usize) -> Result<(), CatalogSnapshotError> {
        use Section::*;
        let n = self.n;
        let (v, by_row, p) = (self.of(buf, Versions), self.of(buf, VersionsByRow), self.of(buf, Periods));
        let count = v.len() / crate::history::VERSION;
        let id_ok = |id: u32| (id as usize) < strings || crate::history::is_own(id);
        let versions_ok = v.len() % crate::history::VERSION == 0
            && (0..count).all(|k| {
                let at = |w: usize| u32_at(v, crate::history::VERSION * k + 4 * w);
                (at(0) as usize) < n && id_ok(at(1)) && id_ok(at(2))
            })
            && by_row.len() == 4 * count
            && (0..count).all(|k| (u32_at(by_row, 4 * k) as usize) < count);
        let periods = p.len() / crate::history::PERIOD;
        let periods_ok = p.len() % crate::history::PERIOD == 0
            && (0..periods).all(|k| {
                let at = |w: usize| u32_at(p, crate::history::PERIOD * k + 4 * w);
                id_ok(at(0) & !(1 << 31)) && (at(1) as usize) < n && id_ok(at(2))
            });
        if !versions_ok || !periods_ok {
            return Err(CatalogSnapshotError("a history record names a row or string that does not exist".into()));
        }
        Ok(())
    }
}

/// Attribute lists: BSE, NSE, the three bands, the three statuses.
pub(crate) const ATTR_LISTS: usize = 8;
