//! The news index as bytes, its snapshot ([`NewsIndex::to_bytes`],
//! [`NewsIndex::into_bytes`], [`NewsIndex::from_bytes`]): saved in the
//! store under its news generation, so that a node starting later loads it
//! instead of reading every article (`crate::news_load`).
//!
//! ```text
//! magic "MDSNEWS" + version (8) | crc32 of the rest (4) | generation (i64)
//! | secs: count, then i64 each | nanos: count, then u32 each
//! | the rows' head (`rows.rs`): symbol table, held values, row count,
//! |   the records' length
//! | postings by ISIN, ticker, category, tag: each a count, then per key,
//! |   in byte order: key (length, bytes), rows (count, then u32 each)
//! | the records
//! ```
//! Every count and length is a u64, every number little-endian. The
//! records, most of the bytes, come last: a loaded snapshot's buffer
//! becomes them (moved to its start, in place), and an index given up
//! whole ([`NewsIndex::into_bytes`]) becomes its snapshot around them, so
//! neither holds the records twice. Their offsets are not stored: loading
//! walks every record once (`rows::check_record`), which finds them.
//!
//! Loading checks everything a page relies on before the index is used,
//! so a damaged or foreign snapshot is refused with a reason, never served
//! and never a panic: the magic, version and checksum; every count against
//! the bytes left (nothing is allocated beyond the snapshot's own size);
//! each record (its varints within it, its held values existing, its text
//! lengths adding up to what its codes decode to, its `updated_at` an
//! instant); the instants, as many as the rows at most, each an instant;
//! every slug a slug, the rows in list order; the postings' keys in order,
//! their rows ascending and held.

use std::collections::HashMap;

use chrono::DateTime;
use mds_domain::Slug;

use super::rows::RowsHead;
use super::{NewsIndex, Postings, follows};

/// The first 8 bytes of every snapshot: a name and the format version.
const MAGIC: &[u8; 8] = b"MDSNEWS\x01";

/// Bytes before what the checksum covers: the magic and the checksum.
const HEADER: usize = 12;

/// Why bytes are not a news index snapshot this build can serve.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("news index snapshot refused: {0}")]
pub struct NewsSnapshotError(String);

impl NewsSnapshotError {
    /// A refusal for `reason`.
    pub(super) fn new(reason: impl Into<String>) -> Self {
        NewsSnapshotError(reason.into())
    }
}

impl NewsIndex {
    /// The index as a snapshot's bytes (see the [module](self)). The same
    /// index gives the same bytes (the postings are written in key order).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = self.head(self.rows.records().len());
        out.extend_from_slice(self.rows.records());
        seal(&mut out);
        out
    }

    /// [`NewsIndex::to_bytes`] of an index no longer needed: its records
    /// become the snapshot's buffer, the rest of it dropped before they
    /// move, so the index and its bytes are not held both at once.
    pub fn into_bytes(self) -> Vec<u8> {
        let head = self.head(0);
        // A binding of its own, so the rest of the index is dropped at the
        // end of the block, before the records move.
        let mut out = {
            let index = self;
            index.rows.into_records()
        };
        out.splice(0..0, head);
        seal(&mut out);
        out
    }

    /// Everything a snapshot holds before the records, the checksum left
    /// zero, with room for `more` bytes after it.
    fn head(&self, more: usize) -> Vec<u8> {
        // More than the head needs (the offsets, 8 bytes a row, are not
        // written): one allocation, its tail never touched.
        let records = self.rows.records().len();
        let mut out = Vec::with_capacity(self.heap_bytes() - records + 4096 + more);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&self.generation.to_le_bytes());
        put_len(&mut out, self.secs.len());
        self.secs.iter().for_each(|s| out.extend_from_slice(&s.to_le_bytes()));
        put_len(&mut out, self.nanos.len());
        self.nanos.iter().for_each(|n| out.extend_from_slice(&n.to_le_bytes()));
        self.rows.encode_head(&mut out);
        for postings in self.postings() {
            put_postings(&mut out, postings);
        }
        out
    }

    /// The index `bytes` hold, checked whole (see the [module](self)), or
    /// why they are refused. The buffer becomes the index's records.
    pub fn from_bytes(mut bytes: Vec<u8>) -> Result<NewsIndex, NewsSnapshotError> {
        let refuse = |why: &str| Err(NewsSnapshotError::new(why));
        if bytes.len() < HEADER || bytes[..7] != MAGIC[..7] {
            return refuse("not a news index snapshot");
        }
        if bytes[..8] != MAGIC[..] {
            return refuse("written by a different news index format version");
        }
        let crc = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        if crc32fast::hash(&bytes[HEADER..]) != crc {
            return refuse("checksum mismatch (damaged)");
        }
        let mut input = Input::new(&bytes[HEADER..]);
        let generation = i64::from_le_bytes(input.array("the generation")?);
        let secs: Vec<i64> = input.arrays("the instants")?.map(i64::from_le_bytes).collect();
        let nanos: Vec<u32> = input.arrays("the instants")?.map(u32::from_le_bytes).collect();
        if secs.len() != nanos.len() {
            return refuse("as many seconds as nanoseconds are not held");
        }
        let head = RowsHead::decode(&mut input)?;
        let n = head.len();
        if secs.len() > n {
            return refuse("more instants than rows");
        }
        let by_isin = read_postings(&mut input, n, "isin")?;
        let by_ticker = read_postings(&mut input, n, "ticker")?;
        let by_category = read_postings(&mut input, n, "category")?;
        let by_tag = read_postings(&mut input, n, "tag")?;
        if input.left() != head.records_len() {
            return refuse("the records are not as long as the rows say");
        }
        // The records, moved to the buffer's start; the rest of it freed.
        let records_at = bytes.len() - head.records_len();
        bytes.drain(..records_at);
        bytes.shrink_to_fit();
        let rows = head.with_records(bytes, &secs)?;
        let index = NewsIndex { generation, secs, nanos, rows, by_isin, by_ticker, by_category, by_tag, search: None };
        index.check_list_order()?;
        Ok(index)
    }

    /// The postings maps, in snapshot order: by ISIN, ticker, category,
    /// tag.
    fn postings(&self) -> [&Postings; 4] {
        [&self.by_isin, &self.by_ticker, &self.by_category, &self.by_tag]
    }

    /// Checks what the list order rests on: each dated row's instant is
    /// one, each row's slug is a slug (a cursor is made of it), and each
    /// row comes after the one before it.
    fn check_list_order(&self) -> Result<(), NewsSnapshotError> {
        for r in 0..self.secs.len() {
            let (s, n) = self.dated_at(r);
            if DateTime::from_timestamp(s, n).is_none() {
                return Err(NewsSnapshotError::new(format!("row {r}: its published_at is not an instant")));
            }
        }
        let (mut slug, mut before) = (Vec::new(), Vec::new());
        for r in 0..self.len() {
            self.rows.slug_into(r, &mut slug);
            if !std::str::from_utf8(&slug).is_ok_and(|s| Slug::parse(s).is_ok()) {
                return Err(NewsSnapshotError::new(format!("row {r}: its slug is not a slug")));
            }
            if r > 0 && !follows((self.at(r), &slug), (self.at(r - 1), &before)) {
                return Err(NewsSnapshotError::new(format!("row {r}: out of list order")));
            }
            std::mem::swap(&mut slug, &mut before);
        }
        Ok(())
    }
}

/// Writes the checksum of a snapshot's bytes (all but the first
/// [`HEADER`] bytes) into its place.
fn seal(bytes: &mut [u8]) {
    let crc = crc32fast::hash(&bytes[HEADER..]);
    bytes[8..HEADER].copy_from_slice(&crc.to_le_bytes());
}

/// Appends a count or a length.
pub(super) fn put_len(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&(n as u64).to_le_bytes());
}

/// Appends `bytes`, after their length.
pub(super) fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_len(out, bytes.len());
    out.extend_from_slice(bytes);
}

/// Appends a postings map, its keys in byte order.
fn put_postings(out: &mut Vec<u8>, postings: &Postings) {
    let mut keys: Vec<&str> = postings.keys().map(|k| &**k).collect();
    keys.sort_unstable();
    put_len(out, keys.len());
    for key in keys {
        put_bytes(out, key.as_bytes());
        let rows = &postings[key];
        put_len(out, rows.len());
        rows.iter().for_each(|r| out.extend_from_slice(&r.to_le_bytes()));
    }
}

/// Reads a postings map of `what` of an index of `n` rows, checking that
/// its keys are text in byte order and each key's rows ascending and held.
fn read_postings(input: &mut Input<'_>, n: usize, what: &str) -> Result<Postings, NewsSnapshotError> {
    // Each key is two counts at least.
    let count = input.count(16, what)?;
    let mut postings = HashMap::with_capacity(count);
    let mut last: Option<&str> = None;
    for _ in 0..count {
        let key = std::str::from_utf8(input.bytes(what)?)
            .map_err(|_| NewsSnapshotError::new(format!("a key of the {what} postings is not text")))?;
        if last.is_some_and(|l| l >= key) {
            return Err(NewsSnapshotError::new(format!("the keys of the {what} postings are out of order")));
        }
        let rows: Vec<u32> = input.arrays(what)?.map(u32::from_le_bytes).collect();
        let ascending = rows.windows(2).all(|w| w[0] < w[1]);
        if !ascending || rows.last().is_none_or(|&r| r as usize >= n) {
            return Err(NewsSnapshotError::new(format!("the {what} postings of {key:?} are not ascending rows held")));
        }
        postings.insert(key.into(), rows);
        last = Some(key);
    }
    Ok(postings)
}

/// A reader of a snapshot: every read checks that the bytes are there.
pub(super) struct Input<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Input<'a> {
    /// A reader of `bytes`, from their start.
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Input { bytes, at: 0 }
    }

    /// How many bytes are left.
    fn left(&self) -> usize {
        self.bytes.len() - self.at
    }

    /// The next `n` bytes, and past them; `what` they are is for the
    /// message.
    pub(super) fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], NewsSnapshotError> {
        if n > self.left() {
            return Err(NewsSnapshotError::new(format!("cut short in {what}")));
        }
        self.at += n;
        Ok(&self.bytes[self.at - n..self.at])
    }

    /// The next `N` bytes.
    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], NewsSnapshotError> {
        let bytes = self.take(N, what)?;
        Ok(std::array::from_fn(|i| bytes[i]))
    }

    /// A count of things that take `each` bytes at least, checked against
    /// the bytes left (so what it sizes is never larger than the snapshot).
    pub(super) fn count(&mut self, each: usize, what: &str) -> Result<usize, NewsSnapshotError> {
        let n = u64::from_le_bytes(self.array(what)?);
        let left = self.left();
        match usize::try_from(n) {
            Ok(n) if n.checked_mul(each).is_some_and(|bytes| bytes <= left) => Ok(n),
            _ => Err(NewsSnapshotError::new(format!("{what}: a count of {n} does not fit the {left} bytes left"))),
        }
    }

    /// Bytes after their length.
    pub(super) fn bytes(&mut self, what: &str) -> Result<&'a [u8], NewsSnapshotError> {
        let n = self.count(1, what)?;
        self.take(n, what)
    }

    /// A count, then that many `N`-byte numbers.
    fn arrays<const N: usize>(&mut self, what: &str) -> Result<impl Iterator<Item = [u8; N]> + 'a, NewsSnapshotError> {
        let n = self.count(N, what)?;
        let bytes = self.take(n * N, what)?;
        Ok(bytes.chunks_exact(N).map(|c| std::array::from_fn(|i| c[i])))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use chrono::{TimeZone, Utc};
    use mds_domain::news::{Exact, NewsKey, list_order};
    use mds_domain::{Article, ArticleSummary, NewsFilter, Ticker};
    use proptest::prelude::*;

    use super::super::rows::RowsBuilder;
    use super::*;

    const ISINS: [&str; 3] = ["INE002A01018", "INE467B01029", "INE040A01034"];

    /// The index of generation 42 of `articles` as a store holds them (one
    /// per slug, the last given), built in two batches (the symbol table
    /// trained on the first), holding at most `max_distinct` values of a
    /// field once.
    fn index_of(articles: &[Article], max_distinct: usize) -> NewsIndex {
        let by_slug: BTreeMap<_, _> = articles.iter().map(|a| (a.slug.clone(), a.summary())).collect();
        let mut list: Vec<ArticleSummary> = by_slug.into_values().collect();
        list.sort_by(|a, b| list_order(&NewsKey::of(a), &NewsKey::of(b)));
        let mut index = NewsIndex { generation: 42, ..NewsIndex::default() };
        let mut rows = RowsBuilder::new(max_distinct);
        let (first, rest) = list.split_at(list.len() / 2);
        index.push_batch(first, &mut rows);
        index.push_batch(rest, &mut rows);
        index.finish(rows)
    }

    /// Filters that select something of `articles`: none, each of their
    /// values, and date bounds at their instants.
    fn filters_of(articles: &[Article]) -> Vec<NewsFilter> {
        let mut out = vec![NewsFilter::default()];
        for a in articles {
            let one = NewsFilter::default;
            out.push(NewsFilter { isin: a.isin.clone(), ..one() });
            out.push(NewsFilter { ticker: a.ticker.as_deref().and_then(|t| Ticker::parse(t).ok()), ..one() });
            out.push(NewsFilter { category: a.category.as_deref().and_then(|c| Exact::category(c).ok()), ..one() });
            out.extend(a.tags.iter().filter_map(|t| Exact::tag(t).ok()).map(|t| NewsFilter { tag: Some(t), ..one() }));
            out.push(NewsFilter { published_after: a.published_at, ..one() });
            out.push(NewsFilter { published_before: a.published_at, isin: a.isin.clone(), ..one() });
        }
        out
    }

    /// Every page of 3 rows `index` makes for `filters`, from the start
    /// and after each of its rows (so every row's key, in the cursors),
    /// and the first page of 50.
    fn pages(index: &NewsIndex, filters: &[NewsFilter]) -> Vec<Vec<u8>> {
        let cursor = |k: &NewsKey| format!("{:?}/{}", k.published_at, k.slug);
        let afters: Vec<Option<NewsKey>> =
            [None].into_iter().chain((0..index.len() as u32).map(|r| Some(index.row_key(r)))).collect();
        let mut out = Vec::new();
        for filter in filters {
            out.push(index.page_json(filter, None, 50, cursor));
            for after in &afters {
                out.push(index.page_json(filter, after.as_ref(), 3, cursor));
            }
        }
        out
    }

    /// Text of any kind, and values that repeat.
    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            "[a-zé \"\\\\/\u{1}\n€😀]{0,12}",
            prop::sample::select(vec!["Desk 1", "a\"b", "", "c\\d"]).prop_map(str::to_owned),
        ]
    }

    fn instant() -> impl Strategy<Value = chrono::DateTime<Utc>> {
        (0i64..4_102_444_800, prop_oneof![Just(0u32), 0u32..1_000_000_000])
            .prop_map(|(s, n)| Utc.timestamp_opt(s, n).unwrap())
    }

    fn article() -> impl Strategy<Value = Article> {
        mds_testkit::arb::article(text().boxed(), text().boxed(), instant().boxed(), &ISINS)
    }

    /// A few articles with every kind of field: dated and not, values held
    /// and (past one held value a field) in the row's text, tags, `null`s.
    fn fixed_articles() -> Vec<Article> {
        (0..6)
            .map(|i| {
                let mut a: Article = serde_json::from_str(r#"{"slug":"x","headline":"H"}"#).unwrap();
                a.slug = mds_domain::Slug::parse(&format!("story-{i}")).unwrap();
                a.headline = format!("Headline \"{i}\" of the day");
                a.excerpt = (i % 2 == 0).then(|| "An excerpt, ünïcödé".to_owned());
                a.published_at = (i < 4).then(|| Utc.timestamp_opt(1_767_225_600 + i * 3_600, 500).unwrap());
                a.updated_at = (i % 3 == 0).then(|| Utc.timestamp_opt(1_767_225_600 - i, 7).unwrap());
                a.isin = Some(mds_domain::Isin::parse(ISINS[i as usize % 3]).unwrap());
                a.ticker = Some(["RELIANCE", "tcs"][i as usize % 2].to_owned());
                a.category = Some(["earnings", "deals"][i as usize % 2].to_owned());
                a.tags = vec!["q2".to_owned(), format!("t{}", i % 3)];
                a
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

        /// An index read back from its bytes makes every page, cursor
        /// and row as the index written did, and gives the same bytes.
        #[test]
        fn an_index_round_trips(articles in prop::collection::vec(article(), 0..30), max_distinct in 0usize..3) {
            let built = index_of(&articles, max_distinct);
            let bytes = built.to_bytes();
            let loaded = NewsIndex::from_bytes(bytes.clone()).unwrap();
            prop_assert_eq!(loaded.generation(), 42);
            prop_assert_eq!(loaded.len(), built.len());
            prop_assert_eq!(loaded.heap_bytes(), built.heap_bytes());
            prop_assert!(loaded.to_bytes() == bytes, "the bytes of the loaded index differ");
            let filters = filters_of(&articles);
            prop_assert!(pages(&loaded, &filters) == pages(&built, &filters), "a page differs");
            prop_assert!(loaded.into_bytes() == bytes, "the bytes of the index given up differ");
        }
    }

    /// The index of `fixed_articles`, and its bytes.
    fn fixed() -> (NewsIndex, Vec<u8>) {
        let index = index_of(&fixed_articles(), 1);
        let bytes = index.to_bytes();
        (index, bytes)
    }

    /// Bytes with their checksum made again, as a foreign writer's would be.
    fn resealed(mut bytes: Vec<u8>) -> Vec<u8> {
        let crc = crc32fast::hash(&bytes[HEADER..]);
        bytes[8..HEADER].copy_from_slice(&crc.to_le_bytes());
        bytes
    }

    /// The reason `bytes` are refused.
    #[track_caller]
    fn refusal(bytes: &[u8]) -> String {
        match NewsIndex::from_bytes(bytes.to_vec()) {
            Ok(_) => panic!("accepted"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn foreign_and_damaged_headers_are_refused() {
        let (_, bytes) = fixed();
        assert!(refusal(b"").contains("not a news index snapshot"));
        assert!(refusal(b"MDSCAT\0\x07\0\0\0\0").contains("not a news index snapshot"));
        let mut newer = bytes.clone();
        newer[7] = 2;
        assert!(refusal(&newer).contains("different news index format version"));
        let mut flipped = bytes.clone();
        flipped[bytes.len() / 2] ^= 1;
        assert_eq!(refusal(&flipped), "news index snapshot refused: checksum mismatch (damaged)");
    }

    /// Any byte changed is refused (a CRC-32 sees every change of one
    /// byte); with the checksum made again, it is refused with a reason
    /// or, when what it changed is still an index (a letter of a text),
    /// serves every page without a panic.
    #[test]
    fn every_changed_byte_is_refused_or_harmless() {
        let (_, bytes) = fixed();
        // A few filters: thousands of indexes are served.
        let filters = &filters_of(&fixed_articles())[..8];
        let (mut accepted, mut refused) = (0, 0);
        for at in 0..bytes.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut damaged = bytes.clone();
                damaged[at] ^= flip;
                assert!(NewsIndex::from_bytes(damaged.clone()).is_err(), "byte {at} ^ {flip:#x} accepted");
                if at < HEADER {
                    continue;
                }
                match NewsIndex::from_bytes(resealed(damaged)) {
                    Ok(index) => {
                        accepted += 1;
                        pages(&index, filters);
                        (0..index.len() as u32).for_each(|r| assert!(!index.row_json(r).is_empty()));
                    }
                    Err(_) => refused += 1,
                }
            }
        }
        // Both happen: a letter of a symbol changed is still an index; a
        // length, a count, a code, a slug changed is not.
        assert!(accepted > 0 && refused > 0, "{accepted} changes accepted, {refused} refused");
    }

    #[test]
    fn every_truncation_is_refused() {
        let (_, bytes) = fixed();
        for len in 0..bytes.len() {
            assert!(NewsIndex::from_bytes(bytes[..len].to_vec()).is_err(), "cut at {len} accepted");
            if len >= HEADER {
                assert!(NewsIndex::from_bytes(resealed(bytes[..len].to_vec())).is_err(), "cut at {len} accepted");
            }
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(refusal(&resealed(longer)).contains("the records are not as long as the rows say"));
    }

    /// An index changed before it is written, refused for the reason
    /// `why` names.
    #[track_caller]
    fn refused_for(change: impl FnOnce(&mut NewsIndex), why: &str) {
        let (mut index, _) = fixed();
        change(&mut index);
        let reason = refusal(&index.to_bytes());
        assert!(reason.contains(why), "{reason:?} does not say {why:?}");
    }

    #[test]
    fn what_pages_rely_on_is_checked() {
        let n = fixed().0.len() as u32;
        refused_for(|i| i.nanos.push(0), "as many seconds as nanoseconds");
        refused_for(
            |i| {
                i.secs.extend([0, 0, 0]);
                i.nanos.extend([0, 0, 0]);
            },
            "more instants than rows",
        );
        // Rows 1 and 2 have no `updated_at` (which is read from the row's
        // `published_at`, and checked first).
        refused_for(|i| i.secs[1] = i64::MAX, "row 1: its published_at is not an instant");
        refused_for(|i| i.nanos[2] = u32::MAX, "row 2: its published_at is not an instant");
        refused_for(|i| i.secs.swap(0, 1), "row 1: out of list order");
        let post = |postings: fn(&mut NewsIndex) -> &mut Postings, rows: Vec<u32>| {
            move |i: &mut NewsIndex| {
                postings(i).insert("x".into(), rows);
            }
        };
        refused_for(post(|i| &mut i.by_tag, vec![2, 1]), "the tag postings of \"x\" are not ascending");
        refused_for(post(|i| &mut i.by_tag, vec![1, 1]), "not ascending rows held");
        refused_for(post(|i| &mut i.by_isin, vec![n]), "the isin postings of \"x\"");
        refused_for(post(|i| &mut i.by_category, vec![]), "the category postings of \"x\"");
    }

    /// A count larger than the bytes left is refused before anything is
    /// allocated for it.
    #[test]
    fn counts_past_the_end_are_refused() {
        let (index, bytes) = fixed();
        // The count of the seconds, after the generation.
        let mut huge = bytes.clone();
        huge[HEADER + 8..HEADER + 16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(refusal(&resealed(huge)).contains("does not fit"));
        let mut more = bytes.clone();
        more[HEADER + 8..HEADER + 16].copy_from_slice(&(index.secs.len() as u64 + 1).to_le_bytes());
        let reason = refusal(&resealed(more));
        assert!(!reason.contains("checksum"), "{reason}");
    }
}
