//! `GET /v1/companies/{isin}` and `GET /v1/companies/changes` against the
//! real server (contract sections 7.1 and 7.2), on the demo companies: the
//! detail agrees with the list row, the change feed walks the whole master
//! once, then only what an import changed, and bad input is refused.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use common::{assert_problem, spawn};
use mds_catalog::CursorCodec;
use mds_domain::Company;
use serde_json::Value;

/// Every page of the change feed from `since`, with `limit`: the rows and
/// the final sync token, checking the page invariants on the way (a sync
/// token on the last page only).
async fn sync(app: &common::TestApp, since: Option<&str>, limit: usize) -> (Vec<Value>, String) {
    let mut path = format!("/v1/companies/changes?limit={limit}");
    if let Some(s) = since {
        path.push_str(&format!("&since={s}"));
    }
    let token_on_the_last_page_only = |page: &Value| match (page["has_more"].as_bool().unwrap(), &page["sync_token"]) {
        (true, Value::Null) | (false, Value::String(_)) => {}
        other => panic!("has_more/sync_token disagree: {other:?}"),
    };
    let (rows, last) = app.walk_pages(&path, limit, token_on_the_last_page_only).await;
    (rows, last["sync_token"].as_str().unwrap().to_owned())
}

/// Waits until the node serves `isin` with `name`.
async fn wait_for_name(app: &common::TestApp, isin: &str, name: &str) {
    let t = Instant::now();
    loop {
        let r = app.get(&format!("/v1/companies/{isin}")).await;
        if r.status() == 200 && r.json::<Value>().await.unwrap()["name"] == name {
            return;
        }
        assert!(t.elapsed() < Duration::from_secs(5), "the import never reached the catalog");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_company_detail_is_its_list_row_and_more() {
    let app = spawn().await;
    let list = app.get_json("/v1/companies?limit=200&letter=A", 200).await;
    for row in list["data"].as_array().unwrap().iter().step_by(17) {
        let isin = row["isin"].as_str().unwrap();
        let d = app.get_json(&format!("/v1/companies/{isin}"), 200).await;
        let o = d.as_object().unwrap();
        for (k, v) in row.as_object().unwrap() {
            assert_eq!(&o[k], v, "{k} of {isin}: the same value as in the list");
        }
        for f in ["listings", "classification", "market_cap", "updated_at"] {
            assert!(o.contains_key(f), "{f} of {isin}");
        }
        // One listing per exchange flag, NSE first.
        let exchanges: Vec<&str> =
            d["listings"].as_array().unwrap().iter().map(|l| l["exchange"].as_str().unwrap()).collect();
        let mut want = Vec::new();
        if row["is_nse"] == true {
            want.push("nse");
        }
        if row["is_bse"] == true {
            want.push("bse");
        }
        assert_eq!(exchanges, want, "{isin}");
        assert!(mds_domain::time::parse_rfc3339(d["updated_at"].as_str().unwrap()).is_ok());
        // Matched case-insensitively.
        assert_eq!(app.get_json(&format!("/v1/companies/{}", isin.to_lowercase()), 200).await, d);
    }
}

#[tokio::test]
async fn imported_details_are_served_with_their_etag_and_head() {
    let app = spawn().await;
    let c = mds_testkit::fixtures::detailed_company("US5949181045", "ZZDETAIL");
    app.store.upsert_companies(std::slice::from_ref(&c)).await.unwrap();
    wait_for_name(&app, "US5949181045", "ZZDETAIL Detailed").await;
    let r = app.get("/v1/companies/US5949181045").await;
    assert_eq!(r.status(), 200);
    assert!(r.headers()["cache-control"].to_str().unwrap().starts_with("private"));
    let etag = r.headers()["etag"].to_str().unwrap().to_owned();
    let d: Value = r.json().await.unwrap();
    let served: mds_domain::CompanyDetail = serde_json::from_value(d.clone()).unwrap();
    assert_eq!(served.listings, c.details.listings);
    assert_eq!(served.classification, c.details.classification);
    assert_eq!(served.market_cap, c.details.market_cap);
    assert_eq!(d["listings"][1]["scrip_code"], "533022");
    assert_eq!(d["listings"][0]["listed_on"], "2008-10-06");
    assert_eq!(d["market_cap"]["as_of"], "2024-03-28");

    let before = app.requests_of(&app.key).await;
    let r = app.get_with_headers("/v1/companies/US5949181045", &[("if-none-match", &etag)]).await;
    assert_eq!(r.status(), 304, "a conditional request for the same record");
    let head =
        app.client.head(format!("{}/v1/companies/US5949181045", app.base)).bearer_auth(&app.key).send().await.unwrap();
    assert_eq!(head.status(), 200);
    assert_eq!(head.headers()["etag"], etag.as_str());
    assert_eq!(app.requests_of(&app.key).await, before + 1, "the 304 is free; the HEAD counts");
}

#[tokio::test]
async fn unknown_and_malformed_isins_are_404_and_count() {
    let app = spawn().await;
    let before = app.requests_of(&app.key).await;
    for isin in ["US0378331005", "INE117A01023", "nope", "INE117A0102%20"] {
        assert_problem(app.get(&format!("/v1/companies/{isin}")).await, 404, "not_found").await;
    }
    let r = app.get("/v1/companies/INE117A01022?x=1").await;
    assert_problem(r, 400, "unknown_parameter").await;
    assert_eq!(app.requests_of(&app.key).await, before + 5, "every one counts, as on /v1/companies");
}

#[tokio::test]
async fn the_change_feed_syncs_the_master_then_only_what_changed() {
    let app = spawn().await;
    let demo = mds_import::demo_companies();
    let (all, token) = sync(&app, None, 200).await;
    let isins: Vec<&str> = all.iter().map(|r| r["isin"].as_str().unwrap()).collect();
    let distinct: BTreeSet<&str> = isins.iter().copied().collect();
    assert_eq!(distinct.len(), isins.len(), "each company once");
    assert_eq!(distinct, demo.iter().map(|c| c.isin.as_str()).collect(), "every company");
    // One import made them all: change order is ISIN order.
    assert!(isins.windows(2).all(|w| w[0] < w[1]));
    // Each row is the company's detail record.
    let first = app.get_json(&format!("/v1/companies/{}", isins[0]), 200).await;
    assert_eq!(all[0], first);

    // Nothing changed yet: an empty walk, and a token as good as the last.
    let (none, same) = sync(&app, Some(&token), 50).await;
    assert!(none.is_empty());
    // Its page is tagged: the tag holds until the catalog changes.
    let delta_page = format!("/v1/companies/changes?since={token}&limit=2");
    let r = app.get_with_headers(&delta_page, &[]).await;
    let etag = r.headers()["etag"].to_str().unwrap().to_owned();
    assert_eq!(app.get_with_headers(&delta_page, &[("if-none-match", &etag)]).await.status(), 304);

    // An import that changes two rows, adds one and leaves the rest as they were.
    let by_isin: BTreeMap<&str, &Company> = demo.iter().map(|c| (c.isin.as_str(), c)).collect();
    let mut changed_a = by_isin[isins[10]].clone();
    changed_a.name.push_str(" (renamed)");
    let mut changed_b = by_isin[isins[2000]].clone();
    changed_b.details.classification.macro_sector = Some("Services".into());
    let added = mds_testkit::fixtures::detailed_company("US0378331005", "ZZADDED");
    let mut import: Vec<Company> = demo.iter().take(500).cloned().collect();
    import.extend([changed_a.clone(), changed_b.clone(), added.clone()]);
    let summary = app.store.upsert_companies(&import).await.unwrap();
    assert_eq!((summary.inserted, summary.updated), (1, 2), "{summary:?}");
    wait_for_name(&app, "US0378331005", "ZZADDED Detailed").await;
    let r = app.get_with_headers(&delta_page, &[("if-none-match", &etag)]).await;
    assert_eq!(r.status(), 200, "a new catalog, a new tag");
    assert_ne!(r.headers()["etag"].to_str().unwrap(), etag);

    for since in [&token, &same] {
        let (delta, next) = sync(&app, Some(since), 2).await;
        let got: BTreeSet<&str> = delta.iter().map(|r| r["isin"].as_str().unwrap()).collect();
        let want: BTreeSet<&str> = [changed_a.isin.as_str(), changed_b.isin.as_str(), added.isin.as_str()].into();
        assert_eq!(got, want, "only what changed, each once");
        let renamed = delta.iter().find(|r| r["isin"] == changed_a.isin.as_str()).unwrap();
        assert_eq!(renamed["name"], changed_a.name.as_str(), "in its latest form");
        let reclassified = delta.iter().find(|r| r["isin"] == changed_b.isin.as_str()).unwrap();
        assert_eq!(reclassified["classification"]["macro_sector"], "Services");
        assert!(sync(&app, Some(&next), 50).await.0.is_empty(), "the new token is past every change");
    }

    // A row changed twice appears once, in its latest form.
    changed_a.name.push_str(" again");
    app.store.upsert_companies(std::slice::from_ref(&changed_a)).await.unwrap();
    wait_for_name(&app, changed_a.isin.as_str(), &changed_a.name).await;
    let (delta, _) = sync(&app, Some(&token), 50).await;
    assert_eq!(delta.len(), 3);
    assert_eq!(delta.iter().filter(|r| r["name"] == changed_a.name.as_str()).count(), 1);
    assert_eq!(delta.last().unwrap()["isin"], changed_a.isin.as_str(), "the latest change comes last");
}

#[tokio::test]
async fn bad_tokens_and_cursors_are_refused() {
    let app = spawn().await;
    let (_, token) = sync(&app, None, 200).await;
    let page = app.get_json("/v1/companies/changes?limit=2", 200).await;
    let cursor = page["next_cursor"].as_str().unwrap().to_owned();
    let list_cursor = app.get_json("/v1/companies?limit=2", 200).await["next_cursor"].as_str().unwrap().to_owned();

    let cases = [
        ("since=garbage".to_owned(), "invalid_cursor", "since"),
        (format!("since={cursor}"), "invalid_cursor", "since"),
        (format!("cursor={list_cursor}"), "invalid_cursor", "cursor"),
        (format!("cursor={token}"), "invalid_cursor", "cursor"),
        (format!("since={token}&cursor={cursor}"), "invalid_cursor", "cursor"),
        ("limit=0".to_owned(), "invalid_parameter", "limit"),
        ("limit=201".to_owned(), "invalid_parameter", "limit"),
        ("limit=2&limit=3".to_owned(), "invalid_parameter", "limit"),
        ("letter=A".to_owned(), "unknown_parameter", "letter"),
    ];
    app.assert_params_refused("/v1/companies/changes", cases).await;

    // A genuine token for a generation the store never reached: the store's
    // history was replaced (a restore) after it was issued.
    let codec = CursorCodec::new(&app.store.cursor_secret().await.unwrap());
    let seal = |g: i64, nonce: Option<i64>| {
        let mut b = g.to_le_bytes().to_vec();
        b.extend(nonce.map(i64::to_le_bytes).into_iter().flatten());
        codec.seal(b"mds changes token", &b)
    };
    let body = assert_problem(
        app.get(&format!("/v1/companies/changes?since={}", seal(1_000_000_000, Some(7)))).await,
        410,
        "sync_token_expired",
    )
    .await;
    assert_eq!(body["param"], "since");
    // The generation the node serves, with a nonce that is not its: a token
    // of another history that reached the same number.
    let g = app.store.generations().await.unwrap().companies;
    assert_problem(
        app.get(&format!("/v1/companies/changes?since={}", seal(g, Some(7)))).await,
        410,
        "sync_token_expired",
    )
    .await;
    // A token of the earlier form (a bare generation) cannot be checked.
    assert_problem(app.get(&format!("/v1/companies/changes?since={}", seal(g, None))).await, 410, "sync_token_expired")
        .await;
    assert_eq!(app.get(&format!("/v1/companies/changes?since={token}")).await.status(), 200, "the real one");
}

/// A store restored from an older copy, then imported into until it passes
/// the generation of a token issued before the restore: that token names a
/// history the store no longer has, and is refused `410` rather than
/// silently skipping the changes it never saw. (On SQLite, where a restore
/// is a copy of the file.)
#[tokio::test]
async fn a_token_from_before_a_restore_is_refused_after_the_store_passes_it() {
    let dir = tempfile::tempdir().unwrap();
    let (db, backup) = (dir.path().join("mds.db"), dir.path().join("backup.db"));
    let companies: Vec<mds_domain::Company> =
        (0..20).map(|i| mds_testkit::fixtures::company(i, &format!("R{i:03}"))).collect();
    let renamed = |from: usize, suffix: &str| -> Vec<mds_domain::Company> {
        companies[from..from + 5]
            .iter()
            .map(|c| mds_domain::Company { name: format!("{} {suffix}", c.name), ..c.clone() })
            .collect()
    };
    let store = mds_store::open(&mds_store::DatabaseUrl::new(db.to_str().unwrap())).await.unwrap();
    store.migrate().await.unwrap();
    store.create_account(&mds_domain::AccountName::parse("acme").unwrap(), chrono::Utc::now()).await.unwrap();
    let key = common::new_key(&*store, "acme", "pro", mds_domain::Environment::Live).await;
    store.upsert_companies(&companies).await.unwrap();
    sqlx_copy(&store, &backup).await;
    store.upsert_companies(&renamed(0, "later")).await.unwrap();
    let node = common::Node::start(store.clone(), common::reloading_every(std::time::Duration::from_secs(3600))).await;
    let page: serde_json::Value = changes_page(&node.base, &key, None).await.json().await.unwrap();
    let token = page["sync_token"].as_str().unwrap().to_owned();
    let issued_at = store.generations().await.unwrap().companies;
    node.stop().await;

    // The restore: the older copy becomes the store (at its own path, as
    // an operator restores a backup into a new database), which then moves
    // on past the token's generation with other changes.
    let store = mds_store::open(&mds_store::DatabaseUrl::new(backup.to_str().unwrap())).await.unwrap();
    assert!(store.generations().await.unwrap().companies < issued_at, "the copy is older");
    store.upsert_companies(&renamed(5, "other")).await.unwrap();
    store.upsert_companies(&renamed(10, "other")).await.unwrap();
    assert!(store.generations().await.unwrap().companies >= issued_at, "the store passed the token's generation");
    let node = common::Node::start(store.clone(), common::reloading_every(std::time::Duration::from_secs(3600))).await;
    assert_problem(changes_page(&node.base, &key, Some(&token)).await, 410, "sync_token_expired").await;
    // A token of the new history works.
    let page: serde_json::Value = changes_page(&node.base, &key, None).await.json().await.unwrap();
    let fresh = page["sync_token"].as_str().unwrap().to_owned();
    assert_eq!(changes_page(&node.base, &key, Some(&fresh)).await.status(), 200);
    node.stop().await;
}

/// `GET /v1/companies/changes?limit=200[&since=TOKEN]` with `key` on the
/// server at `base`.
async fn changes_page(base: &str, key: &str, since: Option<&str>) -> reqwest::Response {
    let q = since.map(|t| format!("&since={t}")).unwrap_or_default();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    client.get(format!("{base}/v1/companies/changes?limit=200{q}")).bearer_auth(key).send().await.unwrap()
}

/// Copies the SQLite store to `to` as it is now (`VACUUM INTO`).
async fn sqlx_copy(store: &std::sync::Arc<dyn mds_store::Store>, to: &std::path::Path) {
    let _ = store;
    let url = format!("sqlite://{}", to.parent().unwrap().join("mds.db").display());
    let mut conn = <sqlx::SqliteConnection as sqlx::Connection>::connect(&url).await.unwrap();
    sqlx::query(&format!("VACUUM INTO '{}'", to.display())).execute(&mut conn).await.unwrap();
}
