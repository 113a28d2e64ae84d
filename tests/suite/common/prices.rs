//! Prices loaded for a test: the repository's real files, imported as an
//! operator would (the demo's exchange lists and symbol changes, NSE's
//! corporate actions) and five days of NSE's UDiFF archive around TTL's
//! split of 2025-02-12 (Rs 10 to Re 1, with a new ISIN), imported through
//! the node's import of daily files.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::process::Command;

use super::{Options, TestApp, spawn_with};

/// TTL (T T Limited) before its split of 2025-02-12, and after.
pub const TTL_OLD: &str = "INE592B01016";
pub const TTL_NEW: &str = "INE592B01024";

/// The trading days imported (2025-02-08 and -09 are a weekend).
pub const DAYS: [&str; 5] = ["2025-02-07", "2025-02-10", "2025-02-11", "2025-02-12", "2025-02-13"];

/// A file of `data/`.
pub fn data(f: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data").join(f).to_str().unwrap().to_owned()
}

/// Runs `mds` against the app's store; asserts it succeeds and returns its
/// standard output.
///
/// Async: the app's server runs on the test's runtime, so a blocking wait
/// for the child would freeze it, with any write transaction it had open
/// holding SQLite's lock until the child gave up ("database is locked").
pub async fn mds(app: &TestApp, args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_mds"))
        .args(args)
        .env("MDS_DATABASE_URL", app.url.expose())
        .env("MDS_LOG", "warn")
        .output()
        .await
        .expect("run mds");
    assert!(o.status.success(), "mds {args:?} failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// [`DAYS`]' files of the repository's UDiFF archive, written to `dir`.
pub fn udiff_days(dir: &Path) -> Vec<PathBuf> {
    let archive = data("prices/nse_udiff_2025-01-01_2025-03-07.tar.zst");
    let mut written = Vec::new();
    mds_import::bhavcopy::archive::for_each_file(&[archive], &mut |name, bytes| {
        if DAYS.iter().any(|d| name.ends_with(&format!("nse-cm-bhavcopy-{d}.csv"))) {
            let path = dir.join(name.rsplit('/').next().unwrap());
            std::fs::write(&path, bytes).unwrap();
            written.push(path);
        }
        Ok(())
    })
    .expect("read the archive");
    assert_eq!(written.len(), DAYS.len(), "every day is in the archive");
    written
}

/// Polls until `check` holds of `GET path`'s body; panics after 10 s.
pub async fn wait_for(app: &TestApp, path: &str, check: impl Fn(&Value) -> bool) -> Value {
    let t = Instant::now();
    loop {
        let r = app.get(path).await;
        if r.status() == 200 {
            let body: Value = r.json().await.unwrap();
            if check(&body) {
                return body;
            }
        }
        assert!(t.elapsed() < Duration::from_secs(10), "GET {path} never answered as expected");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A server on an empty store with the demo's identity data, NSE's
/// actions and [`DAYS`] of prices, once the node serves them.
pub async fn loaded() -> (TestApp, tempfile::TempDir) {
    loaded_with(Options::default()).await
}

/// [`loaded`], the server started with `opts` (its companies and articles
/// left out).
pub async fn loaded_with(opts: Options) -> (TestApp, tempfile::TempDir) {
    let app = spawn_with(Options { companies: Vec::new(), articles: Vec::new(), ..opts }).await;
    let lists = [
        ("demo/nse_EQUITY_L_2024-01.csv", Some("demo/bse_Equity_2024-01.csv"), "2024-01-31"),
        ("demo/nse_EQUITY_L_2026-05-17.csv", None, "2026-05-17"),
    ];
    for (nse, bse, as_of) in lists {
        let mut args = vec!["import".to_owned(), "exchanges".into(), "--nse".into(), data(nse)];
        if let Some(bse) = bse {
            args.extend(["--bse".to_owned(), data(bse)]);
        }
        args.extend(["--as-of".to_owned(), as_of.into()]);
        mds(&app, &args.iter().map(String::as_str).collect::<Vec<_>>()).await;
    }
    mds(&app, &["import", "nse-changes", "--symbols", &data("demo/nse_symbolchange_2026-05-17.csv")]).await;
    mds(&app, &["import", "nse-actions", &data("actions/nse_CF-CA-equities_2016-01-05_to_2025-07-18.csv.zst")]).await;
    let dir = tempfile::tempdir().unwrap();
    let files = udiff_days(dir.path());
    let mut args = vec!["import".to_owned(), "nse-bhavcopy".into()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    mds(&app, &args.iter().map(String::as_str).collect::<Vec<_>>()).await;
    wait_for(&app, &format!("/v1/companies/{TTL_NEW}/prices?from={}", DAYS[0]), |b| {
        b["bars"].as_array().is_some_and(|bars| bars.len() == DAYS.len())
    })
    .await;
    (app, dir)
}
