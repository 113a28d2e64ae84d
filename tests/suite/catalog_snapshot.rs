//! The company catalog's snapshot in the store: a node builds a generation's
//! catalog once and saves it, later loads use the snapshot, a damaged one is
//! rebuilt and replaced, and `mds import companies` leaves the snapshot of
//! the generation it made. On the backend `MDS_TEST_BACKEND` names.

use crate::common;

use std::process::Command;
use std::sync::Arc;

use common::TestDatabase;
use mds_catalog::Catalog;
use mds_domain::CompanyFilter;
use mds_node::catalog_load::{Source, load};
use mds_store::Store;

async fn store_with_demo() -> (Arc<dyn Store>, TestDatabase, mds_store::DatabaseUrl) {
    let (url, db) = TestDatabase::create().await;
    let store = mds_store::open(&url).await.expect("open");
    store.migrate().await.expect("migrate");
    store.upsert_companies(&mds_import::demo_companies()).await.expect("companies");
    (store, db, url)
}

fn all_rows(c: &Catalog) -> Vec<String> {
    c.page(&CompanyFilter::default(), None, 200).json_rows()
}

#[tokio::test]
async fn a_node_builds_once_then_loads_the_snapshot() {
    let (store, _db, _) = store_with_demo().await;
    let generation = store.generations().await.unwrap().companies;
    assert_eq!(store.catalog_snapshot(generation).await.unwrap(), None, "nothing saved yet");

    let (built, source) = load(&store, generation).await.unwrap();
    assert_eq!(source, Source::Built);
    assert_eq!(built.len(), mds_import::demo_companies().len());
    let saved = store.catalog_snapshot(generation).await.unwrap().expect("the build saved its snapshot");
    assert_eq!(saved, built.as_bytes());

    let (loaded, source) = load(&store, generation).await.unwrap();
    assert_eq!(source, Source::Snapshot);
    assert_eq!(all_rows(&loaded), all_rows(&built));
    assert!(loaded.companies().eq(built.companies()));

    // A newer generation has no snapshot: built again, and the old one replaced.
    let mut more = mds_import::demo_companies()[..3].to_vec();
    more.iter_mut().for_each(|c| c.name.push_str(" (renamed)"));
    store.upsert_companies(&more).await.unwrap();
    let next = store.generations().await.unwrap().companies;
    let (rebuilt, source) = load(&store, next).await.unwrap();
    assert_eq!(source, Source::Built);
    assert_eq!(rebuilt.companies().filter(|c| c.name.ends_with(" (renamed)")).count(), 3);
    assert_eq!(store.catalog_snapshot(generation).await.unwrap(), None);
}

#[tokio::test]
async fn a_damaged_snapshot_is_rebuilt_and_replaced() {
    let (store, _db, _) = store_with_demo().await;
    let generation = store.generations().await.unwrap().companies;
    let (good, _) = load(&store, generation).await.unwrap();
    let mut bad = good.as_bytes().to_vec();
    let middle = bad.len() / 2;
    bad[middle] ^= 1;
    store.save_catalog_snapshot(generation, &bad).await.unwrap();

    let (catalog, source) = load(&store, generation).await.unwrap();
    assert_eq!(source, Source::Built, "a snapshot failing its checksum is not served");
    assert_eq!(all_rows(&catalog), all_rows(&good));
    let saved = store.catalog_snapshot(generation).await.unwrap().unwrap();
    assert_eq!(saved, good.as_bytes(), "the damaged snapshot was replaced");
}

#[tokio::test]
async fn an_import_leaves_the_snapshot_of_its_generation() {
    let (store, _db, url) = store_with_demo().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("more.csv");
    std::fs::write(
        &file,
        "isin,ticker,name,industry,sector,is_bse,is_nse,market_cap_band,logo_url\n\
         INE002A01018,RELIANCE,Reliance Industries (re-imported),Refineries,Energy,true,true,large_cap,\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mds"))
        .args(["import", "companies"])
        .arg(&file)
        .env("MDS_DATABASE_URL", url.expose())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("warning"), "{}", String::from_utf8_lossy(&out.stderr));

    let generation = store.generations().await.unwrap().companies;
    let bytes = store.catalog_snapshot(generation).await.unwrap().expect("the import saved a snapshot");
    let catalog = Catalog::from_bytes(bytes).expect("a valid snapshot");
    assert_eq!(catalog.len(), mds_import::demo_companies().len());
    let reliance: Vec<_> = catalog.companies().filter(|c| c.isin.as_str() == "INE002A01018").collect();
    assert_eq!(reliance[0].name, "Reliance Industries (re-imported)");
    let (_, source) = load(&store, generation).await.unwrap();
    assert_eq!(source, Source::Snapshot, "a node starting now does not rebuild");
}
