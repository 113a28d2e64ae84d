//! `GET /v1/companies` against the real server: each filter's result is
//! checked against the expected set computed here, independently of the
//! catalog, on the ~4,600 demo companies.

use crate::common;

use std::collections::BTreeSet;

use common::{Options, assert_problem, naming, spawn, spawn_with};
use mds_domain::{Company, Isin, MarketCapBand, Ticker};
use mds_testkit::fixtures::bare_company;
use serde_json::Value;

/// Walks every page of `query` (with `limit`) and returns the rows, checking
/// the page invariants on the way.
async fn walk(app: &common::TestApp, query: &str, limit: usize) -> Vec<Value> {
    let mut path = format!("/v1/companies?limit={limit}");
    if !query.is_empty() {
        path.push('&');
        path.push_str(query);
    }
    app.walk_pages(&path, limit, |_| {}).await.0
}

/// The (ticker, isin) keys of rows, in order.
fn keys(rows: &[Value]) -> Vec<(String, String)> {
    rows.iter().map(|r| (r["ticker"].as_str().unwrap().to_owned(), r["isin"].as_str().unwrap().to_owned())).collect()
}

/// The expected keys: `pred` over the demo companies, sorted independently.
fn expected(pred: impl Fn(&Company) -> bool) -> Vec<(String, String)> {
    let set: BTreeSet<(String, String)> = mds_import::demo_companies()
        .into_iter()
        .filter(|c| pred(c))
        .map(|c| (c.ticker.as_str().to_owned(), c.isin.as_str().to_owned()))
        .collect();
    set.into_iter().collect()
}

#[tokio::test]
async fn full_walk_returns_every_company_once_in_order() {
    let app = spawn().await;
    let rows = walk(&app, "", 200).await;
    assert_eq!(keys(&rows), expected(|_| true));
    assert!(rows.len() > 4_500);
    // Every row has the nine fields; required ones are never null.
    for r in &rows {
        let o = r.as_object().unwrap();
        assert_eq!(o.len(), 9);
        for f in ["isin", "ticker", "name"] {
            assert!(o[f].is_string(), "{f} in {r}");
        }
        for f in ["is_bse", "is_nse"] {
            assert!(o[f].is_boolean());
        }
    }
    // Default page size is 50.
    let first = app.get_json("/v1/companies", 200).await;
    assert_eq!(first["data"].as_array().unwrap().len(), 50);
    assert_eq!(keys(first["data"].as_array().unwrap()), expected(|_| true)[..50].to_vec());
}

#[tokio::test]
async fn each_filter_matches_the_independently_computed_set() {
    let app = spawn().await;
    let demo = mds_import::demo_companies();
    let some_industry = demo.iter().find_map(|c| c.industry.clone()).unwrap();
    let cases: Vec<(String, Vec<(String, String)>)> = vec![
        ("letter=r".into(), expected(|c| c.ticker.as_str().starts_with('R'))),
        ("letter=2".into(), expected(|c| c.ticker.as_str().starts_with('2'))),
        (format!("industry={}", enc(&some_industry)), expected(|c| c.industry.as_deref() == Some(&some_industry))),
        (
            format!("industry={}", enc(&some_industry.to_lowercase())),
            expected(|c| c.industry.as_deref() == Some(&some_industry.to_lowercase())),
        ),
        ("industry=No%20Such%20Industry".into(), vec![]),
        ("exchange=nse".into(), expected(|c| c.is_nse)),
        ("exchange=bse".into(), expected(|c| c.is_bse)),
        ("market_cap=large_cap".into(), expected(|c| c.market_cap_band == Some(MarketCapBand::Large))),
        ("market_cap=mid_cap".into(), expected(|c| c.market_cap_band == Some(MarketCapBand::Mid))),
        ("market_cap=small_cap".into(), expected(|c| c.market_cap_band == Some(MarketCapBand::Small))),
        (
            "search=bank".into(),
            expected(|c| c.name.to_lowercase().contains("bank") || c.ticker.as_str().to_lowercase().contains("bank")),
        ),
        (
            "search=%20%20TATA%20".into(),
            expected(|c| c.name.to_lowercase().contains("tata") || c.ticker.as_str().to_lowercase().contains("tata")),
        ),
        ("ticker=reliance".into(), expected(|c| c.ticker.as_str() == "RELIANCE")),
        (
            "exchange=nse&market_cap=large_cap&letter=h".into(),
            expected(|c| {
                c.is_nse && c.market_cap_band == Some(MarketCapBand::Large) && c.ticker.as_str().starts_with('H')
            }),
        ),
        (
            format!("search=ltd&exchange=bse&industry={}", enc(&some_industry)),
            expected(|c| {
                c.is_bse
                    && c.industry.as_deref() == Some(&some_industry)
                    && (c.name.to_lowercase().contains("ltd") || c.ticker.as_str().to_lowercase().contains("ltd"))
            }),
        ),
    ];
    for (query, want) in cases {
        if query.contains("search=") {
            // `sort=ticker` keeps the order of old; the default order of a
            // search (relevance, its own tests below) has the same rows.
            let got = keys(&walk(&app, &format!("{query}&sort=ticker"), 37).await);
            assert_eq!(got, want, "{query}&sort=ticker");
            let mut got = keys(&walk(&app, &query, 37).await);
            got.sort();
            assert_eq!(got, want, "{query}");
        } else {
            let got = keys(&walk(&app, &query, 37).await);
            assert_eq!(got, want, "{query}");
        }
    }
    // The filters above are not vacuous.
    assert!(!expected(|c| c.ticker.as_str().starts_with('2')).is_empty());
    assert!(expected(|c| c.market_cap_band == Some(MarketCapBand::Large)).len() >= 90);
}

fn enc(s: &str) -> String {
    s.bytes().map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") }).collect()
}

#[tokio::test]
async fn a_ticker_shared_by_several_isins_returns_them_all() {
    let app = spawn().await;
    let demo = mds_import::demo_companies();
    let shared = demo
        .iter()
        .find(|c| demo.iter().filter(|d| d.ticker == c.ticker).count() > 1)
        .expect("the exchange lists have shared tickers")
        .ticker
        .clone();
    let rows = walk(&app, &format!("ticker={}", enc(&shared.as_str().to_lowercase())), 1).await;
    assert!(rows.len() > 1);
    assert_eq!(keys(&rows), expected(|c| c.ticker == shared));
}

#[tokio::test]
async fn search_is_unicode_case_insensitive() {
    let mut companies = mds_import::demo_companies();
    companies.retain(|c| !c.name.contains("Nestl"));
    companies.push(Company {
        isin: Isin::parse("INE239A01024").unwrap(),
        ticker: Ticker::parse("NESTLEIND").unwrap(),
        name: "Nestlé India Limited".into(),
        industry: Some("Food Products".into()),
        sector: Some("Fast Moving Consumer Goods".into()),
        is_bse: true,
        is_nse: true,
        market_cap_band: Some(MarketCapBand::Large),
        logo_url: None,
        details: Default::default(),
    });
    let app = spawn_with(Options { companies, ..Options::default() }).await;
    // Composed (U+00E9) and decomposed (e + U+0301) spellings alike: terms
    // and names are compared in NFC.
    for q in ["NESTL%C3%89", "nestl%C3%A9", "Nestl%C3%A9%20india", "TL%C3%89", "nestle%CC%81", "NESTLE%CC%81%20I"] {
        let body = app.get_json(&format!("/v1/companies?search={q}"), 200).await;
        let data = body["data"].as_array().unwrap();
        assert_eq!(data.len(), 1, "{q}");
        assert_eq!(data[0]["name"], "Nestlé India Limited");
    }
    // Without the accent it is a different string.
    let body = app.get_json("/v1/companies?search=NESTLE%20INDIA", 200).await;
    assert_eq!(body["data"].as_array().unwrap().len(), 0);
}

#[tokio::test]
async fn limit_may_change_between_pages_and_pages_do_not_overlap() {
    let app = spawn().await;
    let all = expected(|c| c.is_nse);
    let p1 = app.get_json("/v1/companies?exchange=nse&limit=3", 200).await;
    let c1 = p1["next_cursor"].as_str().unwrap();
    let p2 = app.get_json(&format!("/v1/companies?exchange=nse&limit=7&cursor={c1}"), 200).await;
    let mut got = keys(p1["data"].as_array().unwrap());
    got.extend(keys(p2["data"].as_array().unwrap()));
    assert_eq!(got, all[..10].to_vec());
}

/// A company to insert while the server runs: BSE only, no other fields.
fn inserted(isin: &str, ticker: &str) -> Company {
    Company { name: format!("{ticker} Inserted"), ..bare_company(Isin::parse(isin).unwrap(), ticker) }
}

#[tokio::test]
async fn rows_inserted_while_paging_cause_no_duplicates_or_skips() {
    let app = spawn().await;
    let p1 = app.get_json("/v1/companies?limit=100", 200).await;
    let before = keys(p1["data"].as_array().unwrap());
    // Insert a company that sorts before the cursor and one after it.
    app.store
        .upsert_companies(&[inserted("US0378331005", "0000AAPL"), inserted("US5949181045", "ZZZZMSFT")])
        .await
        .unwrap();
    let t = std::time::Instant::now();
    while app.get_json("/v1/companies?ticker=ZZZZMSFT", 200).await["data"].as_array().unwrap().is_empty() {
        assert!(t.elapsed() < std::time::Duration::from_secs(5), "import never reached the catalog");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let rest = walk_from(&app, p1["next_cursor"].as_str().unwrap()).await;
    let mut seen = before.clone();
    seen.extend(rest.clone());
    let mut all_old = expected(|_| true);
    all_old.push(("ZZZZMSFT".into(), "US5949181045".into()));
    all_old.sort();
    assert_eq!(seen, all_old, "old rows once each, the later insert included, the earlier one not");
}

#[tokio::test]
async fn a_page_is_made_once_then_served_again_byte_for_byte() {
    let app = spawn().await;
    let get = |path: &'static str| {
        let app = &app;
        async move {
            let r = app.get(path).await;
            assert_eq!(r.status(), 200, "{path}");
            let etag = r.headers()["etag"].to_str().unwrap().to_owned();
            (etag, r.bytes().await.unwrap())
        }
    };
    let made = get("/v1/companies?limit=7&letter=T").await;
    let kept = get("/v1/companies?limit=7&letter=T").await;
    assert_eq!(made, kept, "the kept page is the page made");
    // Another spelling of the same query is made again, and is the same page.
    assert_eq!(get("/v1/companies?letter=T&limit=7").await, made);
    let rows: Value = serde_json::from_slice(&made.1).unwrap();
    assert_eq!(keys(rows["data"].as_array().unwrap()), expected(|c| c.ticker.as_str().starts_with('T'))[..7].to_vec());
    // A kept page is still conditional.
    let r = app
        .client
        .get(format!("{}/v1/companies?limit=7&letter=T", app.base))
        .bearer_auth(&app.key)
        .header("if-none-match", &made.0)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 304);
    // An import is a new catalog: its pages are made from its rows.
    app.store.upsert_companies(&[inserted("US0378331005", "T0000")]).await.unwrap();
    let t = std::time::Instant::now();
    loop {
        let (etag, body) = get("/v1/companies?limit=7&letter=T").await;
        let rows: Value = serde_json::from_slice(&body).unwrap();
        if rows["data"][0]["ticker"] == "T0000" {
            assert_ne!(etag, made.0, "a new page, a new tag");
            break;
        }
        assert_eq!((etag, body), made, "until the import reaches the catalog, the old page");
        assert!(t.elapsed() < std::time::Duration::from_secs(5), "import never reached the catalog");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

async fn walk_from(app: &common::TestApp, cursor: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut cursor = cursor.to_owned();
    loop {
        let b = app.get_json(&format!("/v1/companies?limit=200&cursor={cursor}"), 200).await;
        out.extend(keys(b["data"].as_array().unwrap()));
        match b["next_cursor"].as_str() {
            Some(c) => cursor = c.to_owned(),
            None => return out,
        }
    }
}

#[tokio::test]
async fn cursors_are_bound_signed_and_opaque() {
    let app = spawn().await;
    let p = app.get_json("/v1/companies?exchange=nse&limit=2", 200).await;
    let c = p["next_cursor"].as_str().unwrap().to_owned();
    // Other filters.
    let b =
        assert_problem(app.get(&format!("/v1/companies?exchange=bse&limit=2&cursor={c}")).await, 400, "invalid_cursor")
            .await;
    assert_eq!(b["param"], "cursor");
    assert_problem(app.get(&format!("/v1/companies?limit=2&cursor={c}")).await, 400, "invalid_cursor").await;
    // Altered: flip one character in the middle.
    let mut t: Vec<char> = c.chars().collect();
    let i = t.len() / 2;
    t[i] = if t[i] == 'A' { 'B' } else { 'A' };
    let tampered: String = t.into_iter().collect();
    assert_problem(app.get(&format!("/v1/companies?exchange=nse&cursor={tampered}")).await, 400, "invalid_cursor")
        .await;
    // Foreign: signed by another secret.
    let foreign = mds_catalog::CursorCodec::new(b"another service").encode(
        &mds_domain::CompanyFilter { exchange: Some(mds_domain::Exchange::Nse), ..Default::default() },
        &mds_catalog::SortKey::new("ABB", "INE117A01022"),
    );
    assert_problem(app.get(&format!("/v1/companies?exchange=nse&cursor={foreign}")).await, 400, "invalid_cursor").await;
    for junk in ["", "abc", "%FF%FE", "null"] {
        assert_problem(app.get(&format!("/v1/companies?cursor={junk}")).await, 400, "invalid_cursor").await;
    }
    // The genuine cursor still works with the same filters and another limit.
    let ok = app.get_json(&format!("/v1/companies?exchange=nse&limit=5&cursor={c}"), 200).await;
    assert_eq!(ok["data"].as_array().unwrap().len(), 5);
}

#[tokio::test]
async fn bad_parameters_are_refused_with_their_name() {
    let app = spawn().await;
    let invalid: &[(&str, &[&str])] = &[
        ("limit", &["limit=0", "limit=201", "limit=ten", "limit=-1"]),
        ("letter", &["letter=ab", "letter=%C3%89"]),
        ("exchange", &["exchange=lse", "exchange=NSE", "exchange=nse&exchange=bse"]),
        ("market_cap", &["market_cap=mega_cap"]),
        ("search", &["search=a", "search=%20a%20"]),
        ("ticker", &["ticker=two%20words"]),
        ("sort", &["sort=relevance", "sort=name", "search=ab&sort=Relevance", "search=ab&sort="]),
    ];
    let unknown: &[(&str, &[&str])] = &[("industy", &["industy=Banks"]), ("page", &["page=2"])];
    let cases = naming("invalid_parameter", invalid).chain(naming("unknown_parameter", unknown));
    app.assert_params_refused("/v1/companies", cases).await;
    let b = assert_problem(app.get("/v1/companies?industy=Banks").await, 400, "unknown_parameter").await;
    assert!(b["detail"].as_str().unwrap().contains("did you mean \"industry\""), "{b}");
}

/// The demo's companies with their identity history, loaded as `mds demo`
/// loads them (the lists of 2024 and 2026, then NSE's change files), once
/// the node serves the catalog made of them.
async fn with_history() -> common::TestApp {
    let app = spawn_with(Options { companies: Vec::new(), articles: Vec::new(), ..Options::default() }).await;
    let h = mds_import::demo_history();
    for snapshots in [&h.snapshots_2024, &h.snapshots_2026] {
        app.store.import_snapshots(snapshots).await.unwrap();
    }
    app.store.import_nse_changes(&h.symbol_changes, &h.name_changes).await.unwrap();
    // Only the change files date ZOMATO's new symbol (9 April 2025): the
    // catalog that knows it is made of every import.
    for _ in 0..400 {
        let b = app.get_json("/v1/companies?search=eternal&as_of=2025-04-10", 200).await;
        if tickers(&b).contains(&"ETERNAL") {
            return app;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the node never served the demo's history");
}

/// The tickers of a page's rows.
fn tickers(body: &Value) -> Vec<&str> {
    body["data"].as_array().unwrap().iter().map(|r| r["ticker"].as_str().unwrap()).collect()
}

/// Issue 44's cases on the real lists and change files (contract
/// section 15): the company people mean comes first, a former name or
/// symbol finds its company, and each result says what matched.
#[tokio::test]
async fn search_finds_what_people_mean() {
    let app = with_history().await;
    // "reliance": Reliance Industries (its exact ticker) before the funds
    // whose names begin with the word.
    let b = app.get_json("/v1/companies?search=reliance&limit=3", 200).await;
    assert_eq!(tickers(&b)[0], "RELIANCE", "{b}");
    assert_eq!(b["data"][0]["match"], serde_json::json!({"field": "ticker", "value": "RELIANCE"}));
    // "infosys": INFY first, HCL Infosystems (a word beginning with the
    // term too, a smaller company) after it.
    let rows = walk(&app, "search=infosys", 50).await;
    assert_eq!(rows[0]["ticker"], "INFY");
    assert_eq!(rows[0]["match"]["field"], "name");
    if let Some(h) = rows.iter().position(|r| r["ticker"] == "HCL-INSYS") {
        assert!(h > 0);
    }
    // A former symbol or name finds the company that carries a new one.
    let b = app.get_json("/v1/companies?search=Zomato", 200).await;
    assert_eq!(tickers(&b)[0], "ETERNAL", "{b}");
    assert_eq!(b["data"][0]["match"], serde_json::json!({"field": "former_ticker", "value": "ZOMATO"}));
    let b = app.get_json("/v1/companies?search=zomato%20lim", 200).await;
    assert_eq!(tickers(&b), ["ETERNAL"], "{b}");
    assert_eq!(b["data"][0]["match"]["field"], "former_name");
    let b = app.get_json("/v1/companies?search=TATAMOTORS", 200).await;
    assert_eq!(tickers(&b)[0], "TMPV", "{b}");
    assert_eq!(b["data"][0]["match"], serde_json::json!({"field": "former_ticker", "value": "TATAMOTORS"}));
    // `ticker` stays an exact match on the current ticker (section 4).
    let b = app.get_json("/v1/companies?ticker=TATAMOTORS", 200).await;
    assert!(tickers(&b).is_empty(), "{b}");
    // With `as_of`, the values of that day only.
    let b = app.get_json("/v1/companies?search=zomato&as_of=2024-06-01", 200).await;
    assert_eq!(tickers(&b), ["ZOMATO"], "{b}");
    assert_eq!(b["data"][0]["match"], serde_json::json!({"field": "ticker", "value": "ZOMATO"}));
    let b = app.get_json("/v1/companies?search=eternal&as_of=2024-06-01", 200).await;
    assert!(!tickers(&b).contains(&"ZOMATO"), "{b}");

    // `sort=ticker` is the old order; relevance the same rows, ranked.
    let ranked = walk(&app, "search=bank", 37).await;
    let by_ticker = walk(&app, "search=bank&sort=ticker", 37).await;
    let mut sorted = keys(&ranked);
    sorted.sort();
    assert_eq!(keys(&by_ticker), sorted);
    assert_ne!(keys(&ranked), sorted, "relevance is not the ticker order");
    for r in ranked.iter().chain(&by_ticker) {
        let m = &r["match"];
        let field = m["field"].as_str().unwrap();
        let value = m["value"].as_str().unwrap();
        match field {
            "ticker" | "name" => assert_eq!(r[field], value, "{r}"),
            _ => assert!(value.to_lowercase().contains("bank"), "{r}"),
        }
    }
    // A list without a search carries no `match`.
    let b = app.get_json("/v1/companies?limit=3", 200).await;
    assert!(b["data"][0].get("match").is_none(), "{b}");
    // A cursor is bound to the order.
    let p = app.get_json("/v1/companies?search=bank&limit=2", 200).await;
    let c = p["next_cursor"].as_str().unwrap();
    let e = assert_problem(
        app.get(&format!("/v1/companies?search=bank&sort=ticker&cursor={c}")).await,
        400,
        "invalid_cursor",
    )
    .await;
    assert_eq!(e["param"], "cursor");
    let ok = app.get_json(&format!("/v1/companies?search=bank&sort=relevance&cursor={c}"), 200).await;
    assert_eq!(keys(ok["data"].as_array().unwrap()), keys(&ranked)[2..52].to_vec());
}

/// The tie rules of section 15, on companies made for them: the kind of
/// match first (exact ticker; a ticker, name or word of the name beginning
/// with the term; another substring), then active before superseded and
/// delisted, then the larger market cap (none last), then ticker, ISIN;
/// the same walked a page at a time.
#[tokio::test]
async fn relevance_ties_are_broken_as_the_contract_says() {
    use mds_domain::{CompanyStatus, MarketCap};
    let make = |i: u32, ticker: &str, name: &str, mcap: Option<f64>, status: CompanyStatus| {
        let mut c = bare_company(mds_testkit::fixtures::isin_of(i), ticker);
        c.name = name.into();
        c.details.market_cap = mcap.map(|inr_crore| MarketCap { inr_crore, as_of: None });
        c.details.status = status;
        c
    };
    use CompanyStatus::{Active, Delisted, Superseded};
    let companies = vec![
        make(1, "ACME", "Zeta Holdings", Some(1.0), Active),
        make(2, "BBB", "Acme Industries", Some(100.0), Active),
        make(3, "CCC", "The Acme Company", Some(500.0), Active),
        make(4, "ACMEX", "Other Name", None, Active),
        make(5, "AAA", "Acme Steel", Some(100.0), Active),
        make(6, "PLC", "Placmes Limited", Some(90_000.0), Active),
        make(7, "OLD", "Acme Old", Some(80_000.0), Superseded),
        make(8, "GONE", "Acme Gone", None, Delisted),
        make(9, "DDD", "Nothing Here", Some(10.0), Active),
        make(10, "AAA", "Acme Steel Two", Some(100.0), Active),
    ];
    let app = spawn_with(Options { companies, articles: Vec::new(), ..Options::default() }).await;
    let want = ["ACME", "CCC", "AAA", "AAA", "BBB", "ACMEX", "OLD", "GONE", "PLC"];
    let b = app.get_json("/v1/companies?search=acme&status=any&limit=200", 200).await;
    assert_eq!(tickers(&b), want, "{b}");
    let isins: Vec<&str> = b["data"].as_array().unwrap().iter().map(|r| r["isin"].as_str().unwrap()).collect();
    assert!(isins[2] < isins[3], "equal market caps and tickers: by ISIN");
    let fields: Vec<(&str, &str)> = b["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["match"]["field"].as_str().unwrap(), r["match"]["value"].as_str().unwrap()))
        .collect();
    assert_eq!(fields[0], ("ticker", "ACME"));
    assert_eq!(fields[1], ("name", "The Acme Company"));
    assert_eq!(fields[5], ("ticker", "ACMEX"));
    assert_eq!(fields[8], ("name", "Placmes Limited"));
    // A page at a time, the same order.
    let rows = walk(&app, "search=acme&status=any", 2).await;
    let walked: Vec<&str> = rows.iter().map(|r| r["ticker"].as_str().unwrap()).collect();
    assert_eq!(walked, want);
    // Active only by default; `sort=ticker` the old order.
    let b = app.get_json("/v1/companies?search=acme", 200).await;
    assert_eq!(tickers(&b), ["ACME", "CCC", "AAA", "AAA", "BBB", "ACMEX", "PLC"]);
    let b = app.get_json("/v1/companies?search=acme&sort=ticker", 200).await;
    assert_eq!(tickers(&b), ["AAA", "AAA", "ACME", "ACMEX", "BBB", "CCC", "PLC"]);
}

/// Every `(path of four levels, count)` of a `V1Industries` tree, checking
/// on the way that each node's count is its children's sum and that
/// siblings are ordered by count descending, then name, `null` last.
fn leaves(tree: &Value) -> std::collections::BTreeMap<[Option<String>; 4], u64> {
    const LEVELS: [&str; 4] = ["macro_sectors", "sectors", "industries", "basic_industries"];
    fn visit(
        nodes: &Value,
        depth: usize,
        path: &mut Vec<Option<String>>,
        out: &mut std::collections::BTreeMap<[Option<String>; 4], u64>,
    ) -> u64 {
        let nodes = nodes.as_array().unwrap();
        let key = |n: &Value| {
            (
                n["name"].is_null(),
                std::cmp::Reverse(n["count"].as_u64().unwrap()),
                n["name"].as_str().map(str::to_owned),
            )
        };
        assert!(nodes.windows(2).all(|w| key(&w[0]) < key(&w[1])), "siblings ordered: {nodes:?}");
        let mut sum = 0;
        for n in nodes {
            path.push(n["name"].as_str().map(str::to_owned));
            let count = n["count"].as_u64().unwrap();
            if depth + 1 < LEVELS.len() {
                assert_eq!(visit(&n[LEVELS[depth + 1]], depth + 1, path, out), count, "{path:?}");
            } else {
                assert_eq!(n.as_object().unwrap().len(), 2, "a leaf: {n}");
                out.insert(path.clone().try_into().unwrap(), count);
            }
            sum += count;
            path.pop();
        }
        sum
    }
    let mut out = std::collections::BTreeMap::new();
    assert_eq!(visit(&tree[LEVELS[0]], 0, &mut Vec::new(), &mut out), tree["count"].as_u64().unwrap());
    out
}

#[tokio::test]
async fn industries_count_the_active_companies_on_each_path() {
    let mut companies = mds_import::demo_companies();
    // One company delisted: not counted.
    let delisted = companies.iter_mut().find(|c| c.industry.is_some()).unwrap();
    delisted.details.status = mds_domain::CompanyStatus::Delisted;
    let app = spawn_with(Options { companies: companies.clone(), ..Options::default() }).await;
    let r = app.get("/v1/industries").await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["cache-control"], "private, max-age=60");
    let etag = r.headers()["etag"].to_str().unwrap().to_owned();
    let tree: Value = r.json().await.unwrap();
    // Computed here: the row's sector and industry, the classification's
    // macro-sector and basic industry.
    let mut want = std::collections::BTreeMap::<[Option<String>; 4], u64>::new();
    let active: Vec<&Company> =
        companies.iter().filter(|c| c.details.status == mds_domain::CompanyStatus::Active).collect();
    for c in &active {
        let k = &c.details.classification;
        *want
            .entry([k.macro_sector.clone(), c.sector.clone(), c.industry.clone(), k.basic_industry.clone()])
            .or_default() += 1;
    }
    assert_eq!(tree["count"].as_u64().unwrap(), active.len() as u64);
    assert_eq!(leaves(&tree), want);
    assert!(want.keys().any(|k| k.iter().all(Option::is_some)), "the demo has fully classified companies");
    // An industry's companies are what the `industry` filter gives (of the active ones).
    let banks = active.iter().filter_map(|c| c.industry.clone()).next().unwrap();
    let in_tree: u64 = want.iter().filter(|(k, _)| k[2].as_deref() == Some(&banks)).map(|(_, n)| n).sum();
    let listed = walk(&app, &format!("industry={}&status=active", enc(&banks)), 200).await;
    assert_eq!(listed.len() as u64, in_tree);
    // ETag and 304; a parameter is refused.
    let r = app.get_with_headers("/v1/industries", &[("if-none-match", &etag)]).await;
    assert_eq!(r.status(), 304);
    let b = assert_problem(app.get("/v1/industries?industry=x").await, 400, "unknown_parameter").await;
    assert_eq!(b["param"], "industry");
    assert_problem(app.get_open("/v1/industries").await, 401, "missing_api_key").await;
}

#[tokio::test]
async fn industries_are_counted_like_data_routes() {
    let app = spawn().await;
    let before = app.requests_of(&app.key).await;
    assert_eq!(app.get("/v1/industries").await.status(), 200);
    assert_eq!(app.get("/v1/industries").await.status(), 200);
    assert_eq!(app.requests_of(&app.key).await - before, 2);
}

#[tokio::test]
async fn an_unknown_industry_gives_an_empty_page_with_the_nearest_industries() {
    let app = spawn().await;
    let demo = mds_import::demo_companies();
    let industries: BTreeSet<String> = demo.iter().filter_map(|c| c.industry.clone()).collect();
    let some = industries.iter().find(|i| i.len() > 6 && !industries.contains(&i.to_lowercase())).unwrap().clone();
    let v = app.get_json(&format!("/v1/companies?industry={}", enc(&some.to_lowercase())), 200).await;
    assert_eq!(v["data"], serde_json::json!([]));
    assert_eq!(v["hint"]["param"], "industry", "{v}");
    assert_eq!(v["hint"]["nearest"][0], some.as_str(), "case only: nearest first: {v}");
    let nearest = v["hint"]["nearest"].as_array().unwrap();
    assert!(nearest.len() <= 5 && nearest.iter().all(|n| industries.contains(n.as_str().unwrap())), "{v}");
    // A letter left out.
    let typo: String = some.chars().enumerate().filter(|&(i, _)| i != 3).map(|(_, c)| c).collect();
    let v = app.get_json(&format!("/v1/companies?industry={}", enc(&typo)), 200).await;
    assert!(v["hint"]["nearest"].as_array().unwrap().iter().any(|n| n == some.as_str()), "{typo}: {v}");
    // Nothing near.
    let v = app.get_json("/v1/companies?industry=zzqxvw", 200).await;
    assert_eq!(v["hint"], serde_json::json!({"param": "industry", "nearest": []}));
    // A known industry: no hint, even on an empty page.
    let v = app.get_json(&format!("/v1/companies?industry={}&letter=0&exchange=nse", enc(&some)), 200).await;
    assert!(v.get("hint").is_none(), "{v}");
    let v = app.get_json(&format!("/v1/companies?industry={}&limit=1", enc(&some)), 200).await;
    assert!(v.get("hint").is_none(), "{v}");
}
