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

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use mds_domain::ArticleSummary;
use mds_domain::time::write_utc;

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
