//! Corporate actions (contract 13.3) against the real server: `GET
//! /v1/companies/{isin}/actions` with and without its lineage, and the
//! calendar `GET /v1/actions`, its filters and keyset pages, on the real
//! exchange files (the demo's lists and symbol changes, then the four
//! action files of `data/actions`, imported by `mds import` as an
//! operator would, while the server runs); their bad input, their
//! counting and conditional answers, and their kept pages dropped when an
//! import changes the actions.

use crate::common;

use std::time::Duration;

use common::prices::{DAYS, TTL_NEW, TTL_OLD, data, mds, udiff_days, wait_for};
use common::{Options, TestApp, assert_problem, naming, spawn_with};
use mds_domain::action_query::{ActionCalendarFilter, ActionKey, calendar_order, company_order};
use mds_domain::actions::CorporateAction;
use serde_json::Value;

/// BAJFINANCE before its split of 2025-06-16, and after.
const BAJFINANCE_OLD: &str = "INE296A01024";
const BAJFINANCE_NEW: &str = "INE296A01032";

/// The demo's identity data (two NSE lists a split apart, BSE's list,
/// NSE's symbol changes).
async fn import_identity(app: &TestApp) {
    mds(
        app,
        &[
            "import",
            "exchanges",
            "--nse",
            &data("demo/nse_EQUITY_L_2024-01.csv"),
            "--bse",
            &data("demo/bse_Equity_2024-01.csv"),
            "--as-of",
            "2024-01-31",
        ],
    )
    .await;
    mds(app, &["import", "exchanges", "--nse", &data("demo/nse_EQUITY_L_2026-05-17.csv"), "--as-of", "2026-05-17"])
        .await;
    mds(app, &["import", "nse-changes", "--symbols", &data("demo/nse_symbolchange_2026-05-17.csv")]).await;
}

/// Both NSE action files.
async fn import_nse_actions(app: &TestApp) {
    mds(
        app,
        &[
            "import",
            "nse-actions",
            &data("actions/nse_CF-CA-equities_2016-01-05_to_2025-07-18.csv.zst"),
            &data("actions/nse_CF-CA-equities_2025-07-15_to_2026-07-15.csv.zst"),
        ],
    )
    .await;
}

/// Both BSE action files.
async fn import_bse_actions(app: &TestApp) {
    mds(
        app,
        &[
            "import",
            "bse-actions",
            &data("actions/bse_Corporate_Actions_2025-07-15_to_2026-07-15.csv.zst"),
            &data("actions/bse_Corporate_Actions_2026-07-23_to_2026-08-31.csv.zst"),
        ],
    )
    .await;
}

/// A server on an empty store with the identity data and the NSE actions
/// loaded, once the node serves them.
async fn loaded() -> TestApp {
    let app = spawn_with(Options { companies: Vec::new(), articles: Vec::new(), ..Options::default() }).await;
    import_identity(&app).await;
    import_nse_actions(&app).await;
    wait_for(&app, &format!("/v1/companies/{BAJFINANCE_NEW}/actions"), |b| !b["data"].as_array().unwrap().is_empty())
        .await;
    app
}

/// The actions of a body's `data`, decoded as the wire type.
fn actions(body: &Value) -> Vec<CorporateAction> {
    serde_json::from_value(body["data"].clone()).expect("actions as the wire type")
}

/// Every action of the store, as the calendar orders them.
async fn all_stored(app: &TestApp) -> Vec<CorporateAction> {
    app.store.action_page(&mds_store::ActionFilter::default(), None, 1_000_000).await.unwrap()
}

#[tokio::test]
async fn a_company_s_actions_follow_its_lineage() {
    let app = loaded().await;
    let stored = all_stored(&app).await;
    let of = |isins: &[&str]| -> Vec<CorporateAction> {
        let mut v: Vec<CorporateAction> = stored.iter().filter(|a| isins.contains(&a.isin.as_str())).cloned().collect();
        v.sort_by(|a, b| company_order(&ActionKey::of(a), &ActionKey::of(b)));
        v
    };
    // With lineage (the default): the new ISIN's actions and the old one's.
    let body = app.get_json(&format!("/v1/companies/{BAJFINANCE_NEW}/actions"), 200).await;
    assert_eq!(body["isin"], BAJFINANCE_NEW);
    let got = actions(&body);
    assert_eq!(got, of(&[BAJFINANCE_NEW, BAJFINANCE_OLD]), "ex_date descending, then id, both ISINs");
    assert!(got.iter().any(|a| a.isin.as_str() == BAJFINANCE_OLD), "the old ISIN's actions are there");
    assert_eq!(app.get_json(&format!("/v1/companies/{BAJFINANCE_NEW}/actions?lineage=true"), 200).await, body);
    // The split that changed the ISIN, on its ex-date, with its factor.
    let split =
        got.iter().find(|a| a.ex_date.to_string() == "2025-06-16" && a.action.action_type().as_str() == "split");
    let split = split.expect("the split of 2025-06-16");
    assert_eq!(split.isin.as_str(), BAJFINANCE_OLD, "an action on the day its ISIN changed is the earlier ISIN's");
    assert_eq!(split.factor, Some(0.5));
    let bonus =
        got.iter().find(|a| a.ex_date.to_string() == "2025-06-16" && a.action.action_type().as_str() == "bonus");
    assert_eq!(bonus.expect("the bonus of 2025-06-16").factor, Some(0.2));
    // Without lineage: the ISIN's own only.
    let own = app.get_json(&format!("/v1/companies/{BAJFINANCE_NEW}/actions?lineage=false"), 200).await;
    assert_eq!(actions(&own), of(&[BAJFINANCE_NEW]));
    // The old ISIN's lineage is itself (it superseded nothing).
    let old = app.get_json(&format!("/v1/companies/{BAJFINANCE_OLD}/actions"), 200).await;
    assert_eq!(actions(&old), of(&[BAJFINANCE_OLD]));
    // `type`, `from` and `to` (both inclusive), lower-case ISIN alike.
    let q =
        format!("/v1/companies/{}/actions?type=dividend&from=2020-01-01&to=2025-06-16", BAJFINANCE_NEW.to_lowercase());
    let divs = actions(&app.get_json(&q, 200).await);
    let want: Vec<CorporateAction> = of(&[BAJFINANCE_NEW, BAJFINANCE_OLD])
        .into_iter()
        .filter(|a| {
            a.action.action_type().as_str() == "dividend"
                && a.ex_date.to_string().as_str() >= "2020-01-01"
                && a.ex_date.to_string().as_str() <= "2025-06-16"
        })
        .collect();
    assert!(!want.is_empty());
    assert_eq!(divs, want);
    let day = app.get_json(&format!("/v1/companies/{BAJFINANCE_NEW}/actions?from=2025-06-16&to=2025-06-16"), 200).await;
    assert!(actions(&day).len() >= 2 && actions(&day).iter().all(|a| a.ex_date.to_string() == "2025-06-16"));
    // A known company with actions: TCS.
    let tcs = app.get_json("/v1/companies/INE467B01029/actions", 200).await;
    assert!(!actions(&tcs).is_empty());

    // The Rust client and `mds get actions` answer the same.
    let client = app.rust_client();
    let found = client.company_actions(BAJFINANCE_NEW).send().await.unwrap();
    assert_eq!(serde_json::to_value(&found).unwrap(), body);
    let own_only = client.company_actions(BAJFINANCE_NEW).lineage(false).send().await.unwrap();
    assert_eq!(own_only.data, actions(&own));
    let typed = client
        .company_actions(&BAJFINANCE_NEW.to_lowercase())
        .action_type(mds_client::ActionType::Dividend)
        .from("2020-01-01".parse().unwrap())
        .to("2025-06-16".parse().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(typed.data, divs);
    match client.company_actions("INE002A01019").send().await {
        Err(mds_client::Error::Api { status: 404, .. }) => {}
        other => panic!("a malformed ISIN is 404: {other:?}"),
    }
    let out = app.mds_get(&["actions", "--isin", BAJFINANCE_NEW, "--no-lineage", "--format", "jsonl"]).await;
    let lines: Vec<CorporateAction> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines, actions(&own));
    let out = app
        .mds_get(&[
            "actions",
            "--isin",
            BAJFINANCE_NEW,
            "--type",
            "dividend",
            "--from",
            "2020-01-01",
            "--to",
            "2025-06-16",
        ])
        .await;
    assert_eq!(serde_json::from_str::<Vec<CorporateAction>>(&out).unwrap(), divs);
}

#[tokio::test]
async fn the_calendar_pages_by_keyset_with_its_filters() {
    let app = loaded().await;
    import_bse_actions(&app).await;
    let stored = all_stored(&app).await;
    assert!(stored.iter().any(|a| a.sources.len() == 2), "BSE joined some of NSE's actions");
    // Wait for the node to follow the BSE import.
    wait_for(&app, "/v1/actions?exchange=bse&limit=1", |b| !b["data"].as_array().unwrap().is_empty()).await;
    for q in [
        "ex_date_from=2025-07-01&ex_date_to=2025-07-31",
        "ex_date_from=2026-01-01&type=dividend",
        "ex_date_from=2025-07-15&ex_date_to=2025-09-30&exchange=bse",
        "ex_date_from=2025-07-15&ex_date_to=2025-09-30&exchange=nse",
        "type=split",
        "ex_date_from=2025-06-16&ex_date_to=2025-06-16",
    ] {
        let filter = mds_domain::params::QueryParams::from_pairs(
            &q.split('&').map(|kv| kv.split_once('=').unwrap()).collect::<Vec<_>>(),
        )
        .map(|p: mds_domain::action_query::ActionCalendarQueryParams| p.filter)
        .unwrap();
        let filter: ActionCalendarFilter = filter;
        let want: Vec<CorporateAction> = stored.iter().filter(|a| filter.matches(a)).cloned().collect();
        assert!(!want.is_empty(), "{q}: the files hold some");
        let (rows, _) = app.walk_pages(&format!("/v1/actions?limit=37&{q}"), 37, |_| {}).await;
        let got: Vec<CorporateAction> = rows.into_iter().map(|r| serde_json::from_value(r).unwrap()).collect();
        assert_eq!(got.len(), want.len(), "{q}");
        assert_eq!(got, want, "{q}: ex_date ascending, then id, every one once");
        assert!(got.windows(2).all(|w| calendar_order(&ActionKey::of(&w[0]), &ActionKey::of(&w[1])).is_lt()));
    }
    // Without filters: every action, 200 a page.
    let first = app.get_json("/v1/actions?limit=200", 200).await;
    assert_eq!(actions(&first), stored[..200]);
    assert!(first["has_more"].as_bool().unwrap());
    // A cursor is bound to its filters.
    let p = app.get_json("/v1/actions?limit=1&type=bonus", 200).await;
    let c = p["next_cursor"].as_str().unwrap();
    let b = assert_problem(app.get(&format!("/v1/actions?limit=1&type=split&cursor={c}")).await, 400, "invalid_cursor")
        .await;
    assert_eq!(b["param"], "cursor");
    let b = assert_problem(app.get("/v1/actions?cursor=forged").await, 400, "invalid_cursor").await;
    assert_eq!(b["param"], "cursor");
    // `limit` may change between pages.
    let next = app.get_json(&format!("/v1/actions?limit=5&type=bonus&cursor={c}"), 200).await;
    let bonuses: Vec<CorporateAction> =
        stored.iter().filter(|a| a.action.action_type().as_str() == "bonus").cloned().collect();
    assert_eq!(actions(&next), bonuses[1..6]);

    // The Rust client walks the same pages; `mds get actions --all` too.
    let client = app.rust_client();
    let (lo, hi): (chrono::NaiveDate, chrono::NaiveDate) =
        ("2025-07-01".parse().unwrap(), "2025-07-31".parse().unwrap());
    let want: Vec<CorporateAction> = stored.iter().filter(|a| a.ex_date >= lo && a.ex_date <= hi).cloned().collect();
    let july = client.actions().ex_date_from(lo).ex_date_to(hi).limit(37).all().await.unwrap();
    assert_eq!(july, want);
    let bse = client
        .actions()
        .exchange(mds_domain::Exchange::Bse)
        .action_type(mds_client::ActionType::Dividend)
        .limit(5)
        .send()
        .await
        .unwrap();
    assert!(
        bse.data
            .iter()
            .all(|a| a.sources.contains(&mds_domain::Exchange::Bse) && a.action.action_type().as_str() == "dividend")
    );
    let out = app.mds_get(&["actions", "--from", "2025-07-01", "--to", "2025-07-31", "--limit", "50", "--all"]).await;
    assert_eq!(serde_json::from_str::<Vec<CorporateAction>>(&out).unwrap(), want);
    let out = app.mds_get(&["actions", "--type", "split", "--limit", "3"]).await;
    let splits: Vec<CorporateAction> = serde_json::from_str(&out).unwrap();
    assert_eq!(splits.len(), 3, "one page without --all");
}

#[tokio::test]
async fn kept_answers_are_dropped_when_an_import_changes_the_actions() {
    let app = loaded().await;
    let path = "/v1/actions?ex_date_from=2025-07-15&ex_date_to=2025-08-31&limit=200";
    let r = app.get(path).await;
    let etag = r.headers()["etag"].to_str().unwrap().to_owned();
    let before: Value = r.json().await.unwrap();
    assert!(actions(&before).iter().all(|a| a.sources == [mds_domain::Exchange::Nse]));
    // Kept: the same bytes and tag; a 304 for the tag.
    let again = app.get(path).await;
    assert_eq!(again.headers()["etag"].to_str().unwrap(), etag);
    let r = app.get_with_headers(path, &[("if-none-match", &etag)]).await;
    assert_eq!(r.status(), 304);
    let company = format!("/v1/companies/{BAJFINANCE_NEW}/actions?from=2025-07-15");
    let company_before = app.get_json(&company, 200).await;
    // BSE's files join NSE's actions: the node drops what it kept.
    import_bse_actions(&app).await;
    let after = wait_for(&app, path, |b| actions(b).iter().any(|a| a.sources.len() == 2)).await;
    assert_ne!(after, before);
    let r = app.get_with_headers(path, &[("if-none-match", &etag)]).await;
    assert_eq!(r.status(), 200, "the page changed: a new tag");
    let company_after = wait_for(&app, &company, |b| b != &company_before).await;
    assert!(actions(&company_after).iter().any(|a| a.sources.contains(&mds_domain::Exchange::Bse)));
    // The same files again change nothing: the tag stays.
    let tag_after = app.get(path).await.headers()["etag"].to_str().unwrap().to_owned();
    import_bse_actions(&app).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(app.get(path).await.headers()["etag"].to_str().unwrap(), tag_after);
}

/// A dividend of TTL resolved while the catalog knew the old ISIN only: the
/// daily files that date TTL's change (the new ISIN first traded
/// 2025-02-12) resolve it again to the new ISIN (contract 10.3: imports in
/// any order give the same result), whose close of 2025-02-12 gives its
/// `factor` (13.2); the calendar page kept before gives way, and a later
/// import of lists linking the two ISINs leaves the calendar and the
/// company's actions agreeing.
#[tokio::test]
async fn calendar_factors_follow_the_isin_links_a_later_import_of_lists_adds() {
    let app = spawn_with(Options { companies: Vec::new(), articles: Vec::new(), ..Options::default() }).await;
    mds(&app, &["import", "exchanges", "--nse", &data("demo/nse_EQUITY_L_2024-01.csv"), "--as-of", "2024-01-31"]).await;
    // NSE names the dividend by its symbol, which the catalog knows as the
    // old ISIN's only.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("ttl-dividend.csv");
    let header = "\"SYMBOL\",\"COMPANY NAME\",\"SERIES\",\"PURPOSE\",\"FACE VALUE\",\"EX-DATE\",\"RECORD DATE\",\
                  \"BOOK CLOSURE START DATE\",\"BOOK CLOSURE END DATE\"";
    let row = "\"TTL\",\"T T Limited\",\"EQ\",\"Dividend - Re 0.10 Per Share\",\"1\",\"13-Feb-2025\",\"13-Feb-2025\",\"-\",\"-\"";
    std::fs::write(&csv, format!("{header}\n{row}\n")).unwrap();
    mds(&app, &["import", "nse-actions", csv.to_str().unwrap()]).await;
    let path = "/v1/actions?ex_date_from=2025-02-13&ex_date_to=2025-02-13";
    let before = actions(&wait_for(&app, path, |b| !actions(b).is_empty()).await);
    assert_eq!(before.len(), 1);
    assert_eq!(before[0].isin.as_str(), TTL_OLD, "resolved while the catalog knew the old ISIN only");
    assert_eq!(before[0].factor, None, "no close before the ex-date");
    // The days from the split on: TTL's bars are the new ISIN's, which they
    // list (contract 14.1) but link to no other; they date TTL's symbol on
    // the new ISIN from 2025-02-12, so the dividend is resolved again.
    let days: Vec<String> = udiff_days(dir.path())
        .iter()
        .filter(|f| DAYS[3..].iter().any(|d| f.display().to_string().contains(d)))
        .map(|f| f.display().to_string())
        .collect();
    assert_eq!(days.len(), 2);
    mds(&app, &["import", "nse-bhavcopy", &days[0], &days[1]]).await;
    wait_for(&app, &format!("/v1/companies/{TTL_NEW}/prices?from={}", DAYS[3]), |b| {
        b["bars"].as_array().is_some_and(|bars| bars.len() == 2)
    })
    .await;
    let moved =
        actions(&wait_for(&app, path, |b| actions(b).first().is_some_and(|a| a.isin.as_str() == TTL_NEW)).await);
    assert_eq!(moved.len(), 1);
    assert!(moved[0].factor.is_some(), "the new ISIN's close of 2025-02-12: {moved:?}");
    // The later list links the old ISIN to the new one.
    mds(&app, &["import", "exchanges", "--nse", &data("demo/nse_EQUITY_L_2026-05-17.csv"), "--as-of", "2026-05-17"])
        .await;
    let company = format!("/v1/companies/{TTL_NEW}/actions?from=2025-02-13&to=2025-02-13");
    let linked = actions(&wait_for(&app, &company, |b| actions(b).first().is_some_and(|a| a.factor.is_some())).await);
    let after = actions(&wait_for(&app, path, |b| actions(b).first().is_some_and(|a| a.factor.is_some())).await);
    assert_eq!(after, linked, "the calendar and the company's actions agree");
}

#[tokio::test]
async fn bad_input_is_refused_and_both_routes_count() {
    let app = spawn_with(Options::default()).await;
    let isin = "INE002A01018";
    app.assert_params_refused(
        &format!("/v1/companies/{isin}/actions"),
        naming(
            "invalid_parameter",
            &[
                ("type", &["type=splits", "type="][..]),
                ("from", &["from=2024-1-01", "from=2024-02-30"][..]),
                ("to", &["to=x", "from=2024-02-01&to=2024-01-31"][..]),
                ("lineage", &["lineage=yes", "lineage="][..]),
            ],
        ),
    )
    .await;
    app.assert_params_refused(
        &format!("/v1/companies/{isin}/actions"),
        [("limit=5", "unknown_parameter", "limit"), ("type=split&type=bonus", "invalid_parameter", "type")],
    )
    .await;
    app.assert_params_refused(
        "/v1/actions",
        naming(
            "invalid_parameter",
            &[
                ("ex_date_from", &["ex_date_from=2024-01-1"][..]),
                ("ex_date_to", &["ex_date_to=2024-13-01", "ex_date_from=2024-02-01&ex_date_to=2024-01-31"][..]),
                ("type", &["type=dividends"][..]),
                ("exchange", &["exchange=lse"][..]),
                ("limit", &["limit=0", "limit=201"][..]),
            ],
        ),
    )
    .await;
    app.assert_params_refused("/v1/actions", [("from=2024-01-01", "unknown_parameter", "from")]).await;
    // A malformed or unknown ISIN is 404; a bad query is 400 first.
    assert_problem(app.get("/v1/companies/INE002A01019/actions").await, 404, "not_found").await;
    assert_problem(app.get("/v1/companies/XX/actions").await, 404, "not_found").await;
    assert_problem(app.get("/v1/companies/XX/actions?type=x").await, 400, "invalid_parameter").await;
    // A known company with no actions: an empty list; the calendar: empty.
    let none = app.get_json(&format!("/v1/companies/{isin}/actions"), 200).await;
    assert_eq!(none, serde_json::json!({"isin": isin, "data": []}));
    let empty = app.get_json("/v1/actions", 200).await;
    assert_eq!(empty, serde_json::json!({"data": [], "next_cursor": null, "has_more": false}));

    // Counting: 200, 400 and 404 count; a 304 does not.
    let before = app.counted().await;
    let r = app.get(&format!("/v1/companies/{isin}/actions")).await;
    let etag = r.headers()["etag"].to_str().unwrap().to_owned();
    assert_eq!(r.headers()["cache-control"].to_str().unwrap().split(',').next().unwrap(), "private");
    let r = app.get("/v1/actions?type=split").await;
    let calendar_tag = r.headers()["etag"].to_str().unwrap().to_owned();
    assert_eq!(app.get("/v1/actions?type=x").await.status(), 400);
    assert_eq!(app.get("/v1/companies/INE002A01019/actions").await.status(), 404);
    let r = app.get_with_headers(&format!("/v1/companies/{isin}/actions"), &[("if-none-match", &etag)]).await;
    assert_eq!(r.status(), 304);
    let r = app.get_with_headers("/v1/actions?type=split", &[("if-none-match", &calendar_tag)]).await;
    assert_eq!(r.status(), 304);
    let counted = app.counted().await.since(&before);
    assert_eq!(counted.month, 4, "200s, a 400 and a 404 count; the 304s do not");
    assert_eq!(counted.on("/v1/actions"), 2, "each under its route");
    assert_eq!(counted.on("/v1/companies/{isin}/actions"), 2);
    // HEAD answers as GET, without a body.
    let r = app.client.head(format!("{}/v1/actions", app.base)).bearer_auth(&app.key).send().await.unwrap();
    assert_eq!(r.status(), 200);
}

/// Contract 10.3 on the real files: a split of the action files dates the
/// ISIN change the lists only bound (BAJFINANCE, 2025-06-16), and links an
/// old ISIN on BSE's list to its successor on NSE's (BESTAGRO, RNBDENIMS),
/// so a `ticker` filter finds one active company; what only the lists date
/// carries `observed_between`; the same files again change nothing.
#[tokio::test]
async fn splits_date_isin_changes_and_link_bse_s_old_isins_to_nse_s() {
    let app = loaded().await;
    // BAJFINANCE: the lists bound the change by (2024-01-31, 2026-05-17];
    // NSE's split of 2025-06-16 dates it.
    let history = wait_for(&app, &format!("/v1/companies/{BAJFINANCE_NEW}/history"), |b| {
        b["events"].as_array().unwrap().iter().any(|e| e["type"] == "isin_changed" && e["exact"] == true)
    })
    .await;
    let change = history["events"].as_array().unwrap().iter().find(|e| e["type"] == "isin_changed").unwrap().clone();
    assert_eq!(change["date"], "2025-06-16");
    assert_eq!(change["from"], BAJFINANCE_OLD);
    assert!(change["observed_between"].is_null(), "exact: no bounds");
    let stored = all_stored(&app).await;
    let split = stored
        .iter()
        .find(|a| {
            a.isin.as_str() == BAJFINANCE_OLD
                && a.ex_date.to_string() == "2025-06-16"
                && a.action.action_type().as_str() == "split"
        })
        .expect("the split");
    assert_eq!(split.action.new_isin().map(|i| i.as_str()), Some(BAJFINANCE_NEW));
    // Every split that names its successor: no action of the old ISIN goes
    // ex after it (they are the new ISIN's, not the old one's, as the
    // lists alone would have them until 2026-05-17).
    let named: Vec<&CorporateAction> = stored.iter().filter(|a| a.action.new_isin().is_some()).collect();
    assert!(named.len() >= 10, "splits dating ISIN changes: {}", named.len());
    for split in &named {
        let later = stored.iter().find(|a| a.isin == split.isin && a.ex_date > split.ex_date);
        assert!(later.is_none(), "{later:?} after {split:?}");
    }
    // Observed only: HINDMOTORS left NSE's list between the two snapshots.
    let hind = app.get_json("/v1/companies/INE253A01025/history", 200).await;
    let gone = hind["events"].as_array().unwrap().iter().find(|e| e["type"] == "delisted").expect("delisted").clone();
    assert_eq!(
        (gone["exact"].clone(), gone["observed_between"].clone()),
        (Value::Bool(false), serde_json::json!(["2024-01-31", "2026-05-17"]))
    );

    // BESTAGRO and RNBDENIMS: BSE's list shows the old ISINs, NSE's the
    // successors; NSE's split rows (by symbol, to the successors) link them,
    // and BSE's (by code, to the old ISINs) join the same actions.
    let count = stored.len();
    import_bse_actions(&app).await;
    for (old, new, ex, ticker) in [
        ("INE052T01013", "INE052T01021", "2026-01-16", "BESTAGRO"),
        ("INE012Q01021", "INE012Q01039", "2026-04-02", "RNBDENIMS"),
    ] {
        let detail = wait_for(&app, &format!("/v1/companies/{old}"), |b| b["status"] == "superseded").await;
        assert_eq!(detail["superseded_by"], new, "{ticker}");
        for isin in [old, new] {
            let h = app.get_json(&format!("/v1/companies/{isin}/history"), 200).await;
            let e = h["events"].as_array().unwrap().iter().find(|e| e["type"] == "isin_changed").cloned();
            let e = e.unwrap_or_else(|| panic!("{ticker}: isin_changed on {isin}"));
            assert_eq!(
                (e["from"].as_str(), e["to"].as_str(), e["date"].as_str(), e["exact"].as_bool()),
                (Some(old), Some(new), Some(ex), Some(true))
            );
        }
        let listed = app.get_json(&format!("/v1/companies?ticker={ticker}"), 200).await;
        let isins: Vec<&str> = listed["data"].as_array().unwrap().iter().map(|c| c["isin"].as_str().unwrap()).collect();
        assert_eq!(isins, [new], "{ticker}: the successor only");
        // NSE's split row (resolved by symbol to the successor) and BSE's
        // (by code to the old ISIN) are one action of the old ISIN.
        let acts = app.get_json(&format!("/v1/companies/{new}/actions?type=split"), 200).await;
        let acts = actions(&acts);
        assert_eq!(acts.len(), 1, "{ticker}: one split, {acts:?}");
        assert_eq!(acts[0].isin.as_str(), old);
        let all_of: Vec<String> = all_stored(&app)
            .await
            .iter()
            .filter(|a| [old, new].contains(&a.isin.as_str()))
            .map(|a| {
                format!("{} {} {} {:?} {}", a.isin, a.ex_date, a.action.action_type().as_str(), a.sources, a.purpose)
            })
            .collect();
        assert_eq!(acts[0].sources.len(), 2, "{ticker}: published by both {all_of:#?}");
        assert_eq!(acts[0].action.new_isin().map(|i| i.as_str()), Some(new));
    }
    // SHARDUL: BSE lists INE037B01012, NSE INE037B01020; no action names
    // the change: they stay unrelated (the prefix alone is no evidence).
    let shardul = app.get_json("/v1/companies?ticker=SHARDUL", 200).await;
    assert_eq!(shardul["data"].as_array().unwrap().len(), 2);

    // The same files again change nothing.
    let all = all_stored(&app).await;
    import_nse_actions(&app).await;
    import_bse_actions(&app).await;
    assert_eq!(all_stored(&app).await, all, "idempotent");
    assert!(all.len() > count);
}
