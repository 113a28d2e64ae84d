//! The admin API (contract section 9) through the real admin listener:
//! admin tokens, `/metrics` moved, API keys and admin tokens each refused
//! on the other's listener, the routes, the audit log, idempotent POSTs.
//! Runs on PostgreSQL too (`MDS_TEST_BACKEND=postgres`).

mod common;

use chrono::Utc;
use common::{Options, TestApp, assert_problem, spawn_with};
use mds_domain::{Actor, AdminTokenName};
use serde_json::Value;

/// The app with its admin listener, and an admin token named `billing`.
async fn spawn_admin() -> (TestApp, String) {
    let app = spawn_with(Options { admin: true, ..Options::default() }).await;
    let token = admin_token(&app, "billing").await;
    (app, token)
}

/// Makes an admin token as `mds admin-tokens create NAME` does.
async fn admin_token(app: &TestApp, name: &str) -> String {
    let name = AdminTokenName::parse(name).unwrap();
    let (token, _) = mds_node::admin::create_admin_token(&*app.store, &Actor::Cli, &name, Utc::now()).await.unwrap();
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
    mds_node::admin::revoke_admin_token(&*app.store, &Actor::Cli, &name, Utc::now()).await.unwrap();
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
    let dup = mds_node::admin::create_admin_token(&*app.store, &Actor::Cli, &name, Utc::now()).await;
    assert!(matches!(dup, Err(mds_node::admin::AdminError::Conflict(_))), "{dup:?}");
    let cli = AdminTokenName::parse("cli").unwrap();
    let reserved = mds_node::admin::create_admin_token(&*app.store, &Actor::Cli, &cli, Utc::now()).await;
    assert!(matches!(reserved, Err(mds_node::admin::AdminError::Invalid { param: "name", .. })), "{reserved:?}");
    mds_node::admin::revoke_admin_token(&*app.store, &Actor::Cli, &name, Utc::now()).await.unwrap();
    // Revoked, its name may be given again.
    mds_node::admin::create_admin_token(&*app.store, &Actor::Cli, &name, Utc::now()).await.unwrap();
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
