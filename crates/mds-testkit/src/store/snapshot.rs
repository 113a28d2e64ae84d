//! Suite functions for snapshots, each run on both kinds the store keeps
//! (the company catalog's and the news index's: the same rules, a table
//! each), and on the two together.

use super::*;

/// A kind of snapshot: which of the store's methods and table it uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// [`CatalogStore::save_catalog_snapshot`](mds_store::CatalogStore::save_catalog_snapshot)
    /// and `catalog_snapshot`.
    Catalog,
    /// [`NewsStore::save_news_snapshot`](mds_store::NewsStore::save_news_snapshot)
    /// and `news_snapshot`.
    News,
}

/// Both kinds.
pub const KINDS: [Kind; 2] = [Kind::Catalog, Kind::News];

impl Kind {
    /// The table its chunks are in.
    pub fn table(self) -> &'static str {
        match self {
            Kind::Catalog => "catalog_snapshot_chunks",
            Kind::News => "news_snapshot_chunks",
        }
    }

    /// Saves `bytes` as its snapshot of `generation`.
    pub async fn save(self, store: &dyn Store, generation: i64, bytes: &[u8]) -> StoreResult<()> {
        match self {
            Kind::Catalog => store.save_catalog_snapshot(generation, bytes).await,
            Kind::News => store.save_news_snapshot(generation, bytes).await,
        }
    }

    /// Its snapshot of `generation`, if any.
    pub async fn load(self, store: &dyn Store, generation: i64) -> StoreResult<Option<Vec<u8>>> {
        match self {
            Kind::Catalog => store.catalog_snapshot(generation).await,
            Kind::News => store.news_snapshot(generation).await,
        }
    }
}

/// `len` bytes that differ from chunk to chunk and within each (a xorshift
/// stream, seeded), so chunks read back out of order, twice or cut short
/// would show.
fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// 9 MiB and a bit: two whole chunks of 4 MiB and a short third one.
const MULTI_CHUNK: usize = 9 * 1024 * 1024 + 123;

async fn snapshot(store: &dyn Store, kind: Kind, generation: i64) -> Option<Vec<u8>> {
    kind.load(store, generation).await.unwrap_or_else(|e| panic!("{kind:?} snapshot: {e}"))
}

async fn save(store: &dyn Store, kind: Kind, generation: i64, bytes: &[u8]) {
    kind.save(store, generation, bytes).await.unwrap_or_else(|e| panic!("save {kind:?} snapshot: {e}"));
}

/// A new store has no snapshot, of any generation, of either kind.
pub async fn snapshots_missing_are_none(store: &dyn Store) {
    migrated(store).await;
    for kind in KINDS {
        assert_eq!(snapshot(store, kind, 0).await, None);
        assert_eq!(snapshot(store, kind, 1).await, None);
        assert_eq!(snapshot(store, kind, -1).await, None);
    }
}

/// A snapshot of several chunks reads back byte for byte, under its
/// generation only; saving changes no generation counter.
pub async fn snapshots_round_trip_in_chunks(store: &dyn Store) {
    migrated(store).await;
    for kind in KINDS {
        let g = generations(store).await;
        let bytes = noise(MULTI_CHUNK, 7);
        save(store, kind, 5, &bytes).await;
        let got = snapshot(store, kind, 5).await.expect("saved snapshot");
        assert_eq!(got.len(), bytes.len());
        assert!(got == bytes, "the {kind:?} snapshot differs from what was saved");
        assert_eq!(snapshot(store, kind, 4).await, None);
        assert_eq!(snapshot(store, kind, 6).await, None);
        assert_eq!(generations(store).await, g);
    }
}

/// Saving generation 2 removes generation 1: one snapshot is kept at most.
pub async fn saving_a_snapshot_removes_other_generations(store: &dyn Store) {
    migrated(store).await;
    for kind in KINDS {
        let one = noise(MULTI_CHUNK, 1);
        let two = noise(1000, 2);
        save(store, kind, 1, &one).await;
        save(store, kind, 2, &two).await;
        assert_eq!(snapshot(store, kind, 1).await, None);
        assert_eq!(snapshot(store, kind, 2).await, Some(two));
        // Going back works too (a store restored from a backup, say).
        save(store, kind, 1, &one[..10]).await;
        assert_eq!(snapshot(store, kind, 2).await, None);
        assert_eq!(snapshot(store, kind, 1).await, Some(one[..10].to_vec()));
    }
}

/// An empty snapshot is a snapshot: it reads back as `Some(empty)`, not as
/// missing, and replaces a larger one whole.
pub async fn an_empty_snapshot_round_trips(store: &dyn Store) {
    migrated(store).await;
    for kind in KINDS {
        save(store, kind, 3, &[]).await;
        assert_eq!(snapshot(store, kind, 3).await, Some(Vec::new()));
        save(store, kind, 4, &noise(MULTI_CHUNK, 4)).await;
        save(store, kind, 4, &[]).await;
        assert_eq!(snapshot(store, kind, 4).await, Some(Vec::new()));
        assert_eq!(snapshot(store, kind, 3).await, None);
    }
}

/// Saving one generation twice keeps one whole copy: equal copies read back
/// as that copy, and a second, shorter copy leaves no chunk of the first
/// behind.
pub async fn saving_a_snapshot_twice_keeps_one(store: &dyn Store) {
    migrated(store).await;
    for kind in KINDS {
        let bytes = noise(MULTI_CHUNK, 9);
        save(store, kind, 9, &bytes).await;
        save(store, kind, 9, &bytes).await;
        assert!(snapshot(store, kind, 9).await == Some(bytes.clone()));

        let shorter = noise(5 * 1024 * 1024, 10);
        save(store, kind, 9, &shorter).await;
        assert!(snapshot(store, kind, 9).await == Some(shorter));
    }
}

/// Saves of one generation at once (two nodes that built the same catalog
/// or news index) both succeed and leave one whole copy; a load meanwhile
/// sees a whole snapshot or none, never part of one.
pub async fn concurrent_snapshot_saves_keep_one_whole_copy(store: &dyn Store) {
    migrated(store).await;
    for kind in KINDS {
        let old = noise(MULTI_CHUNK, 20);
        save(store, kind, 20, &old).await;
        let a = noise(MULTI_CHUNK, 21);
        let b = noise(MULTI_CHUNK - 5000, 22);
        let (ra, rb, read_old, read_new) = tokio::join!(
            kind.save(store, 21, &a),
            kind.save(store, 21, &b),
            kind.load(store, 20),
            kind.load(store, 21),
        );
        ra.expect("first save");
        rb.expect("second save");
        let read_old = read_old.expect("load during the saves");
        assert!(read_old.is_none() || read_old.as_ref() == Some(&old), "a load saw part of a snapshot");
        let read_new = read_new.expect("load during the saves");
        assert!(
            read_new.is_none() || read_new.as_ref() == Some(&a) || read_new.as_ref() == Some(&b),
            "a load saw part of a snapshot"
        );
        let kept = snapshot(store, kind, 21).await.expect("one copy kept");
        assert!(kept == a || kept == b, "the kept snapshot mixes both copies");
        assert_eq!(snapshot(store, kind, 20).await, None);
    }
}

/// The two kinds are kept apart: saving one, of the same generation number
/// or another, leaves the other as it was.
pub async fn the_two_kinds_of_snapshot_are_kept_apart(store: &dyn Store) {
    migrated(store).await;
    let catalog = noise(MULTI_CHUNK, 30);
    let news = noise(MULTI_CHUNK + 1, 31);
    save(store, Kind::Catalog, 1, &catalog).await;
    save(store, Kind::News, 1, &news).await;
    assert!(snapshot(store, Kind::Catalog, 1).await == Some(catalog.clone()));
    assert!(snapshot(store, Kind::News, 1).await == Some(news.clone()));
    save(store, Kind::News, 2, &news[..5]).await;
    assert!(snapshot(store, Kind::Catalog, 1).await == Some(catalog.clone()));
    assert_eq!(snapshot(store, Kind::News, 1).await, None);
    save(store, Kind::Catalog, 2, &catalog[..7]).await;
    assert_eq!(snapshot(store, Kind::News, 2).await, Some(news[..5].to_vec()));
    assert_eq!(snapshot(store, Kind::Catalog, 2).await, Some(catalog[..7].to_vec()));
}

/// For a backend's own test, once `store` saved a snapshot of `kind` of
/// `generation` in three chunks or more: deletes chunk 1 through `raw`,
/// after which reading the snapshot is a `Database` error that names its
/// kind and the missing chunk.
pub async fn expect_missing_chunk_error(store: &dyn Store, raw: &mut dyn crate::raw::Raw, kind: Kind, generation: i64) {
    raw.execute(&format!("DELETE FROM {} WHERE seq = 1", kind.table())).await;
    let err = kind.load(store, generation).await.expect_err("a chunk is missing");
    assert!(matches!(err, StoreError::Database(_)), "{err:?}");
    assert!(err.to_string().contains("chunk 1 is missing"), "{err}");
    let word = match kind {
        Kind::Catalog => "catalog snapshot",
        Kind::News => "news snapshot",
    };
    assert!(err.to_string().contains(word), "{err}");
}
