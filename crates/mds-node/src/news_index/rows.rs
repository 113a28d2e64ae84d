//! The rows of the news index, compact ([`Rows`]): each article's list
//! fields as a record of a few bytes plus its own text compressed, written
//! back as the JSON the list shows when a page is made ([`Rows::write_json`]).
//!
//! What an article's list JSON is made of, and how each part is held:
//! - **its own text** (slug, headline, subheadline, excerpt, URL): JSON-
//!   escaped once, joined, and compressed with one FSST symbol table
//!   (Boncz, Neumann, Leis, VLDB 2020: up to 255 symbols of 1 to 8 bytes,
//!   each written as a one-byte code, anything else as an escape and the
//!   byte) trained on the first batch of the build. FSST decodes any
//!   string on its own, without a block around it, at a few nanoseconds a
//!   code, so a page decodes only its own rows. The `fsst-rs` crate trains
//!   the table and compresses; decoding is [`Symbols::decode`], here, and
//!   every row is decoded once at build and compared with what was
//!   compressed (a row that does not come back is held escaped, byte by
//!   byte), so what a page shows never rests on the compressor;
//! - **values that repeat** across articles (category, tags, ISIN, ticker,
//!   company name, author, hero image): held once per field, already
//!   written as JSON, and named in the record by number; past
//!   [`MAX_DISTINCT`] values in a field (a field that does not repeat) a
//!   new value is held in the row's text instead;
//! - **instants**: `published_at` is the index's own column (the list
//!   order), `updated_at` seconds from it and nanoseconds, as varints; both
//!   written by [`mds_domain::time::write_utc`].
//!
//! A record is `codes_len | codes | fields`, every number a LEB128
//! varint: `fields` says, in wire order, each field's length in the
//! decoded text, its value's number, or `null`. Every record's offset is
//! kept (8 bytes a row: finding a row by skipping the records before it,
//! from one offset in 16, cost a chain of cache misses that was 18 % of a
//! made page's CPU).
//!
//! In a snapshot ([`Rows::encode_head`], [`RowsHead`]) the rows are the
//! symbol table, the held values and the records, without their offsets:
//! loading walks each record once ([`check_record`]), which finds where it
//! ends and checks everything [`Rows::write_json`] and [`Rows::slug_into`]
//! take for granted. The records are the snapshot's last part, so that a
//! loaded snapshot's buffer becomes them, in place. The order of a record's fields is written three
//! times, then: by [`RowsBuilder::push`], read by [`Rows::write_json`] and
//! checked by [`check_record`]; a round-trip test holds them together
//! (`news_index/snapshot.rs`).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use mds_domain::ArticleSummary;
use mds_domain::time::write_utc;

use super::snapshot::{Input, NewsSnapshotError, put_bytes, put_len};

/// The most values a field holds once; a field with more (not a repeating
/// value) has the rest in the rows' text.
pub(super) const MAX_DISTINCT: usize = 1 << 16;

/// The FSST code of an escape: the next byte stands for itself.
const ESCAPE: u8 = 255;

/// The keys and fields, in the list's order, of the held values that
/// follow `tags` in a row's JSON.
const HELD_AFTER_TAGS: [(&[u8], Field); 5] = [
    (b",\"isin\":", Field::Isin),
    (b",\"ticker\":", Field::Ticker),
    (b",\"company_name\":", Field::CompanyName),
    (b",\"author_name\":", Field::AuthorName),
    (b",\"hero_image\":", Field::HeroImage),
];

/// The fields whose values are held once, in their [`Rows::values`] order.
#[derive(Debug, Clone, Copy)]
enum Field {
    Category,
    Tag,
    Isin,
    Ticker,
    CompanyName,
    AuthorName,
    HeroImage,
}

/// How many [`Field`]s.
const FIELDS: usize = 7;

/// The list fields of every article of an index, in list order; see the
/// [module](self).
#[derive(Debug, Default)]
pub(super) struct Rows {
    /// The records, one after another.
    records: Vec<u8>,
    /// Where each record starts (its end is the next one's start).
    starts: Vec<usize>,
    /// The symbol table the text was compressed with.
    symbols: Symbols,
    /// Per [`Field`]: its values, each written as JSON (a string, quoted
    /// and escaped), by number.
    values: [Vec<Box<[u8]>>; FIELDS],
}

/// An FSST symbol table, for decoding.
#[derive(Debug, Clone)]
struct Symbols {
    /// Code → its symbol's bytes (only the first `lens[code]` count). The
    /// escape, 255, has an entry too (no bytes), so that any byte indexes
    /// the table without a bounds check.
    bytes: Box<[[u8; 8]; 256]>,
    /// Code → its symbol's length (0 for the escape).
    lens: [u8; 256],
}

impl Default for Symbols {
    /// The table of no symbol: every byte escaped.
    fn default() -> Self {
        Symbols { bytes: Box::new([[0; 8]; 256]), lens: [0; 256] }
    }
}

/// The bytes [`Symbols::decode_plain`] writes past a group of 8 codes at
/// most: 8 symbols of up to 8 bytes, the last written whole.
const WINDOW: usize = 72;

impl Symbols {
    /// The table `compressor` compresses with.
    fn of(compressor: &fsst::Compressor) -> Self {
        let mut table = Symbols::default();
        for (code, (symbol, len)) in compressor.symbol_table().iter().zip(compressor.symbol_lengths()).enumerate() {
            table.bytes[code] = symbol.to_u64().to_le_bytes();
            table.lens[code] = *len;
        }
        table
    }

    /// Decodes `codes` into the start of `buf`, stopping once at least
    /// `until` bytes are out; returns how many bytes are out. `buf` is
    /// grown to 8 bytes a code (and a [`WINDOW`]) when shorter, and what it
    /// held is written over: a buffer kept across rows is never cleared or
    /// filled again.
    fn decode(&self, codes: &[u8], buf: &mut Vec<u8>, until: usize) -> usize {
        // A code gives at most 8 bytes (an escape, two codes, gives one):
        // room for them all first, then every symbol written whole, 8 bytes
        // at an index, and the position moved by its length. No capacity
        // check or copy of a variable length per code.
        if buf.len() < codes.len() * 8 + WINDOW {
            buf.resize(codes.len() * 8 + WINDOW, 0);
        }
        if until >= codes.len() * 8 && !codes.contains(&ESCAPE) {
            return self.decode_plain(codes, buf);
        }
        let (mut i, mut at) = (0, 0);
        while i < codes.len() && at < until {
            let code = codes[i];
            if code == ESCAPE {
                buf[at] = codes[i + 1];
                at += 1;
                i += 2;
            } else {
                buf[at..at + 8].copy_from_slice(&self.bytes[usize::from(code)]);
                at += usize::from(self.lens[usize::from(code)]);
                i += 1;
            }
        }
        at
    }

    /// [`Symbols::decode`] of codes without an escape (most rows), all of
    /// them: 8 codes at a time, each group written into a window of
    /// [`WINDOW`] bytes checked once, at offsets the compiler can see stay
    /// inside it (under 64 by a mask, which 8 symbols of at most 8 bytes
    /// never reach: the mask changes nothing). No check per code, then.
    fn decode_plain(&self, codes: &[u8], buf: &mut [u8]) -> usize {
        let mut at = 0;
        let mut groups = codes.chunks_exact(8);
        for group in &mut groups {
            let window: &mut [u8; WINDOW] = (&mut buf[at..at + WINDOW]).try_into().expect("WINDOW bytes");
            let mut p = 0;
            for &code in group {
                let q = p & 63;
                window[q..q + 8].copy_from_slice(&self.bytes[usize::from(code)]);
                p = q + usize::from(self.lens[usize::from(code)]);
            }
            at += p;
        }
        for &code in groups.remainder() {
            buf[at..at + 8].copy_from_slice(&self.bytes[usize::from(code)]);
            at += usize::from(self.lens[usize::from(code)]);
        }
        at
    }

    /// The length of the text `codes` decode to (the sum of their
    /// symbols' lengths, nothing decoded); `None` when they end in an
    /// escape without its byte.
    fn decoded_len(&self, codes: &[u8]) -> Option<usize> {
        let (mut len, mut i) = (0, 0);
        while i < codes.len() {
            if codes[i] == ESCAPE {
                if i + 1 == codes.len() {
                    return None;
                }
                len += 1;
                i += 2;
            } else {
                len += usize::from(self.lens[usize::from(codes[i])]);
                i += 1;
            }
        }
        Some(len)
    }
}

/// Appends `n` as a LEB128 varint.
fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// A reader of a record.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// The varint at the position, and past it.
    fn varint(&mut self) -> u64 {
        let mut n = 0u64;
        let mut shift = 0;
        loop {
            let b = self.bytes[self.at];
            self.at += 1;
            n |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return n;
            }
            shift += 7;
        }
    }

    /// A varint that counts bytes.
    fn size(&mut self) -> usize {
        self.varint() as usize
    }

    /// The next `n` bytes, and past them.
    fn take(&mut self, n: usize) -> &'a [u8] {
        let out = &self.bytes[self.at..self.at + n];
        self.at += n;
        out
    }
}

/// The zigzag form of a signed number (small either side of 0, small).
fn zigzag(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

/// The signed number of a zigzag form.
fn unzigzag(n: u64) -> i64 {
    ((n >> 1) as i64) ^ -((n & 1) as i64)
}

/// Appends the JSON string of `s` without its quotes (serde_json's own
/// escaping, so the bytes are the store path's).
fn put_escaped(out: &mut Vec<u8>, s: &str) {
    let at = out.len();
    serde_json::to_writer(&mut *out, s).expect("a string serializes");
    out.remove(at);
    out.pop();
}

/// Builds [`Rows`] a row at a time, in list order.
pub(super) struct RowsBuilder {
    rows: Rows,
    /// The most values a field holds once ([`MAX_DISTINCT`]).
    max_distinct: usize,
    /// `None` until [`RowsBuilder::train`].
    compressor: Option<fsst::Compressor>,
    /// Per [`Field`]: the number of each value held once.
    numbers: [HashMap<Box<str>, u32>; FIELDS],
    /// The row being written: its text, and its fields.
    text: Vec<u8>,
    fields: Vec<u8>,
    /// The row's text decoded back, to compare.
    check: Vec<u8>,
}

impl RowsBuilder {
    /// A builder holding at most `max_distinct` values of a field once.
    pub(super) fn new(max_distinct: usize) -> Self {
        RowsBuilder {
            rows: Rows::default(),
            max_distinct,
            compressor: None,
            numbers: Default::default(),
            text: Vec::new(),
            fields: Vec::new(),
            check: Vec::new(),
        }
    }

    /// How many rows it holds.
    pub(super) fn len(&self) -> usize {
        self.rows.len()
    }

    /// Trains the symbol table on the text of `sample` (the first batch).
    pub(super) fn train(&mut self, sample: &[ArticleSummary]) {
        let texts: Vec<Vec<u8>> = sample
            .iter()
            .map(|a| {
                let mut t = Vec::new();
                for s in [Some(a.slug.as_str()), Some(&a.headline), a.subheadline.as_deref(), a.excerpt.as_deref()] {
                    put_escaped(&mut t, s.unwrap_or_default());
                }
                put_escaped(&mut t, a.url.as_deref().unwrap_or_default());
                t
            })
            .collect();
        let compressor = fsst::Compressor::train(&texts.iter().map(Vec::as_slice).collect());
        self.rows.symbols = Symbols::of(&compressor);
        self.compressor = Some(compressor);
    }

    /// Appends `a`'s record.
    pub(super) fn push(&mut self, a: &ArticleSummary) {
        // Every field named, so a field added to the summary is a compile
        // error here until it is held.
        let ArticleSummary {
            slug,
            headline,
            subheadline,
            excerpt,
            category,
            tags,
            isin,
            ticker,
            company_name,
            author_name,
            hero_image,
            url,
            published_at,
            updated_at,
        } = a;
        self.text.clear();
        self.fields.clear();
        self.put_text(Some(slug.as_str()));
        self.put_text(Some(headline));
        self.put_text(subheadline.as_deref());
        self.put_text(excerpt.as_deref());
        self.put_value(Field::Category, category.as_deref());
        put_varint(&mut self.fields, tags.len() as u64);
        for tag in tags {
            self.put_value(Field::Tag, Some(tag));
        }
        self.put_value(Field::Isin, isin.as_ref().map(|i| i.as_str()));
        self.put_value(Field::Ticker, ticker.as_deref());
        self.put_value(Field::CompanyName, company_name.as_deref());
        self.put_value(Field::AuthorName, author_name.as_deref());
        self.put_value(Field::HeroImage, hero_image.as_deref());
        self.put_text(url.as_deref());
        // `published_at` is the index's column.
        match updated_at {
            None => put_varint(&mut self.fields, 0),
            Some(t) => {
                let from = published_at.map_or(0, |p| p.timestamp());
                put_varint(&mut self.fields, 1 + zigzag(t.timestamp() - from));
                put_varint(&mut self.fields, u64::from(t.timestamp_subsec_nanos()));
            }
        }
        let codes = self.codes();
        let mut head = Vec::with_capacity(10);
        put_varint(&mut head, codes.len() as u64);
        let rows = &mut self.rows;
        rows.starts.push(rows.records.len());
        rows.records.extend_from_slice(&head);
        rows.records.extend_from_slice(&codes);
        rows.records.extend_from_slice(&self.fields);
    }

    /// The row's text compressed, checked by decoding it back: escaped
    /// byte by byte when it does not come back whole.
    fn codes(&mut self) -> Vec<u8> {
        let codes = self.compressor.as_ref().map(|c| c.compress(&self.text)).unwrap_or_default();
        let n = self.rows.symbols.decode(&codes, &mut self.check, usize::MAX);
        if self.check[..n] == self.text[..] {
            return codes;
        }
        self.text.iter().flat_map(|&b| [ESCAPE, b]).collect()
    }

    /// A text of the row's own: `0` for `null`, else 1 + its length in
    /// the text.
    fn put_text(&mut self, s: Option<&str>) {
        match s {
            None => put_varint(&mut self.fields, 0),
            Some(s) => {
                let at = self.text.len();
                put_escaped(&mut self.text, s);
                put_varint(&mut self.fields, 1 + (self.text.len() - at) as u64);
            }
        }
    }

    /// A value of `field`: `0` for `null`, `2n + 1` for the value numbered
    /// `n`, `2k + 2` for one in the row's text (`k` bytes).
    fn put_value(&mut self, field: Field, s: Option<&str>) {
        let Some(s) = s else {
            put_varint(&mut self.fields, 0);
            return;
        };
        let (numbers, values) = (&mut self.numbers[field as usize], &mut self.rows.values[field as usize]);
        let number = match numbers.get(s) {
            Some(&n) => Some(n),
            None if values.len() < self.max_distinct => {
                let n = u32::try_from(values.len()).expect("MAX_DISTINCT fits");
                values.push(serde_json::to_vec(s).expect("a string serializes").into_boxed_slice());
                numbers.insert(s.into(), n);
                Some(n)
            }
            None => None,
        };
        match number {
            Some(n) => put_varint(&mut self.fields, 2 * u64::from(n) + 1),
            None => {
                let at = self.text.len();
                put_escaped(&mut self.text, s);
                put_varint(&mut self.fields, 2 * (self.text.len() - at) as u64 + 2);
            }
        }
    }

    /// The rows, their buffers trimmed to what they hold.
    pub(super) fn finish(self) -> Rows {
        let mut rows = self.rows;
        rows.records.shrink_to_fit();
        rows.starts.shrink_to_fit();
        for values in &mut rows.values {
            values.shrink_to_fit();
        }
        rows
    }
}

impl Rows {
    /// How many rows.
    pub(super) fn len(&self) -> usize {
        self.starts.len()
    }

    /// The bytes held (records, offsets, values, symbol table), for the
    /// log and the size test.
    pub(super) fn heap_bytes(&self) -> usize {
        let values: usize = self.values.iter().flatten().map(|v| v.len() + size_of::<Box<[u8]>>()).sum();
        self.records.capacity() + self.starts.capacity() * size_of::<usize>() + values + size_of::<[[u8; 8]; 256]>()
    }

    /// Row `r`'s record (found, not read: its bytes are not touched).
    pub(super) fn record(&self, r: usize) -> &[u8] {
        let end = self.starts.get(r + 1).copied().unwrap_or(self.records.len());
        &self.records[self.starts[r]..end]
    }

    /// Row `r`'s slug, into `out` (cleared first).
    pub(super) fn slug_into(&self, r: usize, out: &mut Vec<u8>) {
        let mut rec = Reader { bytes: self.record(r), at: 0 };
        let n = rec.size();
        let codes = rec.take(n);
        let slug_len = rec.size() - 1;
        let n = self.symbols.decode(codes, out, slug_len);
        out.truncate(n.min(slug_len));
    }

    /// Appends row `r` as the list shows it (serde_json's bytes of its
    /// [`ArticleSummary`]), its `published_at` being `published`; `text` is
    /// a buffer to decode into (its bytes are written over).
    pub(super) fn write_json(&self, r: usize, published: Option<DateTime<Utc>>, out: &mut Vec<u8>, text: &mut Vec<u8>) {
        self.write_record_json(self.record(r), published, out, text);
    }

    /// [`Rows::write_json`] of a row by its record ([`Rows::record`]).
    pub(super) fn write_record_json(
        &self,
        record: &[u8],
        published: Option<DateTime<Utc>>,
        out: &mut Vec<u8>,
        text: &mut Vec<u8>,
    ) {
        let mut rec = Reader { bytes: record, at: 0 };
        let n = rec.size();
        let codes = rec.take(n);
        let n = self.symbols.decode(codes, text, usize::MAX);
        // The row's JSON is its text, the keys (about 200 bytes), the held
        // values and two instants: room for it in one step.
        out.reserve(n + 512);
        let mut w = RowWriter { rec, text: Reader { bytes: &text[..n], at: 0 }, values: &self.values, out };
        w.out.extend_from_slice(b"{\"slug\":");
        w.text();
        w.out.extend_from_slice(b",\"headline\":");
        w.text();
        w.out.extend_from_slice(b",\"subheadline\":");
        w.text();
        w.out.extend_from_slice(b",\"excerpt\":");
        w.text();
        w.out.extend_from_slice(b",\"category\":");
        w.value(Field::Category);
        w.out.extend_from_slice(b",\"tags\":[");
        for i in 0..w.rec.size() {
            if i > 0 {
                w.out.push(b',');
            }
            w.value(Field::Tag);
        }
        w.out.push(b']');
        for (key, field) in HELD_AFTER_TAGS {
            w.out.extend_from_slice(key);
            w.value(field);
        }
        w.out.extend_from_slice(b",\"url\":");
        w.text();
        w.out.extend_from_slice(b",\"published_at\":");
        put_instant(published, w.out);
        w.out.extend_from_slice(b",\"updated_at\":");
        let updated = match w.rec.varint() {
            0 => None,
            n => {
                let secs = published.map_or(0, |p| p.timestamp()) + unzigzag(n - 1);
                let nanos = u32::try_from(w.rec.varint()).expect("nanoseconds it was made of");
                Some(DateTime::from_timestamp(secs, nanos).expect("an instant it was made of"))
            }
        };
        put_instant(updated, w.out);
        w.out.push(b'}');
    }
}

impl Rows {
    /// Appends what a snapshot holds of the rows before their records
    /// (see `snapshot.rs`): the symbol table (the 255 lengths, then the 255
    /// symbols of 8 bytes), per [`Field`] its held values, the number of
    /// rows, the length of the records. The records themselves are
    /// [`Rows::records`] (or [`Rows::into_records`]), written last.
    pub(super) fn encode_head(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.symbols.lens[..255]);
        out.extend_from_slice(self.symbols.bytes[..255].as_flattened());
        for held in &self.values {
            put_len(out, held.len());
            for value in held {
                put_bytes(out, value);
            }
        }
        put_len(out, self.len());
        put_len(out, self.records.len());
    }

    /// The records, one after another.
    pub(super) fn records(&self) -> &[u8] {
        &self.records
    }

    /// The records, the rest dropped.
    pub(super) fn into_records(self) -> Vec<u8> {
        self.records
    }
}

/// What a snapshot holds of the rows before their records
/// ([`Rows::encode_head`]), read and checked; the rows once given their
/// records ([`RowsHead::with_records`]).
pub(super) struct RowsHead {
    symbols: Symbols,
    values: [Vec<Box<[u8]>>; FIELDS],
    /// How many rows.
    n: usize,
    /// The length of their records.
    records: usize,
}

impl RowsHead {
    /// Reads what [`Rows::encode_head`] wrote.
    pub(super) fn decode(input: &mut Input<'_>) -> Result<RowsHead, NewsSnapshotError> {
        let mut symbols = Symbols::default();
        symbols.lens[..255].copy_from_slice(input.take(size_of::<[u8; 255]>(), "the symbol table")?);
        if symbols.lens.iter().any(|&len| len > 8) {
            return Err(NewsSnapshotError::new("a symbol is longer than 8 bytes"));
        }
        let table = input.take(size_of::<[[u8; 8]; 255]>(), "the symbol table")?;
        symbols.bytes[..255].as_flattened_mut().copy_from_slice(table);
        let mut values: [Vec<Box<[u8]>>; FIELDS] = Default::default();
        for held in &mut values {
            // Each value is its length at least.
            let count = input.count(8, "the held values")?;
            held.reserve_exact(count);
            for _ in 0..count {
                let value = input.bytes("a held value")?;
                if serde_json::from_slice::<String>(value).is_err() {
                    return Err(NewsSnapshotError::new("a held value is not a JSON string"));
                }
                held.push(value.into());
            }
        }
        let n = input.count(1, "the rows")?;
        let records = input.count(1, "the records")?;
        Ok(RowsHead { symbols, values, n, records })
    }

    /// How many rows.
    pub(super) fn len(&self) -> usize {
        self.n
    }

    /// The length of their records.
    pub(super) fn records_len(&self) -> usize {
        self.records
    }

    /// The rows, given their records (as many bytes as
    /// [`RowsHead::records_len`] says), each checked ([`check_record`]);
    /// `published` holds the seconds of the dated rows' `published_at` (the
    /// first rows), which a record's `updated_at` is written from.
    pub(super) fn with_records(self, records: Vec<u8>, published: &[i64]) -> Result<Rows, NewsSnapshotError> {
        let RowsHead { symbols, values, n, .. } = self;
        // A record is a few bytes at least, so this bounds the offsets'
        // allocation by the snapshot's size.
        if n > records.len() {
            return Err(NewsSnapshotError::new(format!("{n} rows in {} bytes of records", records.len())));
        }
        let mut starts = Vec::with_capacity(n);
        let mut at = 0;
        for r in 0..n {
            starts.push(at);
            at = check_record(&records, at, &symbols, &values, published.get(r).copied())
                .map_err(|why| NewsSnapshotError::new(format!("row {r}: {why}")))?;
        }
        if at != records.len() {
            return Err(NewsSnapshotError::new("bytes after the last record"));
        }
        Ok(Rows { records, starts, symbols, values })
    }
}

/// Checks the record at `at` of `records` as [`Rows::write_json`] and
/// [`Rows::slug_into`] read it, given the symbol table and the held values
/// and its row's `published_at` seconds (`None`: undated); returns where
/// it ends. Its varints lie within the records and fit 64 bits, its held
/// values exist, its slug is not `null`, its text lengths add up to what its
/// codes decode to (the sum of their symbols' lengths: nothing decoded), and
/// its `updated_at` is an instant.
fn check_record(
    records: &[u8],
    at: usize,
    symbols: &Symbols,
    values: &[Vec<Box<[u8]>>; FIELDS],
    published: Option<i64>,
) -> Result<usize, &'static str> {
    let mut rec = Checked { bytes: records, at, values, text: 0 };
    let n = rec.size()?;
    let codes = rec.take(n)?;
    let decoded = symbols.decoded_len(codes).ok_or("its codes end in an escape")?;
    match rec.varint()? {
        0 => return Err("its slug is null"),
        n => rec.add_text(n - 1)?,
    }
    // Headline, subheadline, excerpt.
    for _ in 0..3 {
        rec.text()?;
    }
    rec.value(Field::Category)?;
    for _ in 0..rec.varint()? {
        rec.value(Field::Tag)?;
    }
    for (_, field) in HELD_AFTER_TAGS {
        rec.value(field)?;
    }
    rec.text()?;
    match rec.varint()? {
        0 => {}
        n => {
            let nanos = u32::try_from(rec.varint()?).map_err(|_| "its updated_at has no nanoseconds")?;
            let secs = published.unwrap_or(0).checked_add(unzigzag(n - 1)).ok_or("its updated_at overflows")?;
            DateTime::from_timestamp(secs, nanos).ok_or("its updated_at is not an instant")?;
        }
    }
    if rec.text != decoded as u64 {
        return Err("its text lengths do not add up to its text");
    }
    Ok(rec.at)
}

/// A reader of a record being checked ([`check_record`]): every read may
/// fail; it adds up the text the fields take.
struct Checked<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The held values, per [`Field`].
    values: &'a [Vec<Box<[u8]>>; FIELDS],
    /// The bytes of text the fields read so far take.
    text: u64,
}

impl<'a> Checked<'a> {
    /// The varint at the position, and past it; at most 10 bytes, so it
    /// fits 64 bits as [`Reader::varint`] reads it.
    fn varint(&mut self) -> Result<u64, &'static str> {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.bytes.get(self.at).ok_or("it runs past the records")?;
            self.at += 1;
            n |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(n);
            }
        }
        Err("a varint is longer than 64 bits")
    }

    /// A varint that counts bytes.
    fn size(&mut self) -> Result<usize, &'static str> {
        usize::try_from(self.varint()?).map_err(|_| "a length does not fit memory")
    }

    /// The next `n` bytes, and past them.
    fn take(&mut self, n: usize) -> Result<&'a [u8], &'static str> {
        let out = self.bytes.get(self.at..).and_then(|rest| rest.get(..n)).ok_or("it runs past the records")?;
        self.at += n;
        Ok(out)
    }

    /// Counts `n` bytes of text.
    fn add_text(&mut self, n: u64) -> Result<(), &'static str> {
        self.text = self.text.checked_add(n).ok_or("its text lengths overflow")?;
        Ok(())
    }

    /// A text of the row's own (see [`RowsBuilder::put_text`]).
    fn text(&mut self) -> Result<(), &'static str> {
        match self.varint()? {
            0 => Ok(()),
            n => self.add_text(n - 1),
        }
    }

    /// A value of `field` (see [`RowsBuilder::put_value`]).
    fn value(&mut self, field: Field) -> Result<(), &'static str> {
        match self.varint()? {
            0 => Ok(()),
            n if n % 2 == 1 => match usize::try_from(n / 2) {
                Ok(i) if i < self.values[field as usize].len() => Ok(()),
                _ => Err("it names a held value that does not exist"),
            },
            n => self.add_text(n / 2 - 1),
        }
    }
}

/// Writes one row's JSON from its record and its decoded text.
struct RowWriter<'a> {
    /// The record, at the next field.
    rec: Reader<'a>,
    /// The decoded text, at the next field's.
    text: Reader<'a>,
    /// The values held once.
    values: &'a [Vec<Box<[u8]>>; FIELDS],
    out: &'a mut Vec<u8>,
}

impl RowWriter<'_> {
    /// A text of the row's own (see [`RowsBuilder::put_text`]).
    fn text(&mut self) {
        match self.rec.size() {
            0 => self.out.extend_from_slice(b"null"),
            n => self.quoted(n - 1),
        }
    }

    /// A value of `field` (see [`RowsBuilder::put_value`]).
    fn value(&mut self, field: Field) {
        match self.rec.size() {
            0 => self.out.extend_from_slice(b"null"),
            n if n % 2 == 1 => self.out.extend_from_slice(&self.values[field as usize][n / 2]),
            n => self.quoted(n / 2 - 1),
        }
    }

    /// The next `n` bytes of the text, quoted.
    fn quoted(&mut self, n: usize) {
        self.out.push(b'"');
        self.out.extend_from_slice(self.text.take(n));
        self.out.push(b'"');
    }
}

/// Writes an instant as the wire does, or `null`.
fn put_instant(t: Option<DateTime<Utc>>, out: &mut Vec<u8>) {
    match t {
        None => out.extend_from_slice(b"null"),
        Some(t) => {
            out.push(b'"');
            write_utc(&t, out);
            out.push(b'"');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use proptest::prelude::*;

    /// Any text: unicode, quotes, backslashes, control characters.
    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            "[a-z\"\\\\\u{0}\u{1f}\u{7f}é€😀 ]{0,10}",
            prop::sample::select(vec!["x", "y", "\"q\"", ""]).prop_map(str::to_owned),
        ]
    }

    fn instant() -> impl Strategy<Value = DateTime<Utc>> {
        (-62_135_596_800i64..253_402_300_799, prop_oneof![Just(0u32), 0u32..1_000_000_000])
            .prop_map(|(s, n)| Utc.timestamp_opt(s, n).unwrap())
    }

    fn summary() -> impl Strategy<Value = ArticleSummary> {
        let isins = &["INE002A01018", "INE467B01029"];
        mds_testkit::arb::article(text().boxed(), text().boxed(), instant().boxed(), isins).prop_map(|a| a.summary())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

        /// Every row is written back as serde_json writes its summary,
        /// with its values held once or (past the cap) in its text, the
        /// table trained on some rows or on none, and its slug read back.
        #[test]
        fn rows_write_the_summarys_json(
            summaries in prop::collection::vec(summary(), 0..40),
            max_distinct in 0usize..4,
            trained in 0usize..40,
        ) {
            let mut b = RowsBuilder::new(max_distinct);
            b.train(&summaries[..trained.min(summaries.len())]);
            for s in &summaries {
                b.push(s);
            }
            let rows = b.finish();
            prop_assert_eq!(rows.len(), summaries.len());
            let (mut out, mut text, mut slug) = (Vec::new(), Vec::new(), Vec::new());
            for (r, s) in summaries.iter().enumerate() {
                out.clear();
                rows.write_json(r, s.published_at, &mut out, &mut text);
                prop_assert_eq!(String::from_utf8(out.clone()).unwrap(), serde_json::to_string(s).unwrap());
                rows.slug_into(r, &mut slug);
                prop_assert_eq!(&slug[..], s.slug.as_str().as_bytes());
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

        /// Codes decode to their symbols one after another, on the path
        /// without escapes (8 at a time) as on the other, into a buffer
        /// holding anything before.
        #[test]
        fn codes_decode_to_their_symbols(
            symbols in prop::collection::vec(prop::collection::vec(any::<u8>(), 1..=8), 255),
            codes in prop::collection::vec(0u8..255, 0..70),
            escaped in prop::option::of(any::<u8>()),
            held in prop::collection::vec(any::<u8>(), 0..600),
        ) {
            let mut table = Symbols::default();
            for (code, symbol) in symbols.iter().enumerate() {
                table.bytes[code][..symbol.len()].copy_from_slice(symbol);
                table.lens[code] = symbol.len() as u8;
            }
            let mut codes = codes;
            let mut want: Vec<u8> = codes.iter().flat_map(|&c| symbols[usize::from(c)].clone()).collect();
            if let Some(b) = escaped {
                codes.extend([ESCAPE, b]);
                want.push(b);
            }
            let mut buf = held;
            let n = table.decode(&codes, &mut buf, usize::MAX);
            prop_assert_eq!(&buf[..n], &want[..]);
            // Stopped at a length: the general path, the same text.
            let n = table.decode(&codes, &mut buf, want.len());
            prop_assert_eq!(&buf[..n], &want[..]);
        }
    }

    #[test]
    fn varints_and_zigzag_round_trip() {
        for n in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, n);
            assert_eq!(Reader { bytes: &out, at: 0 }.varint(), n);
        }
        for n in [0i64, 1, -1, 63, -64, i64::MAX, i64::MIN] {
            assert_eq!(unzigzag(zigzag(n)), n);
        }
    }

    /// Rows of one record, `record`, encoded and read back; the table of
    /// no symbol and one held category, `"c"`; the row's `published_at`
    /// seconds are `published`.
    fn decoded(record: &[u8], published: Option<i64>) -> Result<Rows, NewsSnapshotError> {
        read(&encoded(record), published.as_slice())
    }

    /// The head and the records of one row, `record`, as a snapshot holds
    /// them; the table of no symbol and one held category, `"c"`.
    fn encoded(record: &[u8]) -> Vec<u8> {
        let mut rows = Rows { records: record.to_vec(), starts: vec![0], ..Rows::default() };
        rows.values[Field::Category as usize].push(b"\"c\"".to_vec().into_boxed_slice());
        let mut bytes = Vec::new();
        rows.encode_head(&mut bytes);
        bytes.extend_from_slice(rows.records());
        bytes
    }

    /// The rows of `encoded` bytes, read as a snapshot's are.
    fn read(bytes: &[u8], published: &[i64]) -> Result<Rows, NewsSnapshotError> {
        let mut input = Input::new(bytes);
        let head = RowsHead::decode(&mut input)?;
        let records = input.take(head.records_len(), "the records")?.to_vec();
        head.with_records(records, published)
    }

    /// The record of slug `a`, headline `b` (the text `ab`, escaped byte
    /// by byte), the held category, no other field, then `updated`.
    fn record(updated: &[u8]) -> Vec<u8> {
        let mut r = vec![4, ESCAPE, b'a', ESCAPE, b'b', 2, 2, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0];
        r.extend_from_slice(updated);
        r
    }

    #[track_caller]
    fn refused(record: &[u8], published: Option<i64>, why: &str) {
        match decoded(record, published) {
            Ok(_) => panic!("{record:?} accepted"),
            Err(e) => assert_eq!(e.to_string(), format!("news index snapshot refused: row 0: {why}")),
        }
    }

    /// A record is checked against everything its readers take for granted.
    #[test]
    fn records_are_checked_as_they_are_read() {
        let rows = decoded(&record(&[0]), None).unwrap();
        let mut out = Vec::new();
        rows.write_json(0, None, &mut out, &mut Vec::new());
        assert!(out.starts_with(br#"{"slug":"a","headline":"b","subheadline":null,"excerpt":null,"category":"c""#));
        let mut slug = Vec::new();
        rows.slug_into(0, &mut slug);
        assert_eq!(slug, b"a");
        // `updated_at` a second after `published_at`, nanoseconds 7.
        assert!(decoded(&record(&[1 + 2, 7]), Some(100)).is_ok());

        refused(&record(&[]), None, "it runs past the records");
        refused(&[9, ESCAPE, b'a'], None, "it runs past the records");
        refused(&[1, ESCAPE, 2], None, "its codes end in an escape");
        // One byte of a good record changed: (where, to what, the reason).
        for (at, value, why) in [
            (5, 0, "its slug is null"),
            (6, 3, "its text lengths do not add up to its text"),
            (6, 0, "its text lengths do not add up to its text"),
            (9, 3, "it names a held value that does not exist"),
            (10, 100, "it runs past the records"),
        ] {
            let mut bad = record(&[0]);
            bad[at] = value;
            refused(&bad, None, why);
        }
        refused(&record(&[0x80; 11]), None, "a varint is longer than 64 bits");
        refused(&record(&[3, 0xff, 0xff, 0xff, 0xff, 0x7f]), None, "its updated_at has no nanoseconds");
        refused(&record(&[1 + 2 * 5, 0]), Some(i64::MAX), "its updated_at overflows");
        let mut far = Vec::new();
        put_varint(&mut far, 1 + zigzag(1 << 60));
        far.push(0);
        refused(&record(&far), None, "its updated_at is not an instant");
    }

    /// The rows' own bytes around the records are checked too.
    #[test]
    fn tables_counts_and_trailing_bytes_are_checked() {
        let bytes = encoded(&record(&[0]));
        let reason = |bytes: &[u8]| read(bytes, &[]).map(|_| ()).unwrap_err().to_string();
        let mut long_symbol = bytes.clone();
        long_symbol[3] = 9;
        assert!(reason(&long_symbol).contains("a symbol is longer than 8 bytes"));
        // The held category's JSON, after the table and two counts.
        let category = 255 + 255 * 8 + 8 + 8;
        let mut not_json = bytes.clone();
        not_json[category] = b'x';
        assert!(reason(&not_json).contains("a held value is not a JSON string"));
        // More rows than records can hold (its count before the records'
        // length and the records).
        let count = bytes.len() - record(&[0]).len() - 16;
        let mut more = bytes.clone();
        more[count..count + 8].copy_from_slice(&20u64.to_le_bytes());
        assert_eq!(reason(&more), "news index snapshot refused: 20 rows in 18 bytes of records");
        // A byte after the one record.
        assert!(reason(&encoded(&record(&[0, 0]))).contains("bytes after the last record"));
    }

    /// A row the compressor does not give back whole is held escaped: the
    /// table of no symbol decodes it.
    #[test]
    fn escaped_text_decodes_with_any_table() {
        let table = Symbols::default();
        let codes: Vec<u8> = b"any \xff text".iter().flat_map(|&b| [ESCAPE, b]).collect();
        let mut out = b"held before".to_vec();
        let n = table.decode(&codes, &mut out, usize::MAX);
        assert_eq!(&out[..n], b"any \xff text");
        assert_eq!(table.decode(&codes, &mut out, 3), 3, "stops at `until`");
        assert_eq!(&out[..3], b"any");
    }
}
