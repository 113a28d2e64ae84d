//! Suite functions for identity over time (contract section 10): exchange
//! snapshots, NSE's change files and the events and statuses the store
//! derives from them. (The real files end to end: `mds-store`'s
//! `tests/identity_files.rs`.)

use chrono::NaiveDate;
use mds_domain::snapshot::{NameChange, Series, SnapshotImport, SnapshotRow, SymbolChange};
use mds_domain::{CompanyStatus, Exchange, IdentityChange, IdentityEvent, Isin};

use super::*;

fn day(s: &str) -> NaiveDate {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").expect("a day")
}

/// A snapshot row and the company made of it (NSE main board).
fn listed(body: &str, symbol: &str, name: &str, face: f64) -> (SnapshotRow, Company) {
    let row = SnapshotRow {
        isin: isin(body),
        symbol: ticker(symbol),
        name: name.to_owned(),
        face_value: Some(face),
        listed_on: None,
    };
    let c = Company {
        name: name.to_owned(),
        is_bse: false,
        is_nse: true,
        ..crate::fixtures::bare_company(isin(body), symbol)
    };
    (row, c)
}

/// An NSE main board snapshot as of `as_of` of `rows`.
fn snapshot(as_of: &str, rows: &[(SnapshotRow, Company)]) -> SnapshotImport {
    SnapshotImport {
        as_of: day(as_of),
        series: vec![(Series::NseMain, rows.iter().map(|r| r.0.clone()).collect())],
        companies: rows.iter().map(|r| r.1.clone()).collect(),
        bse_given: false,
        mcap_given: false,
    }
}

/// The two snapshots the functions share: a split (`SPLIT`, face value 10
/// → 2, same issuer), a rename (`OLDSYM` → `NEWSYM`, and its name), a
/// security gone (`GONE`) and one new (`FRESH`).
fn two_snapshots() -> (SnapshotImport, SnapshotImport) {
    let split = listed("INE100A0101", "SPLIT", "Split Limited", 10.0);
    let renamed = listed("INE200B0101", "OLDSYM", "Old Name Limited", 1.0);
    let gone = listed("INE300C0101", "GONE", "Gone Limited", 1.0);
    let first = snapshot("2024-01-30", &[split, renamed, gone]);
    let split2 = listed("INE100A0102", "SPLIT", "Split Limited", 2.0);
    let renamed2 = listed("INE200B0101", "NEWSYM", "New Name Limited", 1.0);
    let fresh = listed("INE400D0101", "FRESH", "Fresh Limited", 5.0);
    (first, snapshot("2026-05-17", &[split2, renamed2, fresh]))
}

/// The change rows dating the rename.
fn change_rows() -> (Vec<SymbolChange>, Vec<NameChange>) {
    let symbols = vec![
        SymbolChange {
            from: ticker("OLDSYM"),
            to: ticker("NEWSYM"),
            date: day("2025-04-09"),
            company: "New Name Limited".into(),
        },
        SymbolChange { from: ticker("FUNDA"), to: ticker("FUNDB"), date: day("2019-10-30"), company: "A fund".into() },
    ];
    let names = vec![NameChange {
        symbol: ticker("NEWSYM"),
        from: "Old Name Limited".into(),
        to: "NEW NAME LIMITED".into(),
        date: day("2025-04-09"),
    }];
    (symbols, names)
}

/// The events of one ISIN, as `(type, date, exact)`.
async fn kinds(store: &dyn Store, body: &str) -> Vec<(&'static str, NaiveDate, bool)> {
    let all = store.identity_events().await.expect("events");
    all.into_iter().filter(|(i, _)| *i == isin(body)).map(|(_, e)| (e.change.kind(), e.date, e.exact)).collect()
}

/// A company's status as stored.
async fn status(store: &dyn Store, body: &str) -> CompanyStatus {
    let all = store.companies().await.expect("companies");
    all.into_iter().find(|c| c.isin == isin(body)).expect("the company").details.status
}

/// Two snapshots make `listed`, `isin_changed` (under both ISINs, the new
/// one with no `listed`), observed `symbol_changed` and `name_changed`,
/// and `delisted`; the change files turn the rename into exact events of
/// their date (one each, not two); statuses are stored with the companies;
/// every import that changes something is one new `companies` generation,
/// and the companies it touched carry it (the change feed).
pub async fn identity_events_follow_snapshots_and_change_files(store: &dyn Store) {
    migrated(store).await;
    assert!(store.identity_events().await.expect("events").is_empty());
    let (first, second) = two_snapshots();
    let s = store.import_snapshots(&first).await.expect("first");
    assert_eq!((s.snapshots, s.runs_opened, s.companies.inserted, s.events), (1, 3, 3, 3));
    let g1 = generations(store).await.companies;
    assert_eq!(s.generation, Some(g1));

    store.import_snapshots(&second).await.expect("second");
    let d1 = day("2024-01-30");
    let d2 = day("2026-05-17");
    assert_eq!(kinds(store, "INE100A0101").await, vec![("listed", d1, false), ("isin_changed", d2, false)]);
    assert_eq!(kinds(store, "INE100A0102").await, vec![("isin_changed", d2, false)]);
    assert_eq!(
        kinds(store, "INE200B0101").await,
        vec![("listed", d1, false), ("symbol_changed", d2, false), ("name_changed", d2, false)]
    );
    assert_eq!(kinds(store, "INE300C0101").await, vec![("listed", d1, false), ("delisted", d2, false)]);
    assert_eq!(kinds(store, "INE400D0101").await, vec![("listed", d2, false)]);
    let all = store.identity_events().await.expect("events");
    let split = all.iter().find(|(i, _)| *i == isin("INE100A0102")).expect("split").1.clone();
    assert_eq!(
        split,
        IdentityEvent {
            date: d2,
            exact: false,
            // Contract 10.3: last seen unchanged in the first snapshot.
            observed_between: Some([d1, d2]),
            change: IdentityChange::IsinChanged {
                from: isin("INE100A0101"),
                to: isin("INE100A0102"),
                face_value_from: Some(10.0),
                face_value_to: Some(2.0),
            },
        }
    );
    assert_eq!(status(store, "INE100A0101").await, CompanyStatus::Superseded);
    assert_eq!(status(store, "INE300C0101").await, CompanyStatus::Delisted);
    assert_eq!(status(store, "INE100A0102").await, CompanyStatus::Active);
    let g2 = generations(store).await.companies;
    assert_eq!(g2, g1 + 1);

    // The change files: the rename becomes exact, one event each; the
    // fund's row is kept though no snapshot shows it.
    let (symbols, names) = change_rows();
    let c = store.import_nse_changes(&symbols, &names).await.expect("changes");
    assert_eq!((c.change_rows, c.isins_changed, c.restamped), (3, 1, 1));
    let d = day("2025-04-09");
    assert_eq!(
        kinds(store, "INE200B0101").await,
        vec![("listed", d1, false), ("symbol_changed", d, true), ("name_changed", d, true)]
    );
    let renamed: Vec<IdentityEvent> = store
        .identity_events()
        .await
        .expect("events")
        .into_iter()
        .filter(|(i, _)| *i == isin("INE200B0101"))
        .map(|(_, e)| e)
        .collect();
    assert_eq!(
        renamed[1].change,
        IdentityChange::SymbolChanged { exchange: Exchange::Nse, from: ticker("OLDSYM"), to: ticker("NEWSYM") }
    );
    assert_eq!(
        renamed[2].change,
        IdentityChange::NameChanged { from: "Old Name Limited".into(), to: "New Name Limited".into() }
    );
    let g3 = generations(store).await.companies;
    assert_eq!(c.generation, Some(g3));
    assert_eq!(g3, g2 + 1);
    // Only the renamed company carries the new generation.
    let mut stamped = Vec::new();
    store.companies_sorted(&mut |c| stamped.push((c.company.isin.clone(), c.change_seq))).await.expect("sorted");
    let newest: Vec<&Isin> = stamped.iter().filter(|(_, g)| *g == g3).map(|(i, _)| i).collect();
    assert_eq!(newest, vec![&isin("INE200B0101")]);
}

/// The same imports again change nothing: no event, no generation, no
/// stamp; a snapshot of a later day showing the same rows adds its day
/// only.
pub async fn identity_imports_are_idempotent(store: &dyn Store) {
    migrated(store).await;
    let (first, second) = two_snapshots();
    let (symbols, names) = change_rows();
    store.import_snapshots(&first).await.expect("first");
    store.import_snapshots(&second).await.expect("second");
    store.import_nse_changes(&symbols, &names).await.expect("changes");
    let events = store.identity_events().await.expect("events");
    let g = generations(store).await;
    let again = store.import_snapshots(&second).await.expect("again");
    assert_eq!((again.snapshots, again.generation, again.isins_changed, again.companies.unchanged), (0, None, 0, 3));
    let again = store.import_nse_changes(&symbols, &names).await.expect("again");
    assert_eq!((again.change_rows, again.generation), (0, None));
    let later = SnapshotImport { as_of: day("2026-06-01"), ..second.clone() };
    let s = store.import_snapshots(&later).await.expect("later");
    assert_eq!((s.snapshots, s.runs_opened, s.runs_closed, s.generation), (1, 0, 0, None));
    assert_eq!(generations(store).await, g);
    assert_eq!(store.identity_events().await.expect("events"), events);
    assert_eq!(store.snapshot_days().await.expect("days").len(), 3);
}

/// A snapshot older than its series' latest is refused naming both days,
/// and nothing is written (not even the other series of the import).
pub async fn an_older_snapshot_is_refused_and_nothing_written(store: &dyn Store) {
    migrated(store).await;
    let (first, second) = two_snapshots();
    store.import_snapshots(&second).await.expect("2026");
    let g = generations(store).await;
    let events = store.identity_events().await.expect("events");
    let companies = store.companies().await.expect("companies");
    let mut older = first.clone();
    older.series.push((Series::NseSme, vec![listed("INE500E0101", "SMEONE", "Sme One Limited", 10.0).0].into()));
    match store.import_snapshots(&older).await {
        Err(StoreError::Invalid(m)) => assert!(m.contains("2024-01-30") && m.contains("2026-05-17"), "{m}"),
        other => panic!("expected Invalid, got {other:?}"),
    }
    assert_eq!(generations(store).await, g);
    assert_eq!(store.identity_events().await.expect("events"), events);
    assert_eq!(store.companies().await.expect("companies"), companies);
    assert_eq!(store.snapshot_days().await.expect("days"), vec![(Series::NseMain, day("2026-05-17"))]);
}

/// A snapshot of the latest day with other rows replaces that day's: the
/// events are those of the new rows.
pub async fn a_snapshot_of_the_latest_day_replaces_it(store: &dyn Store) {
    migrated(store).await;
    let (first, second) = two_snapshots();
    store.import_snapshots(&first).await.expect("first");
    store.import_snapshots(&first).await.expect("first again");
    let mut corrected = second.clone();
    store.import_snapshots(&second).await.expect("second");
    // The corrected list of the same day still shows GONE.
    let gone = listed("INE300C0101", "GONE", "Gone Limited", 1.0);
    corrected.series[0].1 = corrected.series[0].1.iter().chain([gone.0]).collect();
    corrected.companies = corrected.companies.all().into_iter().chain([gone.1]).collect();
    store.import_snapshots(&corrected).await.expect("corrected");
    assert_eq!(kinds(store, "INE300C0101").await, vec![("listed", day("2024-01-30"), false)]);
    assert_eq!(status(store, "INE300C0101").await, CompanyStatus::Active);
    assert_eq!(store.snapshot_days().await.expect("days").len(), 2);
}

/// A company's status is stored with it and read back; a company without
/// snapshots keeps the status it was given.
pub async fn company_status_round_trips(store: &dyn Store) {
    migrated(store).await;
    let mut c = company("INE117A0102", "ABB", "ABB India Limited");
    c.details.status = CompanyStatus::Delisted;
    store.upsert_companies(std::slice::from_ref(&c)).await.expect("upsert");
    assert_eq!(store.companies().await.expect("companies"), vec![c.clone()]);
    let (first, _) = two_snapshots();
    store.import_snapshots(&first).await.expect("snapshot");
    assert_eq!(status(store, "INE117A0102").await, CompanyStatus::Delisted);
}

/// An identity import announces each company it changed: the split's old
/// ISIN gains `superseded` and its successor, with the `isin_changed` it
/// gained; a second import of the same snapshot announces nothing.
pub async fn identity_imports_announce_company_changes(store: &dyn Store) {
    use mds_domain::{CompanyChanged, EventFilter, EventId, EventType};
    migrated(store).await;
    let (first, second) = two_snapshots();
    store.import_snapshots(&first).await.expect("first");
    let all = EventFilter::default();
    let page = store.event_page(EventId(0), &all, 1000).await.expect("events");
    assert_eq!(page.events.len(), 3, "one per new company");
    let mark = page.latest;
    store.import_snapshots(&second).await.expect("second");
    let events = store.event_page(mark, &all, 1000).await.expect("events").events;
    let change_of = |body: &str| {
        let e = events.iter().find(|e| e.subject.isin == Some(isin(body))).unwrap_or_else(|| panic!("{body}"));
        assert_eq!(e.event.kind, EventType::CompanyChanged);
        serde_json::from_value::<CompanyChanged>(e.event.data.clone()).expect("data")
    };
    let old = change_of("INE100A0101");
    assert_eq!(old.company.status, CompanyStatus::Superseded);
    assert_eq!(old.company.superseded_by, Some(isin("INE100A0102")));
    assert!(old.changed.contains(&"status".to_owned()) && old.changed.contains(&"superseded_by".to_owned()));
    assert!(old.events.iter().any(|e| e.change.kind() == "isin_changed"), "{:?}", old.events);
    let new = change_of("INE100A0102");
    assert_eq!(new.company.supersedes, vec![isin("INE100A0101")]);
    let renamed = change_of("INE200B0101");
    assert!(renamed.changed.contains(&"ticker".to_owned()), "{:?}", renamed.changed);
    let latest = store.event_page(EventId(0), &all, 1).await.expect("latest").latest;
    store.import_snapshots(&second).await.expect("again");
    let after = store.event_page(latest, &all, 1000).await.expect("events");
    assert!(after.events.is_empty(), "the same snapshot again changes nothing: {:?}", after.events);
}

/// Contract 10.3, whichever import comes first: a rename a change file
/// dates after an exact ISIN change is the successor's, and the superseded
/// company shows what it was called when it was replaced (AMIORG, split to
/// a new ISIN on 2025-04-25, renamed ACUTAAS on 2025-06-02). Before the
/// split is known the ISIN change is only observed, so the rename is the
/// old ISIN's; the split's import moves it and the old company's ticker
/// and name back.
pub async fn a_rename_after_an_exact_isin_change_is_the_successors(store: &dyn Store) {
    use mds_domain::actions::{Action, ActionId, CorporateAction, FaceValueChange};
    migrated(store).await;
    let (old, new) = ("INE500E0101", "INE500E0102");
    let first = snapshot("2024-01-30", &[listed(old, "AMI", "Ami Limited", 10.0)]);
    let second = snapshot("2026-05-17", &[listed(new, "ACU", "Acu Limited", 5.0)]);
    store.import_snapshots(&first).await.expect("first");
    store.import_snapshots(&second).await.expect("second");
    let renamed = day("2025-06-02");
    let symbols =
        [SymbolChange { from: ticker("AMI"), to: ticker("ACU"), date: renamed, company: "Acu Limited".into() }];
    let names =
        [NameChange { symbol: ticker("ACU"), from: "Ami Limited".into(), to: "Acu Limited".into(), date: renamed }];
    store.import_nse_changes(&symbols, &names).await.expect("changes");
    let company = |body: &'static str| async move {
        let c = store.companies().await.expect("companies").into_iter().find(|c| c.isin == isin(body)).expect("it");
        (c.ticker.as_str().to_owned(), c.name)
    };
    assert_eq!(company(old).await, ("ACU".to_owned(), "Acu Limited".to_owned()), "renamed, then replaced");

    let ex = day("2025-04-25");
    let action = Action::Split {
        split: FaceValueChange { face_value_from: Some(10.0), face_value_to: Some(5.0), new_isin: None },
    };
    let split = CorporateAction {
        id: ActionId::of(&isin(old), ex, &action),
        isin: isin(old),
        symbol: ticker("AMI"),
        ex_date: ex,
        record_date: None,
        purpose: "Face Value Split (Sub-Division) - From Rs 10/- Per Share To Rs 5/- Per Share".into(),
        sources: vec![Exchange::Nse],
        factor: action.factor(),
        action,
    };
    store.import_actions(&[split], &[], &[]).await.expect("the split");
    assert_eq!(kinds(store, old).await, vec![("listed", day("2024-01-30"), false), ("isin_changed", ex, true)]);
    assert_eq!(
        kinds(store, new).await,
        vec![("isin_changed", ex, true), ("symbol_changed", renamed, true), ("name_changed", renamed, true)]
    );
    assert_eq!(company(old).await, ("AMI".to_owned(), "Ami Limited".to_owned()), "replaced, then renamed");
    assert_eq!(company(new).await, ("ACU".to_owned(), "Acu Limited".to_owned()));
}
