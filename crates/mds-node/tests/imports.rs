//! The node's import operation (`mds_node::import::run`) on the demo's
//! embedded files, as `mds demo` runs them, on real SQLite and (when
//! `MDS_TEST_POSTGRES_URL` names a server) PostgreSQL: every summary adds
//! up, the action imports announce each action they add in the event log
//! (`corporate_action.added`, the action as `data`), and the same imports
//! again change nothing and announce nothing. NSE's daily price files
//! (`nse-bhavcopy`) are run on a span of the repository's archives
//! (`data/prices/`; the demo's whole archives take minutes in a debug
//! build): each day written is one `prices.published` in the log, a
//! re-import announces nothing, a changed day announces itself alone; the
//! ISIN-keyed days add to the identity history (a pre-split ISIN no list
//! shows becomes known, dated by its successor's first trading day),
//! a successor a list shows listed before its split keeps its symbol
//! through it (FISCHER's rows after the split resolve), and imports in
//! either order give the same identity and bars, and the same actions (a
//! BSE row resolved by its code moves when daily files date its ISIN).

use std::path::Path;
use std::sync::Arc;

use chrono::NaiveDate;
use mds_domain::actions::CorporateAction;
use mds_domain::identity::IdentityChange;
use mds_domain::prices::PricesPublished;
use mds_domain::{EventFilter, EventId, EventType, StoredEvent};
use mds_limits::SystemClock;
use mds_node::import::{self, Counts, ImportFailure};
use mds_store::{ActionFilter, Store};

/// The store of the SQLite file `name` in `dir`.
async fn sqlite_in(dir: &Path, name: &str) -> Arc<dyn Store> {
    let url = mds_store::DatabaseUrl::new(dir.join(name).to_str().expect("a path"));
    mds_store::open(&url).await.expect("open")
}

/// The tests `$sqlite` and `$postgres` of `$check`: on a SQLite store in a
/// temporary directory, and on a PostgreSQL database of its own (passed
/// without `MDS_TEST_POSTGRES_URL`). A macro: each is a test function.
macro_rules! on_both_backends {
    ($check:ident, $sqlite:ident, $postgres:ident) => {
        #[tokio::test(flavor = "multi_thread")]
        async fn $sqlite() {
            let dir = tempfile::tempdir().expect("tempdir");
            $check(sqlite_in(dir.path(), "mds.db").await).await;
        }

        #[tokio::test(flavor = "multi_thread")]
        async fn $postgres() {
            let Some(admin) = mds_testkit::pg::admin_url() else { return };
            let db = mds_testkit::pg::TestDb::create(&admin).await;
            $check(Arc::new(db.store().await)).await;
        }
    };
}

/// Every event of the log after `after`.
async fn events_after(store: &dyn Store, after: EventId) -> Vec<StoredEvent> {
    let mut out: Vec<StoredEvent> = Vec::new();
    loop {
        let from = out.last().map_or(after, |e| e.event.id);
        let page = store.event_page(from, &EventFilter::default(), 1000).await.expect("event page").events;
        if page.is_empty() {
            return out;
        }
        out.extend(page);
    }
}

/// The demo's imports but its daily price files.
fn demo_imports() -> Vec<(&'static import::Format, import::Given)> {
    mds_import::demo::imports().into_iter().filter(|(f, _)| f.name != mds_import::bhavcopy::FORMAT.name).collect()
}

/// The latest event id of the log.
async fn latest(store: &dyn Store) -> EventId {
    store.event_page(EventId(0), &EventFilter::default(), 1).await.expect("event page").latest
}

async fn demo_imports_announce_actions_once(store: Arc<dyn Store>) {
    store.migrate().await.expect("migrate");
    let mut action_counts: Vec<Counts> = Vec::new();
    let mut last = EventId(0);
    // The prices have a test of their own, on a span of their archives.
    for (format, given) in demo_imports() {
        let t = std::time::Instant::now();
        let s = import::run(&store, &SystemClock, format, &given).await.expect(format.name);
        eprintln!("{}: {:?}: {:?}", format.name, t.elapsed(), s.lines);
        assert!(s.counts.adds_up(), "{}: {:?} in {:?}", format.name, s.counts, s.lines);
        assert!(s.warnings.is_empty(), "{}: {:?}", format.name, s.warnings);
        let events = events_after(&*store, last).await;
        if format.name.ends_with("-actions") {
            // One `corporate_action.added` per action new to the store and
            // one `changed` per action the import changed.
            let added: Vec<&StoredEvent> =
                events.iter().filter(|e| e.event.kind == EventType::CorporateActionAdded).collect();
            let changed = events.iter().filter(|e| e.event.kind == EventType::CorporateActionChanged).count();
            assert_eq!((added.len() as u64, changed as u64), (s.counts.new, s.counts.changed), "{:?}", s.lines);
            // And a `company.changed` per company whose identity history
            // the import's splits dated again (section 10.3 f): nothing else.
            let companies = events.iter().filter(|e| e.event.kind == EventType::CompanyChanged).count();
            assert_eq!(added.len() + changed + companies, events.len());
            assert!(s.counts.new > 0, "{:?}", s.lines);
            let first: CorporateAction = serde_json::from_value(added[0].event.data.clone()).expect("an action");
            let stored = store.actions_of(std::slice::from_ref(&first.isin), &ActionFilter::default()).await;
            assert!(stored.expect("read").iter().any(|a| a.id == first.id), "data is the action stored");
            assert_eq!(added[0].subject.isin.as_ref(), Some(&first.isin));
            action_counts.push(s.counts);
        }
        last = latest(&*store).await;
    }
    assert_eq!(action_counts.len(), 2, "both exchanges' files were imported");
    assert!(action_counts[1].changed > 0, "BSE's publications joined NSE's actions: {:?}", action_counts[1]);
    let stored = store.action_count().await.expect("count");
    assert_eq!(stored, action_counts.iter().map(|c| c.new).sum::<u64>());

    // Every import again: the 2024 lists are refused (older than the
    // 2026 ones), the rest change nothing; no event.
    let mut again = demo_imports().into_iter();
    let (format, given) = again.next().expect("the 2024 lists");
    let refused = import::run(&store, &SystemClock, format, &given).await;
    assert!(matches!(refused, Err(ImportFailure::Store(_))), "{refused:?}");
    for (format, given) in again {
        let s = import::run(&store, &SystemClock, format, &given).await.expect(format.name);
        assert!(s.counts.adds_up(), "{}: {:?}", format.name, s.counts);
        assert_eq!((s.counts.new, s.counts.changed), (0, 0), "{}: {:?}", format.name, s.lines);
    }
    assert_eq!(latest(&*store).await, last, "a re-import announces nothing");
    assert_eq!(store.action_count().await.expect("count"), stored);
}

on_both_backends!(demo_imports_announce_actions_once, demo_imports_on_sqlite, demo_imports_on_postgres);

/// A refused file writes nothing and says where: every bad line, with the
/// file named.
#[tokio::test(flavor = "multi_thread")]
async fn a_refused_import_names_its_lines_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = sqlite_in(dir.path(), "mds.db").await;
    store.migrate().await.expect("migrate");
    let bad = dir.path().join("bad.csv");
    std::fs::write(
        &bad,
        "\"SYMBOL\",\"COMPANY NAME\",\"SERIES\",\"PURPOSE\",\"FACE VALUE\",\"EX-DATE\",\"RECORD DATE\",\"BOOK CLOSURE \
         START DATE\",\"BOOK CLOSURE END DATE\"\n\"INFY\",\"Infosys\",\"EQ\",\"Bonus 1:1\",\"5\",\"2026-13-01\",\"-\",\"-\",\"-\"\n",
    )
    .expect("write");
    let format = import::format("nse-actions").expect("registered");
    let given = import::Given::default().file("files", import::Source::Path(bad));
    let Err(ImportFailure::Refused(r)) = import::run(&store, &SystemClock, format, &given).await else {
        panic!("refused")
    };
    assert_eq!(r.row_lines().len(), 1);
    assert!(r.row_lines()[0].contains("bad.csv:2:"), "{:?}", r.row_lines());
    assert!(r.to_string().contains("bad.csv"), "{r}");
    assert_eq!(latest(&*store).await, EventId(0));
    assert_eq!(store.action_count().await.expect("count"), 0);
}

/// The repository's ISIN-keyed archive (`data/prices/`).
const UDIFF: &str = "nse_udiff_2025-01-01_2025-03-07.tar.zst";
/// The repository's symbol-keyed archive.
const SECBHAV: &str = "nse_sec_bhavdata_full_2025-08-21_2026-08-21.tar.zst";

/// The daily files of the repository's archive `name` whose names hold a
/// day from `from` to `to`, written to `dir` under their own names; their
/// days.
fn span(name: &str, from: &str, to: &str, dir: &Path) -> Vec<NaiveDate> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/prices").join(name);
    let mut days = Vec::new();
    mds_import::bhavcopy::archive::for_each_file(&[path], &mut |member, bytes| {
        let file = member.rsplit('/').next().expect("a name");
        let day = &file[file.len() - 14..file.len() - 4];
        if (from..=to).contains(&day) {
            std::fs::write(dir.join(file), bytes).expect("write");
            days.push(day.parse().expect("a day"));
        }
        Ok(())
    })
    .expect("the archive reads");
    days
}

/// The demo's imports of the formats `names`, in the demo's order, through
/// `run`.
async fn demo_imports_of(store: &Arc<dyn Store>, names: &[&str]) {
    for (format, given) in mds_import::demo::imports() {
        if names.contains(&format.name) {
            import::run(store, &SystemClock, format, &given).await.expect(format.name);
        }
    }
}

/// The store's identity: the demo's lists and change files, through `run`.
async fn identity(store: &Arc<dyn Store>) {
    demo_imports_of(store, &["exchanges", "nse-changes"]).await;
}

/// `nse-bhavcopy` on a span of both archives (five ISIN-keyed days around
/// TTL's split, three symbol-keyed ones), run through `run`.
async fn prices_announce_each_day_written_once(store: Arc<dyn Store>) {
    store.migrate().await.expect("migrate");
    identity(&store).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut days = span(UDIFF, "2025-02-10", "2025-02-14", dir.path());
    days.extend(span(SECBHAV, "2025-08-21", "2025-08-25", dir.path()));
    assert_eq!(days.len(), 5 + 3, "{days:?}");
    let format = import::format("nse-bhavcopy").expect("registered");
    let given = import::Given::default().file("paths", import::Source::Path(dir.path().to_path_buf()));

    let last = latest(&*store).await;
    let s = import::run(&store, &SystemClock, format, &given).await.expect("import");
    assert!(s.counts.adds_up(), "{:?} in {:?}", s.counts, s.lines);
    assert!(s.counts.new > 10_000 && s.counts.set_aside > 0, "{:?}", s.counts);
    assert_eq!((s.counts.changed, s.counts.unchanged), (0, 0), "{:?}", s.counts);
    assert!(s.lines.iter().any(|l| l.contains("8 new + 0 replaced + 0 unchanged")), "{:?}", s.lines);
    // One `prices.published` a day, in day order, its bars what the day holds.
    // The ISIN-keyed days add to the identity history (14.1): the companies
    // it changed are announced as a list's are.
    let (events, identity): (Vec<_>, Vec<_>) =
        events_after(&*store, last).await.into_iter().partition(|e| e.event.kind == EventType::PricesPublished);
    assert!(identity.iter().all(|e| e.event.kind == EventType::CompanyChanged), "{identity:?}");
    let published: Vec<PricesPublished> =
        events.iter().map(|e| serde_json::from_value(e.event.data.clone()).expect("a publication")).collect();
    let held = store.price_days().await.expect("days");
    let expected: Vec<PricesPublished> = held
        .iter()
        .map(|d| PricesPublished { date: d.date, exchange: mds_domain::Exchange::Nse, bars: d.bars })
        .collect();
    assert_eq!(published, expected);
    assert_eq!(held.iter().map(|d| d.date).collect::<Vec<_>>(), days);
    assert_eq!(held.iter().map(|d| d.bars).sum::<u64>(), s.counts.new, "each row kept is a bar");
    assert!(events.iter().all(|e| e.subject.isin.is_none()), "about no company");

    // The same files again: nothing changed, nothing announced.
    let last = latest(&*store).await;
    let again = import::run(&store, &SystemClock, format, &given).await.expect("again");
    assert!(again.counts.adds_up(), "{:?}", again.counts);
    assert_eq!((again.counts.new, again.counts.changed, again.counts.unchanged), (0, 0, s.counts.new));
    assert_eq!(latest(&*store).await, last, "a re-import announces nothing");

    // One day changed (RELIANCE's row gone from the file of 2025-02-12):
    // that day alone is written and announced, a bar fewer.
    let file = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").path())
        .find(|p| p.to_str().is_some_and(|p| p.ends_with("2025-02-12.csv")))
        .expect("the file of 2025-02-12");
    let text = std::fs::read_to_string(&file).expect("read");
    let fewer: String = text.lines().filter(|l| !l.contains(",INE002A01018,")).map(|l| format!("{l}\n")).collect();
    assert_eq!(fewer.lines().count() + 1, text.lines().count(), "RELIANCE's one row");
    let changed = tempfile::tempdir().expect("tempdir");
    let one = changed.path().join(file.file_name().expect("a name"));
    std::fs::write(&one, fewer).expect("write");
    let given = import::Given::default().file("paths", import::Source::Path(one));
    let s = import::run(&store, &SystemClock, format, &given).await.expect("the changed day");
    assert!(s.counts.adds_up(), "{:?}", s.counts);
    assert_eq!(s.counts.new + s.counts.unchanged, 0, "{:?}", s.counts);
    let day: NaiveDate = "2025-02-12".parse().expect("a day");
    let before = held.iter().find(|d| d.date == day).expect("held").bars;
    assert_eq!(s.counts.changed, before - 1, "{:?}", s.lines);
    let events = events_after(&*store, last).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].event.kind, EventType::PricesPublished);
    let p: PricesPublished = serde_json::from_value(events[0].event.data.clone()).expect("a publication");
    assert_eq!(p, PricesPublished { date: day, exchange: mds_domain::Exchange::Nse, bars: before - 1 });
    // Only the types filter that names it admits it.
    let only = EventFilter { types: vec![EventType::PricesPublished], ..EventFilter::default() };
    let page = store.event_page(last, &only, 10).await.expect("page").events;
    assert_eq!(page.len(), 1);
    let other = EventFilter { types: vec![EventType::CompanyChanged], ..EventFilter::default() };
    assert!(store.event_page(last, &other, 10).await.expect("page").events.is_empty());
}

on_both_backends!(prices_announce_each_day_written_once, prices_on_sqlite, prices_on_postgres);

/// Every bar held, as `(day, ISIN, series, symbol, source)`, by day.
async fn all_bars(store: &Arc<dyn Store>) -> Vec<(NaiveDate, String, String, String, String)> {
    let mut out = Vec::new();
    for d in store.price_days().await.expect("days") {
        for b in store.day_bars(d.date).await.expect("day").bars {
            let source = format!("{:?}", b.isin_source);
            out.push((d.date, b.isin.to_string(), b.series.to_string(), b.symbol.to_string(), source));
        }
    }
    out
}

/// The identity events of `isin`, as `(type, date, exact)`.
async fn kinds_of(store: &Arc<dyn Store>, isin: &str) -> Vec<(&'static str, String, bool)> {
    let all = store.identity_events().await.expect("events");
    all.iter()
        .filter(|(i, _)| i.as_str() == isin)
        .map(|(_, e)| (e.change.kind(), e.date.to_string(), e.exact))
        .collect()
}

/// `nse-bhavcopy` of the files in `dir`, through `run`.
async fn import_dir(store: &Arc<dyn Store>, dir: &Path) -> import::Summary {
    let format = import::format("nse-bhavcopy").expect("registered");
    let given = import::Given::default().file("paths", import::Source::Path(dir.to_path_buf()));
    let s = import::run(store, &SystemClock, format, &given).await.expect("import");
    assert!(s.counts.adds_up(), "{:?} in {:?}", s.counts, s.lines);
    s
}

/// Contract 14.1: PRITIKA's pre-split ISIN (INE0MJQ01012) traded until
/// 2025-02-13 and is in no list the repository carries (its SME list of
/// 2026-05-17 has only the successor, INE0MJQ01020, first traded on
/// 2025-02-17). The ISIN-keyed files make it known, superseded on that
/// first day, exactly; and again, they change nothing.
async fn a_pre_split_isin_only_the_daily_files_show_becomes_known(store: Arc<dyn Store>) {
    store.migrate().await.expect("migrate");
    identity(&store).await;
    let (old, new) = ("INE0MJQ01012", "INE0MJQ01020");
    assert!(kinds_of(&store, old).await.is_empty(), "no list shows it");
    let dir = tempfile::tempdir().expect("tempdir");
    span(UDIFF, "2025-02-12", "2025-02-18", dir.path());
    let last = latest(&*store).await;
    import_dir(&store, dir.path()).await;
    assert_eq!(
        kinds_of(&store, old).await,
        vec![("listed", "2025-02-12".into(), false), ("isin_changed", "2025-02-17".into(), true)]
    );
    assert_eq!(kinds_of(&store, new).await, vec![("isin_changed", "2025-02-17".into(), true)]);
    let companies = store.companies().await.expect("companies");
    let company = companies.into_iter().find(|c| c.isin.as_str() == old).expect("the old ISIN is a company now");
    assert_eq!(company.details.status, mds_domain::CompanyStatus::Superseded);
    assert_eq!(company.name, "Pritika Engineering Components Limited", "its successor's name");
    let listing = &company.details.listings[0];
    assert_eq!(listing.last_seen, Some("2025-02-13".parse().expect("a day")), "its last trading day");
    // Announced as a list's change is.
    let events = events_after(&*store, last).await;
    assert!(
        events
            .iter()
            .any(|e| e.event.kind == EventType::CompanyChanged
                && e.subject.isin.as_ref().map(|i| i.as_str()) == Some(old)),
        "{events:?}"
    );
    // The same files again: nothing changes, nothing is announced.
    let again = again_announces_nothing(&store, dir.path()).await;
    assert!(!again.lines.iter().any(|l| l.starts_with("identity:")), "{:?}", again.lines);
}

/// `nse-bhavcopy` of the files in `dir` again: nothing announced; its
/// summary.
async fn again_announces_nothing(store: &Arc<dyn Store>, dir: &Path) -> import::Summary {
    let last = latest(&**store).await;
    let again = import_dir(store, dir).await;
    assert_eq!(latest(&**store).await, last, "{:?}", again.lines);
    again
}

on_both_backends!(
    a_pre_split_isin_only_the_daily_files_show_becomes_known,
    a_pre_split_isin_only_the_daily_files_show_becomes_known_on_sqlite,
    a_pre_split_isin_only_the_daily_files_show_becomes_known_on_postgres
);

/// Found by bench/price-checks.sh on the whole archives: FISCHER's split
/// of 2025-09-12 (Rs 10 to Re 1) moved it from INE771F01025 (BSE's 2024
/// list only) to INE771F01041, which NSE's 2026 list shows "listed"
/// 2025-07-10 (the company's NSE listing day, before the split). The
/// successor keeps its own NSE listing through the change (10.2's replay
/// rule), so its symbol-keyed rows from the ex-date on resolve to it:
/// before, the change took the old ISIN's standing only (BSE), the NSE
/// period of FISCHER ended on the ex-date and every later row was left
/// unresolved (the series stopped at the split).
async fn a_successor_listed_before_its_split_keeps_its_symbol(store: Arc<dyn Store>) {
    store.migrate().await.expect("migrate");
    demo_imports_of(&store, &["exchanges", "nse-changes", "nse-actions"]).await;
    let (old, new) = ("INE771F01025", "INE771F01041");
    assert_eq!(
        kinds_of(&store, new).await,
        vec![("listed", "2025-07-10".into(), true), ("isin_changed", "2025-09-12".into(), true)]
    );
    let dir = tempfile::tempdir().expect("tempdir");
    span(SECBHAV, "2025-09-10", "2025-09-16", dir.path());
    import_dir(&store, dir.path()).await;
    let isins = [mds_domain::Isin::parse(old).expect("ISIN"), mds_domain::Isin::parse(new).expect("ISIN")];
    let day = |s: &str| -> NaiveDate { s.parse().expect("a day") };
    let bars = store.bars_of(&isins, day("2025-09-10"), day("2025-09-16")).await.expect("bars");
    let seen: Vec<(String, &str, String)> =
        bars.iter().map(|b| (b.date.to_string(), b.isin.as_str(), b.close.to_string())).collect();
    assert_eq!(
        seen,
        [
            ("2025-09-10".into(), new, "1160.90".into()),
            ("2025-09-11".into(), new, "1132.60".into()),
            ("2025-09-12".into(), new, "113.30".into()),
            ("2025-09-15".into(), new, "111.20".into()),
            ("2025-09-16".into(), new, "113.20".into()),
        ]
    );
}

on_both_backends!(
    a_successor_listed_before_its_split_keeps_its_symbol,
    a_successor_listed_before_its_split_keeps_its_symbol_on_sqlite,
    a_successor_listed_before_its_split_keeps_its_symbol_on_postgres
);

/// Contract 10.3: imports in any order give the same result. The lists
/// and change files, then a span of both archives (PRITIKA's and TTL's
/// ISIN changes, three symbol-keyed days); and the same files the other
/// way round, on another store: the same identity events, the same
/// companies' status and names, the same bars with the same ISINs. The
/// symbol-keyed rows the prices-first store could not resolve are kept and
/// resolved by the lists.
async fn imports_in_either_order_give_the_same_result(first: Arc<dyn Store>, second: Arc<dyn Store>) {
    let dir = tempfile::tempdir().expect("tempdir");
    span(UDIFF, "2025-02-10", "2025-02-18", dir.path());
    span(SECBHAV, "2025-08-21", "2025-08-25", dir.path());
    first.migrate().await.expect("migrate");
    identity(&first).await;
    import_dir(&first, dir.path()).await;

    second.migrate().await.expect("migrate");
    let s = import_dir(&second, dir.path()).await;
    assert!(s.lines.iter().any(|l| l.contains("unresolved rows kept")), "{:?}", s.lines);
    let before = all_bars(&second).await;
    identity(&second).await;
    let after = all_bars(&second).await;
    assert!(after.len() > before.len(), "the lists resolve kept rows: {} then {}", before.len(), after.len());

    assert_eq!(second.identity_events().await.expect("events"), first.identity_events().await.expect("events"));
    let companies = |cs: Vec<mds_domain::Company>| {
        let mut v: Vec<_> = cs.into_iter().map(|c| (c.isin, c.details.status, c.name, c.ticker)).collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    assert_eq!(
        companies(second.companies().await.expect("companies")),
        companies(first.companies().await.expect("companies"))
    );
    let bars = all_bars(&first).await;
    assert!(bars.iter().any(|b| b.4 == "Symbol"), "symbol-keyed bars held");
    assert_eq!(after, bars);
}

/// The tests `$sqlite` and `$postgres` of `$check`, given two stores of a
/// backend, as [`on_both_backends`] gives one.
macro_rules! on_two_stores_of_both_backends {
    ($check:ident, $sqlite:ident, $postgres:ident) => {
        #[tokio::test(flavor = "multi_thread")]
        async fn $sqlite() {
            let dir = tempfile::tempdir().expect("tempdir");
            let (a, b) = (sqlite_in(dir.path(), "a.db").await, sqlite_in(dir.path(), "b.db").await);
            $check(a, b).await;
        }

        #[tokio::test(flavor = "multi_thread")]
        async fn $postgres() {
            let Some(admin) = mds_testkit::pg::admin_url() else { return };
            let (a, b) = (mds_testkit::pg::TestDb::create(&admin).await, mds_testkit::pg::TestDb::create(&admin).await);
            $check(Arc::new(a.store().await), Arc::new(b.store().await)).await;
        }
    };
}

on_two_stores_of_both_backends!(
    imports_in_either_order_give_the_same_result,
    imports_in_either_order_give_the_same_result_on_sqlite,
    imports_in_either_order_give_the_same_result_on_postgres
);

/// BSE's actions file, two of its real rows: AGIIL's split of 2025-10-10
/// (security code 539042, which BSE's 2024 list shows with INE976R01017,
/// the ISIN before AGIIL's earlier split of 2025-02-07) and a dividend.
const BSE_ACTIONS: &str = "Security Code,Security Name,Company Name,Ex Date,Purpose,Record Date,BC Start Date, \
BC End Date\t,ND Start Date,ND End Date,Actual Payment Date
500040,ABREL,Aditya Birla Real Estate Ltd,15 Jul 2025,Final Dividend - Rs. - 2.0000,15 Jul 2025,-,-,15 Jul 2025,\
15 Jul 2025,-
539042,AGIIL,AGI Infra Ltd,10 Oct 2025,Stock  Split From Rs.5/- to Rs.1/-,10 Oct 2025,-,-,10 Oct 2025,10 Oct 2025,-
";

/// `bse-actions` of [`BSE_ACTIONS`], through `run`.
async fn bse_actions(store: &Arc<dyn Store>) -> import::Summary {
    action_file(store, "bse-actions", BSE_ACTIONS).await
}

/// The action format `format` of the file `text`, through `run`.
async fn action_file(store: &Arc<dyn Store>, format: &str, text: &'static str) -> import::Summary {
    let source = import::Source::Embedded { name: "actions.csv", bytes: text.as_bytes() };
    let given = import::Given::default().file("files", source);
    let s = import::run(store, &SystemClock, import::format(format).expect("registered"), &given).await.expect(format);
    assert!(s.counts.adds_up(), "{:?} in {:?}", s.counts, s.lines);
    s
}

/// Every action stored, by ex-date, then id.
async fn all_actions(store: &Arc<dyn Store>) -> Vec<CorporateAction> {
    store.action_page(&ActionFilter::default(), None, 1000).await.expect("actions")
}

/// Contract 10.3, found on the real files: BSE's AGIIL split of
/// 2025-10-10 is resolved by its security code, which BSE's 2024 list
/// shows with INE976R01017; NSE's daily files date that ISIN's change to
/// INE976R01025 (AGIIL's earlier split, 2025-02-07). Prices first: the
/// split is INE976R01025's. Actions first: it was INE976R01017's, and
/// stayed so after the prices. Now the price import resolves the stored
/// rows again and moves the action, so both orders store the same actions
/// (and the same identity).
async fn actions_resolve_again_when_a_later_import_dates_their_isin(first: Arc<dyn Store>, second: Arc<dyn Store>) {
    let dir = tempfile::tempdir().expect("tempdir");
    span(UDIFF, "2025-02-05", "2025-02-10", dir.path());
    // Actions, then prices.
    first.migrate().await.expect("migrate");
    identity(&first).await;
    bse_actions(&first).await;
    let last = latest(&*first).await;
    let s = import_dir(&first, dir.path()).await;
    assert!(
        s.lines.iter().any(|l| l.starts_with("actions: 1 stored rows resolved again to another ISIN: 1 actions moved")),
        "{:?}",
        s.lines
    );
    let announced = events_after(&*first, last).await;
    let of = |kind: EventType| announced.iter().filter(move |e| e.event.kind == kind).collect::<Vec<_>>();
    let moved = of(EventType::CorporateActionAdded);
    assert_eq!(moved.len(), 1, "the moved action is announced at its ISIN: {moved:?}");
    // Its old id is announced gone, about the old ISIN, naming the new one.
    let removed = of(EventType::CorporateActionRemoved);
    assert_eq!(removed.len(), 1, "{announced:?}");
    assert_eq!(removed[0].subject.isin.as_ref().map(|i| i.as_str()), Some("INE976R01017"));
    assert_eq!(removed[0].event.data["action"]["isin"], "INE976R01017");
    assert_eq!(removed[0].event.data["replaced_by"], serde_json::json!([moved[0].event.data["id"]]));
    assert!(removed[0].event.id > moved[0].event.id, "after the action replacing it");
    // Prices, then actions.
    second.migrate().await.expect("migrate");
    identity(&second).await;
    import_dir(&second, dir.path()).await;
    bse_actions(&second).await;

    let actions = all_actions(&second).await;
    let split = actions.iter().find(|a| a.symbol.as_str() == "AGIIL").expect("AGIIL's split");
    assert_eq!(split.isin.as_str(), "INE976R01025", "{split:?}");
    assert_eq!(all_actions(&first).await, actions);
    assert_eq!(first.identity_events().await.expect("events"), second.identity_events().await.expect("events"));
    let rows = |s: Arc<dyn Store>| async move { s.action_rows().await.expect("rows") };
    assert_eq!(rows(first.clone()).await, rows(second.clone()).await);
    // The same prices again: nothing to move, nothing announced.
    let again = again_announces_nothing(&first, dir.path()).await;
    assert!(!again.lines.iter().any(|l| l.starts_with("actions:")), "{:?}", again.lines);
}

on_two_stores_of_both_backends!(
    actions_resolve_again_when_a_later_import_dates_their_isin,
    actions_resolve_again_when_a_later_import_dates_their_isin_on_sqlite,
    actions_resolve_again_when_a_later_import_dates_their_isin_on_postgres
);

/// NSE's actions files, their real rows of VERTOZ's and AGIIL's splits,
/// bonus and consolidation (2024-07-05 to 2025-10-10).
const NSE_SPLITS: &str = "\"SYMBOL\",\"COMPANY NAME\",\"SERIES\",\"PURPOSE\",\"FACE VALUE\",\"EX-DATE\",\"RECORD DATE\",\
\"BOOK CLOSURE START DATE\",\"BOOK CLOSURE END DATE\"
\"VERTOZ\",\"Vertoz Limited\",\"EQ\",\"Bonus 1:1\",\"10\",\"05-Jul-2024\",\"05-Jul-2024\",\"-\",\"-\"
\"VERTOZ\",\"Vertoz Limited\",\"EQ\",\"Face Value Split (Sub-Division) - From Rs 10/- Per Share To Re 1/- Per Share\",\
\"10\",\"05-Jul-2024\",\"05-Jul-2024\",\"-\",\"-\"
\"AGIIL\",\"Agi Infra Limited\",\"EQ\",\"Face Value Split (Sub-Division) - From Rs 10/- Per Share To Rs 5/- Per Share\",\
\"5\",\"07-Feb-2025\",\"07-Feb-2025\",\"-\",\"-\"
\"VERTOZ\",\"Vertoz Limited\",\"EQ\",\"Consolidation Of Equity Shares From Re 1 Per Share To Rs 10 Per Share\",\"10\",\
\"25-Jun-2025\",\"25-Jun-2025\",\"-\",\"-\"
\"AGIIL\",\"Agi Infra Limited\",\"EQ\",\"Face Value Split (Sub-Division) - From Rs 5/- Per Share To Re 1/- Per Share\",\
\"1\",\"10-Oct-2025\",\"10-Oct-2025\",\"-\",\"-\"
";

/// Contract 10.3 and 13, found on the real files: the lists show VERTOZ
/// as INE188Y01015 (2024) and INE188Y01031 (2026), AGIIL as INE976R01017
/// (BSE, 2024) and INE976R01033 (NSE, 2026); NSE's ISIN-keyed daily files
/// show the ISIN between each pair (INE188Y01023, INE976R01025). Each
/// step of each chain is dated by its split, every split leads to the ISIN
/// that took over that day (`new_isin`), and NSE's and BSE's publications
/// of AGIIL's split of 2025-10-10 are one action: in either import order.
async fn a_chain_through_the_daily_files_isins_is_dated_by_its_splits(first: Arc<dyn Store>, second: Arc<dyn Store>) {
    let dir = tempfile::tempdir().expect("tempdir");
    span(UDIFF, "2025-02-05", "2025-02-10", dir.path());
    // Actions, then prices: the prices move VERTOZ's first split's
    // successor (the lists' 01031 before), announced as a change.
    first.migrate().await.expect("migrate");
    identity(&first).await;
    action_file(&first, "nse-actions", NSE_SPLITS).await;
    bse_actions(&first).await;
    let last = latest(&*first).await;
    let s = import_dir(&first, dir.path()).await;
    assert!(s.lines.iter().any(|l| l.contains("lead to another ISIN now")), "{:?}", s.lines);
    let changed: Vec<StoredEvent> = events_after(&*first, last)
        .await
        .into_iter()
        .filter(|e| e.event.kind == EventType::CorporateActionChanged)
        .collect();
    assert!(
        changed
            .iter()
            .any(|e| e.event.data["split"]["new_isin"] == "INE188Y01023" && e.event.data["isin"] == "INE188Y01015"),
        "{changed:?}"
    );
    // Prices, then actions.
    second.migrate().await.expect("migrate");
    identity(&second).await;
    import_dir(&second, dir.path()).await;
    action_file(&second, "nse-actions", NSE_SPLITS).await;
    bse_actions(&second).await;

    let actions = all_actions(&second).await;
    let split_of = |isin: &str, ex: &str| {
        actions
            .iter()
            .find(|a| a.isin.as_str() == isin && a.ex_date.to_string() == ex && a.action.new_isin().is_some())
            .unwrap_or_else(|| panic!("a split of {isin} on {ex} naming its successor: {actions:?}"))
    };
    let next = |isin: &str, ex: &str| split_of(isin, ex).action.new_isin().map(|i| i.as_str().to_owned());
    assert_eq!(next("INE188Y01015", "2024-07-05").as_deref(), Some("INE188Y01023"));
    assert_eq!(next("INE188Y01023", "2025-06-25").as_deref(), Some("INE188Y01031"));
    assert_eq!(next("INE976R01017", "2025-02-07").as_deref(), Some("INE976R01025"));
    assert_eq!(next("INE976R01025", "2025-10-10").as_deref(), Some("INE976R01033"));
    let both: Vec<&str> = split_of("INE976R01025", "2025-10-10").sources.iter().map(|s| s.as_str()).collect();
    assert_eq!(both, ["nse", "bse"], "one action of both exchanges' publications");
    // Each step an exact `isin_changed` on its ex-date.
    let events = second.identity_events().await.expect("events");
    for (from, to, day) in [
        ("INE188Y01015", "INE188Y01023", "2024-07-05"),
        ("INE188Y01023", "INE188Y01031", "2025-06-25"),
        ("INE976R01017", "INE976R01025", "2025-02-07"),
        ("INE976R01025", "INE976R01033", "2025-10-10"),
    ] {
        let found = events.iter().any(|(isin, e)| {
            isin.as_str() == from
                && e.exact
                && e.date.to_string() == day
                && matches!(&e.change, IdentityChange::IsinChanged { from: f, to: t, .. }
                    if f.as_str() == from && t.as_str() == to)
        });
        assert!(found, "{from} to {to} on {day}");
    }
    assert_eq!(all_actions(&first).await, actions);
    assert_eq!(first.identity_events().await.expect("events"), events);
}

on_two_stores_of_both_backends!(
    a_chain_through_the_daily_files_isins_is_dated_by_its_splits,
    a_chain_through_the_daily_files_isins_is_dated_by_its_splits_on_sqlite,
    a_chain_through_the_daily_files_isins_is_dated_by_its_splits_on_postgres
);

/// NSE's actions file, three rows of TCS: a real dividend (its record
/// date kept), a percentage dividend (read of the face value, `1`: Rs 0.5)
/// and a row of a fund series (`IV`: `other`, whatever its text says).
const NSE_ACTIONS: &str = "\"SYMBOL\",\"COMPANY NAME\",\"SERIES\",\"PURPOSE\",\"FACE VALUE\",\"EX-DATE\",\"RECORD DATE\",\
\"BOOK CLOSURE START DATE\",\"BOOK CLOSURE END DATE\"
\"TCS\",\"Tata Consultancy Services Limited\",\"EQ\",\"Interim Dividend - Rs 11 Per Share\",\"1\",\"16-Jul-2025\",\
\"17-Jul-2025\",\"-\",\"-\"
\"TCS\",\"Tata Consultancy Services Limited\",\"EQ\",\"Dividend 50%\",\"1\",\"01-Sep-2025\",\"-\",\"-\",\"-\"
\"TCS\",\"Tata Consultancy Services Limited\",\"IV\",\"Dividend - Rs 2 Per Share\",\"1\",\"02-Sep-2025\",\"-\",\"-\",\"-\"
";

/// `nse-actions` of [`NSE_ACTIONS`], through `run`.
async fn nse_actions(store: &Arc<dyn Store>) -> import::Summary {
    action_file(store, "nse-actions", NSE_ACTIONS).await
}

/// Contract 10.3, "an import re-resolves what earlier imports left
/// unresolved": both exchanges' action files imported before any list
/// resolve no row (TCS, ABREL and AGIIL not known yet), and are kept
/// unresolved with what reading them needs (BSE's security id, NSE's
/// series, face value and record date). The lists then make their ISINs
/// known: the rows resolve, their actions are stored and announced, and
/// the store holds what importing the lists first gives.
async fn unresolved_actions_resolve_when_a_later_import_makes_their_isin_known(
    first: Arc<dyn Store>,
    second: Arc<dyn Store>,
) {
    // Actions, then the lists.
    first.migrate().await.expect("migrate");
    let s = nse_actions(&first).await;
    assert_eq!(s.counts.new, 0, "{:?}", s.lines);
    bse_actions(&first).await;
    assert_eq!(first.unresolved_actions().await.expect("unresolved").len(), 5);
    assert_eq!(all_actions(&first).await, Vec::new());
    let last = latest(&*first).await;
    let mut lines = Vec::new();
    for (format, given) in mds_import::demo::imports() {
        if ["exchanges", "nse-changes"].contains(&format.name) {
            let s = import::run(&first, &SystemClock, format, &given).await.expect(format.name);
            assert!(s.counts.adds_up(), "{}: {:?}", format.name, s.counts);
            lines.extend(s.lines);
        }
    }
    let line = lines.iter().find(|l| l.contains("rows kept unresolved resolved now")).expect("counted");
    assert!(line.starts_with("actions: 5 rows kept unresolved resolved now: 5 actions = 5 new + "), "{lines:?}");
    assert_eq!(first.unresolved_actions().await.expect("unresolved"), Vec::new());
    let added = events_after(&*first, last)
        .await
        .into_iter()
        .filter(|e| e.event.kind == EventType::CorporateActionAdded)
        .count();
    assert_eq!(added, 5, "each action announced as an import's");
    // The lists, then actions.
    second.migrate().await.expect("migrate");
    identity(&second).await;
    nse_actions(&second).await;
    bse_actions(&second).await;

    let actions = all_actions(&second).await;
    assert_eq!(actions.len(), 5, "{actions:?}");
    assert_eq!(all_actions(&first).await, actions);
    let tcs: Vec<_> = actions.iter().filter(|a| a.symbol.as_str() == "TCS").collect();
    assert!(tcs.iter().all(|a| a.isin.as_str() == "INE467B01029"), "{tcs:?}");
    // Read as the file reads them: the record date, the face value and the
    // series kept with the rows.
    let kinds: Vec<(String, Option<NaiveDate>)> =
        tcs.iter().map(|a| (serde_json::to_value(&a.action).expect("json").to_string(), a.record_date)).collect();
    let day = |d: &str| d.parse::<NaiveDate>().ok();
    assert_eq!(kinds.len(), 3, "{kinds:?}");
    assert_eq!(kinds[0].1, day("2025-07-17"), "{kinds:?}");
    assert!(kinds[1].0.contains("0.5"), "{kinds:?}");
    assert!(kinds[2].0.contains("other"), "{kinds:?}");
    assert_eq!(first.identity_events().await.expect("events"), second.identity_events().await.expect("events"));
    let rows = |s: Arc<dyn Store>| async move { s.action_rows().await.expect("rows") };
    assert_eq!(rows(first.clone()).await, rows(second.clone()).await);
    assert_eq!(rows(first.clone()).await.len(), 5);
}

on_two_stores_of_both_backends!(
    unresolved_actions_resolve_when_a_later_import_makes_their_isin_known,
    unresolved_actions_resolve_when_a_later_import_makes_their_isin_known_on_sqlite,
    unresolved_actions_resolve_when_a_later_import_makes_their_isin_known_on_postgres
);
