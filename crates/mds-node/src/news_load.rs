//! Getting the news index of a news generation into memory, with its
//! full-text index ([`NewsSearch`], the same rows): from their snapshot in
//! the store when there is a valid one (one read and a check of every
//! record; see `news_index/snapshot.rs`, and [`frame`] for how the search
//! index's database image follows the news index's bytes), else built
//! from the store's articles ([`NewsIndex::build`], tens of seconds at a
//! million, then [`NewsSearch::build`] from their text) and the snapshot
//! saved for the next node or start. `mds import news`
//! saves the snapshot of the generation it made ([`rebuild`]), so a node
//! normally finds it waiting.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mds_store::{Store, StoreError, StoreResult};

use crate::news_index::{NewsIndex, NewsSearch, NewsSnapshotError, frame, unframe};
use crate::node::Node;

/// An index loaded from its snapshot ([`from_snapshot`]).
#[derive(Debug)]
pub struct Loaded {
    /// The index.
    pub index: NewsIndex,
    /// The snapshot's size.
    pub bytes: usize,
    /// The time the store took to read it (the rest is the check).
    pub read: Duration,
}

/// The index of `generation` from its snapshot in the store, checked and
/// decoded on a blocking thread. `None` when the store has none, or one
/// that is refused (damaged, foreign, of another format version) or whose
/// chunks do not read back whole: that is logged, and the caller builds
/// the index instead. The store being unreachable is an error.
pub async fn from_snapshot(store: &dyn Store, generation: i64) -> StoreResult<Option<Loaded>> {
    let t = Instant::now();
    let bytes = match store.news_snapshot(generation).await {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Ok(None),
        // Chunks written behind the store's back: as good as no snapshot.
        Err(e @ StoreError::Database(_)) => {
            tracing::warn!(generation, "{e}; building the news index from the store instead");
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let (size, read) = (bytes.len(), t.elapsed());
    match decode(bytes).await {
        Ok(index) if index.generation() == generation => Ok(Some(Loaded { index, bytes: size, read })),
        Ok(index) => {
            let held = index.generation();
            tracing::warn!(generation, "the news index snapshot is of generation {held}; building the index instead");
            Ok(None)
        }
        Err(e) => {
            tracing::warn!(generation, "{e}; building the news index from the store instead");
            Ok(None)
        }
    }
}

/// The news index, with its search index, that a snapshot's `bytes`
/// hold (see [`frame`]), checked whole; or why they are refused. The news
/// index is decoded on a blocking thread.
pub async fn decode(bytes: Vec<u8>) -> Result<NewsIndex, NewsSnapshotError> {
    let decoded = tokio::task::spawn_blocking(move || {
        let mut bytes = bytes;
        let search = unframe(&mut bytes)?;
        NewsIndex::from_bytes(bytes).map(|index| (index, search))
    });
    let (index, search) = decoded.await.expect("loading does not panic")?;
    let search = NewsSearch::from_bytes(&search, index.len()).await?;
    Ok(index.with_search(search))
}

/// The index of `generation` built from the store's articles, with its
/// full-text index, if the store was still at `generation` when the read
/// ended (every change of an article moves it in the same transaction, so
/// the index then holds exactly that generation); `None` when it moved.
pub async fn build(store: &dyn Store, generation: i64) -> StoreResult<Option<NewsIndex>> {
    let index = NewsIndex::build(store, generation).await?;
    let Some(search) = NewsSearch::build(store, &index).await? else {
        return Ok(None);
    };
    let index = index.with_search(search);
    if store.generations().await?.news != generation {
        return Ok(None);
    }
    Ok(Some(index))
}

/// Saves `index` as the snapshot of its generation, encoded on a blocking
/// thread. Given the last handle on it, the index becomes its bytes
/// ([`NewsIndex::into_bytes`]), so the two (about 120 MB each for a
/// million articles) are not held at once.
pub async fn save(store: &dyn Store, index: Arc<NewsIndex>) -> StoreResult<()> {
    let t = Instant::now();
    let generation = index.generation();
    let search = match index.search() {
        Some(search) => search.to_bytes().await?,
        None => return Err(StoreError::Invalid("a news index without its search index is not saved".into())),
    };
    let encode = move || {
        let news = match Arc::try_unwrap(index) {
            Ok(index) => index.into_bytes(),
            Err(shared) => shared.to_bytes(),
        };
        frame(news, &search)
    };
    let bytes = tokio::task::spawn_blocking(encode).await.expect("encoding does not panic");
    store.save_news_snapshot(generation, &bytes).await?;
    tracing::debug!(generation, bytes = bytes.len(), ms = t.elapsed().as_millis() as u64, "news index snapshot saved");
    Ok(())
}

/// Builds the index of `generation` and saves its snapshot, for `mds
/// import news`; returns whether it was saved (not when the news moved
/// while the index was built: the next node builds it, then). Nothing is
/// kept: the index becomes its bytes.
pub async fn rebuild(store: &dyn Store, generation: i64) -> StoreResult<bool> {
    let Some(index) = build(store, generation).await? else {
        return Ok(false);
    };
    save(store, Arc::new(index)).await?;
    Ok(true)
}

impl Node {
    /// Gets the news index of the news generation the node follows (the
    /// keys' reload reads it from the store) when it is not the one held:
    /// from its snapshot in the store, else built, kept when the store's
    /// generation did not move while it was read (else the next call tries
    /// again), and its snapshot saved. At rest it asks the store nothing.
    /// Returns whether a new index was kept.
    pub async fn refresh_news_index(&self) -> StoreResult<bool> {
        let _one_at_a_time = self.news_loading().lock().await;
        let Some(generation) = self.news_pages().current().0 else {
            return Ok(false);
        };
        if self.news_index().is_some_and(|held| held.generation() == generation) {
            return Ok(false);
        }
        let started = Instant::now();
        if let Some(Loaded { index, bytes, read }) = from_snapshot(self.store(), generation).await? {
            tracing::info!(
                generation,
                articles = index.len(),
                bytes = index.heap_bytes(),
                snapshot_bytes = bytes,
                read_ms = read.as_millis() as u64,
                ms = started.elapsed().as_millis() as u64,
                "news index loaded"
            );
            self.set_news_index(Arc::new(index));
            return Ok(true);
        }
        let Some(index) = build(self.store(), generation).await? else {
            tracing::debug!(generation, "news changed while the index was read; read again at the next reload");
            return Ok(false);
        };
        tracing::info!(
            generation,
            articles = index.len(),
            bytes = index.heap_bytes(),
            ms = started.elapsed().as_millis() as u64,
            "news index built"
        );
        let index = Arc::new(index);
        // Served from now on; the snapshot is for the next node or start.
        self.set_news_index(Arc::clone(&index));
        if let Err(e) = save(self.store(), index).await {
            tracing::warn!(generation, "news index snapshot not saved: {e}; the index is served all the same");
        }
        Ok(true)
    }
}
