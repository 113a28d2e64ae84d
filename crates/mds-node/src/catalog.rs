//! [`CatalogSlot`]: the node's company catalog, swapped whole on reload,
//! with the identity of its version and the pages served from it
//! ([`crate::pages`]).

use std::collections::HashMap;
use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arc_swap::{ArcSwap, Guard};
use http::HeaderValue;
use mds_catalog::Catalog;
use sha2::Sha256;

use crate::pages::PageCache;

/// A company catalog and the identity of its version on this node.
#[derive(Debug)]
pub struct CatalogVersion {
    catalog: Arc<Catalog>,
    id: [u8; 16],
    generation: i64,
    nonces: HashMap<i64, i64>,
    pages: PageCache,
}

impl CatalogVersion {
    /// Identifies this catalog among every catalog any node has served:
    /// a random number drawn when the node starts, then how many catalogs
    /// it loaded before this one. What a page holds is a function of this
    /// and of the request, so a page's `ETag` derives from it without
    /// hashing the page.
    pub fn id(&self) -> &[u8; 16] {
        &self.id
    }

    /// The strong `ETag` of a representation made from this catalog, without
    /// hashing it: 16 bytes of the SHA-256 of `label`, this catalog's id and
    /// what `feed` adds (what the representation holds besides the catalog).
    pub fn derived_tag(&self, label: &[u8], feed: impl FnOnce(&mut Sha256)) -> HeaderValue {
        crate::tagged::derived_tag(label, &self.id, feed)
    }

    /// The store's `companies` generation this catalog was loaded at: it
    /// holds every change up to it (the sync token of its change feed).
    pub fn generation(&self) -> i64 {
        self.generation
    }

    /// The random nonce the store gave `companies` generation `g` (0 for
    /// one it gave none, generation 0 among them), as of this catalog's
    /// load: a sync token carries it, so a token from a history the store
    /// no longer has does not pass for one of the same number now.
    pub fn nonce(&self, g: i64) -> i64 {
        self.nonces.get(&g).copied().unwrap_or(0)
    }

    /// The pages served from this version (the company list's and the
    /// change feed's), by query.
    pub fn pages(&self) -> &PageCache {
        &self.pages
    }
}

impl Deref for CatalogVersion {
    type Target = Catalog;
    fn deref(&self) -> &Catalog {
        &self.catalog
    }
}

/// The node's current company catalog, swapped whole.
#[derive(Debug)]
pub struct CatalogSlot {
    current: ArcSwap<CatalogVersion>,
    node: u64,
    loads: AtomicU64,
    page_cache_bytes: usize,
}

impl CatalogSlot {
    /// A slot holding `catalog`, each version keeping at most
    /// `page_cache_bytes` of served pages.
    pub fn new(catalog: Arc<Catalog>, page_cache_bytes: usize) -> Self {
        let node = rand::random::<u64>();
        let first = Self::version(node, 0, catalog, 0, HashMap::new(), page_cache_bytes);
        CatalogSlot { current: ArcSwap::from_pointee(first), node, loads: AtomicU64::new(1), page_cache_bytes }
    }

    fn version(
        node: u64,
        n: u64,
        catalog: Arc<Catalog>,
        generation: i64,
        nonces: HashMap<i64, i64>,
        page_cache_bytes: usize,
    ) -> CatalogVersion {
        let mut id = [0; 16];
        id[..8].copy_from_slice(&node.to_le_bytes());
        id[8..].copy_from_slice(&n.to_le_bytes());
        CatalogVersion { catalog, id, generation, nonces, pages: PageCache::new(page_cache_bytes) }
    }

    /// Serves `catalog`, loaded at `companies` generation `generation`
    /// with the generations' `nonces` (the store's `generation_nonces`),
    /// from now on, as a new version (with no pages).
    pub fn store(&self, catalog: Arc<Catalog>, generation: i64, nonces: &[(i64, i64)]) {
        let n = self.loads.fetch_add(1, Ordering::Relaxed);
        let nonces = nonces.iter().copied().collect();
        let version = Self::version(self.node, n, catalog, generation, nonces, self.page_cache_bytes);
        self.current.store(Arc::new(version));
    }

    /// The catalog as of now.
    pub fn load(&self) -> Guard<Arc<CatalogVersion>> {
        self.current.load()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::{List, PageKey};
    use crate::tagged::Tagged;
    use bytes::Bytes;
    use http::HeaderValue;

    #[test]
    fn catalog_versions_differ() {
        let slot = CatalogSlot::new(Arc::new(Catalog::default()), 1 << 20);
        let first = *slot.load().id();
        let key = PageKey { list: List::Companies, query: "limit=1" };
        slot.load()
            .pages()
            .put(key, Tagged { body: Bytes::from_static(b"{}"), etag: HeaderValue::from_static("\"t\"") });
        assert!(slot.load().pages().get(key).is_some());
        assert_eq!(*slot.load().id(), first, "stable while the catalog is");
        slot.store(Arc::new(Catalog::default()), 1, &[(1, 42)]);
        assert_eq!((slot.load().nonce(1), slot.load().nonce(2)), (42, 0));
        assert_ne!(*slot.load().id(), first, "a new catalog is a new version, even with the same rows");
        assert!(slot.load().pages().is_empty(), "a new version serves no page of the old one");
        let other = CatalogSlot::new(Arc::new(Catalog::default()), 0);
        assert_ne!(*other.load().id(), first, "another node (or a restart) draws its own");
    }
}
