//! The admin API (contract section 9) through the real admin listener:
//! admin tokens, `/metrics` moved, API keys and admin tokens each refused
//! on the other's listener, the routes, the audit log, idempotent POSTs,
//! bodies refused by size (`413`) and type (`415`), the node's clock moved
//! under the admin API, and the billing scenario of issue 16 end to end on
//! two serving nodes.
//! Runs on PostgreSQL too (`MDS_TEST_BACKEND=postgres`).

use crate::common;

use chrono::Utc;
use common::{Options, TestApp, assert_problem, spawn_with};
use mds_domain::{Actor, AdminTokenName};
use serde_json::{Value, json};

/// The app with its admin listener, and an admin token named `billing`.
async fn spawn_admin() -> (TestApp, String) {
    let app = spawn_with(Options { admin: true, ..Options::default() }).await;
    let token = admin_token(&app, "billing").await;
    (app, token)
}

/// Makes an admin token as `mds admin-tokens create NAME` does.
async fn admin_token(app: &TestApp, name: &str) -> String {
    let name = AdminTokenName::parse(name).unwrap();
    let (token, _) = mds_node::admin::Audited::cli(&*app.store).create_admin_token(&name).await.unwrap();
    token.expose_secret().to_owned()
}

fn admin(app: &TestApp) -> &str {
    app.admin_base.as_deref().expect("admin listener")
}

/// A request to the admin listener with `token`.
fn req(app: &TestApp, method: reqwest::Method, path: &str, token: &str) -> reqwest::RequestBuilder {
    app.client.request(method, format!("{}{path}", admin(app))).bearer_auth(token)
}

async fn get(app: &TestApp, path: &str, token: &str) -> reqwest::Response {
    req(app, reqwest::Method::GET, path, token).send().await.unwrap()
}

#[tokio::test]
async fn metrics_move_to_the_admin_listener_and_tokens_are_checked() {
    let (app, token) = spawn_admin().await;
    // /metrics: on the admin listener only.
    assert_problem(app.get_open("/metrics").await, 404, "not_found").await;
    let m = app.client.get(format!("{}/metrics", admin(&app))).send().await.unwrap();
    assert_eq!(m.status(), 200);
    assert!(m.text().await.unwrap().contains("mds_"));
    // The public listener still serves the API, and no admin route.
    assert_eq!(app.get("/v1/companies?limit=1").await.status(), 200);
    assert_problem(app.get_with_key("/admin/v1/tiers", &token).await, 404, "not_found").await;

    // No token, an API key, a mistyped token, a revoked one: 401.
    let none = app.client.get(format!("{}/admin/v1/tiers", admin(&app))).send().await.unwrap();
    assert_eq!(none.headers()["www-authenticate"], "Bearer realm=\"mds-admin\"");
    assert_problem(none, 401, "missing_admin_token").await;
    assert_problem(get(&app, "/admin/v1/tiers", &app.key).await, 401, "invalid_admin_token").await;
    let mut typo = token.clone().into_bytes();
    typo[12] = if typo[12] == b'x' { b'y' } else { b'x' };
    assert_problem(get(&app, "/admin/v1/tiers", std::str::from_utf8(&typo).unwrap()).await, 401, "invalid_admin_token")
        .await;
    let other = admin_token(&app, "ops").await;
    assert_eq!(get(&app, "/admin/v1/tiers", &other).await.status(), 200);
    let name = AdminTokenName::parse("ops").unwrap();
    mds_node::admin::Audited::cli(&*app.store).revoke_admin_token(&name).await.unwrap();
    assert_problem(get(&app, "/admin/v1/tiers", &other).await, 401, "invalid_admin_token").await;

    // An admin token is no API key on the public listener.
    assert_problem(app.get_with_key("/v1/companies", &token).await, 401, "invalid_api_key").await;

    // A valid token: 200, tagged, 304 on a match, request id echoed.
    let r = req(&app, reqwest::Method::GET, "/admin/v1/tiers", &token)
        .header("x-request-id", "admin-test-1")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["x-request-id"], "admin-test-1");
    assert_eq!(r.headers()["cache-control"], "private, no-cache");
    let etag = r.headers()["etag"].to_str().unwrap().to_owned();
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["has_more"], false);
    assert_eq!(body["next_cursor"], Value::Null);
    let names: Vec<&str> = body["data"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["enterprise", "evaluation", "pro", "starter"]);
    let again =
        req(&app, reqwest::Method::GET, "/admin/v1/tiers", &token).header("if-none-match", &etag).send().await.unwrap();
    assert_eq!(again.status(), 304);
    // HEAD answers as GET without a body.
    let head = req(&app, reqwest::Method::HEAD, "/admin/v1/tiers", &token).send().await.unwrap();
    assert_eq!(head.status(), 200);
    assert_eq!(head.headers()["etag"], etag.as_str());
    // Unknown admin route: 404 problem (after the token check).
    assert_problem(get(&app, "/admin/v1/nope", &token).await, 404, "not_found").await;
    // A key in the query string is refused there too.
    let leaked = format!("/admin/v1/tiers?x={}", app.key);
    assert_problem(get(&app, &leaked, &token).await, 400, "api_key_in_query").await;
    app.stop().await;
}

#[tokio::test]
async fn admin_token_changes_are_audited() {
    let (app, _token) = spawn_admin().await;
    let log = app.store.audit_log(None, 10).await.unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!((log[0].actor.as_str(), log[0].action.as_str()), ("cli", "admin_token.create"));
    assert_eq!(log[0].target, "admin_token:billing");
    assert!(!log[0].after.as_ref().unwrap().to_string().contains("hash"), "no hash in the log");
    // The name is unique among tokens not revoked; `cli` is reserved.
    let name = AdminTokenName::parse("billing").unwrap();
    let dup = mds_node::admin::Audited::cli(&*app.store).create_admin_token(&name).await;
    assert!(matches!(dup, Err(mds_node::admin::AdminError::Conflict(_))), "{dup:?}");
    let cli = AdminTokenName::parse("cli").unwrap();
    let reserved = mds_node::admin::Audited::cli(&*app.store).create_admin_token(&cli).await;
    assert!(matches!(reserved, Err(mds_node::admin::AdminError::Invalid { param: "name", .. })), "{reserved:?}");
    mds_node::admin::Audited::cli(&*app.store).revoke_admin_token(&name).await.unwrap();
    // Revoked, its name may be given again.
    mds_node::admin::Audited::cli(&*app.store).create_admin_token(&name).await.unwrap();
    let actions: Vec<String> = app.store.audit_log(None, 10).await.unwrap().into_iter().map(|e| e.action).collect();
    assert_eq!(actions, ["admin_token.create", "admin_token.revoke", "admin_token.create"]);
    app.stop().await;
}

/// `mds serve --admin-listen ADDR` as a process: the admin API there with
/// a token made by `mds admin-tokens create`, `/metrics` there and not on
/// `--listen`.
#[tokio::test]
async fn serve_takes_admin_listen() {
    let dir = tempfile::tempdir().unwrap();
    let token = common::process::cli(&dir, &["admin-tokens", "create", "ops"]).trim().to_owned();
    let proc = common::process::start(&dir, &["serve", "--admin-listen", "127.0.0.1:0"]);
    let logs = proc.logs();
    let at = logs.find("admin=").expect("the admin address is logged") + "admin=".len();
    let admin = format!("http://{}", logs[at..].split_whitespace().next().unwrap());
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let r = client.get(format!("{admin}/admin/v1/tiers")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(client.get(format!("{admin}/metrics")).send().await.unwrap().status(), 200);
    assert_eq!(client.get(format!("{}/metrics", proc.base())).send().await.unwrap().status(), 404);
    assert_eq!(client.get(format!("{}/healthz", proc.base())).send().await.unwrap().status(), 200);
}

/// Sends `method path` with a JSON body to the admin listener.
async fn send(app: &TestApp, method: reqwest::Method, path: &str, token: &str, body: Value) -> reqwest::Response {
    req(app, method, path, token).json(&body).send().await.unwrap()
}

/// `POST /admin/v1/keys` with `body`, answered `201`: the issued key.
async fn issued(app: &TestApp, token: &str, body: Value) -> Value {
    let r = send(app, reqwest::Method::POST, "/admin/v1/keys", token, body).await;
    assert_eq!(r.status(), 201);
    r.json().await.unwrap()
}

async fn audit_count(app: &TestApp) -> usize {
    app.store.audit_log(None, 10_000).await.unwrap().len()
}

#[tokio::test]
async fn tiers_and_accounts() {
    use reqwest::Method;
    let (app, t) = spawn_admin().await;
    let put = |body: Value| send(&app, Method::PUT, "/admin/v1/tiers/gold", &t, body);
    let r = put(json!({"rate_limit_per_minute": 5, "monthly_quota": 100})).await;
    assert_eq!(r.status(), 201);
    assert_eq!(
        r.json::<Value>().await.unwrap(),
        json!({"name": "gold", "rate_limit_per_minute": 5, "monthly_quota": 100})
    );
    let r = put(json!({"rate_limit_per_minute": 6, "monthly_quota": 100})).await;
    assert_eq!(r.status(), 200);
    let before = audit_count(&app).await;
    let p = assert_problem(
        put(json!({"rate_limit_per_minute": 6, "monthly_quota": 1, "burst": 2})).await,
        400,
        "unknown_field",
    )
    .await;
    assert_eq!(p["param"], "burst");
    let p = assert_problem(put(json!({"rate_limit_per_minute": 6})).await, 400, "invalid_field").await;
    assert_eq!(p["param"], "monthly_quota");
    let p =
        assert_problem(put(json!({"rate_limit_per_minute": 0, "monthly_quota": 1})).await, 400, "invalid_field").await;
    assert_eq!(p["param"], "rate_limit_per_minute");
    let p = assert_problem(put(json!({"rate_limit_per_minute": "6", "monthly_quota": 1})).await, 400, "invalid_field")
        .await;
    assert_eq!(p["param"], "rate_limit_per_minute");
    let bad = req(&app, Method::PUT, "/admin/v1/tiers/gold", &t)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_problem(bad, 400, "invalid_body").await;
    let p = assert_problem(
        send(&app, Method::PUT, "/admin/v1/tiers/Bad%20Name", &t, json!({})).await,
        400,
        "invalid_parameter",
    )
    .await;
    assert_eq!(p["param"], "name");
    let r = send(&app, Method::POST, "/admin/v1/tiers", &t, json!({})).await;
    assert!(r.headers()["allow"].to_str().unwrap().contains("GET"));
    assert_problem(r, 405, "method_not_allowed").await;
    assert_eq!(audit_count(&app).await, before, "refused requests write nothing");
    let tiers: Value = get(&app, "/admin/v1/tiers", &t).await.json().await.unwrap();
    assert!(tiers["data"].as_array().unwrap().iter().any(|x| x["name"] == "gold" && x["rate_limit_per_minute"] == 6));

    // Accounts: create, conflict, read, lapse, restore.
    let r = send(&app, Method::POST, "/admin/v1/accounts", &t, json!({"name": "globex"})).await;
    assert_eq!(r.status(), 201);
    let a: Value = r.json().await.unwrap();
    assert_eq!((a["name"].as_str(), a["entitled"].as_bool()), (Some("globex"), Some(true)));
    let dup = send(&app, Method::POST, "/admin/v1/accounts", &t, json!({"name": "globex"})).await;
    assert_problem(dup, 409, "conflict").await;
    let p = assert_problem(
        send(&app, Method::POST, "/admin/v1/accounts", &t, json!({"name": "Not OK"})).await,
        400,
        "invalid_field",
    )
    .await;
    assert_eq!(p["param"], "name");
    let lapsed =
        send(&app, Method::POST, "/admin/v1/accounts", &t, json!({"name": "initech", "entitled": false})).await;
    assert_eq!(lapsed.json::<Value>().await.unwrap()["entitled"], false);
    assert_eq!(get(&app, "/admin/v1/accounts/globex", &t).await.json::<Value>().await.unwrap()["name"], "globex");
    assert_problem(get(&app, "/admin/v1/accounts/nobody", &t).await, 404, "not_found").await;
    let list: Value = get(&app, "/admin/v1/accounts", &t).await.json().await.unwrap();
    let names: Vec<&str> = list["data"].as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["acme", "globex", "initech"]);
    let p = assert_problem(
        send(&app, Method::PATCH, "/admin/v1/accounts/acme", &t, json!({"entitld": false})).await,
        400,
        "unknown_field",
    )
    .await;
    assert_eq!(p["param"], "entitld");
    assert_problem(
        send(&app, Method::PATCH, "/admin/v1/accounts/nobody", &t, json!({"entitled": false})).await,
        404,
        "not_found",
    )
    .await;
    // Lapsing acme holds its key to the evaluation tier on the public API
    // within a second; restoring gives its own tier back.
    let r = send(&app, Method::PATCH, "/admin/v1/accounts/acme", &t, json!({"entitled": false})).await;
    assert_eq!(r.json::<Value>().await.unwrap()["entitled"], false);
    wait_for_usage(&app, "evaluation").await;
    send(&app, Method::PATCH, "/admin/v1/accounts/acme", &t, json!({"entitled": true})).await;
    wait_for_usage(&app, "pro").await;
    app.stop().await;
}

/// Polls `/v1/usage` with the app's key until its `tier` is `tier`; panics
/// after the contract's second (with room).
async fn wait_for_usage(app: &TestApp, tier: &str) {
    let t = std::time::Instant::now();
    loop {
        let u: Value = app.get("/v1/usage").await.json().await.unwrap();
        if u["tier"] == tier {
            return;
        }
        assert!(t.elapsed() < std::time::Duration::from_secs(3), "tier never became {tier}: {u}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn keys_issue_list_show_revoke() {
    use reqwest::Method;
    let (app, t) = spawn_admin().await;
    let issue = |body: Value| send(&app, Method::POST, "/admin/v1/keys", &t, body);
    let r = issue(json!({"account": "acme", "tier": "starter", "environment": "test"})).await;
    assert_eq!(r.status(), 201);
    let k: Value = r.json().await.unwrap();
    let key = k["key"].as_str().unwrap().to_owned();
    let prefix = k["key_prefix"].as_str().unwrap().to_owned();
    assert!(key.starts_with("mds_test_") && key.starts_with(&prefix));
    assert_eq!(
        (k["account"].as_str(), k["tier"].as_str(), k["environment"].as_str()),
        (Some("acme"), Some("starter"), Some("test"))
    );
    assert!(k["revoked_at"].is_null());
    // It works on the public listener at once.
    assert_eq!(app.get_with_key("/v1/companies?limit=1", &key).await.status(), 200);

    let before = audit_count(&app).await;
    for (body, code, param) in [
        (json!({"account": "nobody", "tier": "pro", "environment": "live"}), "invalid_field", "account"),
        (json!({"account": "acme", "tier": "platinum", "environment": "live"}), "invalid_field", "tier"),
        (json!({"account": "acme", "tier": "pro"}), "invalid_field", "environment"),
        (json!({"account": "acme", "tier": "pro", "environment": "prod"}), "invalid_field", "environment"),
        (json!({"account": "acme", "tier": "pro", "environment": "live", "plan": "x"}), "unknown_field", "plan"),
    ] {
        let p = assert_problem(issue(body.clone()).await, 400, code).await;
        assert_eq!(p["param"], param, "{body}");
    }
    assert_eq!(audit_count(&app).await, before, "refused requests write nothing");

    let list: Value = get(&app, "/admin/v1/keys?account=acme", &t).await.json().await.unwrap();
    let prefixes: Vec<&str> =
        list["data"].as_array().unwrap().iter().map(|k| k["key_prefix"].as_str().unwrap()).collect();
    assert_eq!(prefixes.len(), 2);
    assert_eq!(prefixes[1], prefix);
    assert!(!list.to_string().contains(&key), "a list never shows a key");
    let p = assert_problem(get(&app, "/admin/v1/keys?account=nobody", &t).await, 400, "invalid_parameter").await;
    assert_eq!(p["param"], "account");
    assert_problem(get(&app, "/admin/v1/keys?acount=acme", &t).await, 400, "unknown_parameter").await;

    let one: Value = get(&app, &format!("/admin/v1/keys/{prefix}"), &t).await.json().await.unwrap();
    assert_eq!(one["key_prefix"], prefix.as_str());
    assert!(one.get("key").is_none());
    let p = assert_problem(get(&app, "/admin/v1/keys/not-a-prefix", &t).await, 400, "invalid_parameter").await;
    assert_eq!(p["param"], "prefix");
    assert_problem(get(&app, "/admin/v1/keys/mds_live_ZZZZZZZZ", &t).await, 404, "not_found").await;

    let r = req(&app, Method::DELETE, &format!("/admin/v1/keys/{prefix}"), &t).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let revoked: Value = r.json().await.unwrap();
    assert!(revoked["revoked_at"].is_string());
    // Refused on the public listener within a second.
    app.wait_for_status("/v1/companies?limit=1", &key, 401).await;
    // Revoking again answers the key as it is and logs nothing.
    let n = audit_count(&app).await;
    let again: Value =
        req(&app, Method::DELETE, &format!("/admin/v1/keys/{prefix}"), &t).send().await.unwrap().json().await.unwrap();
    assert_eq!(again["revoked_at"], revoked["revoked_at"]);
    assert_eq!(audit_count(&app).await, n);
    assert_problem(
        req(&app, Method::DELETE, "/admin/v1/keys/mds_live_ZZZZZZZZ", &t).send().await.unwrap(),
        404,
        "not_found",
    )
    .await;
    app.stop().await;
}

#[tokio::test]
async fn keys_expire_and_roll_through_the_admin_api() {
    use reqwest::Method;
    let (app, t) = spawn_admin().await;
    let issue = |body: Value| send(&app, Method::POST, "/admin/v1/keys", &t, body);
    let p = assert_problem(
        issue(json!({"account": "acme", "tier": "pro", "environment": "live", "expires_at": "2020-01-01T00:00:00Z"}))
            .await,
        400,
        "invalid_field",
    )
    .await;
    assert_eq!(p["param"], "expires_at");
    let p = assert_problem(
        issue(json!({"account": "acme", "tier": "pro", "environment": "live", "expires_at": "soon"})).await,
        400,
        "invalid_field",
    )
    .await;
    assert_eq!(p["param"], "expires_at");
    let r =
        issue(json!({"account": "acme", "tier": "pro", "environment": "live", "expires_at": "2099-01-01T00:00:00Z"}))
            .await;
    assert_eq!(r.status(), 201);
    let k: Value = r.json().await.unwrap();
    assert_eq!(k["expires_at"], "2099-01-01T00:00:00+00:00");
    let (old, prefix) = (k["key"].as_str().unwrap().to_owned(), k["key_prefix"].as_str().unwrap().to_owned());
    assert_eq!(app.get_with_key("/v1/companies?limit=1", &old).await.status(), 200);

    // Rolled with a window: both keys work.
    let roll = |prefix: &str, body: Value| {
        let path = format!("/admin/v1/keys/{prefix}/roll");
        let (app, t) = (&app, &t);
        async move { send(app, Method::POST, &path, t, body).await }
    };
    let r = roll(&prefix, json!({"expires_in": 3600})).await;
    assert_eq!(r.status(), 201);
    let rolled: Value = r.json().await.unwrap();
    let new = rolled["key"].as_str().unwrap().to_owned();
    assert!(new.starts_with(rolled["key_prefix"].as_str().unwrap()) && new != old);
    assert_eq!((rolled["account"].as_str(), rolled["tier"].as_str()), (Some("acme"), Some("pro")));
    assert!(rolled["expires_at"].is_null(), "the new key does not expire");
    assert_eq!(rolled["rolled"]["key_prefix"], prefix.as_str());
    assert!(rolled["rolled"]["expires_at"].is_string());
    assert_eq!(app.get_with_key("/v1/companies?limit=1", &new).await.status(), 200, "at once");
    assert_eq!(app.get_with_key("/v1/companies?limit=1", &old).await.status(), 200, "within its window");
    let audit: Value = get(&app, "/admin/v1/audit?limit=1", &t).await.json().await.unwrap();
    assert_eq!(audit["data"][0]["action"], "key.roll");
    assert!(!audit.to_string().contains(&new), "the audit log never shows a key");

    // Rolled with no window: the old key is refused within a second, the
    // new one keeps working; an expired key cannot be rolled again.
    let r = roll(rolled["key_prefix"].as_str().unwrap(), json!({"expires_in": 0})).await;
    assert_eq!(r.status(), 201);
    let newest: Value = r.json().await.unwrap();
    app.wait_for_status("/v1/companies?limit=1", &new, 401).await;
    let newest_key = newest["key"].as_str().unwrap();
    assert_eq!(app.get_with_key("/v1/companies?limit=1", newest_key).await.status(), 200);
    assert_problem(roll(rolled["key_prefix"].as_str().unwrap(), json!({})).await, 409, "conflict").await;
    let p = assert_problem(roll(&prefix, json!({"expires_in": -1})).await, 400, "invalid_field").await;
    assert_eq!(p["param"], "expires_in");
    assert_problem(roll(&prefix, json!({"overlap": 5})).await, 400, "unknown_field").await;
    assert_problem(roll("mds_live_ZZZZZZZZ", json!({})).await, 404, "not_found").await;
    app.stop().await;
}

#[tokio::test]
async fn the_audit_log_pages_newest_first_with_signed_cursors() {
    use reqwest::Method;
    let (app, t) = spawn_admin().await;
    for i in 0..7 {
        let r = send(&app, Method::POST, "/admin/v1/accounts", &t, json!({"name": format!("a{i}")})).await;
        assert_eq!(r.status(), 201);
    }
    send(
        &app,
        Method::PUT,
        "/admin/v1/tiers/pro",
        &t,
        json!({"rate_limit_per_minute": 700, "monthly_quota": 1_000_000}),
    )
    .await;
    let first: Value = get(&app, "/admin/v1/audit?limit=1", &t).await.json().await.unwrap();
    let e = &first["data"][0];
    assert_eq!(
        (e["actor"].as_str(), e["action"].as_str(), e["target"].as_str()),
        (Some("billing"), Some("tier.update"), Some("tier:pro"))
    );
    assert_eq!(e["before"]["rate_limit_per_minute"], 600);
    assert_eq!(e["after"]["rate_limit_per_minute"], 700);
    assert!(e["at"].as_str().unwrap().ends_with("+00:00"));
    // Page through with limit 3; an entry added meanwhile shifts nothing.
    let mut seen = Vec::new();
    let mut path = "/admin/v1/audit?limit=3".to_owned();
    loop {
        let page: Value = get(&app, &path, &t).await.json().await.unwrap();
        for e in page["data"].as_array().unwrap() {
            seen.push(format!("{} {}", e["action"], e["target"]));
        }
        if seen.len() == 3 {
            send(&app, Method::POST, "/admin/v1/accounts", &t, json!({"name": "late"})).await;
        }
        match page["next_cursor"].as_str() {
            Some(c) => {
                assert_eq!(page["has_more"], true);
                path = format!("/admin/v1/audit?limit=3&cursor={c}");
            }
            None => {
                assert_eq!(page["has_more"], false);
                break;
            }
        }
    }
    // 1 token, 7 accounts, 1 tier change: 9, oldest last.
    assert_eq!(seen.len(), 9, "{seen:?}");
    assert_eq!(seen[8], "\"admin_token.create\" \"admin_token:billing\"");
    let p = assert_problem(get(&app, "/admin/v1/audit?cursor=forged", &t).await, 400, "invalid_cursor").await;
    assert_eq!(p["param"], "cursor");
    assert_problem(get(&app, "/admin/v1/audit?limit=0", &t).await, 400, "invalid_parameter").await;
    // A news cursor is no audit cursor.
    let news: Value = app.get_json("/v1/news?limit=1", 200).await;
    let c = news["next_cursor"].as_str().unwrap();
    assert_problem(get(&app, &format!("/admin/v1/audit?cursor={c}"), &t).await, 400, "invalid_cursor").await;

    // The admin API's own document, behind the token.
    let doc = get(&app, "/admin/v1/openapi.json", &t).await;
    assert_eq!(doc.status(), 200);
    let doc: Value = doc.json().await.unwrap();
    assert!(doc["paths"]["/admin/v1/keys"]["post"].is_object());
    let anon = app.client.get(format!("{}/admin/v1/openapi.json", admin(&app))).send().await.unwrap();
    assert_problem(anon, 401, "missing_admin_token").await;
    app.stop().await;
}

/// Each row of the admin route table records in the audit log what it
/// says: every route called once, a changing one writes one of its row's
/// actions, a reading one writes nothing.
#[tokio::test]
async fn every_route_audits_what_its_row_says() {
    use mds_http::admin::routes::{ROUTES, find};
    use mds_http::route::Audit;
    use reqwest::Method;
    let (app, t) = spawn_admin().await;
    let prefix = issued(&app, &t, json!({"account": "acme", "tier": "pro", "environment": "live"})).await["key_prefix"]
        .as_str()
        .unwrap()
        .to_owned();
    let key = format!("/admin/v1/keys/{prefix}");
    let hook = json!({"url": "https://hooks.example.com/audited"});
    let hook: Value =
        app.call(Method::POST, &format!("{}/v1/webhooks", app.base), &app.key, Some(&hook)).await.json().await.unwrap();
    let disable = format!("/admin/v1/webhooks/{}/disable", hook["id"].as_str().unwrap());
    let calls = [
        (Method::GET, "/metrics", None),
        (Method::GET, "/admin/v1/openapi.json", None),
        (Method::PUT, "/admin/v1/tiers/gold", Some(json!({"rate_limit_per_minute": 5, "monthly_quota": 100}))),
        (Method::GET, "/admin/v1/tiers", None),
        (Method::POST, "/admin/v1/accounts", Some(json!({"name": "globex", "entitled": false}))),
        (Method::GET, "/admin/v1/accounts", None),
        (Method::PATCH, "/admin/v1/accounts/globex", Some(json!({"entitled": true}))),
        (Method::GET, "/admin/v1/accounts/globex", None),
        (Method::GET, "/admin/v1/accounts/acme/usage", None),
        (Method::POST, "/admin/v1/keys", Some(json!({"account": "globex", "tier": "gold", "environment": "test"}))),
        (Method::GET, "/admin/v1/keys", None),
        (Method::GET, &key, None),
        (Method::POST, &format!("{key}/roll"), Some(json!({"expires_in": 0}))),
        (Method::DELETE, &key, None),
        (Method::GET, "/admin/v1/audit", None),
        (Method::GET, "/admin/v1/webhooks", None),
        (Method::POST, &disable, Some(json!({"reason": "test"}))),
    ];
    let mut called = std::collections::HashSet::new();
    for (method, path, body) in calls {
        let before = audit_count(&app).await;
        let r = match body {
            Some(body) => send(&app, method.clone(), path, &t, body).await,
            None => req(&app, method.clone(), path, &t).send().await.unwrap(),
        };
        assert!(r.status().is_success(), "{method} {path}: {}", r.status());
        let found = find(path, &method);
        let row = found.route.expect("a row");
        called.insert((row.path, method.clone()));
        let log = app.store.audit_log(None, 10_000).await.unwrap(); // newest first
        let written: Vec<&str> = log[..log.len() - before].iter().map(|e| e.action.as_str()).collect();
        match found.operation.map_or(Audit::Nothing, |o| o.audit) {
            Audit::Nothing => assert!(written.is_empty(), "{method} {path} wrote {written:?}"),
            Audit::Records(actions) => {
                assert!(!written.is_empty(), "{method} {path} wrote nothing");
                assert!(written.iter().all(|a| actions.contains(a)), "{method} {path} wrote {written:?}");
            }
        }
    }
    let operations: usize = ROUTES.iter().map(|r| r.operations().count().max(1)).sum();
    assert_eq!(called.len(), operations, "every row's every method is called");
    app.stop().await;
}

/// `method path` with the bytes of `body`, its `Content-Type` and
/// `Idempotency-Key` as given (`None`: no such header).
async fn send_raw(
    app: &TestApp,
    token: &str,
    (method, path): (reqwest::Method, &str),
    content_type: Option<&str>,
    idempotency_key: Option<&str>,
    body: &str,
) -> reqwest::Response {
    let mut r = req(app, method, path, token).body(body.to_owned());
    for (name, value) in [("content-type", content_type), ("idempotency-key", idempotency_key)] {
        if let Some(value) = value {
            r = r.header(name, value);
        }
    }
    r.send().await.unwrap()
}

/// A body over 1 MiB is `413 payload_too_large` on every route that takes
/// one, with an `Idempotency-Key` or without (it was `413` typed
/// `/problems/invalid_parameter`), and changes nothing; its connection
/// closes (`Connection: close`).
#[tokio::test]
async fn bodies_over_a_mebibyte_are_payload_too_large() {
    use reqwest::Method;
    let (app, t) = spawn_admin().await;
    let before = audit_count(&app).await;
    let big = json!({"name": "globex", "pad": "x".repeat(5 << 20)}).to_string();
    let just_over = json!({"name": "globex", "pad": "x".repeat(1 << 20)}).to_string();
    for (method, path, key, body) in [
        (Method::POST, "/admin/v1/accounts", None, &big),
        (Method::POST, "/admin/v1/accounts", Some("big-1"), &big),
        (Method::PUT, "/admin/v1/tiers/gold", None, &big),
        (Method::POST, "/admin/v1/keys", Some("big-2"), &just_over),
        (Method::PATCH, "/admin/v1/accounts/acme", None, &just_over),
    ] {
        let r = send_raw(&app, &t, (method.clone(), path), Some("application/json"), key, body).await;
        // The body was left unread: the connection closes, and says so (a
        // client that pooled it would send its next request into a close).
        assert_eq!(r.headers().get("connection").map(|v| v.as_bytes()), Some(&b"close"[..]), "{method} {path}");
        let p = assert_problem(r, 413, "payload_too_large").await;
        assert_eq!(p["title"], "Payload too large", "{method} {path}");
    }
    assert_eq!(audit_count(&app).await, before, "refused requests write nothing");
    // The key of a refused request was not claimed.
    let small = json!({"name": "globex"}).to_string();
    let accounts = (Method::POST, "/admin/v1/accounts");
    let r = send_raw(&app, &t, accounts, Some("application/json"), Some("big-1"), &small).await;
    assert_eq!(r.status(), 201);
    assert_eq!(r.headers().get("connection"), None, "a body read keeps its connection alive");
    app.stop().await;
}

/// A JSON body not sent as JSON (`text/plain`, a form, no `Content-Type`)
/// is `415 unsupported_media_type` (it was read as JSON), and changes
/// nothing; `application/json` with parameters, or a `+json` type, is
/// JSON; an empty body needs no type.
#[tokio::test]
async fn json_bodies_must_be_sent_as_json() {
    use reqwest::Method;
    let (app, t) = spawn_admin().await;
    let before = audit_count(&app).await;
    let account = json!({"name": "globex"}).to_string();
    let tier = json!({"rate_limit_per_minute": 5, "monthly_quota": 100}).to_string();
    for (method, path, body) in [
        (Method::POST, "/admin/v1/accounts", &account),
        (Method::PUT, "/admin/v1/tiers/gold", &tier),
        (Method::PATCH, "/admin/v1/accounts/acme", &json!({"entitled": false}).to_string()),
    ] {
        for content_type in [Some("text/plain"), Some("application/x-www-form-urlencoded"), Some("json"), None] {
            let r = send_raw(&app, &t, (method.clone(), path), content_type, None, body).await;
            assert_problem(r, 415, "unsupported_media_type").await;
        }
    }
    let accounts = (Method::POST, "/admin/v1/accounts");
    let refused = send_raw(&app, &t, accounts.clone(), Some("text/plain"), Some("typed-1"), &account).await;
    assert_problem(refused, 415, "unsupported_media_type").await;
    assert_eq!(audit_count(&app).await, before, "refused requests write nothing");
    // JSON by another spelling runs; the key of the refused request is free.
    let r = send_raw(&app, &t, accounts, Some("Application/JSON; charset=utf-8"), Some("typed-1"), &account).await;
    assert_eq!(r.status(), 201);
    let tiers = (Method::PUT, "/admin/v1/tiers/gold");
    let r = send_raw(&app, &t, tiers, Some("application/merge-patch+json"), None, &tier).await;
    assert_eq!(r.status(), 201);
    // A roll takes an empty body, without a type.
    let issued = issued(&app, &t, json!({"account": "acme", "tier": "pro", "environment": "live"})).await;
    let path = format!("/admin/v1/keys/{}/roll", issued["key_prefix"].as_str().unwrap());
    assert_eq!(req(&app, Method::POST, &path, &t).send().await.unwrap().status(), 201);
    app.stop().await;
}

/// The admin API reads the node's clock (`NodeConfig::clock`), as the rest
/// of the node does: a key's `created_at`, an expiry in the past, a roll's
/// window, the audit log's times and how long an `Idempotency-Key` is kept
/// all follow it, not the wall clock.
#[tokio::test]
async fn the_admin_api_reads_the_nodes_clock() {
    use reqwest::Method;
    let at = |s: &str| mds_domain::time::parse_rfc3339(s).unwrap();
    let time_of = |v: &Value| at(v.as_str().expect("a time"));
    let now = at("2031-03-01T10:00:00Z");
    let clock = std::sync::Arc::new(mds_limits::ManualClock::new(now));
    let mut config = common::reloading_every(std::time::Duration::from_millis(100));
    config.node.clock = clock.clone();
    let app = spawn_with(Options { admin: true, config, ..Options::default() }).await;
    let t = admin_token(&app, "billing").await;
    let issue = |body: Value| send(&app, Method::POST, "/admin/v1/keys", &t, body);

    // An expiry after the wall clock's now but before the node's is past.
    let past = json!({"account": "acme", "tier": "pro", "environment": "live", "expires_at": "2030-01-01T00:00:00Z"});
    let p = assert_problem(issue(past).await, 400, "invalid_field").await;
    assert_eq!(p["param"], "expires_at");
    let k = issued(&app, &t, json!({"account": "acme", "tier": "pro", "environment": "live"})).await;
    assert_eq!(time_of(&k["created_at"]), now);

    // A roll's window runs from the node's now.
    let path = format!("/admin/v1/keys/{}/roll", k["key_prefix"].as_str().unwrap());
    let rolled: Value = send(&app, Method::POST, &path, &t, json!({"expires_in": 3600})).await.json().await.unwrap();
    assert_eq!(time_of(&rolled["rolled"]["expires_at"]), now + chrono::Duration::hours(1));
    let audit: Value = get(&app, "/admin/v1/audit?limit=1", &t).await.json().await.unwrap();
    assert_eq!(time_of(&audit["data"][0]["at"]), now);

    // An Idempotency-Key is kept 24 hours of the node's time.
    let create = |name: &str| {
        req(&app, Method::POST, "/admin/v1/accounts", &t)
            .header("idempotency-key", "day-1")
            .json(&json!({"name": name}))
    };
    assert_eq!(create("globex").send().await.unwrap().status(), 201);
    clock.advance(chrono::Duration::hours(23));
    assert_problem(create("initech").send().await.unwrap(), 409, "idempotency_conflict").await;
    clock.advance(chrono::Duration::hours(2));
    let r = create("initech").send().await.unwrap();
    assert_eq!(r.status(), 201, "the key is free again after 24 hours");
    assert_eq!(time_of(&r.json::<Value>().await.unwrap()["created_at"]), now + chrono::Duration::hours(25));
    app.stop().await;
}

/// `POST /admin/v1/keys` with `Idempotency-Key`.
async fn issue_once(app: &TestApp, token: &str, idem: &str, body: &Value) -> reqwest::Response {
    req(app, reqwest::Method::POST, "/admin/v1/keys", token)
        .header("idempotency-key", idem)
        .json(body)
        .send()
        .await
        .unwrap()
}

async fn acme_keys(app: &TestApp) -> usize {
    app.store.keys(Some(&mds_domain::AccountName::parse("acme").unwrap())).await.unwrap().len()
}

#[tokio::test]
async fn idempotent_posts_answer_once() {
    let (app, t) = spawn_admin().await;
    let body = json!({"account": "acme", "tier": "pro", "environment": "live"});
    let before = acme_keys(&app).await;
    let first = issue_once(&app, &t, "8e0b-retry-1", &body).await;
    assert_eq!(first.status(), 201);
    assert!(first.headers().get("idempotent-replayed").is_none());
    let first: Value = first.json().await.unwrap();
    // The retry gets the same answer, the key shown again, and nothing is
    // issued again.
    let retry = issue_once(&app, &t, "8e0b-retry-1", &body).await;
    assert_eq!(retry.status(), 201);
    assert_eq!(retry.headers()["idempotent-replayed"], "true");
    assert_eq!(retry.json::<Value>().await.unwrap(), first);
    assert_eq!(acme_keys(&app).await, before + 1);
    let key = first["key"].as_str().unwrap();
    // Neither the key nor the answer is stored in the clear.
    if app.url.backend() == mds_store::url::Backend::Sqlite {
        let url = app.url.expose();
        let path = url.trim_start_matches("sqlite://").split('?').next().unwrap();
        let db = std::fs::read(path).unwrap_or_default();
        let wal = std::fs::read(format!("{path}-wal")).unwrap_or_default();
        assert!(!db.is_empty(), "the database file is read");
        for bytes in [&db, &wal] {
            assert!(!bytes.windows(key.len()).any(|w| w == key.as_bytes()), "the key is stored in the clear");
        }
    }
    // The same key with another body: 409.
    let other = json!({"account": "acme", "tier": "starter", "environment": "live"});
    assert_problem(issue_once(&app, &t, "8e0b-retry-1", &other).await, 409, "idempotency_conflict").await;
    // The same key on another route: 409.
    let acct = req(&app, reqwest::Method::POST, "/admin/v1/accounts", &t)
        .header("idempotency-key", "8e0b-retry-1")
        .json(&json!({"name": "x1"}))
        .send()
        .await
        .unwrap();
    assert_problem(acct, 409, "idempotency_conflict").await;
    // Another token's key of the same spelling is its own.
    let other_token = admin_token(&app, "signup").await;
    assert_eq!(issue_once(&app, &other_token, "8e0b-retry-1", &body).await.status(), 201);
    assert_eq!(acme_keys(&app).await, before + 2);
    // A refusal is replayed as a refusal (with the new request's id).
    let bad = json!({"account": "nobody", "tier": "pro", "environment": "live"});
    assert_problem(issue_once(&app, &t, "bad-1", &bad).await, 400, "invalid_field").await;
    let p = assert_problem(issue_once(&app, &t, "bad-1", &bad).await, 400, "invalid_field").await;
    assert_eq!(p["param"], "account");
    // A malformed key is refused.
    let r = issue_once(&app, &t, &"x".repeat(300), &body).await;
    assert_problem(r, 400, "invalid_parameter").await;
    // Without the header, every POST runs.
    send(&app, reqwest::Method::POST, "/admin/v1/keys", &t, body.clone()).await;
    send(&app, reqwest::Method::POST, "/admin/v1/keys", &t, body.clone()).await;
    assert_eq!(acme_keys(&app).await, before + 4);
    app.stop().await;
}

#[tokio::test]
async fn concurrent_posts_with_one_idempotency_key_issue_one_key() {
    let (app, t) = spawn_admin().await;
    let app = std::sync::Arc::new(app);
    let body = json!({"account": "acme", "tier": "pro", "environment": "test"});
    let before = acme_keys(&app).await;
    let audit_before = audit_count(&app).await;
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let (app, t, body) = (app.clone(), t.clone(), body.clone());
        set.spawn(async move {
            let r = issue_once(&app, &t, "one-key-please", &body).await;
            assert_eq!(r.status(), 201);
            r.json::<Value>().await.unwrap()["key"].as_str().unwrap().to_owned()
        });
    }
    let keys: std::collections::HashSet<String> = set.join_all().await.into_iter().collect();
    assert_eq!(keys.len(), 1, "every request got the one key");
    assert_eq!(acme_keys(&app).await, before + 1, "one key issued");
    assert_eq!(audit_count(&app).await, audit_before + 1);
}

#[tokio::test]
async fn idempotency_claims_expire_after_a_day() {
    let (app, _t) = spawn_admin().await;
    let actor = Actor::Token(AdminTokenName::parse("billing").unwrap());
    let t0 = Utc::now();
    use mds_node::idempotency::{Claim, claim, complete};
    let Claim::Run(claimed) = claim(&*app.store, &actor, "k", "POST", "/admin/v1/accounts", b"{}", t0).await.unwrap()
    else {
        panic!("first claim runs")
    };
    complete(&*app.store, &claimed, 201, b"{\"a\":1}").await.unwrap();
    let later = t0 + chrono::Duration::hours(23);
    let again = claim(&*app.store, &actor, "k", "POST", "/admin/v1/accounts", b"{}", later).await.unwrap();
    assert_eq!(again, Claim::Replay { status: 201, body: b"{\"a\":1}".to_vec() });
    let other = claim(&*app.store, &actor, "k", "POST", "/admin/v1/accounts", b"{\"b\":2}", later).await.unwrap();
    assert_eq!(other, Claim::OtherRequest);
    // A claim left without an answer (its node died) is taken over by a
    // retry of the same request after ten minutes, not before.
    let Claim::Run(_) = claim(&*app.store, &actor, "lost", "POST", "/admin/v1/keys", b"{}", t0).await.unwrap() else {
        panic!("first claim runs")
    };
    let soon = claim(&*app.store, &actor, "lost", "POST", "/admin/v1/keys", b"{}", t0 + chrono::Duration::minutes(1));
    assert_eq!(soon.await.unwrap(), Claim::Running);
    let other =
        claim(&*app.store, &actor, "lost", "POST", "/admin/v1/keys", b"{1}", t0 + chrono::Duration::minutes(11));
    assert_eq!(other.await.unwrap(), Claim::OtherRequest);
    let late = claim(&*app.store, &actor, "lost", "POST", "/admin/v1/keys", b"{}", t0 + chrono::Duration::minutes(11));
    assert!(matches!(late.await.unwrap(), Claim::Run(_)));
    let after = claim(&*app.store, &actor, "lost", "POST", "/admin/v1/keys", b"{}", t0 + chrono::Duration::minutes(12));
    assert_eq!(after.await.unwrap(), Claim::Running, "taken over once");
    // After 24 h the key is free again.
    let day_after = t0 + chrono::Duration::hours(25);
    let fresh = claim(&*app.store, &actor, "k", "POST", "/admin/v1/accounts", b"{\"b\":2}", day_after).await.unwrap();
    assert!(matches!(fresh, Claim::Run(_)), "{fresh:?}");
    app.stop().await;
}

#[tokio::test]
async fn account_usage_for_billing() {
    use reqwest::Method;
    let (app, t) = spawn_admin().await;
    send(&app, Method::POST, "/admin/v1/accounts", &t, json!({"name": "globex"})).await;
    let issued = issued(&app, &t, json!({"account": "globex", "tier": "starter", "environment": "live"})).await;
    let key = issued["key"].as_str().unwrap();
    for _ in 0..3 {
        assert_eq!(app.get_with_key("/v1/companies?limit=1", key).await.status(), 200);
    }
    let news = app.get_with_key("/v1/news?limit=1", key).await;
    let etag = news.headers()["etag"].to_str().unwrap().to_owned();
    let again = app
        .client
        .get(format!("{}/v1/news?limit=1", app.base))
        .bearer_auth(key)
        .header("if-none-match", etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    let u: Value = get(&app, "/admin/v1/accounts/globex/usage", &t).await.json().await.unwrap();
    assert_eq!(u["account"], "globex");
    assert_eq!(u["has_more"], false);
    let k = &u["data"][0];
    assert_eq!(k["key_prefix"], issued["key_prefix"]);
    assert_eq!((k["requests"].as_u64(), k["not_modified"].as_u64()), (Some(4), Some(1)));
    assert_eq!(k["by_route"]["/v1/companies"], 3);
    assert_eq!(k["by_route"]["/v1/news"], 1);
    assert_eq!(k["by_route"]["/v1/news/{slug}"], 0, "every data route present");
    assert_eq!(k["quota"], 50_000);
    // The same figures as the key holder's own report.
    let own: Value = app.get_with_key("/v1/usage", key).await.json().await.unwrap();
    assert_eq!(own["current_month"]["requests"], k["requests"]);
    // A lapsed account: the evaluation tier's quota is in force.
    send(&app, Method::PATCH, "/admin/v1/accounts/globex", &t, json!({"entitled": false})).await;
    let u: Value = get(&app, "/admin/v1/accounts/globex/usage", &t).await.json().await.unwrap();
    assert_eq!(u["data"][0]["quota"], 1_000);
    assert_eq!(u["entitled"], false);
    // Last month: zeros, keys created since left out.
    let last = mds_domain::usage::BillingMonth::of(Utc::now()).prev();
    let path = format!("/admin/v1/accounts/globex/usage?month={}", last.start().format("%Y-%m"));
    let past: Value = get(&app, &path, &t).await.json().await.unwrap();
    assert_eq!(past["data"].as_array().unwrap().len(), 0);
    let p =
        assert_problem(get(&app, "/admin/v1/accounts/globex/usage?month=2001-01", &t).await, 400, "invalid_parameter")
            .await;
    assert_eq!(p["param"], "month");
    assert_problem(get(&app, "/admin/v1/accounts/globex/usage?mnth=2001-01", &t).await, 400, "unknown_parameter").await;
    assert_problem(get(&app, "/admin/v1/accounts/nobody/usage", &t).await, 404, "not_found").await;
    app.stop().await;
}

/// A key holder on the public API: what it sent and was answered, by
/// route template, the counted requests (`200`) and the free `304`s, as
/// billing must read them.
struct Holder {
    client: reqwest::Client,
    key: String,
    by_route: std::collections::BTreeMap<&'static str, u64>,
    not_modified: u64,
}

impl Holder {
    fn new(client: &reqwest::Client, key: &str) -> Holder {
        Holder { client: client.clone(), key: key.to_owned(), by_route: Default::default(), not_modified: 0 }
    }

    /// `GET path` (of route `route`) on `base`, `If-None-Match: etag` when
    /// given; asserts the answer is `expect` and tallies it.
    async fn get(
        &mut self,
        base: &str,
        route: &'static str,
        path: &str,
        etag: Option<&str>,
        expect: u16,
    ) -> reqwest::Response {
        let mut rb = self.client.get(format!("{base}{path}")).bearer_auth(&self.key);
        if let Some(tag) = etag {
            rb = rb.header("if-none-match", tag);
        }
        let r = rb.send().await.unwrap();
        assert_eq!(r.status().as_u16(), expect, "GET {path} on {base}");
        match expect {
            200 => *self.by_route.entry(route).or_default() += 1,
            304 => self.not_modified += 1,
            _ => {}
        }
        r
    }

    fn requests(&self) -> u64 {
        self.by_route.values().sum()
    }
}

/// `GET /v1/usage` on `base` with `key`: its status, the per-minute limit
/// the admission of this very request applied (`X-RateLimit-Limit`), and
/// the body.
async fn usage_on(client: &reqwest::Client, base: &str, key: &str) -> (u16, String, Value) {
    let r = client.get(format!("{base}/v1/usage")).bearer_auth(key).send().await.unwrap();
    let status = r.status().as_u16();
    let limit = r.headers().get("x-ratelimit-limit").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
    (status, limit, r.json().await.unwrap())
}

/// Polls `/v1/usage` on `base` until the key is enforced at `tier` with
/// `rate` requests a minute (its own report and the limit its admission
/// applied agree); returns how long it took from `since`, or panics once
/// `deadline` has passed since `since`. A `429 rate_limited` on the way is
/// the evaluation tier's 10 a minute refusing the polling itself, and
/// polled past.
async fn held_to(
    client: &reqwest::Client,
    base: &str,
    key: &str,
    tier: &str,
    rate: u64,
    since: std::time::Instant,
    deadline: std::time::Duration,
) -> std::time::Duration {
    loop {
        let (status, limit, u) = usage_on(client, base, key).await;
        let elapsed = since.elapsed();
        match status {
            200 if u["tier"] == tier && u["rate_limit_per_minute"] == rate && limit == rate.to_string() => {
                return elapsed;
            }
            200 => {}
            429 => assert_eq!(u["code"], "rate_limited", "{u}"),
            s => panic!("GET /v1/usage on {base}: {s} {u}"),
        }
        assert!(elapsed < deadline, "{base}: not held to {tier} after {elapsed:?}: {u}, limit {limit}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// The billing scenario of issue 16, end to end, through the real admin
/// listener and two serving nodes on one store (each following it at the
/// default 250 ms): an account and its key made over HTTP, the key used on
/// both nodes (several routes and `304`s), the account's entitlement lapsed
/// (the key held to the evaluation tier on every node within 1 s of the
/// answer) and restored, the month's usage per route read back exactly as
/// sent once the meters flush, the key rolled with a 2 s window (the new
/// key at once, the old one inside the window and refused after it, on
/// both nodes), and the audit log of it all.
#[tokio::test]
async fn billing_scenario_end_to_end_on_two_nodes() {
    use reqwest::Method;
    use std::time::{Duration, Instant};
    let app = spawn_with(Options { admin: true, config: mds_http::HttpConfig::default(), ..Options::default() }).await;
    let t = admin_token(&app, "billing").await;
    let other = common::Node::start(app.store.clone(), mds_http::HttpConfig::default()).await;
    let nodes = [app.base.clone(), other.base.clone()];
    let client = &app.client;

    // Sign-up: an account and a key, over the admin API.
    let r = send(&app, Method::POST, "/admin/v1/accounts", &t, json!({"name": "initrode"})).await;
    assert_eq!(r.status(), 201);
    let r = req(&app, Method::POST, "/admin/v1/keys", &t)
        .header("idempotency-key", "signup-initrode-1")
        .json(&json!({"account": "initrode", "tier": "pro", "environment": "live"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let issued: Value = r.json().await.unwrap();
    let key = issued["key"].as_str().unwrap().to_owned();
    let prefix = issued["key_prefix"].as_str().unwrap().to_owned();

    // The key on the public API of both nodes: several routes, and a 304
    // on each node (free, but reported as not_modified).
    let isin = mds_import::demo_companies()[0].isin.as_str().to_owned();
    let slug = mds_import::demo_articles()[0].slug.as_str().to_owned();
    let detail = format!("/v1/companies/{isin}");
    let article = format!("/v1/news/{slug}");
    let mut holder = Holder::new(client, &key);
    let (a, b) = (nodes[0].as_str(), nodes[1].as_str());
    for _ in 0..3 {
        holder.get(a, "/v1/companies", "/v1/companies?limit=2", None, 200).await;
    }
    holder.get(a, "/v1/companies/{isin}", &detail, None, 200).await;
    let news = holder.get(a, "/v1/news", "/v1/news?limit=1", None, 200).await;
    let tag = news.headers()["etag"].to_str().unwrap().to_owned();
    holder.get(a, "/v1/news", "/v1/news?limit=1", Some(&tag), 304).await;
    for _ in 0..2 {
        holder.get(b, "/v1/news/{slug}", &article, None, 200).await;
    }
    holder.get(b, "/v1/companies", "/v1/companies?limit=1", None, 200).await;
    let one = holder.get(b, "/v1/companies/{isin}", &detail, None, 200).await;
    let tag = one.headers()["etag"].to_str().unwrap().to_owned();
    holder.get(b, "/v1/companies/{isin}", &detail, Some(&tag), 304).await;
    for base in &nodes {
        let (status, _, u) = usage_on(client, base, &key).await;
        assert_eq!((status, u["tier"].as_str(), u["entitled"].as_bool()), (200, Some("pro"), Some(true)));
    }

    // Billing lapses the account: held to the evaluation tier on every node
    // within 1 s of the PATCH's answer.
    let r = send(&app, Method::PATCH, "/admin/v1/accounts/initrode", &t, json!({"entitled": false})).await;
    assert_eq!(r.status(), 200);
    let lapsed_at = Instant::now();
    assert_eq!(r.json::<Value>().await.unwrap()["entitled"], false);
    let second = Duration::from_secs(1);
    let (ta, tb) = tokio::join!(
        held_to(client, a, &key, "evaluation", 10, lapsed_at, second),
        held_to(client, b, &key, "evaluation", 10, lapsed_at, second),
    );
    assert!(ta.max(tb) < second, "held to evaluation after {ta:?} and {tb:?}");
    for base in &nodes {
        let (status, _, u) = usage_on(client, base, &key).await;
        assert_eq!(status, 200, "{u}");
        assert_eq!((u["plan_tier"].as_str(), u["entitled"].as_bool()), (Some("pro"), Some(false)));
        assert_eq!(u["current_month"]["quota"], 1_000, "the evaluation tier's quota");
    }
    // Restored: its own tier again on every node.
    let r = send(&app, Method::PATCH, "/admin/v1/accounts/initrode", &t, json!({"entitled": true})).await;
    assert_eq!(r.status(), 200);
    let restored_at = Instant::now();
    let (ta, tb) = tokio::join!(
        held_to(client, a, &key, "pro", 600, restored_at, second),
        held_to(client, b, &key, "pro", 600, restored_at, second),
    );
    assert!(ta.max(tb) < second, "back to pro after {ta:?} and {tb:?}");

    // The month's usage per route, as billing reads it: exactly what was
    // sent, once node b's meter has flushed (every second).
    let usage_path = "/admin/v1/accounts/initrode/usage";
    let waited = Instant::now();
    let u = loop {
        let u: Value = get(&app, usage_path, &t).await.json().await.unwrap();
        if u["data"][0]["requests"].as_u64() >= Some(holder.requests()) || waited.elapsed() > Duration::from_secs(5) {
            break u;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!((u["account"].as_str(), u["entitled"].as_bool()), (Some("initrode"), Some(true)));
    assert_eq!(u["data"].as_array().unwrap().len(), 1, "{u}");
    let k = &u["data"][0];
    assert_eq!((k["key_prefix"].as_str(), k["plan_tier"].as_str()), (Some(prefix.as_str()), Some("pro")));
    assert_eq!(k["quota"], 1_000_000, "the quota in force: pro's again");
    assert_eq!(k["requests"], holder.requests(), "{k}");
    assert_eq!(k["not_modified"], holder.not_modified, "{k}");
    let mut expected: std::collections::BTreeMap<String, u64> =
        mds_http::routes::data_routes().iter().map(|r| ((*r).to_owned(), 0)).collect();
    for (route, n) in &holder.by_route {
        *expected.get_mut(*route).expect("a data route") += n;
    }
    let got: std::collections::BTreeMap<String, u64> =
        serde_json::from_value(k["by_route"].clone()).expect("by_route maps routes to counts");
    assert_eq!(got, expected);
    // Both nodes' reports of the key's own month agree with billing's,
    // each within the 2 s the contract gives another node's counts to show
    // (a node keeps the store's figures until its reload sees the usage
    // generation move: asked once, at once, a node could still say less).
    let billed = Instant::now();
    for base in &nodes {
        loop {
            let (status, _, own) = usage_on(client, base, &key).await;
            assert_eq!(status, 200, "{own}");
            if own["current_month"]["requests"] == holder.requests() {
                break;
            }
            assert!(billed.elapsed() < Duration::from_secs(2), "{base} still says {own} after 2 s");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    // Roll the key with a 2 s window: the new key works at once, the old
    // one inside the window, and is refused after it, on both nodes.
    let r = send(&app, Method::POST, &format!("/admin/v1/keys/{prefix}/roll"), &t, json!({"expires_in": 2})).await;
    assert_eq!(r.status(), 201);
    let rolled: Value = r.json().await.unwrap();
    let new = rolled["key"].as_str().unwrap().to_owned();
    let ends = mds_domain::time::parse_rfc3339(rolled["rolled"]["expires_at"].as_str().unwrap()).unwrap();
    for base in &nodes {
        let r = client.get(format!("{base}/v1/companies?limit=1")).bearer_auth(&new).send().await.unwrap();
        assert_eq!(r.status(), 200, "the new key on {base}");
        let r = client.get(format!("{base}/v1/companies?limit=1")).bearer_auth(&key).send().await.unwrap();
        assert_eq!(r.status(), 200, "the old key inside its window on {base}");
        assert!(Utc::now() < ends, "the window was not over when the old key was answered");
    }
    for base in &nodes {
        loop {
            let r = client.get(format!("{base}/v1/companies?limit=1")).bearer_auth(&key).send().await.unwrap();
            let answered = Utc::now();
            if r.status() == 401 {
                assert!(answered >= ends, "{base} refused the old key before its window ended");
                assert_problem(r, 401, "invalid_api_key").await;
                break;
            }
            assert_eq!(r.status(), 200);
            assert!(
                answered < ends + chrono::Duration::seconds(1),
                "{base} still took the old key 1 s after its window"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let r = client.get(format!("{base}/v1/companies?limit=1")).bearer_auth(&new).send().await.unwrap();
        assert_eq!(r.status(), 200, "the new key after the window on {base}");
    }

    // The audit log tells the story, under the token's name.
    let log: Value = get(&app, "/admin/v1/audit?limit=5", &t).await.json().await.unwrap();
    let story: Vec<(String, String)> = log["data"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .map(|e| {
            assert_eq!(e["actor"], "billing");
            (e["action"].as_str().unwrap().to_owned(), e["target"].as_str().unwrap().to_owned())
        })
        .collect();
    let acct = || "account:initrode".to_owned();
    let k = format!("key:{prefix}");
    assert_eq!(
        story,
        [
            ("account.create".to_owned(), acct()),
            ("key.create".to_owned(), k.clone()),
            ("account.update".to_owned(), acct()),
            ("account.update".to_owned(), acct()),
            ("key.roll".to_owned(), k),
        ]
    );
    other.stop().await;
    app.stop().await;
}

/// Walks an admin list from `path` (which has its `?` already) a page at a
/// time, following `next_cursor` to the end; `during` runs after the first
/// page (to change the list while it is walked). Returns `field` of every
/// item, in order, and the number of pages. Asserts the list shape on
/// every page: `has_more` exactly when `next_cursor` is a string.
async fn walk<F, Fut>(app: &TestApp, t: &str, path: &str, field: &str, mut during: F) -> (Vec<String>, usize)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let (mut seen, mut pages) = (Vec::new(), 0);
    let mut next = path.to_owned();
    loop {
        let r = get(app, &next, t).await;
        assert_eq!(r.status(), 200, "GET {next}");
        let page: Value = r.json().await.unwrap();
        pages += 1;
        seen.extend(page["data"].as_array().unwrap().iter().map(|x| x[field].as_str().unwrap().to_owned()));
        if pages == 1 {
            during().await;
        }
        match page["next_cursor"].as_str() {
            Some(c) => {
                assert_eq!(page["has_more"], true, "{page}");
                next = format!("{path}&cursor={c}");
            }
            None => {
                assert_eq!(page["has_more"], false, "{page}");
                assert!(page["next_cursor"].is_null(), "{page}");
                return (seen, pages);
            }
        }
    }
}

#[tokio::test]
async fn admin_lists_page_by_keyset_with_signed_cursors() {
    use reqwest::Method;
    let (app, t) = spawn_admin().await;
    let store = &*app.store;
    // 60 accounts more than the default page (acme is there already).
    for i in 0..60 {
        store
            .create_account(&mds_domain::AccountName::parse(&format!("acct-{i:02}")).unwrap(), Utc::now())
            .await
            .unwrap();
    }
    let first: Value = get(&app, "/admin/v1/accounts", &t).await.json().await.unwrap();
    assert_eq!(first["data"].as_array().unwrap().len(), 50, "50 by default");
    assert_eq!(first["has_more"], true);
    // Walked 7 at a time, with an account added before the position and one
    // after it while walking: every account that existed throughout once,
    // in order; the one added behind the position is not seen, the one
    // ahead is.
    let (seen, pages) = walk(&app, &t, "/admin/v1/accounts?limit=7", "name", || async {
        for name in ["aaa-early", "zzz-late"] {
            let r = send(&app, Method::POST, "/admin/v1/accounts", &t, json!({"name": name})).await;
            assert_eq!(r.status(), 201);
        }
    })
    .await;
    let mut expected: Vec<String> = (0..60).map(|i| format!("acct-{i:02}")).collect();
    expected.push("acme".to_owned());
    expected.sort();
    expected.push("zzz-late".to_owned());
    assert_eq!(seen, expected);
    assert_eq!(pages, 62_usize.div_ceil(7));

    // Tiers: one at a time.
    let (tiers, pages) = walk(&app, &t, "/admin/v1/tiers?limit=1", "name", || async {}).await;
    assert_eq!(tiers, ["enterprise", "evaluation", "pro", "starter"]);
    assert_eq!(pages, 4);

    // Keys: several made at one instant (the order's tie broken by
    // prefix), of two accounts; walked whole and by account, while keys
    // are issued.
    let at = Utc::now();
    for _ in 0..5 {
        common::new_key_at(store, "acct-00", "pro", mds_domain::Environment::Live, at).await;
        common::new_key_at(store, "acme", "starter", mds_domain::Environment::Test, at).await;
    }
    let listed = |account: Option<&str>| {
        let account = account.map(|a| mds_domain::AccountName::parse(a).unwrap());
        async move {
            store.keys(account.as_ref()).await.unwrap().into_iter().map(|k| k.prefix.as_str().to_owned()).collect()
        }
    };
    let before_all: Vec<String> = listed(None).await;
    assert_eq!(before_all.len(), 11);
    let (all, _) = walk(&app, &t, "/admin/v1/keys?limit=3", "key_prefix", || async {
        common::new_key(store, "acme", "pro", mds_domain::Environment::Live).await;
    })
    .await;
    // The key issued during the walk is created after all others: it ends
    // the list, and the walk reached it.
    let after_all: Vec<String> = listed(None).await;
    assert_eq!(after_all.len(), 12);
    assert_eq!(all, after_all, "no duplicate, no skip, in creation order");
    let (acme, pages) = walk(&app, &t, "/admin/v1/keys?account=acme&limit=2", "key_prefix", || async {}).await;
    assert_eq!(acme, listed(Some("acme")).await);
    assert_eq!((acme.len(), pages), (7, 4));
    let page: Value = get(&app, "/admin/v1/keys?account=acme&limit=2", &t).await.json().await.unwrap();
    let acme_cursor = page["next_cursor"].as_str().unwrap().to_owned();

    // Bad limits name `limit`; never clamped.
    for bad in ["0", "201", "abc", "-1", "05", ""] {
        for list in ["tiers", "accounts", "keys", "audit"] {
            let p =
                assert_problem(get(&app, &format!("/admin/v1/{list}?limit={bad}"), &t).await, 400, "invalid_parameter")
                    .await;
            assert_eq!(p["param"], "limit", "{list} limit={bad:?}");
        }
    }
    let full: Value = get(&app, "/admin/v1/accounts?limit=200", &t).await.json().await.unwrap();
    assert_eq!((full["data"].as_array().unwrap().len(), &full["has_more"]), (63, &Value::Bool(false)));
    // A cursor is bound to its list and filters: another account's,
    // the whole list's, another list's, the audit log's, a forged one: 400
    // invalid_cursor naming `cursor`.
    let page: Value = get(&app, "/admin/v1/keys?limit=2", &t).await.json().await.unwrap();
    let all_cursor = page["next_cursor"].as_str().unwrap().to_owned();
    let page: Value = get(&app, "/admin/v1/accounts?limit=2", &t).await.json().await.unwrap();
    let accounts_cursor = page["next_cursor"].as_str().unwrap().to_owned();
    let page: Value = get(&app, "/admin/v1/audit?limit=1", &t).await.json().await.unwrap();
    let audit_cursor = page["next_cursor"].as_str().unwrap().to_owned();
    for path in [
        format!("/admin/v1/keys?account=acct-00&cursor={acme_cursor}"),
        format!("/admin/v1/keys?cursor={acme_cursor}"),
        format!("/admin/v1/keys?account=acme&cursor={all_cursor}"),
        format!("/admin/v1/tiers?cursor={accounts_cursor}"),
        format!("/admin/v1/accounts?cursor={audit_cursor}"),
        format!("/admin/v1/audit?cursor={accounts_cursor}"),
        "/admin/v1/tiers?cursor=forged".to_owned(),
        format!("/admin/v1/accounts?cursor={}x", &accounts_cursor[..accounts_cursor.len() - 1]),
    ] {
        let p = assert_problem(get(&app, &path, &t).await, 400, "invalid_cursor").await;
        assert_eq!(p["param"], "cursor", "{path}");
    }
    // The cursor with its own filters: the next page.
    let next = get(&app, &format!("/admin/v1/keys?account=acme&limit=2&cursor={acme_cursor}"), &t).await;
    assert_eq!(next.status(), 200);
    assert_problem(get(&app, "/admin/v1/tiers?page=2", &t).await, 400, "unknown_parameter").await;
    app.stop().await;
}
