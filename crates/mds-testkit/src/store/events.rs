//! Suite functions for the event log ([`EventStore`](mds_store::EventStore)):
//! what upserts announce (one event per row inserted or changed, none for
//! a row given as stored), the log's filters and positions, and retention.

use mds_domain::{CompanyChanged, EventFilter, EventId, EventType, StoredEvent};

use super::*;

/// Every event of the log after `after` that passes `filter`.
async fn log(store: &dyn Store, after: EventId, filter: &EventFilter) -> Vec<StoredEvent> {
    store.event_page(after, filter, 1000).await.expect("event page").events
}

/// The data of a `company.changed` event.
fn company_change(e: &StoredEvent) -> CompanyChanged {
    assert_eq!(e.event.kind, EventType::CompanyChanged);
    serde_json::from_value(e.event.data.clone()).expect("company.changed data")
}

/// An upsert announces every company it inserts (every field changed) or
/// changes (the fields that differ), and nothing for one given as stored;
/// ids increase.
pub async fn company_upserts_announce_what_changed(store: &dyn Store) {
    migrated(store).await;
    let all = EventFilter::default();
    assert!(log(store, EventId(0), &all).await.is_empty());
    let a = company("INA0000001A", "AAA", "Alpha Ltd");
    let b = company("INB0000001B", "BBB", "Beta Ltd");
    store.upsert_companies(&[a.clone(), b.clone()]).await.expect("upsert");
    let first = log(store, EventId(0), &all).await;
    assert_eq!(first.len(), 2, "one event per new company");
    assert!(first[0].event.id < first[1].event.id);
    let change = company_change(&first[0]);
    assert_eq!(change.company.company.isin, a.isin);
    for field in ["isin", "ticker", "name", "status", "listings", "supersedes"] {
        assert!(change.changed.iter().any(|f| f == field), "a new company changes {field}: {:?}", change.changed);
    }
    assert!(!change.changed.iter().any(|f| f == "updated_at"));
    assert_eq!(first[0].subject.isin.as_ref(), Some(&a.isin));
    assert_eq!(first[0].subject.ticker.as_deref(), Some("AAA"));

    store.upsert_companies(&[a.clone(), b.clone()]).await.expect("again");
    let last = first[1].event.id;
    assert!(log(store, last, &all).await.is_empty(), "an upsert that changes nothing makes no event");

    let renamed = Company { name: "Alpha Limited".into(), ..a.clone() };
    store.upsert_companies(&[renamed, b]).await.expect("rename");
    let next = log(store, last, &all).await;
    assert_eq!(next.len(), 1, "only the changed company: {next:?}");
    let change = company_change(&next[0]);
    assert_eq!(change.changed, vec!["name".to_owned()]);
    assert_eq!(change.company.company.name, "Alpha Limited");
    assert!(change.events.is_empty());
}

/// An upsert announces a new slug as `article.published` and a changed
/// article as `article.updated`, its data the article without `body`.
pub async fn article_upserts_announce_published_and_updated(store: &dyn Store) {
    migrated(store).await;
    let all = EventFilter::default();
    let one = full_article("one");
    let two = bare_article("two");
    store.upsert_articles(&[one.clone(), two.clone()]).await.expect("upsert");
    let first = log(store, EventId(0), &all).await;
    let kinds: Vec<EventType> = first.iter().map(|e| e.event.kind).collect();
    assert_eq!(kinds, vec![EventType::ArticlePublished; 2]);
    let data = first.iter().find(|e| e.event.data["slug"] == "one").expect("one").event.data.clone();
    assert!(data.get("body").is_none(), "no body in the data: {data}");
    assert_eq!(data["headline"], one.headline.as_str());

    store.upsert_articles(&[one.clone(), two.clone()]).await.expect("again");
    let last = first[1].event.id;
    assert!(log(store, last, &all).await.is_empty());

    let edited = Article { headline: "A new headline".into(), ..one };
    store.upsert_articles(&[edited, two]).await.expect("edit");
    let next = log(store, last, &all).await;
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].event.kind, EventType::ArticleUpdated);
    assert_eq!(next[0].event.data["headline"], "A new headline");
}

/// The log's filters (types, ISIN, ticker, tag) each keep only what
/// matches, and a position resumes after it.
pub async fn event_pages_filter_and_resume(store: &dyn Store) {
    migrated(store).await;
    store.upsert_companies(&[company("INA0000001A", "AAA", "Alpha Ltd")]).await.expect("companies");
    let article = full_article("tagged");
    store.upsert_articles(std::slice::from_ref(&article)).await.expect("articles");
    let all = log(store, EventId(0), &EventFilter::default()).await;
    assert_eq!(all.len(), 2);

    let only = |f: EventFilter| async move { log(store, EventId(0), &f).await.len() };
    let types = EventFilter { types: vec![EventType::ArticlePublished], ..EventFilter::default() };
    assert_eq!(only(types).await, 1);
    let isins = EventFilter { isins: vec![crate::fixtures::isin("INA0000001A")], ..EventFilter::default() };
    let by_isin = log(store, EventId(0), &isins).await;
    assert_eq!(
        by_isin.len() as u64,
        1 + u64::from(article.isin.as_ref() == Some(&crate::fixtures::isin("INA0000001A")))
    );
    let tickers = EventFilter { tickers: vec!["AAA".into()], ..EventFilter::default() };
    assert!(only(tickers).await >= 1);
    let tag = article.tags.first().expect("the full article has tags").clone();
    let tags = EventFilter { tags: vec!["no-such-tag".into(), tag], ..EventFilter::default() };
    assert_eq!(only(tags).await, 1);
    let none = EventFilter { tags: vec!["no-such-tag".into()], ..EventFilter::default() };
    assert_eq!(only(none).await, 0);

    let rest = log(store, all[0].event.id, &EventFilter::default()).await;
    assert_eq!(rest, all[1..].to_vec());
    let page = store.event_page(EventId(0), &EventFilter::default(), 1).await.expect("page");
    assert_eq!(page.events.len(), 1);
    assert_eq!(page.latest, all[1].event.id);
    assert_eq!(page.pruned_through, EventId(0));
    assert_eq!(store.events_after(all[0].event.id, 10).await.expect("after"), all[1..].to_vec());
}

/// Retention removes what is older than its time and records how far it
/// went; ids go on increasing after it.
pub async fn pruning_moves_the_expired_mark(store: &dyn Store) {
    migrated(store).await;
    store.upsert_companies(&[company("INA0000001A", "AAA", "Alpha Ltd")]).await.expect("companies");
    let all = log(store, EventId(0), &EventFilter::default()).await;
    assert_eq!(store.prune_events(at("2000-01-01T00:00:00Z")).await.expect("prune nothing"), 0);
    let removed = store.prune_events(Utc::now() + chrono::TimeDelta::minutes(1)).await.expect("prune");
    assert_eq!(removed, 1);
    let page = store.event_page(EventId(0), &EventFilter::default(), 10).await.expect("page");
    assert!(page.events.is_empty());
    assert_eq!(page.pruned_through, all[0].event.id);
    assert_eq!(page.latest, all[0].event.id);
    store.upsert_companies(&[company("INB0000001B", "BBB", "Beta Ltd")]).await.expect("more");
    let later = log(store, EventId(0), &EventFilter::default()).await;
    assert_eq!(later.len(), 1);
    assert!(later[0].event.id > all[0].event.id, "ids are never reused");
}
