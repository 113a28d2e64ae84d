//! Getting the company catalog of a companies generation into memory: from
//! the snapshot in the store when there is one (a ~120 MB read for a
//! million companies, checked and used in place), else built from the
//! store's rows, streamed in order, and its snapshot saved for the next node
//! or start. `mds import` calls [`rebuild`] after an import, so a node
//! normally finds the snapshot waiting.

use std::sync::Arc;
use std::time::Instant;

use mds_catalog::{Catalog, CatalogBuilder, ChangeStamp, OrderError};
use mds_store::{Store, StoreResult, StoredCompany};

/// Where a catalog came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The store's snapshot of the generation.
    Snapshot,
    /// Built from the store's rows.
    Built,
}

impl Source {
    /// A word for logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Snapshot => "snapshot",
            Source::Built => "built",
        }
    }
}

/// The catalog of companies generation `generation`: its snapshot if the
/// store has a valid one, else built from the rows and its snapshot saved
/// (a failed save is logged: the catalog is still good).
pub async fn load(store: &Arc<dyn Store>, generation: i64) -> StoreResult<(Arc<Catalog>, Source)> {
    let t = Instant::now();
    if let Some(bytes) = store.catalog_snapshot(generation).await? {
        let size = bytes.len();
        match tokio::task::spawn_blocking(move || Catalog::from_bytes(bytes).inspect(|c| c.prepare_search()))
            .await
            .expect("loading does not panic")
        {
            Ok(c) => {
                tracing::debug!(
                    generation,
                    bytes = size,
                    derived_bytes = c.derived_bytes(),
                    ms = t.elapsed().as_millis() as u64,
                    "catalog snapshot loaded"
                );
                return Ok((Arc::new(c), Source::Snapshot));
            }
            Err(e) => tracing::warn!(generation, "{e}; building the catalog from the store instead"),
        }
    }
    Ok((build_and_save(store, generation, Here::No).await?, Source::Built))
}

/// Whether a build lays the catalog out on the calling thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Here {
    /// On a blocking thread: a serving node's runtime goes on meanwhile.
    No,
    /// On the calling thread, which does nothing else meanwhile.
    Yes,
}

/// Builds the catalog of `generation` from the store's rows and saves its
/// snapshot: for `mds import`, once its import is done. The caller reads
/// `generation` before calling, so the rows are at least that new (a
/// newer generation is picked up by the next reload). The catalog is laid
/// out on the calling thread, which the import ran on: the allocator gives
/// the layout the memory the import freed there, where a thread of its own
/// would take fresh memory and the process would peak at both.
pub async fn rebuild(store: &Arc<dyn Store>, generation: i64) -> StoreResult<Arc<Catalog>> {
    build_and_save(store, generation, Here::Yes).await
}

/// Builds the catalog of `generation` and saves its snapshot (a failed
/// save is logged: the catalog is still good).
async fn build_and_save(store: &Arc<dyn Store>, generation: i64, here: Here) -> StoreResult<Arc<Catalog>> {
    let t = Instant::now();
    let catalog = Arc::new(build(store, here).await?);
    let built = t.elapsed();
    let to_save = Arc::clone(&catalog);
    match store.save_catalog_snapshot(generation, to_save.as_bytes()).await {
        Ok(()) => tracing::debug!(
            generation,
            rows = to_save.len(),
            bytes = to_save.as_bytes().len(),
            history_bytes = to_save.history_bytes(),
            derived_bytes = to_save.derived_bytes(),
            build_ms = built.as_millis() as u64,
            save_ms = (t.elapsed() - built).as_millis() as u64,
            "catalog built and its snapshot saved"
        ),
        Err(e) => tracing::warn!(generation, "catalog snapshot not saved: {e}"),
    }
    Ok(catalog)
}

/// A stored company's change stamp, as the catalog keeps it.
fn stamp(c: &StoredCompany) -> ChangeStamp {
    ChangeStamp { seq: c.change_seq, updated_unix: c.updated_at.timestamp() }
}

/// Streams the identity events and the rows into a builder (nothing but
/// the catalog and the events, packed, are held), then lays the catalog
/// out, with the history made of the events, where `here` says.
async fn build(store: &Arc<dyn Store>, here: Here) -> StoreResult<Catalog> {
    let n = store.company_count().await?;
    let mut builder = CatalogBuilder::with_capacity(usize::try_from(n).unwrap_or(0));
    store.identity_events_each(&mut |isin, e| builder.push_event(&isin, &e)).await?;
    let mut disorder: Option<OrderError> = None;
    store
        .companies_sorted(&mut |c| {
            if disorder.is_none() {
                disorder = builder.push_stamped(&c.company, stamp(&c)).err();
            }
        })
        .await?;
    if let Some(e) = disorder {
        // The store's order disagrees with the catalog's (a collation
        // mismatch): correct, but slower and bigger, to sort in memory.
        tracing::warn!("{e}; sorting the companies in memory instead");
        let events = store.identity_events().await?;
        let mut rows = Vec::new();
        store.companies_sorted(&mut |c| rows.push((stamp(&c), c.company))).await?;
        return Ok(lay_out(here, move || Catalog::from_stamped_with_history(rows, events)).await);
    }
    Ok(lay_out(here, move || builder.finish()).await)
}

/// Runs `f` (a layout) where `here` says.
async fn lay_out(here: Here, f: impl FnOnce() -> Catalog + Send + 'static) -> Catalog {
    match here {
        Here::Yes => f(),
        Here::No => tokio::task::spawn_blocking(f).await.expect("build does not panic"),
    }
}
