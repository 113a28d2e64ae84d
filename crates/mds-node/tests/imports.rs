//! The node's import operation (`mds_node::import::run`) on the demo's
//! embedded files, as `mds demo` runs them, on real SQLite and (when
//! `MDS_TEST_POSTGRES_URL` names a server) PostgreSQL: every summary adds
//! up, the action imports announce each action they add in the event log
//! (`corporate_action.added`, the action as `data`), and the same imports
//! again change nothing and announce nothing.

use std::sync::Arc;

use mds_domain::actions::CorporateAction;
use mds_domain::{EventFilter, EventId, EventType, StoredEvent};
use mds_limits::SystemClock;
use mds_node::import::{self, Counts, ImportFailure};
use mds_store::{ActionFilter, Store};

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

/// The latest event id of the log.
async fn latest(store: &dyn Store) -> EventId {
    store.event_page(EventId(0), &EventFilter::default(), 1).await.expect("event page").latest
}

async fn demo_imports_announce_actions_once(store: Arc<dyn Store>) {
    store.migrate().await.expect("migrate");
    let mut action_counts: Vec<Counts> = Vec::new();
    let mut last = EventId(0);
    for (format, given) in mds_import::demo::imports() {
        let t = std::time::Instant::now();
        let s = import::run(&store, &SystemClock, format, &given).await.expect(format.name);
        eprintln!("{}: {:?}: {:?}", format.name, t.elapsed(), s.lines);
        assert!(s.counts.adds_up(), "{}: {:?} in {:?}", format.name, s.counts, s.lines);
        assert!(s.warnings.is_empty(), "{}: {:?}", format.name, s.warnings);
        let events = events_after(&*store, last).await;
        if format.name.ends_with("-actions") {
            // One `corporate_action.added` per action new to the store and
            // one `changed` per action the import changed; nothing else.
            let added: Vec<&StoredEvent> =
                events.iter().filter(|e| e.event.kind == EventType::CorporateActionAdded).collect();
            let changed = events.iter().filter(|e| e.event.kind == EventType::CorporateActionChanged).count();
            assert_eq!((added.len() as u64, changed as u64), (s.counts.new, s.counts.changed), "{:?}", s.lines);
            assert_eq!(added.len() + changed, events.len());
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
    let mut again = mds_import::demo::imports().into_iter();
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

#[tokio::test(flavor = "multi_thread")]
async fn demo_imports_on_sqlite() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = mds_store::DatabaseUrl::new(dir.path().join("mds.db").to_str().expect("a path"));
    let store = mds_store::open(&url).await.expect("open");
    demo_imports_announce_actions_once(store).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn demo_imports_on_postgres() {
    let Some(admin) = mds_testkit::pg::admin_url() else { return };
    let db = mds_testkit::pg::TestDb::create(&admin).await;
    demo_imports_announce_actions_once(Arc::new(db.store().await)).await;
}

/// A refused file writes nothing and says where: every bad line, with the
/// file named.
#[tokio::test(flavor = "multi_thread")]
async fn a_refused_import_names_its_lines_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = mds_store::DatabaseUrl::new(dir.path().join("mds.db").to_str().expect("a path"));
    let store = mds_store::open(&url).await.expect("open");
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
