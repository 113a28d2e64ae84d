//! `mds import nse-bhavcopy`'s write ([`mds_node::import::prices`]) on
//! the repository's real daily files (`data/prices/`), with a real SQLite
//! store whose identity history is the repository's exchange lists
//! (`data/demo/`, as `mds demo` loads them): counts that add up, an import
//! again changing nothing, symbol-keyed rows resolved and left unresolved,
//! one day in both formats, and a bad file writing nothing.
//!
//! The repository's two archives share no day (the ISIN-keyed one is of
//! 2025-01..03, the symbol-keyed one of 2025-08..2026-08), so the day in
//! both formats is a real UDiFF day with its equity rows written out again
//! in the `sec_bhavdata_full` format.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::NaiveDate;
use mds_domain::Isin;
use mds_domain::prices::{IsinSource, Percent};
use mds_import::bhavcopy::{BhavRow, DayFiles, archive, parse_day};
use mds_node::import::prices::{BhavcopyImport, import_bhavcopy};
use mds_node::import::{ImportFailure, Source};
use mds_store::prelude::*;
use mds_store::{DatabaseUrl, PriceDay};
use tempfile::TempDir;

/// The repository's `data/prices/` archive named `name`.
fn archive_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/prices").join(name)
}

const UDIFF: &str = "nse_udiff_2025-01-01_2025-03-07.tar.zst";
const SECBHAV: &str = "nse_sec_bhavdata_full_2025-08-21_2026-08-21.tar.zst";

fn day(s: &str) -> NaiveDate {
    s.parse().expect("a day")
}

fn isin(s: &str) -> Isin {
    Isin::parse(s).expect("an ISIN")
}

/// A migrated SQLite store with the repository's identity history (NSE,
/// NSE SME and BSE lists of 2024-01 and 2026-05-17, NSE's change files).
async fn store_with_history() -> (Arc<dyn Store>, TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = DatabaseUrl::new(dir.path().join("mds.db").to_str().expect("UTF-8 path"));
    let store: Arc<dyn Store> = mds_store::open(&url).await.expect("open");
    store.migrate().await.expect("migrate");
    let h = mds_import::demo_history();
    store.import_snapshots(&h.snapshots_2024).await.expect("2024 lists");
    store.import_snapshots(&h.snapshots_2026).await.expect("2026 lists");
    store.import_nse_changes(&h.symbol_changes, &h.name_changes).await.expect("change files");
    (store, dir)
}

/// Imports `paths` with the store's catalog.
async fn import(store: &Arc<dyn Store>, paths: &[PathBuf]) -> Result<BhavcopyImport, ImportFailure> {
    let generation = store.generations().await.expect("generations").companies;
    let (catalog, _) = mds_node::catalog_load::load(store, generation).await.expect("catalog");
    let files = DayFiles::new(paths.iter().cloned().map(Source::Path).collect());
    import_bhavcopy(store, catalog, files).await
}

/// The counts of an import add up.
fn assert_adds_up(d: &BhavcopyImport) {
    assert_eq!(d.rows_read, d.isin_keyed + d.symbol_keyed + d.skipped.total(), "{d:?}");
    assert_eq!(d.symbol_keyed, d.resolved + d.unresolved.len() as u64);
    let s = &d.store;
    assert_eq!(s.new + s.replaced + s.unchanged, d.udiff_files + d.secbhav_files, "one day handed a file");
    assert!(d.counts().adds_up(), "{:?}", d.counts());
    assert_eq!(d.counts().read, d.rows_read);
}

/// Both repository archives, imported in one run: every count, the split
/// of TTL across its ISIN change, a resolved symbol-keyed bar; then the
/// same run again changes nothing.
#[tokio::test]
async fn both_repository_archives_import_and_again_change_nothing() {
    let (store, _dir) = store_with_history().await;
    let paths = [archive_path(UDIFF), archive_path(SECBHAV)];
    let d = import(&store, &paths).await.expect("import");
    assert_adds_up(&d);
    assert_eq!((d.udiff_files, d.secbhav_files), (48, 248));
    // README: 141,108 UDiFF rows (128,432 of equity series, 10,914 of
    // them funds') and 589,055 sec_bhavdata_full rows (EQ only).
    assert_eq!(d.rows_read, 141_108 + 589_055);
    assert_eq!(d.skipped.funds, 10_914);
    assert_eq!(d.isin_keyed, 128_432 - 10_914);
    assert_eq!(d.symbol_keyed, 589_055);
    // No day in both archives: every bar is its own row's.
    assert_eq!((d.same_bar, d.disagreements.len()), (0, 0));
    assert_eq!(d.days.len(), 48 + 248);
    assert_eq!(d.bars_held(), (d.isin_keyed, d.resolved));
    assert_eq!((d.store.new, d.store.replaced, d.store.unchanged), (296, 0, 0));
    assert_eq!(d.counts().new, d.isin_keyed + d.resolved, "every equity row resolved is a bar of a new day");
    assert_eq!(d.counts().set_aside, d.skipped.total() + d.unresolved.len() as u64);
    assert!(d.resolved > 500_000, "most symbols resolve through the lists: {}", d.resolved);
    assert!(!d.unresolved.is_empty(), "symbols no list shows stay unresolved");
    let held = store.price_days().await.expect("days");
    assert_eq!(held.len(), 296);
    assert_eq!(held.iter().map(|p| p.bars).sum::<u64>(), d.isin_keyed + d.resolved);

    // TTL's split, ex 2025-02-12 (README): the old ISIN's last day and the
    // new one's first, each as its file named it.
    let ttl = store
        .bars_of(&[isin("INE592B01016"), isin("INE592B01024")], day("2025-02-11"), day("2025-02-12"))
        .await
        .expect("TTL");
    let seen: Vec<(NaiveDate, &str, &str, String)> =
        ttl.iter().map(|b| (b.date, b.isin.as_str(), b.series.as_str(), b.close.to_string())).collect();
    assert_eq!(
        seen,
        [
            (day("2025-02-11"), "INE592B01016", "BE", "145.29".to_owned()),
            (day("2025-02-12"), "INE592B01024", "BE", "14.01".to_owned())
        ]
    );
    assert!(ttl.iter().all(|b| b.isin_source == IsinSource::File && b.delivery_qty.is_none()));

    // A symbol-keyed row resolved: RELIANCE on the first day of the
    // sec_bhavdata_full archive, with its delivery figures.
    let reliance = store.bars_of(&[isin("INE002A01018")], day("2025-08-21"), day("2025-08-21")).await.expect("RIL");
    assert_eq!(reliance.len(), 1, "{reliance:?}");
    assert_eq!((reliance[0].series.as_str(), reliance[0].isin_source), ("EQ", IsinSource::Symbol));
    assert!(reliance[0].delivery_qty.is_some() && reliance[0].delivery_pct.is_some());

    let again = import(&store, &paths).await.expect("again");
    assert_adds_up(&again);
    assert_eq!((again.store.new, again.store.replaced, again.store.unchanged), (0, 0, 296));
    assert_eq!((again.counts().new, again.counts().changed, again.counts().unchanged), (0, 0, d.counts().new));
    assert_eq!(again.bars_held(), d.bars_held());
    assert_eq!(store.price_days().await.expect("days"), held);
}

/// The equity rows of a real UDiFF day, as NSE's `sec_bhavdata_full` file
/// of that day would give them (turnover in lakh; no ISIN), with delivery
/// figures; the row of `symbol` closing at `close` instead.
fn as_secbhav(rows: &[BhavRow], (symbol, close): (&str, &str)) -> String {
    let mut out = "SYMBOL, SERIES, DATE1, PREV_CLOSE, OPEN_PRICE, HIGH_PRICE, LOW_PRICE, LAST_PRICE, CLOSE_PRICE, \
                   AVG_PRICE, TTL_TRD_QNTY, TURNOVER_LACS, NO_OF_TRADES, DELIV_QTY, DELIV_PER\n"
        .to_owned();
    for r in rows {
        let f = &r.figures;
        // Hundredths of a lakh (1,000 rupees, 100,000 paise), rounded.
        let lakh = (f.turnover.units() + 50_000) / 100_000;
        let line = format!(
            "{}, {}, {},{},{},{},{},{},{},{},{},{}.{:02},{}, {}, {}\n",
            r.symbol,
            r.series,
            r.date.format("%d-%b-%Y"),
            f.prev_close,
            f.open,
            f.high,
            f.low,
            f.last.map_or("-".to_owned(), |l| l.to_string()),
            if r.symbol.as_str() == symbol { close.to_owned() } else { f.close.to_string() },
            f.close,
            f.volume,
            lakh / 100,
            lakh % 100,
            f.trades,
            f.volume / 2,
            "50.00",
        );
        out.push_str(&line);
    }
    out
}

/// The text of the UDiFF file of `date` in the repository's archive.
fn udiff_day(date: &str) -> Vec<u8> {
    let want = format!("udiff/nse-cm-bhavcopy-{date}.csv");
    let mut found = None;
    archive::for_each_file(&[archive_path(UDIFF)], &mut |name, bytes| {
        if name.ends_with(&want) {
            found = Some(bytes.to_vec());
        }
        Ok(())
    })
    .expect("the archive reads");
    found.unwrap_or_else(|| panic!("{want} is in {UDIFF}"))
}

/// One day in both formats, imported in either order: the ISIN-keyed row
/// wins, the delivery figures come from the symbol-keyed row, a price
/// that differs is reported; the day is the same whichever came last, and
/// importing either file again changes nothing.
#[tokio::test]
async fn a_day_in_both_formats_keeps_the_isin_keyed_rows_in_either_order() {
    let udiff = udiff_day("2025-02-12");
    let rows = parse_day("udiff", &udiff).expect("a UDiFF day").rows;
    let changed = as_secbhav(&rows, ("TTL", "14.02"));
    let files = tempfile::tempdir().expect("temp dir");
    let u = files.path().join("udiff-2025-02-12.csv");
    let s = files.path().join("sec_bhavdata_full_2025-02-12.csv");
    std::fs::write(&u, &udiff).expect("write");
    std::fs::write(&s, changed).expect("write");

    let mut days = Vec::new();
    for order in [[u.clone(), s.clone()], [s.clone(), u.clone()]] {
        let (store, _dir) = store_with_history().await;
        let d = import(&store, &order).await.expect("import");
        assert_adds_up(&d);
        assert_eq!(d.symbol_keyed, rows.len() as u64);
        // Every resolved symbol-keyed row is the same bar as a UDiFF one.
        assert_eq!(d.same_bar, d.resolved, "{order:?}");
        assert!(d.resolved > 2_000, "{}", d.resolved);
        assert_eq!(d.bars_held(), (d.isin_keyed, 0), "no symbol-keyed bar is kept");
        let closes: Vec<(&str, &str, &str, &str)> = d
            .disagreements
            .iter()
            .map(|x| (x.symbol.as_str(), x.field, x.isin_keyed.as_str(), x.symbol_keyed.as_str()))
            .collect();
        assert_eq!(closes, [("TTL", "close", "14.01", "14.02")], "{order:?}");
        let held = store.day_bars(day("2025-02-12")).await.expect("the day");
        let ttl = held.bars.iter().find(|b| b.symbol.as_str() == "TTL").expect("TTL");
        assert_eq!((ttl.isin.as_str(), ttl.isin_source), ("INE592B01024", IsinSource::File));
        assert_eq!(ttl.figures.close.to_string(), "14.01", "the ISIN-keyed close");
        assert_eq!(ttl.figures.delivery_pct, Some(Percent::parse("50").unwrap()), "delivery from sec_bhavdata_full");
        days.push(held);

        for one in &order {
            let again = import(&store, std::slice::from_ref(one)).await.expect("again");
            assert_eq!((again.store.unchanged, again.store.replaced), (1, 0), "{one:?}");
        }
    }
    assert_eq!(days[0], days[1], "the same day whichever format came last");
}

/// Symbol-keyed rows: one resolved through the lists, one of a symbol no
/// list shows left unresolved (counted, listed with its line, not stored),
/// two resolving to one ISIN and series both left unresolved.
#[tokio::test]
async fn symbol_keyed_rows_resolve_or_stay_unresolved() {
    let (store, _dir) = store_with_history().await;
    let files = tempfile::tempdir().expect("temp dir");
    let header = "SYMBOL,SERIES,DATE1,PREV_CLOSE,OPEN_PRICE,HIGH_PRICE,LOW_PRICE,LAST_PRICE,CLOSE_PRICE,AVG_PRICE,\
                  TTL_TRD_QNTY,TURNOVER_LACS,NO_OF_TRADES,DELIV_QTY,DELIV_PER";
    let text = format!(
        "{header}\nRELIANCE, EQ, 21-Aug-2025,1400,1401,1410,1395,1405,1406,1404,100,14.04,10, 50, 50.00\n\
         NOSUCHCO, EQ, 21-Aug-2025,10,10,10,10,10,10,10,1,0.01,1, -, -\n"
    );
    let path = files.path().join("sec_bhavdata_full_21082025.csv");
    std::fs::write(&path, text).expect("write");
    let d = import(&store, std::slice::from_ref(&path)).await.expect("import");
    assert_adds_up(&d);
    assert_eq!((d.symbol_keyed, d.resolved), (2, 1));
    let u = &d.unresolved[0];
    assert_eq!((u.symbol.as_str(), u.line, u.ambiguous), ("NOSUCHCO", 3, false));
    assert_eq!(&*u.file, path.display().to_string());
    let held = store.day_bars(day("2025-08-21")).await.expect("the day");
    assert_eq!(held.bars.len(), 1);
    assert_eq!((held.bars[0].isin.as_str(), held.bars[0].isin_source), ("INE002A01018", IsinSource::Symbol));
    assert_eq!(held.bars[0].figures.close.to_string(), "1406.00");
}

/// A bad file among good ones: its problems with their lines, a one-line
/// reason naming it, and nothing written (not even the good files' days).
#[tokio::test]
async fn a_bad_file_writes_nothing() {
    let (store, _dir) = store_with_history().await;
    let files = tempfile::tempdir().expect("temp dir");
    std::fs::write(files.path().join("a-2025-02-12.csv"), udiff_day("2025-02-12")).expect("write");
    let header = "SYMBOL,SERIES,DATE1,PREV_CLOSE,OPEN_PRICE,HIGH_PRICE,LOW_PRICE,LAST_PRICE,CLOSE_PRICE,AVG_PRICE,\
                  TTL_TRD_QNTY,TURNOVER_LACS,NO_OF_TRADES,DELIV_QTY,DELIV_PER";
    let bad =
        format!("{header}\nRELIANCE, EQ, 21-Aug-2025,1400,1401,1410,1395,1405,abc,1404,100,14.04,10, 50, 50.00\n");
    std::fs::write(files.path().join("b-bad.csv"), bad).expect("write");
    let e = import(&store, &[files.path().to_path_buf()]).await.expect_err("refused");
    match &e {
        ImportFailure::Refused(r) => {
            let problems = r.row_lines();
            assert_eq!(problems.len(), 1, "{problems:?}");
            assert!(problems[0].contains("b-bad.csv:2: CLOSE_PRICE"), "{problems:?}");
            let reason = r.to_string();
            assert!(!reason.contains('\n') && reason.contains("b-bad.csv"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(store.price_days().await.expect("days"), Vec::<PriceDay>::new());
    let missing = import(&store, &[files.path().join("no-such-file.csv")]).await.expect_err("missing");
    assert!(matches!(missing, ImportFailure::Refused(_)), "{missing:?}");
}
