//! `POST /mcp` (API.md section 12) through the real server, on the backend
//! `MDS_TEST_BACKEND` names: no key is `401` before the message is read;
//! the protocol's requests and errors; the nine tools and their schemas;
//! each tool answering as its route (the same JSON), a route's `404` as a
//! tool result with `isError`; and a tool call counted exactly once, as
//! its route, in the month and in the day's ledger, while `/mcp` itself
//! counts nothing.

use crate::common;

use chrono::Utc;
use common::{TestApp, assert_problem};
use mds_domain::{Environment, Tier, TierName};
use serde_json::{Value, json};

/// Posts `message` to `/mcp` with the app's key.
async fn post(app: &TestApp, message: &Value) -> reqwest::Response {
    post_as(app, &app.key, message).await
}

/// Posts `message` to `/mcp` with `key`.
async fn post_as(app: &TestApp, key: &str, message: &Value) -> reqwest::Response {
    app.client
        .post(format!("{}/mcp", app.base))
        .bearer_auth(key)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(message)
        .send()
        .await
        .unwrap()
}

/// The answer to request `method` with `params`.
async fn rpc(app: &TestApp, method: &str, params: Value) -> Value {
    let r = post(app, &json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})).await;
    assert_eq!(r.status(), 200, "{method}");
    assert_eq!(r.headers()["content-type"], "application/json");
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["jsonrpc"], "2.0");
    assert_eq!(v["id"], 1);
    v
}

/// The result of tool `name` called with `arguments`.
async fn call(app: &TestApp, name: &str, arguments: Value) -> Value {
    let v = rpc(app, "tools/call", json!({"name": name, "arguments": arguments})).await;
    v["result"].clone()
}

/// The route's own answer to `GET path`.
async fn get(app: &TestApp, path: &str) -> Value {
    let r = app.client.get(format!("{}{path}", app.base)).bearer_auth(&app.key).send().await.unwrap();
    assert_eq!(r.status(), 200, "{path}");
    r.json().await.unwrap()
}

/// The month's requests of the app's key (`/v1/usage` is not counted).
async fn used(app: &TestApp) -> u64 {
    get(app, "/v1/usage").await["current_month"]["requests"].as_u64().unwrap()
}

#[tokio::test]
async fn no_key_is_401_before_the_message_is_read() {
    let app = common::spawn().await;
    let url = format!("{}/mcp", app.base);
    let r = app.client.post(&url).body("not even JSON").send().await.unwrap();
    assert_problem(r, 401, "missing_api_key").await;
    let bad = "mds_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    let r = app.client.post(&url).bearer_auth(bad).body("{}").send().await.unwrap();
    assert_problem(r, 401, "invalid_api_key").await;
    // GET (no server-initiated stream) is 405, naming POST.
    let r = app.client.get(&url).bearer_auth(&app.key).send().await.unwrap();
    assert_eq!(r.headers()["allow"], "POST");
    assert_problem(r, 405, "method_not_allowed").await;
}

#[tokio::test]
async fn initialize_list_and_the_protocol_errors() {
    let app = common::spawn().await;
    let init = rpc(&app, "initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}})).await;
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert!(init["result"]["capabilities"]["tools"].is_object());
    assert_eq!(init["result"]["serverInfo"]["name"], "mds");
    let r = post(&app, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    assert_eq!(r.status(), 202);
    assert!(r.bytes().await.unwrap().is_empty());
    assert_eq!(rpc(&app, "ping", json!({})).await["result"], json!({}));

    let tools = rpc(&app, "tools/list", json!({})).await["result"]["tools"].clone();
    let names: Vec<&str> = tools.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "search_companies",
            "get_company",
            "resolve_symbol",
            "list_news",
            "search_news",
            "get_article",
            "list_corporate_actions",
            "get_prices",
            "get_usage"
        ]
    );
    for t in tools.as_array().unwrap() {
        let schema = &t["inputSchema"];
        assert_eq!(schema["type"], "object", "{t}");
        let props = schema["properties"].as_object().unwrap();
        assert_eq!(props.is_empty(), t["name"] == "get_usage", "{t}");
        for (name, p) in props {
            assert!(p["description"].as_str().is_some_and(|d| !d.is_empty()), "{name} of {}", t["name"]);
        }
        assert!(t["description"].as_str().unwrap().len() > 100, "{t}");
    }
    let search = &tools[0]["inputSchema"]["properties"];
    assert!(search["as_of"].is_object() && search["status"].is_object() && search["cursor"].is_object());
    assert_eq!(tools[1]["inputSchema"]["required"], json!(["isin"]));
    assert_eq!(tools[2]["inputSchema"]["required"], json!(["symbol"]));

    let code = |v: Value| v["error"]["code"].as_i64();
    assert_eq!(code(rpc(&app, "resources/list", json!({})).await), Some(-32601));
    assert_eq!(code(rpc(&app, "tools/call", json!({"name": "nope"})).await), Some(-32602));
    // A missing argument is the tool's input error (below), not the protocol's.
    assert_eq!(code(rpc(&app, "tools/call", json!({"name": "get_company", "arguments": {}})).await), None);
    let raw = |body: &'static str| app.client.post(format!("{}/mcp", app.base)).bearer_auth(&app.key).body(body).send();
    let parse: Value = raw("{nope").await.unwrap().json().await.unwrap();
    assert_eq!(parse["error"]["code"], -32700);
    let batch: Value = raw(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).await.unwrap().json().await.unwrap();
    assert_eq!(batch["error"]["code"], -32600);
}

#[tokio::test]
async fn every_tool_answers_as_its_route() {
    let app = common::spawn().await;
    let page = call(&app, "search_companies", json!({"limit": 3})).await;
    assert_eq!(page["isError"], false);
    assert_eq!(page["structuredContent"], get(&app, "/v1/companies?limit=3").await);
    // The text is the page as a table: a header line, a line per row,
    // then the page's other members.
    let text = page["content"][0]["text"].as_str().unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3 + 2, "{text}");
    assert!(lines[0].split('\t').any(|c| c == "isin"), "{text}");
    let rest: Value = serde_json::from_str(lines[4]).unwrap();
    assert_eq!(rest["has_more"], page["structuredContent"]["has_more"]);
    let first = &page["structuredContent"]["data"][0];
    let (isin, ticker) = (first["isin"].as_str().unwrap(), first["ticker"].as_str().unwrap());

    let company = call(&app, "get_company", json!({"isin": isin})).await;
    assert_eq!(company["structuredContent"], get(&app, &format!("/v1/companies/{isin}")).await);
    let with = call(&app, "get_company", json!({"isin": isin, "history": true})).await;
    assert_eq!(with["structuredContent"]["history"], get(&app, &format!("/v1/companies/{isin}/history")).await);
    assert_eq!(with["structuredContent"]["isin"], isin);

    // The test store has no exchange lists, so no symbol history: the
    // route's `404`, as the route answers it.
    let symbol = call(&app, "resolve_symbol", json!({"symbol": ticker, "exchange": "nse"})).await;
    let r = app.client.get(format!("{}/v1/symbols/{ticker}?exchange=nse", app.base)).bearer_auth(&app.key);
    let r = r.send().await.unwrap();
    let status = r.status().as_u16();
    let mut route: Value = r.json().await.unwrap();
    assert_eq!(symbol["isError"], status != 200);
    let mut tool = symbol["structuredContent"].clone();
    for v in [&mut route, &mut tool] {
        v.as_object_mut().unwrap().remove("request_id");
    }
    assert_eq!(tool, route);

    let news = call(&app, "list_news", json!({"limit": 2})).await;
    assert_eq!(news["structuredContent"], get(&app, "/v1/news?limit=2").await);
    let slug = news["structuredContent"]["data"][0]["slug"].as_str().unwrap();
    let article = call(&app, "get_article", json!({"slug": slug})).await;
    assert_eq!(article["structuredContent"], get(&app, &format!("/v1/news/{slug}")).await);
    // search_news is the list's `q`: the same page, the article found by
    // the longest word of its headline.
    let headline = article["structuredContent"]["headline"].as_str().unwrap();
    let word: String =
        headline.split_whitespace().max_by_key(|w| w.len()).unwrap().chars().filter(|c| c.is_alphanumeric()).collect();
    let found = call(&app, "search_news", json!({"q": word, "sort": "published_at", "limit": 50})).await;
    assert_eq!(found["isError"], false, "{found}");
    assert_eq!(found["structuredContent"], get(&app, &format!("/v1/news?q={word}&sort=published_at&limit=50")).await);
    let slugs: Vec<&str> =
        found["structuredContent"]["data"].as_array().unwrap().iter().map(|a| a["slug"].as_str().unwrap()).collect();
    assert!(slugs.contains(&slug), "{word}: {slugs:?}");
    let text = found["content"][0]["text"].as_str().unwrap();
    assert!(text.lines().next().unwrap().split('\t').any(|c| c == "headline"), "a table: {text}");
    let missing = call(&app, "search_news", json!({"limit": 3})).await;
    assert_eq!(missing["isError"], true);
    assert_eq!(missing["structuredContent"]["param"], "q", "{missing}");

    let usage = call(&app, "get_usage", json!({})).await;
    assert_eq!(usage["structuredContent"]["key_prefix"], get(&app, "/v1/usage").await["key_prefix"]);
}

#[tokio::test]
async fn a_routes_4xx_is_a_tool_error_with_its_problem() {
    let app = common::spawn().await;
    let missing = call(&app, "get_company", json!({"isin": "INE000000000"})).await;
    assert_eq!(missing["isError"], true);
    assert_eq!(missing["structuredContent"]["code"], "not_found");
    assert_eq!(missing["structuredContent"]["status"], 404);
    let text: Value = serde_json::from_str(missing["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["code"], "not_found");
    assert!(text.as_object().unwrap().values().all(|v| !v.is_null()), "compact: no nulls: {text}");
    let bad = call(&app, "search_companies", json!({"limit": 0})).await;
    assert_eq!(bad["isError"], true);
    assert_eq!(bad["structuredContent"]["code"], "invalid_parameter");
    assert_eq!(bad["structuredContent"]["param"], "limit");
}

#[tokio::test]
async fn a_tool_call_counts_once_as_its_route() {
    let app = common::spawn().await;
    let before = used(&app).await;
    rpc(&app, "initialize", json!({})).await;
    rpc(&app, "tools/list", json!({})).await;
    call(&app, "get_usage", json!({})).await;
    assert_eq!(used(&app).await, before, "/mcp itself and get_usage count nothing");
    call(&app, "search_companies", json!({"limit": 1})).await;
    assert_eq!(used(&app).await, before + 1);
    // A 404 counts, as the route's does.
    call(&app, "get_company", json!({"isin": "INE000000000"})).await;
    assert_eq!(used(&app).await, before + 2);
    let isin = get(&app, "/v1/companies?limit=1").await["data"][0]["isin"].as_str().unwrap().to_owned();
    call(&app, "get_company", json!({"isin": isin, "history": true})).await;
    assert_eq!(used(&app).await, before + 5, "the list above, the detail and the history");
    call(&app, "search_news", json!({"q": "shares", "limit": 2})).await;
    assert_eq!(used(&app).await, before + 6, "a search is one request of the news list");

    let daily = get(&app, "/v1/usage/daily").await;
    let today = daily["days"].as_array().unwrap().last().unwrap().clone();
    let by_route = &today["by_route"];
    assert_eq!(by_route["/v1/companies"], 2, "{today}");
    assert_eq!(by_route["/v1/companies/{isin}"], 2, "{today}");
    assert_eq!(by_route["/v1/companies/{isin}/history"], 1, "{today}");
    assert_eq!(by_route["/v1/news"], 1, "{today}");
    assert!(by_route.get("/mcp").is_none());
}

#[tokio::test]
async fn mds_mcp_serves_the_tools_on_stdio() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let app = common::spawn().await;
    let before = used(&app).await;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mds"))
        .arg("mcp")
        .env("MDS_API_KEY", &app.key)
        .env("MDS_BASE_URL", &app.base)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "search_companies", "arguments": {"limit": 2}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "get_company", "arguments": {"isin": "INE000000000"}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
               "params": {"name": "get_company", "arguments": {"isin": 12345}}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
               "params": {"name": "search_companies", "arguments": {"search": "x".repeat(70_000)}}}),
    ];
    for m in &messages {
        stdin.write_all(format!("{m}\n").as_bytes()).await.unwrap();
    }
    drop(stdin);
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut answers = Vec::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        answers.push(serde_json::from_str::<Value>(&line).unwrap());
    }
    assert!(child.wait().await.unwrap().success());
    // No answer to the notification.
    assert_eq!(answers.len(), 5, "{answers:?}");
    assert_eq!(answers[0]["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(answers[1]["result"]["structuredContent"]["data"].as_array().unwrap().len(), 2);
    assert_eq!(answers[2]["result"]["isError"], true);
    assert_eq!(answers[2]["result"]["structuredContent"]["code"], "not_found");
    assert_eq!(answers[3]["result"]["structuredContent"]["param"], "isin", "an input error, not a 404");
    let huge = &answers[4]["result"];
    assert_eq!(huge["isError"], true);
    assert!(huge["structuredContent"]["code"].is_string(), "{}", &huge.to_string()[..300]);
    assert!(huge["content"][0]["text"].as_str().unwrap().len() < 1_000, "{}", &huge.to_string()[..300]);
    assert_eq!(used(&app).await, before + 2);
}

#[tokio::test]
async fn a_tool_call_takes_its_routes_rate_limit_and_mcp_none() {
    let app = common::spawn().await;
    let tiny = Tier { name: TierName::parse("tiny").unwrap(), rate_limit_per_minute: 2, monthly_quota: 1000 };
    app.store.set_tier(&tiny, Utc::now()).await.unwrap();
    let key = common::new_key(&*app.store, "acme", "tiny", Environment::Live).await;
    let search = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                        "params": {"name": "search_companies", "arguments": {"limit": 1}}});
    for _ in 0..2 {
        let r: Value = post_as(&app, &key, &search).await.json().await.unwrap();
        assert_eq!(r["result"]["isError"], false, "{r}");
    }
    // The third in the minute is the route's 429, as a tool error.
    let r: Value = post_as(&app, &key, &search).await.json().await.unwrap();
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(r["result"]["structuredContent"]["code"], "rate_limited", "{r}");
    // The protocol's own messages take nothing from the limit.
    for _ in 0..5 {
        let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
        let r = post_as(&app, &key, &ping).await;
        assert_eq!(r.status(), 200);
    }
}

/// A call whose arguments break the tool's input schema is a tool result
/// with `isError` and a problem naming the argument (SEP-1303), calls no
/// route and so counts nothing; nothing is coerced, but `5.0` is 5.
#[tokio::test]
async fn input_errors_are_tool_results_naming_the_argument_and_count_nothing() {
    let app = common::spawn().await;
    let before = used(&app).await;
    for (tool, arguments, code, param) in [
        ("get_company", json!({"isin": 12345}), "invalid_parameter", "isin"),
        ("get_company", json!({}), "invalid_parameter", "isin"),
        ("get_company", json!({"isin": "INE002A01018", "history": "yes"}), "invalid_parameter", "history"),
        ("search_companies", json!({"limit": "5"}), "invalid_parameter", "limit"),
        ("search_companies", json!({"limit": 5.5}), "invalid_parameter", "limit"),
        ("search_companies", json!({"serach": "tata"}), "unknown_parameter", "serach"),
        ("get_usage", json!({"verbose": true}), "unknown_parameter", "verbose"),
    ] {
        let r = call(&app, tool, arguments.clone()).await;
        assert_eq!(r["isError"], true, "{tool} {arguments}: {r}");
        let problem = &r["structuredContent"];
        assert_eq!((problem["code"].as_str(), problem["param"].as_str()), (Some(code), Some(param)), "{r}");
        assert!(problem["detail"].as_str().unwrap().contains(param), "{r}");
    }
    assert_eq!(used(&app).await, before, "a refused call reaches no route");
    let page = call(&app, "search_companies", json!({"limit": 5.0})).await;
    assert_eq!(page["isError"], false, "{page}");
    assert_eq!(page["structuredContent"]["data"].as_array().unwrap().len(), 5);
    assert_eq!(used(&app).await, before + 1);
}

/// An argument of some 70 KB: the problem quotes a short prefix of it and
/// the result still has `structuredContent`.
#[tokio::test]
async fn a_huge_argument_is_echoed_as_a_short_prefix() {
    let app = common::spawn().await;
    let huge = "x".repeat(70_000);
    for arguments in [json!({"search": huge}), json!({"limit": huge}), json!({"isin": huge})] {
        let tool = if arguments.get("isin").is_some() { "get_company" } else { "search_companies" };
        let r = call(&app, tool, arguments).await;
        assert_eq!(r["isError"], true);
        assert!(r["structuredContent"]["code"].is_string(), "{}", &r.to_string()[..500]);
        let text = r["content"][0]["text"].as_str().unwrap();
        assert!(text.len() < 1_000, "{} characters: {}", text.len(), &text[..500]);
    }
}

/// `Origin`: absent is fine, one of `--mcp-allowed-origins` is fine, any
/// other is `403` (by default every one).
#[tokio::test]
async fn a_foreign_origin_is_403() {
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let send = |app: &TestApp, origin: Option<&str>| {
        let mut r = app.client.post(format!("{}/mcp", app.base)).bearer_auth(&app.key).json(&ping);
        if let Some(o) = origin {
            r = r.header("origin", o);
        }
        r.send()
    };
    let app = common::spawn().await;
    assert_eq!(send(&app, None).await.unwrap().status(), 200);
    assert_problem(send(&app, Some("http://evil.example")).await.unwrap(), 403, "forbidden_origin").await;
    let mut config = common::reloading_every(std::time::Duration::from_millis(100));
    config.mcp_allowed_origins = vec!["https://agent.example".into()];
    let app = common::spawn_with(common::Options { config, ..Default::default() }).await;
    assert_eq!(send(&app, Some("https://agent.example")).await.unwrap().status(), 200);
    assert_eq!(send(&app, None).await.unwrap().status(), 200);
    assert_problem(send(&app, Some("http://evil.example")).await.unwrap(), 403, "forbidden_origin").await;
    assert_problem(send(&app, Some("https://agent.example.evil.example")).await.unwrap(), 403, "forbidden_origin")
        .await;
}

/// Every tool declares an `outputSchema`; a 50-company page's text is at
/// most half the compact JSON of its `structuredContent`.
#[tokio::test]
async fn results_follow_the_output_schema_and_the_text_is_compact() {
    let app = common::spawn().await;
    let tools = rpc(&app, "tools/list", json!({})).await["result"]["tools"].clone();
    for t in tools.as_array().unwrap() {
        assert_eq!(t["outputSchema"]["type"], "object", "{}", t["name"]);
    }
    let page = call(&app, "search_companies", json!({"limit": 50})).await;
    let rows = page["structuredContent"]["data"].as_array().unwrap();
    assert_eq!(rows.len(), 50);
    let item = &tools[0]["outputSchema"]["properties"]["data"]["items"];
    let required = item["required"].as_array().unwrap();
    for field in required {
        assert!(rows[0].get(field.as_str().unwrap()).is_some(), "{field} in {}", rows[0]);
    }
    let json_len = page["structuredContent"].to_string().len();
    let text_len = page["content"][0]["text"].as_str().unwrap().len();
    eprintln!("50 companies: text {text_len} characters, compact JSON {json_len}");
    assert!(text_len * 2 <= json_len, "text {text_len} vs JSON {json_len}");
}

/// `list_corporate_actions` (contract 12.1): with `isin` it answers as
/// `/v1/companies/{isin}/actions` with that route's arguments, without it
/// as the calendar `/v1/actions`, each counted as the route it called;
/// arguments of the wrong type are results naming them, counted nothing.
#[tokio::test]
async fn list_corporate_actions_calls_the_company_s_route_or_the_calendar() {
    let app = common::spawn().await;
    let isin = get(&app, "/v1/companies?limit=1").await["data"][0]["isin"].as_str().unwrap().to_owned();
    let before = used(&app).await;
    let company = call(&app, "list_corporate_actions", json!({"isin": isin, "lineage": false, "type": "split"})).await;
    assert_eq!(company["isError"], false, "{company}");
    let route = get(&app, &format!("/v1/companies/{isin}/actions?lineage=false&type=split")).await;
    assert_eq!(company["structuredContent"], route);
    let calendar = call(&app, "list_corporate_actions", json!({"ex_date_from": "2026-07-01", "limit": 5})).await;
    assert_eq!(calendar["isError"], false, "{calendar}");
    assert_eq!(calendar["structuredContent"], get(&app, "/v1/actions?ex_date_from=2026-07-01&limit=5").await);
    // A route's own 400: the calendar takes no `lineage`.
    let wrong = call(&app, "list_corporate_actions", json!({"lineage": true})).await;
    assert_eq!(wrong["isError"], true);
    assert_eq!(wrong["structuredContent"]["code"], "unknown_parameter");
    assert_eq!(wrong["structuredContent"]["param"], "lineage");
    assert_eq!(used(&app).await, before + 5, "the tool's three calls and the two routes' own");
    let daily = get(&app, "/v1/usage/daily").await;
    let today = daily["days"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(today["by_route"]["/v1/companies/{isin}/actions"], 2, "{today}");
    assert_eq!(today["by_route"]["/v1/actions"], 3, "{today}");
    // Input errors: results naming the argument, counted nothing.
    let before = used(&app).await;
    for (args, param) in
        [(json!({"isin": 12345}), "isin"), (json!({"lineage": "no"}), "lineage"), (json!({"limt": 5}), "limt")]
    {
        let r = call(&app, "list_corporate_actions", args).await;
        assert_eq!(r["isError"], true, "{r}");
        assert_eq!(r["structuredContent"]["param"], param, "{r}");
    }
    assert_eq!(used(&app).await, before);
}

/// `get_prices` (contract 12.1, 14.2): answers as
/// `/v1/companies/{isin}/prices` with that route's arguments, on five real
/// days around TTL's split, counted as that route; its text is the bars as
/// a table, at most half the characters of the compact JSON; arguments
/// that break its schema are results naming them, counted nothing.
#[tokio::test]
async fn get_prices_answers_as_the_series_route() {
    use common::prices::{DAYS, TTL_NEW, TTL_OLD, loaded};

    let (app, _dir) = loaded().await;
    let tools = rpc(&app, "tools/list", json!({})).await["result"]["tools"].clone();
    let tool = tools.as_array().unwrap().iter().find(|t| t["name"] == "get_prices").unwrap().clone();
    assert_eq!(tool["inputSchema"]["required"], json!(["isin"]), "{tool}");
    let description = tool["description"].as_str().unwrap();
    assert!(!description.contains("text/csv") && !description.contains("304"), "said to a model: {description}");
    assert!(tool["outputSchema"]["properties"]["bars"].is_object(), "{tool}");
    let before = used(&app).await;
    let args = json!({"isin": TTL_NEW, "from": DAYS[0], "to": DAYS[4], "adjust": "split"});
    let r = call(&app, "get_prices", args).await;
    assert_eq!(r["isError"], false, "{r}");
    let route =
        get(&app, &format!("/v1/companies/{TTL_NEW}/prices?from={}&to={}&adjust=split", DAYS[0], DAYS[4])).await;
    assert_eq!(r["structuredContent"], route);
    assert!(route["adjustments"].as_array().is_some_and(|a| !a.is_empty()), "{route}");
    let text = r["content"][0]["text"].as_str().unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("close\tdate\t") && !lines[0].contains("delivery_qty"), "{text}");
    assert_eq!(lines.len(), 1 + DAYS.len() + 1, "a header, a line a bar, the rest: {text}");
    assert!(lines[1].contains(TTL_OLD) && lines[5].contains(TTL_NEW), "{text}");
    assert!(lines[6].contains("\"adjustments\"") && lines[6].contains("\"adjust\":\"split\""), "{text}");
    let json_len = r["structuredContent"].to_string().len();
    eprintln!("5 bars: text {} characters, compact JSON {json_len}", text.len());
    assert!(text.len() * 2 <= json_len, "text {} vs JSON {json_len}", text.len());
    let own = call(&app, "get_prices", json!({"isin": TTL_NEW, "from": DAYS[0], "lineage": false})).await;
    assert_eq!(own["structuredContent"]["bars"].as_array().map(Vec::len), Some(2), "{own}");
    // A route's own 400: `to` before `from`.
    let wrong = call(&app, "get_prices", json!({"isin": TTL_NEW, "from": DAYS[4], "to": DAYS[0]})).await;
    assert_eq!((wrong["isError"].clone(), wrong["structuredContent"]["param"].clone()), (json!(true), json!("to")));
    assert_eq!(used(&app).await, before + 4, "the tool's three calls and the route's own");
    let daily = get(&app, "/v1/usage/daily").await;
    let today = daily["days"].as_array().unwrap().last().unwrap().clone();
    assert!(today["by_route"]["/v1/companies/{isin}/prices"].as_u64() >= Some(4), "{today}");
    let before = used(&app).await;
    for (args, param) in [
        (json!({"from": DAYS[0]}), "isin"),
        (json!({"isin": 12345}), "isin"),
        (json!({"isin": TTL_NEW, "lineage": "no"}), "lineage"),
        (json!({"isin": TTL_NEW, "adjusted": "none"}), "adjusted"),
    ] {
        let r = call(&app, "get_prices", args).await;
        assert_eq!(r["isError"], true, "{r}");
        assert_eq!(r["structuredContent"]["param"], param, "{r}");
    }
    assert_eq!(used(&app).await, before);
}
