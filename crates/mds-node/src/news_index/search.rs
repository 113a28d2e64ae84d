//! The full-text index of `GET /v1/news?q=` ([`NewsSearch`]): a
//! [tantivy](https://docs.rs/tantivy) index in memory, beside the news
//! index and of the same generation; each document carries its row number
//! in the news index (a fast field, `row`), so a match is a row.
//!
//! Why tantivy (docs/API-DESIGN.md, "News search"): its postings are
//! block-compressed and scored in Rust without a row-at-a-time engine in
//! between; SQLite FTS5, used before, computed `bm25()` through its
//! auxiliary-function interface for every match of a query before sorting,
//! about 1.3 s for a word in every one of 100,000 articles (BENCHMARKS.md,
//! "News search"). Nothing is hand-written but the query's terms and the
//! collector that applies the list's filters.
//!
//! Text is split into words at every character that is not a letter or a
//! digit, lower-cased and folded to ASCII (accents dropped), as FTS5's
//! `unicode61 remove_diacritics 2` did. Four fields, weighted for BM25
//! (each term scored in each field, the field's score boosted): headline
//! 4, sub-headline 2, excerpt 2, body 1. Positions are indexed, for
//! phrases. Nothing is stored but the index: the text stays in the store.
//! After a build the index is merged into one segment.
//!
//! A query ([`NewsText`]) is all of its terms: a word is a term query (a
//! phrase when the tokenizer splits it, as `e-mail`), a phrase a phrase
//! query, a prefix every indexed word beginning with it (scored as each of
//! them; past [`MAX_EXPANSIONS`] words in a field, matched without a
//! score there), a phrase ending in a prefix tantivy's phrase-prefix query.
//!
//! A snapshot is the index's files (see [`NewsSearch::to_bytes`]), framed
//! after the news index's own (see [`frame`]).

use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};

use mds_domain::news_search::{NewsText, Term as QueryTerm};
use mds_store::{Cause, Store, StoreError, StoreResult};
use tantivy::directory::{Directory, RamDirectory};
use tantivy::query::{
    BooleanQuery, BoostQuery, EnableScoring, Occur, PhrasePrefixQuery, PhraseQuery, Query, TermQuery,
};
use tantivy::schema::{Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::{
    AsciiFoldingFilter, LowerCaser, RemoveLongFilter, SimpleTokenizer, TextAnalyzer, TokenStream,
};
use tantivy::{Index, IndexWriter, ReloadPolicy, Score, Searcher, TantivyDocument};

use super::NewsIndex;
use super::snapshot::NewsSnapshotError;

/// Articles read from the store (with their bodies) at a time.
const BATCH: usize = 2_000;

/// The tokenizer's name in the index's manager.
const TOKENIZER: &str = "mds";

/// The text fields with their BM25 weights.
const FIELDS: [(&str, Score); 4] = [("headline", 4.0), ("subheadline", 2.0), ("excerpt", 2.0), ("body", 1.0)];

/// The most words a prefix is scored as, in a field; past that it matches
/// them all with one constant score there (the field's weight), not BM25.
const MAX_EXPANSIONS: usize = 1_000;

/// The most words a phrase ending in a prefix expands to (tantivy's
/// phrase-prefix query: it matches no more).
const MAX_PHRASE_EXPANSIONS: u32 = 10_000;

/// The indexing threads' memory, in all.
const WRITER_HEAP: usize = 128 << 20;

/// The longest word indexed, in bytes (a query is at most 200 characters).
const LONGEST_WORD: usize = 1_024;

/// The last bytes of a framed snapshot: a name and the format version (2:
/// tantivy's files; 1 was an SQLite FTS5 database).
const TRAILER_MAGIC: &[u8; 8] = b"MDSFTS\x00\x02";

/// The trailer's length: the search part's length (u64), its crc32, the
/// magic.
const TRAILER: usize = 8 + 4 + 8;

/// What a search keeps; see [`NewsSearch::rows`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Order {
    /// The first `n` matches in row order (the list order).
    Rows(usize),
    /// The first `n` matches by score (most relevant first, then row),
    /// after the position (score, row) when given: a greater score, or
    /// the same and a greater row (scores as [`NewsSearch::rows`] gives
    /// them: lower is more relevant).
    Ranked(usize, Option<(f64, i64)>),
}

/// The full-text index of one news generation; see the [module](self).
pub struct NewsSearch {
    index: Index,
    /// The index as committed (a searcher is shared by concurrent
    /// searches).
    searcher: Searcher,
    /// The text fields, in [`FIELDS`]' order.
    fields: [Field; 4],
    /// How many articles it holds (rows `0..len`).
    len: usize,
}

impl std::fmt::Debug for NewsSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewsSearch").field("len", &self.len).finish_non_exhaustive()
    }
}

/// An engine failure, as the store's (it is a database all the same).
fn engine(e: impl std::error::Error + Send + Sync + 'static) -> StoreError {
    StoreError::Database(Cause::new(e))
}

/// The schema: the text fields, then `row`.
fn schema() -> Schema {
    let mut schema = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(TOKENIZER)
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    for (name, _) in FIELDS {
        schema.add_text_field(name, text.clone());
    }
    schema.add_u64_field("row", NumericOptions::default().set_fast());
    schema.build()
}

/// The analyzer of the text and of queries: words of letters and digits,
/// lower-cased, folded to ASCII.
fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(LONGEST_WORD))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .build()
}

/// The document of row `row`: its texts (headline, sub-headline, excerpt,
/// body) in `fields`, [`FIELDS`]' order, and the row in `row_field`.
fn document(fields: &[Field], row_field: Field, row: usize, texts: [Option<&str>; 4]) -> TantivyDocument {
    let mut doc = TantivyDocument::default();
    for (field, text) in fields.iter().zip(texts) {
        if let Some(text) = text {
            doc.add_text(*field, text);
        }
    }
    doc.add_u64(row_field, row as u64);
    doc
}

/// `index` with its analyzer registered, its fields and a searcher.
fn searchable(index: Index, len: usize) -> tantivy::Result<NewsSearch> {
    index.tokenizers().register(TOKENIZER, analyzer());
    let schema = index.schema();
    let field = |name: &str| schema.get_field(name);
    let fields = [field(FIELDS[0].0)?, field(FIELDS[1].0)?, field(FIELDS[2].0)?, field(FIELDS[3].0)?];
    field("row")?;
    let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
    let searcher = reader.searcher();
    Ok(NewsSearch { index, searcher, fields, len })
}

impl NewsSearch {
    /// Builds the index of `index`'s articles: their text read from the
    /// store in list order, each row checked to be `index`'s row of the
    /// same number (its slug). `None` when they differ (the news moved
    /// while the two were read: the caller reads again later).
    pub async fn build(store: &dyn Store, index: &NewsIndex) -> StoreResult<Option<NewsSearch>> {
        let built = Index::create(RamDirectory::create(), schema(), Default::default()).map_err(engine)?;
        built.tokenizers().register(TOKENIZER, analyzer());
        let schema = built.schema();
        let fields: Vec<Field> =
            FIELDS.iter().map(|(name, _)| schema.get_field(name).expect("in the schema")).collect();
        let row_field = schema.get_field("row").expect("in the schema");
        // One core left to the node's runtime, so that it keeps serving
        // (and a revoked key's streams close within 1 s) while it indexes.
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).saturating_sub(1).clamp(1, 4);
        let mut writer: IndexWriter<TantivyDocument> =
            built.writer_with_num_threads(threads, WRITER_HEAP).map_err(engine)?;
        let (mut row, mut slug) = (0usize, Vec::new());
        loop {
            let after = row.checked_sub(1).map(|r| index.row_key(r as u32));
            let batch = store.news_texts(after.as_ref(), BATCH).await?;
            let mut docs = Vec::with_capacity(batch.len());
            for t in &batch {
                if row >= index.len() {
                    return Ok(None);
                }
                index.rows.slug_into(row, &mut slug);
                if slug != t.slug.as_str().as_bytes() {
                    return Ok(None);
                }
                let texts = [Some(&t.headline), t.subheadline.as_ref(), t.excerpt.as_ref(), t.body.as_ref()];
                docs.push(document(&fields, row_field, row, texts.map(|t| t.map(String::as_str))));
                row += 1;
            }
            // Handed to the indexing threads from a blocking thread: the
            // handing blocks while their queue is full, and on the
            // runtime's thread it would hold up every other task of the
            // node (a key's revocation closing its streams among them).
            writer = tokio::task::spawn_blocking(move || -> tantivy::Result<_> {
                for doc in docs {
                    writer.add_document(doc)?;
                }
                Ok(writer)
            })
            .await
            .expect("indexing does not panic")
            .map_err(engine)?;
            if batch.len() < BATCH {
                break;
            }
        }
        if row != index.len() {
            return Ok(None);
        }
        let len = row;
        let finish = move || -> tantivy::Result<NewsSearch> {
            writer.commit()?;
            let segments = built.searchable_segment_ids()?;
            if segments.len() > 1 {
                writer.merge(&segments).wait()?;
            }
            writer.garbage_collect_files().wait()?;
            writer.wait_merging_threads()?;
            searchable(built, len)
        };
        let search = tokio::task::spawn_blocking(finish).await.expect("indexing does not panic").map_err(engine)?;
        Ok(Some(search))
    }

    /// How many articles it holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no article.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The index as bytes: its files (`meta.json`, tantivy's list of the
    /// files it manages, and those), each as its path's length (u32), the
    /// path, its length (u64) and its bytes; little-endian.
    pub async fn to_bytes(&self) -> StoreResult<Vec<u8>> {
        let dir = self.index.directory();
        let managed: Vec<PathBuf> = match dir.atomic_read(Path::new(".managed.json")) {
            Ok(json) => serde_json::from_slice(&json).map_err(engine)?,
            Err(e) => return Err(engine(e)),
        };
        let own = [PathBuf::from("meta.json"), PathBuf::from(".managed.json")];
        let mut paths = own.to_vec();
        paths.extend(managed.into_iter().filter(|p| !own.contains(p)));
        let mut out = Vec::new();
        for path in paths {
            let bytes = match dir.atomic_read(&path) {
                Ok(bytes) => bytes,
                Err(e) => return Err(engine(e)),
            };
            let name = path.to_string_lossy();
            out.extend_from_slice(&(name.len() as u32).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            out.extend_from_slice(&bytes);
        }
        Ok(out)
    }

    /// The index `bytes` hold (made by [`NewsSearch::to_bytes`]), checked
    /// to hold `len` articles, rows `0..len`; else why it is refused.
    pub async fn from_bytes(bytes: &[u8], len: usize) -> Result<NewsSearch, NewsSnapshotError> {
        let refuse = |why: String| NewsSnapshotError::new(format!("its search index: {why}"));
        let dir = RamDirectory::create();
        let mut rest = bytes;
        let mut take = |n: usize| -> Result<&[u8], NewsSnapshotError> {
            let Some((part, after)) = rest.split_at_checked(n) else {
                return Err(refuse("it is cut short".into()));
            };
            rest = after;
            Ok(part)
        };
        let mut files = 0;
        let mut left = bytes.len();
        while left > 0 {
            let n = u32::from_le_bytes(take(4)?.try_into().expect("4 bytes")) as usize;
            let name = std::str::from_utf8(take(n)?).map_err(|e| refuse(e.to_string()))?.to_owned();
            let size = usize::try_from(u64::from_le_bytes(take(8)?.try_into().expect("8 bytes")))
                .map_err(|e| refuse(e.to_string()))?;
            let contents = take(size)?;
            left -= 4 + n + 8 + size;
            dir.atomic_write(Path::new(&name), contents).map_err(|e| refuse(e.to_string()))?;
            files += 1;
        }
        if files == 0 {
            return Err(refuse("it holds no file".into()));
        }
        let open = move || -> Result<NewsSearch, NewsSnapshotError> {
            let index = Index::open(dir).map_err(|e| refuse(e.to_string()))?;
            let search = searchable(index, len).map_err(|e| refuse(e.to_string()))?;
            let held = search.searcher.num_docs();
            if held as usize != len {
                return Err(refuse(format!("it holds {held} articles, the list {len}")));
            }
            let mut rows = vec![false; len];
            for segment in search.searcher.segment_readers() {
                let column = segment.fast_fields().u64("row").map_err(|e| refuse(e.to_string()))?;
                for doc in 0..segment.max_doc() {
                    let row = column.first(doc).map(|r| r as usize).filter(|&r| r < len);
                    match row {
                        Some(r) if !rows[r] => rows[r] = true,
                        _ => return Err(refuse(format!("a document's row is missing, repeated or past {len}"))),
                    }
                }
            }
            Ok(search)
        };
        tokio::task::spawn_blocking(open).await.expect("opening does not panic")
    }

    /// The query of `text`'s terms, all required, each scored in every
    /// field with the field's weight.
    fn query(&self, text: &NewsText) -> Box<dyn Query> {
        let mut analyzer = analyzer();
        let mut tokens = |s: &str| {
            let mut out = Vec::new();
            let mut stream = analyzer.token_stream(s);
            while let Some(token) = stream.next() {
                out.push(token.text.clone());
            }
            out
        };
        let mut all: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for term in text.terms() {
            let (words, prefix) = match term {
                QueryTerm::Word(w) | QueryTerm::Phrase(w) => (tokens(w), false),
                QueryTerm::Prefix(p) => (tokens(p), true),
            };
            if words.is_empty() {
                // A term of no word (all of it cut as too long) matches nothing.
                return Box::new(tantivy::query::EmptyQuery);
            }
            let mut any: Vec<(Occur, Box<dyn Query>)> = Vec::new();
            for (&field, &(_, weight)) in self.fields.iter().zip(FIELDS.iter()) {
                let terms: Vec<tantivy::Term> =
                    words.iter().map(|w| tantivy::Term::from_field_text(field, w)).collect();
                let query: Box<dyn Query> = match (terms.len(), prefix) {
                    (1, false) => Box::new(TermQuery::new(terms[0].clone(), IndexRecordOption::WithFreqs)),
                    (_, false) => Box::new(PhraseQuery::new(terms)),
                    (1, true) => self.prefix_query(field, &words[0]),
                    (_, true) => {
                        let mut q = PhrasePrefixQuery::new(terms);
                        q.set_max_expansions(MAX_PHRASE_EXPANSIONS);
                        Box::new(q)
                    }
                };
                any.push((Occur::Should, Box::new(BoostQuery::new(query, weight))));
            }
            all.push((Occur::Must, Box::new(BooleanQuery::new(any))));
        }
        Box::new(BooleanQuery::new(all))
    }

    /// The words of `field` beginning with `prefix`, each scored; past
    /// [`MAX_EXPANSIONS`] of them, all matched with the field's weight as
    /// one constant score, not BM25.
    fn prefix_query(&self, field: Field, prefix: &str) -> Box<dyn Query> {
        let start = tantivy::Term::from_field_text(field, prefix);
        let mut words: Vec<String> = Vec::new();
        for segment in self.searcher.segment_readers() {
            let Ok(inverted) = segment.inverted_index(field) else { continue };
            let Ok(mut stream) = inverted.terms().range().ge(prefix.as_bytes()).into_stream() else { continue };
            while stream.advance() {
                let key = stream.key();
                if !key.starts_with(prefix.as_bytes()) {
                    break;
                }
                match std::str::from_utf8(key) {
                    Ok(word) if !words.iter().any(|w| w == word) => words.push(word.to_owned()),
                    _ => {}
                }
                if words.len() > MAX_EXPANSIONS {
                    let mut q = PhrasePrefixQuery::new(vec![start]);
                    q.set_max_expansions(u32::MAX);
                    return Box::new(q);
                }
            }
        }
        let any = words
            .into_iter()
            .map(|w| {
                let term = tantivy::Term::from_field_text(field, &w);
                let q: Box<dyn Query> = Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs));
                (Occur::Should, q)
            })
            .collect();
        Box::new(BooleanQuery::new(any))
    }

    /// The rows in `[start, end)` that match `text` and are in every one
    /// of `lists` (rows, ascending), with their score (lower is more
    /// relevant: tantivy's BM25, negated; 0 in row order, where nothing is
    /// scored), as `order` says.
    pub(crate) fn rows(
        &self,
        text: &NewsText,
        start: usize,
        end: usize,
        lists: &[&[u32]],
        order: Order,
    ) -> StoreResult<Vec<(u32, f64)>> {
        let query = self.query(text);
        let (n, ranked, after) = match order {
            Order::Rows(n) => (n, false, None),
            Order::Ranked(n, after) => (n, true, after),
        };
        if n == 0 {
            return Ok(Vec::new());
        }
        let scoring = if ranked {
            EnableScoring::enabled_from_searcher(&self.searcher)
        } else {
            EnableScoring::disabled_from_searcher(&self.searcher)
        };
        let weight = query.weight(scoring).map_err(engine)?;
        let (start, end) = (start as u64, end as u64);
        let passes = |row: u32| lists.iter().all(|l| l.binary_search(&row).is_ok());
        // The best so far, the first to drop on top.
        let mut best: BinaryHeap<Kept> = BinaryHeap::with_capacity(n + 1);
        let mut keep = |kept: Kept| {
            if best.len() == n {
                if best.peek().is_some_and(|worst| kept >= *worst) {
                    return;
                }
                best.pop();
            }
            best.push(kept);
        };
        for segment in self.searcher.segment_readers() {
            let rows = segment.fast_fields().u64("row").map_err(engine)?;
            if ranked {
                weight
                    .for_each(segment, &mut |doc, score| {
                        let Some(row) = rows.first(doc).filter(|r| (start..end).contains(r)) else { return };
                        let (row, score) = (row as u32, -f64::from(score));
                        if after.is_some_and(|(s, r)| !(score > s || (score == s && i64::from(row) > r))) {
                            return;
                        }
                        if passes(row) {
                            keep(Kept(score, row));
                        }
                    })
                    .map_err(engine)?;
            } else {
                weight
                    .for_each_no_score(segment, &mut |docs| {
                        for &doc in docs {
                            let Some(row) = rows.first(doc).filter(|r| (start..end).contains(r)) else { continue };
                            if passes(row as u32) {
                                keep(Kept(0.0, row as u32));
                            }
                        }
                    })
                    .map_err(engine)?;
            }
        }
        let mut found: Vec<Kept> = best.into_vec();
        found.sort_unstable();
        Ok(found.into_iter().map(|Kept(score, row)| (row, score)).collect())
    }
}

/// A kept match, ordered as the page: by score (lower is more relevant),
/// then row (in row order all scores are 0).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Kept(f64, u32);

impl Eq for Kept {}

impl PartialOrd for Kept {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Kept {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

/// A snapshot of both indexes: the news index's bytes, the search
/// index's, then a trailer (the search part's length as a u64, its crc32,
/// [`TRAILER_MAGIC`]; little-endian), so each part is checked on its own.
pub fn frame(mut news: Vec<u8>, search: &[u8]) -> Vec<u8> {
    news.reserve(search.len() + TRAILER);
    news.extend_from_slice(search);
    news.extend_from_slice(&(search.len() as u64).to_le_bytes());
    news.extend_from_slice(&crc32fast::hash(search).to_le_bytes());
    news.extend_from_slice(TRAILER_MAGIC);
    news
}

/// Splits a [`frame`]d snapshot: `bytes` keeps the news index's part, the
/// search index's is returned; why not, for a snapshot of another format
/// (an older one, made before the search index) or damaged.
pub fn unframe(bytes: &mut Vec<u8>) -> Result<Vec<u8>, NewsSnapshotError> {
    let refuse = |why: &str| Err(NewsSnapshotError::new(why));
    let n = bytes.len();
    if n < TRAILER || bytes[n - 8..] != TRAILER_MAGIC[..] {
        return refuse("it holds no search index (written by an older format)");
    }
    let len = u64::from_le_bytes(bytes[n - TRAILER..n - 12].try_into().expect("8 bytes"));
    let crc = u32::from_le_bytes(bytes[n - 12..n - 8].try_into().expect("4 bytes"));
    let Some(at) = usize::try_from(len).ok().and_then(|len| (n - TRAILER).checked_sub(len)) else {
        return refuse("its search index is longer than the snapshot");
    };
    let search = bytes[at..n - TRAILER].to_vec();
    if crc32fast::hash(&search) != crc {
        return refuse("checksum mismatch (damaged), in its search index");
    }
    bytes.truncate(at);
    Ok(search)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The index of `bodies` (row `i` the `i`-th; no other text), built
    /// as [`NewsSearch::build`] builds one: committed, one segment.
    fn of_bodies(bodies: &[String]) -> NewsSearch {
        let index = Index::create(RamDirectory::create(), schema(), Default::default()).unwrap();
        index.tokenizers().register(TOKENIZER, analyzer());
        let schema = index.schema();
        let fields: Vec<Field> = FIELDS.iter().map(|(name, _)| schema.get_field(name).unwrap()).collect();
        let row_field = schema.get_field("row").unwrap();
        let mut writer: IndexWriter<TantivyDocument> = index.writer_with_num_threads(1, 16 << 20).unwrap();
        for (row, body) in bodies.iter().enumerate() {
            writer.add_document(document(&fields, row_field, row, [None, None, None, Some(body)])).unwrap();
        }
        writer.commit().unwrap();
        let segments = index.searchable_segment_ids().unwrap();
        if segments.len() > 1 {
            writer.merge(&segments).wait().unwrap();
        }
        writer.wait_merging_threads().unwrap();
        searchable(index, bodies.len()).unwrap()
    }

    /// Every match of `q`, most relevant first, with its score.
    fn ranked(search: &NewsSearch, q: &str) -> Vec<(u32, f64)> {
        let text = NewsText::parse(q).unwrap();
        search.rows(&text, 0, search.len(), &[], Order::Ranked(search.len() + 1, None)).unwrap()
    }

    /// Bodies whose words beginning with `alpha` are `n`: row 0 `alphaa`
    /// alone, row 1 `alphaa` in a longer body (a lower BM25), row 2 the
    /// last of them in term order (`alphaz`), row 3 the `n - 2` others.
    fn alpha_bodies(n: usize) -> Vec<String> {
        let others: Vec<String> = (0..n - 2).map(|i| format!("alphab{i:04}")).collect();
        vec!["alphaa".into(), "alphaa one two three four five six".into(), "alphaz".into(), others.join(" ")]
    }

    #[test]
    fn a_ranked_page_of_one_word_is_the_first_of_every_match_ranked() {
        // 3,000 bodies of 1 to 12 words, `dividend` 0 to 3 times in them,
        // many alike (equal scores, ordered by row).
        let bodies: Vec<String> = (0..3_000usize)
            .map(|i| {
                let words = ["dividend", "cement", "bank", "the", "rupee", "dividend"];
                (0..1 + (i * 7 + i / 13) % 12).map(|k| words[(i + k * k) % words.len()]).collect::<Vec<_>>().join(" ")
            })
            .collect();
        let search = of_bodies(&bodies);
        let text = NewsText::parse("dividend").unwrap();
        // Kept all: nothing pruned.
        let all = ranked(&search, "dividend");
        assert!(all.len() > 1_000, "{}", all.len());
        assert!(all.windows(2).any(|w| w[0].1 == w[1].1), "ties among them");
        for (limit, start, end, list) in [(20, 0, 3_000, None), (7, 100, 2_500, None), (20, 0, 3_000, Some(2))] {
            let list: Vec<u32> = (0..3_000).filter(|r| list.is_none_or(|m| r % m == 0)).collect();
            let want: Vec<(u32, f64)> = all
                .iter()
                .copied()
                .filter(|&(row, _)| (start..end).contains(&(row as usize)) && list.binary_search(&row).is_ok())
                .collect();
            // Page after page, each after the last of the one before.
            let (mut got, mut after) = (Vec::new(), None);
            loop {
                let page = search.rows(&text, start, end, &[&list], Order::Ranked(limit, after)).unwrap();
                got.extend_from_slice(&page);
                match page.last() {
                    Some(&(row, score)) if page.len() == limit => after = Some((score, i64::from(row))),
                    _ => break,
                }
            }
            assert_eq!(got, want, "limit {limit}, rows {start}..{end}");
        }
    }

    #[test]
    fn a_prefix_of_at_most_1000_words_scores_each() {
        let search = of_bodies(&alpha_bodies(MAX_EXPANSIONS));
        let found = ranked(&search, "alpha*");
        let rows: Vec<u32> = found.iter().map(|&(row, _)| row).collect();
        assert_eq!(rows.len(), 4, "{found:?}");
        let score = |row: u32| found.iter().find(|f| f.0 == row).unwrap().1;
        assert!(score(0) < score(1), "the shorter body is more relevant: {found:?}");
    }

    #[test]
    fn a_prefix_of_more_than_1000_words_matches_them_all_unscored() {
        let search = of_bodies(&alpha_bodies(MAX_EXPANSIONS + 1));
        let found = ranked(&search, "alpha*");
        let mut rows: Vec<u32> = found.iter().map(|&(row, _)| row).collect();
        rows.sort_unstable();
        // Every word matched, the last in term order too: not the first
        // 1,000 alone.
        assert_eq!(rows, [0, 1, 2, 3], "{found:?}");
        // One score for all (the field's weight): no BM25 past the limit.
        assert!(found.iter().all(|&(_, score)| score == found[0].1), "{found:?}");
        // Ranked and cut by row then: the order is the rows'.
        assert_eq!(found.iter().map(|&(row, _)| row).collect::<Vec<_>>(), [0, 1, 2, 3]);
    }

    #[test]
    fn a_phrase_prefix_expands_to_at_most_10000_words() {
        let n = MAX_PHRASE_EXPANSIONS as usize;
        // Row i: `net` then the i-th word beginning with `p` (in term
        // order too), and `n + 1` of them.
        let bodies: Vec<String> = (0..=n).map(|i| format!("net p{i:05}")).collect();
        let search = of_bodies(&bodies);
        let text = NewsText::parse("net-p*").unwrap();
        let found = search.rows(&text, 0, search.len(), &[], Order::Rows(n + 10)).unwrap();
        assert_eq!(found.len(), n, "the first {n} words match, no more");
        assert!(found.iter().all(|&(row, _)| (row as usize) < n), "the last word in term order is the one left");
        // Below the limit every one matches.
        let search = of_bodies(&bodies[..n]);
        let found = search.rows(&text, 0, search.len(), &[], Order::Rows(n + 10)).unwrap();
        assert_eq!(found.len(), n);
    }

    #[test]
    fn frames_split_back_and_refuse_damage() {
        let mut framed = frame(b"news".to_vec(), b"search");
        let mut copy = framed.clone();
        assert_eq!(unframe(&mut copy).unwrap(), b"search");
        assert_eq!(copy, b"news");
        let at = framed.len() - TRAILER - 1;
        framed[at] ^= 1;
        assert!(unframe(&mut framed).is_err());
        assert!(unframe(&mut b"MDSNEWS\x01 old".to_vec()).is_err());
        let mut long = frame(Vec::new(), b"x");
        let n = long.len();
        long[n - TRAILER] = 200;
        assert!(unframe(&mut long).is_err());
    }
}
