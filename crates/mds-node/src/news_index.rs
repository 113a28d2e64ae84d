//! The news list held in a node's memory ([`NewsIndex`]), so that a page of
//! `GET /v1/news` is made without a store read: every article's list
//! fields in list order, compact (its own text compressed, repeated values
//! held once, instants as integers; see `news_index/rows.rs`), written as the JSON
//! the list shows when a page is made, and postings by ISIN, ticker,
//! category and tag. On the synthetic set (`bench/gen_news.py`, 562 bytes
//! of list JSON an article) that is 131 bytes an article in all, postings
//! included: 125 MiB for 1,000,000 articles (`bench/news-1m.sh`).
//!
//! An index is of one news generation: it is built by reading the store a
//! batch at a time in list order ([`NewsIndex::build`]), and kept only if
//! the generation was the same before and after the read (every change of
//! an article moves it in the same transaction), so it holds exactly what
//! the store held at that generation. A page is made from it only while the
//! node follows that generation; otherwise from the store, as before
//! ([`crate::news_list`]). The reload task gets the next one when the
//! generation moves (`Node::refresh_news_index`, in [`crate::news_load`]):
//! from its snapshot in the store when there is one (the index as bytes,
//! `news_index/snapshot.rs`: [`NewsIndex::to_bytes`],
//! [`NewsIndex::from_bytes`]), else built.
//!
//! A page is at most `limit + 1` rows found by binary search and a walk:
//! - a cursor's position and the date bounds are ranges of the list order
//!   (newest first, undated last), found by binary search;
//! - with filters on ISIN, ticker, category or tag, the shortest of their
//!   postings (row numbers, ascending) is walked from the range's start,
//!   each row checked against the others by binary search; without them,
//!   the rows of the range are the page.
//!
//! The rules are those of the store's query ([`NewsFilter::matches`],
//! [`mds_domain::news::list_order`]); a randomized test holds the two
//! together (`tests/news_index.rs`).

mod rows;
mod search;
mod snapshot;

pub use search::{NewsSearch, frame, unframe};
pub use snapshot::NewsSnapshotError;

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use mds_domain::facets::{Hint, NewsFacets, news_hint};
use mds_domain::news::{CATEGORY, NewsKey};
use mds_domain::news_search::NewsSort;
use mds_domain::page::write_json;
use mds_domain::{ArticleSummary, NewsFilter, Slug};
use mds_store::{Cause, Store, StoreError, StoreResult};

use search::Order;

/// Articles read from the store at a time while building.
const BATCH: usize = 5_000;

/// An instant as the index orders it: seconds and nanoseconds since the
/// epoch (chrono's own split, so any instant it holds fits).
type At = (i64, u32);

/// The news list of one generation, in memory; see the [module](self).
#[derive(Debug, Default)]
pub struct NewsIndex {
    generation: i64,
    /// Per dated row (the first rows of the list order, newest first):
    /// the seconds of its `published_at`; the rows after them are undated.
    secs: Vec<i64>,
    /// Per dated row: the nanoseconds of its `published_at`.
    nanos: Vec<u32>,
    /// Every row's list fields.
    rows: rows::Rows,
    by_isin: Postings,
    by_ticker: Postings,
    by_category: Postings,
    by_tag: Postings,
    /// The full-text index of the same rows (`q`), once attached
    /// ([`NewsIndex::with_search`]).
    search: Option<NewsSearch>,
}

/// A position in the pages of a search (`q`): the last article's key, and
/// its score when the order is by relevance.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchPosition {
    /// The score (BM25 negated, as [`NewsSearch`] gives it: lower is more relevant) with
    /// `sort=relevance`; `None` in list order.
    pub score: Option<f64>,
    /// The article's key.
    pub key: NewsKey,
}

/// Row numbers (ascending, so in list order) by value.
type Postings = HashMap<Box<str>, Vec<u32>>;

impl NewsIndex {
    /// Reads the store's articles (without their bodies) in list order, a
    /// batch at a time, into an index of `generation`. Whether the store
    /// was still at `generation` when the read ended is for the caller to
    /// check ([`crate::news_load::build`]).
    pub async fn build(store: &dyn Store, generation: i64) -> StoreResult<Self> {
        let mut index = NewsIndex { generation, ..NewsIndex::default() };
        let mut rows = rows::RowsBuilder::new(rows::MAX_DISTINCT);
        let everything = NewsFilter::default();
        let mut after = None;
        loop {
            let batch = store.news_page(&everything, after.as_ref(), BATCH).await?;
            after = batch.last().map(NewsKey::of);
            let full = batch.len() == BATCH;
            index.push_batch(&batch, &mut rows);
            if !full {
                break;
            }
        }
        Ok(index.finish(rows))
    }

    /// Appends `batch`, which comes after every row held in list order;
    /// the first batch trains the rows' symbol table.
    fn push_batch(&mut self, batch: &[ArticleSummary], rows: &mut rows::RowsBuilder) {
        if rows.len() == 0 {
            rows.train(batch);
        }
        for article in batch {
            self.push(article, rows);
        }
    }

    /// The index with its rows, every buffer trimmed to what it holds.
    fn finish(mut self, rows: rows::RowsBuilder) -> Self {
        self.rows = rows.finish();
        self.secs.shrink_to_fit();
        self.nanos.shrink_to_fit();
        for postings in [&mut self.by_isin, &mut self.by_ticker, &mut self.by_category, &mut self.by_tag] {
            postings.values_mut().for_each(Vec::shrink_to_fit);
        }
        self
    }

    /// Appends `a`, which comes after every row held in list order.
    fn push(&mut self, a: &ArticleSummary, rows: &mut rows::RowsBuilder) {
        let row = u32::try_from(rows.len()).expect("fewer than 2^32 articles");
        if let Some(t) = a.published_at {
            debug_assert_eq!(self.secs.len(), rows.len(), "dated rows come first");
            self.secs.push(t.timestamp());
            self.nanos.push(t.timestamp_subsec_nanos());
        }
        rows.push(a);
        self.post(row, a);
    }

    /// Posts row `row`, the article `a`, under its values.
    fn post(&mut self, row: u32, a: &ArticleSummary) {
        let post = |postings: &mut Postings, value: &str| match postings.get_mut(value) {
            // A value given twice on one article (a repeated tag) is one posting.
            Some(rows) if rows.last() == Some(&row) => {}
            Some(rows) => rows.push(row),
            None => {
                postings.insert(value.into(), vec![row]);
            }
        };
        if let Some(isin) = &a.isin {
            post(&mut self.by_isin, isin.as_str());
        }
        if let Some(ticker) = &a.ticker {
            post(&mut self.by_ticker, &ticker.to_ascii_uppercase());
        }
        if let Some(category) = &a.category {
            post(&mut self.by_category, category);
        }
        for tag in &a.tags {
            post(&mut self.by_tag, tag);
        }
    }

    /// The news generation the index holds.
    pub fn generation(&self) -> i64 {
        self.generation
    }

    /// How many articles it holds.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether it holds no article.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The heap it holds (rows, instants, postings; the postings' maps
    /// counted by their entries), for the log and the size test.
    pub fn heap_bytes(&self) -> usize {
        let postings: usize = [&self.by_isin, &self.by_ticker, &self.by_category, &self.by_tag]
            .iter()
            .flat_map(|p| p.iter())
            .map(|(k, rows)| k.len() + size_of::<(Box<str>, Vec<u32>)>() + rows.capacity() * size_of::<u32>())
            .sum();
        self.rows.heap_bytes()
            + self.secs.capacity() * size_of::<i64>()
            + self.nanos.capacity() * size_of::<u32>()
            + postings
    }

    /// The categories and tags with how many articles carry each.
    pub fn facets(&self) -> NewsFacets {
        NewsFacets::new(
            self.by_category.iter().map(|(k, rows)| (&**k, rows.len() as u64)),
            self.by_tag.iter().map(|(k, rows)| (&**k, rows.len() as u64)),
        )
    }

    /// The `hint` of `filter`'s page when its `category` or `tag` (checked
    /// in that order) is a value no article carries: the nearest that do.
    pub fn hint(&self, filter: &NewsFilter) -> Option<Hint> {
        let of = |param: &str| if param == CATEGORY { &self.by_category } else { &self.by_tag };
        news_hint(filter, |param, value| of(param).contains_key(value), |param| of(param).keys().map(|k| &**k))
    }

    /// The postings `filter`'s ISIN, ticker, category and tag select (each
    /// a list of rows, ascending); `None` when one of them has none (the
    /// page is empty).
    fn postings_of(&self, filter: &NewsFilter) -> Option<Vec<&[u32]>> {
        let mut lists = Vec::with_capacity(4);
        let wanted = [
            (&self.by_isin, filter.isin.as_ref().map(|i| i.as_str())),
            (&self.by_ticker, filter.ticker.as_ref().map(|t| t.as_str())),
            (&self.by_category, filter.category.as_ref().map(|c| c.as_str())),
            (&self.by_tag, filter.tag.as_ref().map(|t| t.as_str())),
        ];
        for (postings, value) in wanted {
            if let Some(value) = value {
                lists.push(postings.get(value)?.as_slice());
            }
        }
        Some(lists)
    }

    /// The rows of the page: at most `limit + 1` row numbers passing
    /// `filter`, after the position `after`, in list order.
    pub fn page_rows(&self, filter: &NewsFilter, after: Option<&NewsKey>, limit: usize) -> Vec<u32> {
        let want = limit.saturating_add(1);
        let (start, end) = self.range(filter, after);
        let Some(mut lists) = self.postings_of(filter) else {
            return Vec::new();
        };
        if start >= end {
            return Vec::new();
        }
        if lists.is_empty() {
            let end = end.min(start.saturating_add(want));
            return (start..end).map(|r| r as u32).collect();
        }
        lists.sort_by_key(|l| l.len());
        let (walk, others) = lists.split_first().expect("one list at least");
        let from = walk.partition_point(|&r| (r as usize) < start);
        walk[from..]
            .iter()
            .copied()
            .take_while(|&r| (r as usize) < end)
            .filter(|r| others.iter().all(|l| l.binary_search(r).is_ok()))
            .take(want)
            .collect()
    }

    /// Attaches the full-text index of the same rows.
    pub fn with_search(self, search: NewsSearch) -> Self {
        NewsIndex { search: Some(search), ..self }
    }

    /// The full-text index, when attached.
    pub fn search(&self) -> Option<&NewsSearch> {
        self.search.as_ref()
    }

    /// The rows of a search's page (`filter.q`, which must be given): at
    /// most `limit + 1` (row, score) passing `filter`, after `after`, in
    /// the order of `filter` (by relevance: score, then row, which is list
    /// order; else list order).
    fn search_rows(
        &self,
        filter: &NewsFilter,
        after: Option<&SearchPosition>,
        limit: usize,
    ) -> StoreResult<Vec<(u32, f64)>> {
        let Some(search) = &self.search else {
            return Err(StoreError::Unavailable(Cause::new("the news search index is not loaded yet")));
        };
        let text = filter.q.as_ref().expect("a search has q");
        let want = limit.saturating_add(1);
        let ranked = filter.order() == NewsSort::Relevance;
        // In list order the cursor's key is where the rows start; by
        // relevance it is a tie-break within a score.
        let (start, end) = self.range(filter, if ranked { None } else { after.map(|a| &a.key) });
        let Some(lists) = self.postings_of(filter) else {
            return Ok(Vec::new());
        };
        if start >= end {
            return Ok(Vec::new());
        }
        // Rows after the cursor's key: from this row on (the same score).
        let tie = after.filter(|_| ranked).and_then(|a| Some((a.score?, self.start_after(&a.key) as i64 - 1)));
        let order = if ranked { Order::Ranked(want, tie) } else { Order::Rows(want) };
        search.rows(text, start, end, &lists, order)
    }

    /// The page of a search (`filter.q`, which must be given) after
    /// `after`: its JSON, as [`NewsIndex::page_json`]'s, the cursor after
    /// its last row made by `cursor` when another page follows.
    pub async fn search_page_json(
        &self,
        filter: &NewsFilter,
        after: Option<&SearchPosition>,
        limit: usize,
        cursor: impl FnOnce(&SearchPosition) -> String,
    ) -> StoreResult<Vec<u8>> {
        let found = self.search_rows(filter, after, limit)?;
        let ranked = filter.order() == NewsSort::Relevance;
        let has_more = found.len() > limit;
        let shown: Vec<u32> = found.iter().take(limit).map(|&(r, _)| r).collect();
        let next_cursor = found[..shown.len()]
            .last()
            .filter(|_| has_more)
            .map(|&(r, score)| cursor(&SearchPosition { score: ranked.then_some(score), key: self.row_key(r) }));
        let hint = if shown.is_empty() { self.hint(filter) } else { None };
        Ok(self.write_page(&shown, next_cursor.as_deref(), has_more, hint.as_ref()))
    }

    /// The page of the list for `filter` after `after`: its JSON (a
    /// [`Page`](mds_domain::Page) of summaries, with its [`hint`](Self::hint)
    /// when empty), the cursor after its last row made by `cursor` when
    /// another page follows.
    pub fn page_json(
        &self,
        filter: &NewsFilter,
        after: Option<&NewsKey>,
        limit: usize,
        cursor: impl FnOnce(&NewsKey) -> String,
    ) -> Vec<u8> {
        let rows = self.page_rows(filter, after, limit);
        let hint = if rows.is_empty() { self.hint(filter) } else { None };
        let has_more = rows.len() > limit;
        let shown = &rows[..rows.len().min(limit)];
        let next_cursor = shown.last().filter(|_| has_more).map(|&last| cursor(&self.row_key(last)));
        self.write_page(shown, next_cursor.as_deref(), has_more, hint.as_ref())
    }

    /// The JSON of a page of the rows `shown`.
    fn write_page(&self, shown: &[u32], next_cursor: Option<&str>, has_more: bool, hint: Option<&Hint>) -> Vec<u8> {
        // A page's rows lie far apart in the index (an ISIN's articles are
        // spread over the list), so each row's parts are cache misses: its
        // offset, its instant, its record (about two cache lines). Found
        // and touched for every row first (a record at its first and last
        // byte), those loads do not depend on each other and overlap; row
        // by row, each waited for the one before. In a perf profile of
        // made pages they were most of the rows' time: the first load of a
        // record, then of its instant, then of its codes.
        let rows: Vec<(&[u8], Option<DateTime<Utc>>)> =
            shown.iter().map(|&r| (self.rows.record(r as usize), self.published(r as usize))).collect();
        let touch = |record: &[u8]| record.first().copied().unwrap_or(0) ^ record.last().copied().unwrap_or(0);
        std::hint::black_box(rows.iter().fold(0u8, |x, (record, _)| x ^ touch(record)));
        let mut json = Vec::with_capacity(64 + shown.len() * 640);
        let mut text = Vec::new();
        let write_rows = |out: &mut Vec<u8>| {
            for (i, &(record, published)) in rows.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                self.rows.write_record_json(record, published, out, &mut text);
            }
        };
        write_json(&mut json, write_rows, next_cursor, has_more, hint);
        json
    }

    /// The rows `[start, end)` that the position `after` and the date
    /// bounds of `filter` leave.
    fn range(&self, filter: &NewsFilter, after: Option<&NewsKey>) -> (usize, usize) {
        let dated = self.secs.len();
        let mut start = after.map_or(0, |key| self.start_after(key));
        // Dated rows come first, newest first: a bound on the date is a
        // prefix or a suffix of them, and leaves the undated tail out.
        let mut end = dated;
        if filter.published_before.is_none() && filter.published_after.is_none() {
            end = self.len();
        }
        if let Some(t) = filter.published_before.map(at_of) {
            start = start.max(partition_rows(dated, |r| self.dated_at(r) >= t));
        }
        if let Some(t) = filter.published_after.map(at_of) {
            end = end.min(partition_rows(dated, |r| self.dated_at(r) > t));
        }
        (start, end)
    }

    /// The first row after the position `key` (every row before it is
    /// `key`'s or comes before it in list order).
    fn start_after(&self, key: &NewsKey) -> usize {
        let k = (key.published_at.map(at_of), key.slug.as_str().as_bytes());
        let mut slug = Vec::new();
        partition_rows(self.len(), |r| {
            self.rows.slug_into(r, &mut slug);
            !follows((self.at(r), &slug), k)
        })
    }

    /// The `published_at` of row `r`, `None` when undated.
    fn at(&self, r: usize) -> Option<At> {
        (r < self.secs.len()).then(|| self.dated_at(r))
    }

    /// The `published_at` of the dated row `r`.
    fn dated_at(&self, r: usize) -> At {
        (self.secs[r], self.nanos[r])
    }

    /// The `published_at` of row `r` as the list shows it.
    fn published(&self, r: usize) -> Option<DateTime<Utc>> {
        self.at(r).map(|(s, n)| DateTime::from_timestamp(s, n).expect("an instant it was made of"))
    }

    /// Appends row `r` as the list shows it; `text` is a buffer to decode
    /// into.
    fn write_row(&self, r: usize, out: &mut Vec<u8>, text: &mut Vec<u8>) {
        self.rows.write_json(r, self.published(r), out, text);
    }

    /// Row `r` as the list shows it (its JSON: serde_json's bytes of its
    /// [`ArticleSummary`]).
    pub fn row_json(&self, r: u32) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_row(r as usize, &mut out, &mut Vec::new());
        out
    }

    /// The position of row `r`, for the cursor after it.
    pub fn row_key(&self, r: u32) -> NewsKey {
        let mut slug = Vec::new();
        self.rows.slug_into(r as usize, &mut slug);
        NewsKey {
            published_at: self.published(r as usize),
            slug: Slug::parse(std::str::from_utf8(&slug).expect("a slug is ASCII")).expect("a slug it was made of"),
        }
    }
}

/// The first of the rows `0..n` for which `pred` is false, all before it
/// true (`partition_point` over row numbers).
fn partition_rows(n: usize, mut pred: impl FnMut(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Whether the key `a` comes after `b` in list order (newest first, then
/// by slug; undated last, by slug).
fn follows(a: (Option<At>, &[u8]), b: (Option<At>, &[u8])) -> bool {
    let by_date = match (a.0, b.0) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    };
    by_date.then_with(|| a.1.cmp(b.1)).is_gt()
}

/// The index's form of an instant.
fn at_of(t: DateTime<Utc>) -> At {
    (t.timestamp(), t.timestamp_subsec_nanos())
}
