//! Suite functions for catalog snapshots.

use super::*;

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

async fn snapshot(store: &dyn Store, generation: i64) -> Option<Vec<u8>> {
    store.catalog_snapshot(generation).await.expect("catalog_snapshot")
}

async fn save(store: &dyn Store, generation: i64, bytes: &[u8]) {
    store.save_catalog_snapshot(generation, bytes).await.expect("save_catalog_snapshot");
}

/// A new store has no snapshot, of any generation.
pub async fn catalog_snapshot_missing_is_none(store: &dyn Store) {
    migrated(store).await;
    assert_eq!(snapshot(store, 0).await, None);
    assert_eq!(snapshot(store, 1).await, None);
    assert_eq!(snapshot(store, -1).await, None);
}

/// A snapshot of several chunks reads back byte for byte, under its
/// generation only; saving changes no generation counter.
pub async fn catalog_snapshot_round_trips_in_chunks(store: &dyn Store) {
    migrated(store).await;
    let g = generations(store).await;
    let bytes = noise(MULTI_CHUNK, 7);
    save(store, 5, &bytes).await;
    let got = snapshot(store, 5).await.expect("saved snapshot");
    assert_eq!(got.len(), bytes.len());
    assert!(got == bytes, "the snapshot differs from what was saved");
    assert_eq!(snapshot(store, 4).await, None);
    assert_eq!(snapshot(store, 6).await, None);
    assert_eq!(generations(store).await, g);
}

/// Saving generation 2 removes generation 1: one snapshot is kept at most.
pub async fn saving_a_catalog_snapshot_removes_other_generations(store: &dyn Store) {
    migrated(store).await;
    let one = noise(MULTI_CHUNK, 1);
    let two = noise(1000, 2);
    save(store, 1, &one).await;
    save(store, 2, &two).await;
    assert_eq!(snapshot(store, 1).await, None);
    assert_eq!(snapshot(store, 2).await, Some(two));
    // Going back works too (a store restored from a backup, say).
    save(store, 1, &one[..10]).await;
    assert_eq!(snapshot(store, 2).await, None);
    assert_eq!(snapshot(store, 1).await, Some(one[..10].to_vec()));
}

/// An empty snapshot is a snapshot: it reads back as `Some(empty)`, not as
/// missing, and replaces a larger one whole.
pub async fn an_empty_catalog_snapshot_round_trips(store: &dyn Store) {
    migrated(store).await;
    save(store, 3, &[]).await;
    assert_eq!(snapshot(store, 3).await, Some(Vec::new()));
    save(store, 4, &noise(MULTI_CHUNK, 4)).await;
    save(store, 4, &[]).await;
    assert_eq!(snapshot(store, 4).await, Some(Vec::new()));
    assert_eq!(snapshot(store, 3).await, None);
}

/// Saving one generation twice keeps one whole copy: equal copies read back
/// as that copy, and a second, shorter copy leaves no chunk of the first
/// behind.
pub async fn saving_a_catalog_snapshot_twice_keeps_one(store: &dyn Store) {
    migrated(store).await;
    let bytes = noise(MULTI_CHUNK, 9);
    save(store, 9, &bytes).await;
    save(store, 9, &bytes).await;
    assert!(snapshot(store, 9).await == Some(bytes.clone()));

    let shorter = noise(5 * 1024 * 1024, 10);
    save(store, 9, &shorter).await;
    assert!(snapshot(store, 9).await == Some(shorter));
}

/// Saves of one generation at once (two nodes that built the same catalog)
/// both succeed and leave one whole copy; a load meanwhile sees a whole
/// snapshot or none, never part of one.
pub async fn concurrent_catalog_snapshot_saves_keep_one_whole_copy(store: &dyn Store) {
    migrated(store).await;
    let old = noise(MULTI_CHUNK, 20);
    save(store, 20, &old).await;
    let a = noise(MULTI_CHUNK, 21);
    let b = noise(MULTI_CHUNK - 5000, 22);
    let (ra, rb, read_old, read_new) = tokio::join!(
        store.save_catalog_snapshot(21, &a),
        store.save_catalog_snapshot(21, &b),
        store.catalog_snapshot(20),
        store.catalog_snapshot(21),
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
    let kept = snapshot(store, 21).await.expect("one copy kept");
    assert!(kept == a || kept == b, "the kept snapshot mixes both copies");
    assert_eq!(snapshot(store, 20).await, None);
}

/// For a backend's own test, once `store` saved a snapshot of `generation`
/// in three chunks or more: deletes chunk 1 through `raw`, after which
/// reading the snapshot is a `Database` error that names the missing chunk.
pub async fn expect_missing_chunk_error(store: &dyn Store, raw: &mut dyn crate::raw::Raw, generation: i64) {
    raw.execute("DELETE FROM catalog_snapshot_chunks WHERE seq = 1").await;
    let err = store.catalog_snapshot(generation).await.expect_err("a chunk is missing");
    assert!(matches!(err, StoreError::Database(_)), "{err:?}");
    assert!(err.to_string().contains("chunk 1 is missing"), "{err}");
}
