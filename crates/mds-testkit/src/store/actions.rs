//! Suite functions for corporate actions ([`mds_store::ActionStore`]):
//! an import is all or nothing and idempotent, publications of one action
//! imported apart are joined, an import announces what it added and
//! changed in the event log (and nothing else), rows resolved again move
//! their actions, and the reads filter, order and page.

use chrono::NaiveDate;
use mds_domain::actions::{
    Action, ActionId, ActionType, CorporateAction, Dividend, DividendKind, FaceValueChange, Source,
};
use mds_domain::{EventFilter, EventId, EventType, Exchange, StoredEvent};
use mds_store::{ActionFilter, ActionImport, KeptUnresolved, ResolvedRow, UnresolvedAction};

use super::*;
use crate::fixtures::isin_of;

/// A day of 2025, `m`-`d`.
fn day(m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2025, m, d).expect("a day")
}

/// An action of the `i`-th ISIN going ex on `ex_date`, published by `source`.
fn action(i: u32, ex_date: NaiveDate, source: Source, action: Action, purpose: &str) -> CorporateAction {
    let isin = isin_of(i);
    CorporateAction {
        id: ActionId::of(&isin, ex_date, &action),
        isin,
        symbol: Ticker::parse(&format!("SYM{i}")).expect("a ticker"),
        ex_date,
        record_date: None,
        purpose: purpose.into(),
        sources: vec![source],
        factor: action.factor(),
        action,
    }
}

/// A dividend of `amount` of the `i`-th ISIN.
fn dividend(i: u32, ex_date: NaiveDate, source: Source, amount: f64, kind: Option<DividendKind>) -> CorporateAction {
    let a = Action::Dividend { dividend: Dividend { amount: Some(amount), kind } };
    action(i, ex_date, source, a, &format!("Dividend - Rs {amount} Per Share"))
}

/// An unresolved NSE row, kept with its series, face value and record
/// date.
fn unresolved(code: &str, ex_date: NaiveDate, line: u64) -> KeptUnresolved {
    KeptUnresolved {
        row: UnresolvedAction {
            source: Exchange::Nse,
            code: code.into(),
            ex_date,
            purpose: "Dividend - Rs 2 Per Share".into(),
            file: "nse.csv".into(),
            line,
        },
        security_id: None,
        series: Some("EQ".into()),
        face_value: Some(2.5),
        record_date: Some(ex_date),
    }
}

/// Imports are idempotent: the same actions and unresolved rows again
/// change nothing; an unresolved row resolved later is removed.
pub async fn action_imports_are_idempotent(store: &dyn Store) {
    store.migrate().await.expect("migrate");
    let actions = vec![
        dividend(1, day(5, 30), Exchange::Nse, 44.0, None),
        dividend(2, day(6, 2), Exchange::Nse, 1.5, Some(DividendKind::Interim)),
    ];
    let u = vec![unresolved("GONE", day(3, 1), 7), unresolved("LATER", day(3, 2), 8)];
    assert_eq!(generations(store).await.actions, 0, "no import yet");
    let first = store.import_actions(&actions, &u, &[]).await.expect("import");
    assert_eq!(first, ActionImport { new: 2, unresolved_new: 2, ..ActionImport::default() });
    assert_eq!(generations(store).await.actions, 1, "an import that stores actions moves the generation");
    let again = store.import_actions(&actions, &u, &[]).await.expect("import again");
    assert_eq!(again, ActionImport { unchanged: 2, ..ActionImport::default() });
    assert_eq!(generations(store).await.actions, 1, "one that changes no action does not");
    assert_eq!(store.action_count().await.expect("count"), 2);
    let rows: Vec<UnresolvedAction> = u.iter().map(|k| k.row.clone()).collect();
    assert_eq!(store.unresolved_actions().await.expect("unresolved"), rows);
    assert_eq!(store.kept_unresolved().await.expect("kept"), u, "kept with what resolving them needs");
    let isin = mds_domain::Isin::parse("INE476A01014").expect("ISIN");
    let resolved: Vec<ResolvedRow> =
        rows[1..].iter().map(|k| ResolvedRow { key: k.clone(), security_id: None, isin: isin.clone() }).collect();
    let later = store.import_actions(&[], &[], &resolved).await.expect("resolved");
    assert_eq!(later, ActionImport { unresolved_resolved: 1, ..ActionImport::default() });
    assert_eq!(store.unresolved_actions().await.expect("unresolved"), rows[..1]);
}

/// A row kept with none of what resolving it needs (as rows kept before
/// migration 20 are) is given it by an import of its file again, still
/// counted as stored before; a row kept with any of it keeps what it has.
pub async fn kept_rows_without_their_facts_take_them_from_their_file(store: &dyn Store) {
    store.migrate().await.expect("migrate");
    let bare = |k: &KeptUnresolved| KeptUnresolved {
        security_id: None,
        series: None,
        face_value: None,
        record_date: None,
        ..k.clone()
    };
    let full = vec![unresolved("OLD", day(3, 1), 7), unresolved("KEPT", day(3, 2), 8)];
    let mut bse = unresolved("500001", day(3, 3), 9);
    bse.row.source = Exchange::Bse;
    bse.security_id = Some("OLDCO".into());
    bse.series = None;
    bse.face_value = None;
    let full = [full, vec![bse]].concat();
    // The first and the third kept bare, the second with its series only.
    let mut kept_before = vec![bare(&full[0]), bare(&full[1]), bare(&full[2])];
    kept_before[1].series = Some("BE".into());
    store.import_actions(&[], &kept_before, &[]).await.expect("kept bare");
    let again = store.import_actions(&[], &full, &[]).await.expect("the file again");
    assert_eq!(again, ActionImport::default(), "no row is new");
    let kept = store.kept_unresolved().await.expect("kept");
    // In key order: BSE's row, then NSE's by code.
    assert_eq!(kept, vec![full[2].clone(), kept_before[1].clone(), full[0].clone()]);
}

/// The same action published by the other exchange, imported later, joins
/// the stored one: sources joined, the stored purpose kept, the kind learnt.
pub async fn action_imports_join_publications(store: &dyn Store) {
    store.migrate().await.expect("migrate");
    let nse = dividend(1, day(5, 30), Exchange::Nse, 44.0, None);
    let mut bse = dividend(1, day(5, 30), Exchange::Bse, 44.0, Some(DividendKind::Final));
    bse.purpose = "Final Dividend - Rs. - 44.0000".into();
    bse.record_date = Some(day(5, 30));
    assert_eq!(nse.id, bse.id);
    store.import_actions(std::slice::from_ref(&nse), &[], &[]).await.expect("nse");
    let joined = store.import_actions(std::slice::from_ref(&bse), &[], &[]).await.expect("bse");
    assert_eq!(joined, ActionImport { changed: 1, ..ActionImport::default() });
    assert_eq!(generations(store).await.actions, 2, "a changed action moves the generation");
    let got = store.actions_of(std::slice::from_ref(&nse.isin), &ActionFilter::default()).await.expect("read");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].sources, vec![Exchange::Nse, Exchange::Bse]);
    assert_eq!(got[0].purpose, nse.purpose);
    assert_eq!(got[0].record_date, Some(day(5, 30)));
    assert_eq!(
        got[0].action,
        Action::Dividend { dividend: Dividend { amount: Some(44.0), kind: Some(DividendKind::Final) } }
    );
    // Both again: nothing changes.
    let again = store.import_actions(&[nse, bse], &[], &[]).await.expect("again");
    assert_eq!(again, ActionImport { unchanged: 1, ..ActionImport::default() });
}

/// A row of `source` with `code` kept resolved to the `i`-th ISIN.
fn row(source: Source, code: &str, ex_date: NaiveDate, purpose: &str, i: u32) -> ResolvedRow {
    let key =
        UnresolvedAction { source, code: code.into(), ex_date, purpose: purpose.into(), file: "f.csv".into(), line: 2 };
    ResolvedRow { key, security_id: (source == Exchange::Bse).then(|| code.to_owned()), isin: isin_of(i) }
}

/// Rows resolved again to another ISIN move their actions (contract
/// 10.3): an exchange's publication leaves an action both published
/// (which keeps the other's) and joins the same action at the new ISIN;
/// an action left with no publication is removed (announced, naming the
/// one that replaces it) and stored anew there; each change announced,
/// the rows kept with their new ISIN.
pub async fn moved_rows_move_their_actions(store: &dyn Store) {
    store.migrate().await.expect("migrate");
    let nse = dividend(1, day(5, 30), Exchange::Nse, 44.0, None);
    let mut bse = dividend(1, day(5, 30), Exchange::Bse, 44.0, None);
    bse.purpose = "Final Dividend - Rs. - 44.0000".into();
    let other = dividend(2, day(5, 30), Exchange::Nse, 44.0, None);
    let rows = [
        row(Exchange::Nse, "SYM1", day(5, 30), &nse.purpose, 1),
        row(Exchange::Bse, "500001", day(5, 30), &bse.purpose, 1),
        row(Exchange::Nse, "SYM2", day(5, 30), &other.purpose, 2),
    ];
    store.import_actions(&[nse.clone(), bse, other.clone()], &[], &rows).await.expect("import");
    let kept = store.action_rows().await.expect("rows");
    let isins: Vec<_> = kept.iter().map(|r| (r.key.code.as_str(), r.isin.clone())).collect();
    assert_eq!(isins, [("500001", isin_of(1)), ("SYM1", isin_of(1)), ("SYM2", isin_of(2))], "by exchange, then code");
    let actions =
        |i: u32| async move { store.actions_of(&[isin_of(i)], &ActionFilter::default()).await.expect("read") };
    // BSE's row now resolves to the 2nd ISIN.
    let last = latest_event(store).await;
    let generation = generations(store).await.actions;
    let to = |r: &ResolvedRow, i: u32| mds_store::ActionMove {
        row: r.clone(),
        to: isin_of(i),
        symbol: Ticker::parse(&format!("SYM{i}")).expect("a ticker"),
        successor: None,
    };
    let bse_row = rows.iter().find(|r| r.key.source == Exchange::Bse).expect("BSE's");
    let m = store.move_actions(&[to(bse_row, 2)], &[], &[]).await.expect("move");
    assert_eq!(m, mds_store::ActionsMoved { rows: 1, moved: 1, new: 0, joined: 1, ..Default::default() });
    assert!(generations(store).await.actions > generation, "the actions generation moves");
    let one = actions(1).await;
    assert_eq!((one.len(), one[0].sources.clone(), one[0].purpose.clone()), (1, vec![Exchange::Nse], nse.purpose));
    let two = actions(2).await;
    assert_eq!(
        (two.len(), two[0].id.clone(), two[0].sources.clone()),
        (1, other.id, vec![Exchange::Nse, Exchange::Bse])
    );
    let kinds: Vec<EventType> = events_after(store, last).await.iter().map(|e| e.event.kind).collect();
    assert_eq!(kinds, [EventType::CorporateActionChanged, EventType::CorporateActionChanged]);
    let moved_row = store.action_rows().await.expect("rows").into_iter().find(|r| r.key.source == Exchange::Bse);
    assert_eq!(moved_row.map(|r| r.isin), Some(isin_of(2)));
    // NSE's row of the 1st ISIN to a 3rd: the action it leaves has no
    // publication left, and is new there.
    let nse_row = &rows[0];
    let last = latest_event(store).await;
    let m = store.move_actions(&[to(nse_row, 3)], &[], &[]).await.expect("move");
    assert_eq!((m.moved, m.new, m.joined), (1, 1, 0));
    assert!(actions(1).await.is_empty());
    let three = actions(3).await;
    assert_eq!((three.len(), three[0].isin.clone(), three[0].sources.clone()), (1, isin_of(3), vec![Exchange::Nse]));
    // The one it replaces is announced gone, after it, about the 1st ISIN.
    let events = events_after(store, last).await;
    let kinds: Vec<EventType> = events.iter().map(|e| e.event.kind).collect();
    assert_eq!(kinds, [EventType::CorporateActionAdded, EventType::CorporateActionRemoved]);
    let gone = &events[1];
    assert_eq!(gone.subject.isin.as_ref(), Some(&isin_of(1)));
    assert_eq!(gone.event.data["action"]["id"], nse.id.as_str());
    assert_eq!(gone.event.data["action"]["sources"], serde_json::json!(["nse"]), "as it was last stored");
    assert_eq!(gone.event.data["replaced_by"], serde_json::json!([three[0].id.as_str()]));
}

/// Every event of the log after `after`.
async fn events_after(store: &dyn Store, after: EventId) -> Vec<StoredEvent> {
    store.event_page(after, &EventFilter::default(), 10_000).await.expect("event page").events
}

/// An import announces each action it adds (`corporate_action.added`) and
/// each one it changes (`corporate_action.changed`), `data` the action as
/// stored, about its ISIN and symbol (so the log's filters apply); the
/// same import again, or one that leaves an action as it was, announces
/// nothing.
pub async fn action_imports_announce_added_and_changed(store: &dyn Store) {
    store.migrate().await.expect("migrate");
    let nse = dividend(1, day(5, 30), Exchange::Nse, 44.0, None);
    let other = dividend(2, day(6, 2), Exchange::Nse, 1.5, Some(DividendKind::Interim));
    store.import_actions(&[nse.clone(), other.clone()], &[], &[]).await.expect("import");
    let added = events_after(store, EventId(0)).await;
    let kinds: Vec<EventType> = added.iter().map(|e| e.event.kind).collect();
    assert_eq!(kinds, [EventType::CorporateActionAdded; 2]);
    let data: CorporateAction = serde_json::from_value(added[0].event.data.clone()).expect("an action");
    assert_eq!(data, nse);
    assert_eq!(added[0].subject.isin.as_ref(), Some(&nse.isin));
    assert_eq!(added[0].subject.ticker.as_deref(), Some("SYM1"));
    let by_isin = EventFilter { isins: vec![other.isin.clone()], ..EventFilter::default() };
    let page = store.event_page(EventId(0), &by_isin, 10).await.expect("filtered");
    assert_eq!(page.events.len(), 1);
    assert_eq!(page.events[0].event.data["id"], other.id.as_str());

    let last = added[1].event.id;
    store.import_actions(&[nse.clone(), other.clone()], &[], &[]).await.expect("again");
    assert!(events_after(store, last).await.is_empty(), "a re-import that changes nothing announces nothing");

    let mut bse = dividend(1, day(5, 30), Exchange::Bse, 44.0, Some(DividendKind::Final));
    bse.purpose = "Final Dividend - Rs. - 44.0000".into();
    store.import_actions(&[bse, other], &[], &[]).await.expect("bse");
    let changed = events_after(store, last).await;
    assert_eq!(changed.len(), 1, "only the action the import changed: {changed:?}");
    assert_eq!(changed[0].event.kind, EventType::CorporateActionChanged);
    let data: CorporateAction = serde_json::from_value(changed[0].event.data.clone()).expect("an action");
    assert_eq!(data.sources, vec![Exchange::Nse, Exchange::Bse]);
    assert_eq!(data.purpose, nse.purpose, "the action as stored: the first source's purpose");
    assert_eq!(
        store.actions_of(std::slice::from_ref(&nse.isin), &ActionFilter::default()).await.expect("read"),
        vec![data]
    );
}

/// A failed import writes nothing: an unresolved row the store refuses
/// (a line past what it can hold), written after the actions, leaves
/// neither the actions nor the other rows behind.
pub async fn action_imports_are_all_or_nothing(store: &dyn Store) {
    store.migrate().await.expect("migrate");
    let good = dividend(1, day(5, 30), Exchange::Nse, 44.0, None);
    let u = vec![unresolved("X", day(3, 1), 2), unresolved("Y", day(3, 1), u64::MAX)];
    let e = store.import_actions(&[good], &u, &[]).await.expect_err("refused");
    assert!(matches!(e, StoreError::Invalid(_)), "{e:?}");
    assert_eq!(store.action_count().await.expect("count"), 0, "a failed import wrote actions");
    assert!(store.unresolved_actions().await.expect("unresolved").is_empty(), "and unresolved rows");
    assert!(events_after(store, EventId(0)).await.is_empty(), "and no event");
}

/// The reads: one ISIN list's actions by ex-date descending, filtered;
/// the calendar by ex-date then id, filtered by type, dates and exchange,
/// in keyset pages that resume after any position.
pub async fn action_reads_filter_order_and_page(store: &dyn Store) {
    store.migrate().await.expect("migrate");
    let split = Action::Split {
        split: FaceValueChange { face_value_from: Some(10.0), face_value_to: Some(2.0), new_isin: Some(isin_of(2)) },
    };
    let mut both = dividend(1, day(3, 1), Exchange::Nse, 3.0, None);
    both.sources = vec![Exchange::Nse, Exchange::Bse];
    let all = vec![
        both,
        dividend(1, day(5, 30), Exchange::Nse, 44.0, None),
        action(1, day(6, 1), Exchange::Bse, split, "Stock Split From Rs.10/- to Rs.2/-"),
        dividend(2, day(6, 1), Exchange::Bse, 1.0, None),
        dividend(2, day(6, 1), Exchange::Nse, 2.0, None),
        dividend(3, day(7, 1), Exchange::Nse, 5.0, None),
    ];
    store.import_actions(&all, &[], &[]).await.expect("import");
    let ids = |v: &[CorporateAction]| v.iter().map(|a| a.id.clone()).collect::<Vec<_>>();

    let of = store.actions_of(&[isin_of(1), isin_of(2)], &ActionFilter::default()).await.expect("of");
    assert_eq!(of.len(), 5);
    assert!(of.windows(2).all(|w| (w[1].ex_date, &w[0].id) <= (w[0].ex_date, &w[1].id)), "ex_date desc, id");
    assert_eq!(of.iter().find(|a| a.action.action_type() == ActionType::Split), Some(&all[2]));
    let dividends = ActionFilter {
        action_type: Some(ActionType::Dividend),
        from: Some(day(5, 30)),
        to: Some(day(6, 1)),
        ..ActionFilter::default()
    };
    let of = store.actions_of(&[isin_of(1), isin_of(2)], &dividends).await.expect("of");
    assert_eq!(of.len(), 3, "both bounds inclusive, splits left out");
    assert!(store.actions_of(&[], &ActionFilter::default()).await.expect("none").is_empty());

    let mut sorted = all.clone();
    sorted.sort_by(|a, b| (a.ex_date, &a.id).cmp(&(b.ex_date, &b.id)));
    let whole = store.action_page(&ActionFilter::default(), None, 100).await.expect("page");
    assert_eq!(whole, sorted);
    for size in 1..=4 {
        let mut got = Vec::new();
        let mut after: Option<(NaiveDate, ActionId)> = None;
        loop {
            let page = store
                .action_page(&ActionFilter::default(), after.as_ref().map(|(d, id)| (*d, id)), size)
                .await
                .expect("page");
            let Some(last) = page.last() else { break };
            after = Some((last.ex_date, last.id.clone()));
            got.extend(page);
        }
        assert_eq!(ids(&got), ids(&sorted), "pages of {size}");
    }
    let bse = ActionFilter { source: Some(Exchange::Bse), ..ActionFilter::default() };
    let got = store.action_page(&bse, None, 100).await.expect("bse");
    assert_eq!(got.len(), 3, "BSE's own and the one both published");
    assert!(got.iter().all(|a| a.sources.contains(&Exchange::Bse)));
    assert!(store.action_page(&ActionFilter::default(), None, 0).await.expect("empty").is_empty());
}

/// What a store writes is dated by the clock it was given
/// (`mds_store::open_with_clock`, a node's), not by the system's: a
/// company's upsert, the company and its `company.changed` event at the
/// clock's instant; an action import after the clock moved a day, its
/// `corporate_action.added` a day later. `store` reads `clock`, which
/// stands years from now. Not in [`store_test_suite!`](crate::store_test_suite):
/// its store is made with the backend's own `with_clock`.
pub async fn writes_are_dated_by_the_stores_clock(store: &dyn Store, clock: &mds_domain::clock::ManualClock) {
    use mds_domain::clock::Clock;
    store.migrate().await.expect("migrate");
    let t0 = clock.now();
    assert!((Utc::now() - t0).num_days().abs() > 365, "the clock stands years from the system's");
    store.upsert_companies(&[crate::fixtures::company(1, "AAA")]).await.expect("upsert");
    clock.advance(chrono::Duration::days(1));
    let dividend = dividend(1, day(5, 30), Exchange::Nse, 44.0, None);
    store.import_actions(&[dividend], &[], &[]).await.expect("import");
    let dated: Vec<(EventType, DateTime<Utc>)> =
        events_after(store, EventId(0)).await.iter().map(|e| (e.event.kind, e.event.created_at)).collect();
    let day_after = t0 + chrono::Duration::days(1);
    assert_eq!(dated, [(EventType::CompanyChanged, t0), (EventType::CorporateActionAdded, day_after)]);
    let mut stored = Vec::new();
    store.companies_sorted(&mut |c| stored.push(c.updated_at)).await.expect("companies");
    assert_eq!(stored, [t0], "the company's updated_at");
}
