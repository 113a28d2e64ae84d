//! Key changes during a long import, with real processes on one SQLite file:
//! `mds import companies` of a large file runs while keys are made and
//! revoked (`mds keys create`, `mds keys revoke`) again and again, and a
//! running `mds serve` node on the same store refuses each revoked key within
//! 1 s (a revocation takes effect within 1 s), whether the import is reading
//! its file, writing, or the catalog it made is being built and loaded.
//!
//! The import stages its rows outside the store's write lock and holds the
//! lock only to apply them (a second or two here, in a debug build): a key
//! change waits for that step at most, never for the whole import. When the
//! import held the lock from its first row to its commit (300,000 rows keep a
//! debug build's import writing for 8 s or more), each key change made while
//! it wrote failed as `store unavailable` after the 5 s busy timeout.

use crate::common;

use std::io::Write;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::process::{cli, in_dir, start};
use mds_store::DatabaseUrl;

/// Rows of the import file.
const ROWS: u32 = 300_000;

/// A companies file of `n` distinct, valid rows (CSV, as `mds import
/// companies` reads it).
fn companies_csv(path: &std::path::Path, n: u32) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(f, "isin,ticker,name,industry,sector,is_bse,is_nse,market_cap_band,logo_url").unwrap();
    for i in 0..n {
        let isin = mds_testkit::fixtures::isin_of(i);
        let isin = isin.as_str();
        let band = ["large_cap", "mid_cap", "small_cap", ""][i as usize % 4];
        writeln!(f, "{isin},T{i:07},Company {i} Limited,Banks,Financials,true,{},{band},", i % 2 == 0).unwrap();
    }
    f.flush().unwrap();
}

/// The status of `GET /v1/companies?limit=1` with `key`.
async fn status(client: &reqwest::Client, base: &str, key: &str) -> u16 {
    client.get(format!("{base}/v1/companies?limit=1")).bearer_auth(key).send().await.unwrap().status().as_u16()
}

/// Whether `child` is still running.
fn running(child: &mut Child) -> bool {
    child.try_wait().unwrap().is_none()
}

/// Runs `mds ARGS` on the store in `dir`; its stdout, or a panic naming
/// `what` and how far into the import it failed, with its stderr.
fn key_command(dir: &std::path::Path, args: &[&str], what: &str, since: Instant) -> String {
    let o = in_dir(dir).args(args).env("MDS_LOG", "warn").output().unwrap();
    assert!(
        o.status.success(),
        "{what}, {:?} into the import: {}",
        since.elapsed(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

#[tokio::test]
async fn keys_change_and_revoked_keys_are_refused_while_a_large_import_runs() {
    let dir = tempfile::tempdir().unwrap();
    cli(&dir, &["accounts", "create", "acme"]);
    let file = dir.path().join("companies.csv");
    companies_csv(&file, ROWS);
    let node = start(&dir, &["serve"]);
    let base = node.base();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let store = mds_store::open(&DatabaseUrl::new(dir.path().join("mds.db").to_str().unwrap())).await.unwrap();

    let mut import: Child = in_dir(dir.path())
        .args(["import", "companies", file.to_str().unwrap()])
        .env("MDS_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();

    // Until the import ends: a key is made (the command succeeds) and served
    // by the node, then revoked (the command succeeds) and refused by the
    // node within 1 s. Each revocation is noted with how far into the
    // import it returned, and whether the import's companies were in the
    // store by then.
    let mut revoked: Vec<(Duration, bool)> = Vec::new();
    let mut i = 0;
    while running(&mut import) {
        let create = ["keys", "create", "--account", "acme", "--tier", "pro"];
        let key = key_command(dir.path(), &create, &format!("key {i} made"), started).trim().to_owned();
        let made_at = Instant::now();
        while status(&client, &base, &key).await != 200 {
            assert!(made_at.elapsed() < Duration::from_secs(5), "new key {i} not served after 5 s");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        key_command(dir.path(), &["keys", "revoke", &key[..17]], &format!("key {i} revoked"), started);
        let revoked_at = Instant::now();
        if running(&mut import) {
            revoked.push((revoked_at - started, store.generations().await.unwrap().companies > 0));
        }
        while status(&client, &base, &key).await != 401 {
            assert!(revoked_at.elapsed() < Duration::from_secs(1), "revoked key {i} still accepted after 1 s");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        i += 1;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let out = import.wait_with_output().unwrap();
    assert!(out.status.success(), "the import: {}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("imported {ROWS} companies from")), "{stdout}");
    assert!(stdout.contains(&format!("({ROWS} new, 0 updated, 0 unchanged)")), "{stdout}");
    assert_eq!(store.company_count().await.unwrap(), u64::from(ROWS));
    // Revocations went through while the import was reading and writing
    // (its companies not in the store yet), and after, while its catalog
    // was built and loaded.
    let before = revoked.iter().filter(|(_, rows_in)| !rows_in).count();
    let after = revoked.len() - before;
    assert!(before >= 3 && after >= 1, "revocations while the import ran (when, its rows in): {revoked:?}");
    eprintln!("import took {:?}; {before} revocations before its rows were in, {after} after", started.elapsed());
}
