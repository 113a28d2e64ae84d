//! Webhooks through the real server (contract 11.2): endpoint management
//! and isolation between accounts, the SSRF rules at creation, and
//! delivery to real receivers on loopback (`--webhooks-allow-private`):
//! signed (checked by an HMAC written here, apart from the service's),
//! retried on the node's injected clock, in order with one in flight,
//! `410` disabling, replay, rotation, ping.

use crate::common;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chrono::Utc;
use common::{Options, TestApp, assert_problem, new_key, reloading_every, spawn, spawn_with};
use mds_domain::{AccountName, Environment};
use mds_http::HttpConfig;
use mds_limits::ManualClock;
use mds_testkit::fixtures::bare_article;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// One request a receiver got.
#[derive(Debug, Clone)]
struct Hit {
    headers: HeaderMap,
    body: Bytes,
}

impl Hit {
    fn header(&self, name: &str) -> String {
        self.headers.get(name).map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default()
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

/// What a receiver shares with its handler: the requests, and the
/// statuses to answer (then `200`).
#[derive(Default)]
struct Shared {
    hits: Mutex<Vec<Hit>>,
    statuses: Mutex<VecDeque<u16>>,
}

/// A webhook receiver on loopback.
struct Receiver {
    url: String,
    shared: Arc<Shared>,
}

impl Receiver {
    async fn start(statuses: &[u16]) -> Receiver {
        let shared = Arc::new(Shared { statuses: Mutex::new(statuses.iter().copied().collect()), ..Shared::default() });
        async fn handle(State(s): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> StatusCode {
            s.hits.lock().unwrap().push(Hit { headers, body });
            let status = s.statuses.lock().unwrap().pop_front().unwrap_or(200);
            StatusCode::from_u16(status).unwrap()
        }
        let app = axum::Router::new().route("/hook", axum::routing::post(handle)).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Receiver { url: format!("http://{addr}/hook"), shared }
    }

    /// A receiver that takes every request and never answers (until the
    /// node's timeout gives up on it).
    async fn hanging() -> Receiver {
        let shared = Arc::new(Shared::default());
        async fn handle(State(s): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> StatusCode {
            s.hits.lock().unwrap().push(Hit { headers, body });
            std::future::pending().await
        }
        let app = axum::Router::new().route("/hook", axum::routing::post(handle)).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Receiver { url: format!("http://{addr}/hook"), shared }
    }

    fn hits(&self) -> Vec<Hit> {
        self.shared.hits.lock().unwrap().clone()
    }

    /// Waits (up to 10 s) until it has `n` requests.
    async fn wait_for(&self, n: usize) -> Vec<Hit> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let hits = self.hits();
            if hits.len() >= n {
                return hits;
            }
            assert!(Instant::now() < deadline, "waited for {n} requests, got {}", hits.len());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Asserts it gets nothing more than `n` requests for `d`.
    async fn stays_at(&self, n: usize, d: Duration) {
        tokio::time::sleep(d).await;
        assert_eq!(self.hits().len(), n, "no further request");
    }
}

/// HMAC-SHA256 as RFC 2104 writes it, over `sha2` alone: apart from the
/// service's signing code.
fn hmac_sha256(key: &[u8], msg: &[u8]) -> [u8; 32] {
    let mut k = [0u8; 64];
    if key.len() > 64 {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let pad = |b: u8| k.map(|x| x ^ b);
    let inner = Sha256::new().chain_update(pad(0x36)).chain_update(msg).finalize();
    Sha256::new().chain_update(pad(0x5c)).chain_update(inner).finalize().into()
}

/// The `v1,` signature of a message with a `whsec_` secret.
fn expected_signature(secret: &str, id: &str, ts: &str, body: &[u8]) -> String {
    let key = STANDARD.decode(secret.strip_prefix("whsec_").unwrap()).unwrap();
    let mut msg = format!("{id}.{ts}.").into_bytes();
    msg.extend_from_slice(body);
    format!("v1,{}", STANDARD.encode(hmac_sha256(&key, &msg)))
}

/// Asserts `hit` carries the Standard Webhooks headers, signed by each of
/// `secrets` (and only those).
fn assert_signed(hit: &Hit, secrets: &[&str]) {
    let id = hit.header("webhook-id");
    let ts = hit.header("webhook-timestamp");
    assert!(id.starts_with("evt_"), "{id}");
    assert!(ts.parse::<i64>().is_ok(), "{ts}");
    assert_eq!(hit.header("content-type"), "application/json");
    assert_eq!(hit.header("content-length"), hit.body.len().to_string());
    assert_eq!(hit.json()["id"], id.as_str(), "webhook-id is the event id");
    let got: Vec<String> = hit.header("webhook-signature").split(' ').map(str::to_owned).collect();
    let want: Vec<String> = secrets.iter().map(|s| expected_signature(s, &id, &ts, &hit.body)).collect();
    assert_eq!(got, want);
}

#[test]
fn the_independent_hmac_signs_the_reference_vector() {
    let want = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
    let (secret, id, ts, body) = (
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1614265330,
        br#"{"test": 2432232314}"#,
    );
    assert_eq!(expected_signature(secret, id, &ts.to_string(), body), want);
    assert_eq!(mds_domain::webhook::sign(secret, id, ts, body).unwrap(), want);
}

/// The settings of a server that may deliver to loopback, polling every
/// 50 ms.
fn delivering() -> HttpConfig {
    let mut config = reloading_every(Duration::from_millis(100));
    config.node.webhooks.allow_private = true;
    config.node.webhooks.poll_interval = Duration::from_millis(50);
    config
}

/// A server that may deliver to loopback, polling every 50 ms, on `clock`.
async fn serve(clock: Arc<ManualClock>) -> TestApp {
    let mut config = delivering();
    config.node.clock = clock;
    spawn_with(Options { config, ..Options::default() }).await
}

async fn send(app: &TestApp, method: reqwest::Method, path: &str, key: &str, body: Option<Value>) -> reqwest::Response {
    app.call(method, &format!("{}{path}", app.base), key, body.as_ref()).await
}

async fn create(app: &TestApp, body: Value) -> Value {
    let r = send(app, reqwest::Method::POST, "/v1/webhooks", &app.key, Some(body)).await;
    assert_eq!(r.status(), 201);
    r.json().await.unwrap()
}

/// An article import: its events commit with it.
async fn publish(app: &TestApp, slugs: &[&str]) {
    let articles: Vec<_> = slugs.iter().map(|s| bare_article(s, "Headline")).collect();
    app.store.upsert_articles(&articles).await.unwrap();
}

#[tokio::test]
async fn endpoints_are_managed_per_account() {
    let app = serve(Arc::new(ManualClock::new(Utc::now()))).await;
    let created = create(&app, json!({"url": "https://hooks.example.com/a", "types": ["article.published"], "tickers": ["tcs"], "description": "mine"})).await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("we_"));
    assert!(created["secret"].as_str().unwrap().starts_with("whsec_"));
    assert_eq!(created["status"], "enabled");
    assert_eq!(created["tickers"], json!(["TCS"]));
    let path = format!("/v1/webhooks/{id}");
    let shown: Value = send(&app, reqwest::Method::GET, &path, &app.key, None).await.json().await.unwrap();
    assert!(shown.get("secret").is_none(), "the secret is shown only at creation");
    assert_eq!(shown["description"], "mine");
    let list: Value = send(&app, reqwest::Method::GET, "/v1/webhooks", &app.key, None).await.json().await.unwrap();
    assert_eq!(list["data"].as_array().unwrap().len(), 1);
    let patched =
        send(&app, reqwest::Method::PATCH, &path, &app.key, Some(json!({"description": null, "types": []}))).await;
    assert_eq!(patched.status(), 200);
    let patched: Value = patched.json().await.unwrap();
    assert_eq!((patched["description"].clone(), patched["types"].clone()), (Value::Null, json!([])));

    // Another account sees none of it.
    app.store.create_account(&AccountName::parse("other").unwrap(), Utc::now()).await.unwrap();
    let other = new_key(&*app.store, "other", "pro", Environment::Live).await;
    let list: Value = send(&app, reqwest::Method::GET, "/v1/webhooks", &other, None).await.json().await.unwrap();
    assert_eq!(list["data"], json!([]));
    for (method, p, body) in [
        (reqwest::Method::GET, path.clone(), None),
        (reqwest::Method::PATCH, path.clone(), Some(json!({"description": "x"}))),
        (reqwest::Method::DELETE, path.clone(), None),
        (reqwest::Method::POST, format!("{path}/test"), None),
        (reqwest::Method::GET, format!("{path}/attempts"), None),
        (reqwest::Method::POST, format!("{path}/rotate-secret"), Some(json!({}))),
        (reqwest::Method::POST, format!("{path}/replay"), Some(json!({"since": "evt_0000000000000001"}))),
    ] {
        assert_problem(send(&app, method, &p, &other, body).await, 404, "not_found").await;
    }
    assert_problem(send(&app, reqwest::Method::GET, "/v1/webhooks/we_ffff", &app.key, None).await, 404, "not_found")
        .await;

    // Bad input names its field.
    for (body, param) in [
        (json!({"url": "https://h.example/", "types": ["ping"]}), "types"),
        (json!({"url": "https://h.example/", "types": ["nope"]}), "types"),
        (json!({"url": "not a url"}), "url"),
        (json!({"url": "https://h.example/", "isins": ["XX"]}), "isins"),
        (json!({"url": "https://h.example/", "tags": vec!["t"; 1001]}), "tags"),
        (json!({"url": 5}), "url"),
        (json!({}), "url"),
    ] {
        let r = send(&app, reqwest::Method::POST, "/v1/webhooks", &app.key, Some(body)).await;
        assert_eq!(assert_problem(r, 400, "invalid_field").await["param"], param);
    }
    let r = send(
        &app,
        reqwest::Method::POST,
        "/v1/webhooks",
        &app.key,
        Some(json!({"url": "https://h.example/", "secret": "x"})),
    )
    .await;
    assert_eq!(assert_problem(r, 400, "unknown_field").await["param"], "secret");
    // A body not sent as JSON, and one that is not an object.
    for (body, content_type, status, code) in
        [("url=x", "text/plain", 415, "unsupported_media_type"), ("[1]", "application/json", 400, "invalid_body")]
    {
        let post = app.client.post(format!("{}/v1/webhooks", app.base)).bearer_auth(&app.key).body(body);
        assert_problem(post.header("content-type", content_type).send().await.unwrap(), status, code).await;
    }
    let r = app.client.put(format!("{}/v1/webhooks", app.base)).bearer_auth(&app.key).send().await.unwrap();
    assert_eq!(r.status(), 405);

    // At most 10 an account.
    for i in 1..10 {
        create(&app, json!({"url": format!("https://hooks.example.com/{i}")})).await;
    }
    let r =
        send(&app, reqwest::Method::POST, "/v1/webhooks", &app.key, Some(json!({"url": "https://h.example/11"}))).await;
    assert_eq!(assert_problem(r, 400, "invalid_field").await["param"], "url");

    let deleted = send(&app, reqwest::Method::DELETE, &path, &app.key, None).await;
    assert_eq!(deleted.status(), 204);
    assert_problem(send(&app, reqwest::Method::GET, &path, &app.key, None).await, 404, "not_found").await;
    app.stop().await;
}

#[tokio::test]
async fn creation_refuses_what_ssrf_rules_forbid() {
    let app = spawn().await;
    for url in [
        "http://hooks.example.com/",
        "https://127.0.0.1/",
        "https://10.0.0.1/",
        "https://[::1]/",
        "https://169.254.169.254/latest/meta-data",
        "https://192.168.0.10/",
        "https://[::ffff:127.0.0.1]/",
        // Contract 11.5: by name (RFC 6761), and IPv6 that embeds IPv4.
        "https://localhost/",
        "https://foo.localhost/",
        "https://LOCALHOST./",
        "https://[64:ff9b::7f00:1]/",
        "https://[2002:7f00:1::]/",
    ] {
        let r = send(&app, reqwest::Method::POST, "/v1/webhooks", &app.key, Some(json!({"url": url}))).await;
        assert_eq!(assert_problem(r, 400, "invalid_field").await["param"], "url", "{url}");
    }
    // A name that resolves (here, through the system's resolver) only to
    // refused addresses: this machine's own name, when its hosts file
    // gives it a loopback address (Debian's 127.0.1.1, or 127.0.0.1).
    let host = String::from_utf8(std::process::Command::new("hostname").output().unwrap().stdout).unwrap();
    let host = host.trim();
    let ips: Vec<std::net::IpAddr> = tokio::net::lookup_host((host, 0)).await.unwrap().map(|a| a.ip()).collect();
    let url = format!("https://{host}/hook");
    let r = send(&app, reqwest::Method::POST, "/v1/webhooks", &app.key, Some(json!({"url": url}))).await;
    if ips.iter().all(|ip| ip.is_loopback()) {
        assert_eq!(assert_problem(r, 400, "invalid_field").await["param"], "url", "{url} resolves to {ips:?}");
    } else {
        eprintln!("{host} resolves to {ips:?}, not only loopback: the resolve rule is left to ssrf.rs's unit test");
    }
    // A name that does not resolve (yet) is accepted.
    let made = create(&app, json!({"url": "https://hooks.example.com/ok"})).await;
    // At every change of url too.
    let path = format!("/v1/webhooks/{}", made["id"].as_str().unwrap());
    for url in ["https://localhost/", "https://[2002:7f00:1::]/"] {
        let r = send(&app, reqwest::Method::PATCH, &path, &app.key, Some(json!({"url": url}))).await;
        assert_eq!(assert_problem(r, 400, "invalid_field").await["param"], "url", "{url}");
    }
    app.stop().await;
}

/// Contract 11.5: in webhook bodies a `null` where a value is required is
/// refused (not taken as absent); string limits count characters.
#[tokio::test]
async fn nulls_are_refused_and_limits_count_characters() {
    let app = spawn().await;
    let r = send(&app, reqwest::Method::POST, "/v1/webhooks", &app.key, Some(json!({"url": null}))).await;
    assert_eq!(assert_problem(r, 400, "invalid_field").await["param"], "url");
    let made = create(&app, json!({"url": "https://hooks.example.com/n", "types": ["article.published"]})).await;
    let path = format!("/v1/webhooks/{}", made["id"].as_str().unwrap());
    for field in ["url", "types", "isins", "tickers", "tags", "status"] {
        let r = send(&app, reqwest::Method::PATCH, &path, &app.key, Some(json!({ field: null }))).await;
        assert_eq!(assert_problem(r, 400, "invalid_field").await["param"], field, "{field}: null");
    }
    let rotate = format!("{path}/rotate-secret");
    let r = send(&app, reqwest::Method::POST, &rotate, &app.key, Some(json!({"expires_in": null}))).await;
    assert_eq!(assert_problem(r, 400, "invalid_field").await["param"], "expires_in");
    let shown: Value = send(&app, reqwest::Method::GET, &path, &app.key, None).await.json().await.unwrap();
    assert_eq!(
        (shown["url"].as_str(), shown["types"].clone()),
        (Some("https://hooks.example.com/n"), json!(["article.published"]))
    );
    // 200 characters of two bytes each are within the limit; 201 are not.
    let tag = "é".repeat(200);
    let r = send(&app, reqwest::Method::PATCH, &path, &app.key, Some(json!({"tags": [tag], "tickers": [tag]}))).await;
    assert_eq!(r.status(), 200);
    for field in ["tags", "tickers"] {
        let long = "é".repeat(201);
        let r = send(&app, reqwest::Method::PATCH, &path, &app.key, Some(json!({ field: [long] }))).await;
        assert_eq!(assert_problem(r, 400, "invalid_field").await["param"], field);
    }
    // A description may be null: that removes it.
    let r = send(&app, reqwest::Method::PATCH, &path, &app.key, Some(json!({"description": null}))).await;
    assert_eq!(r.status(), 200);
    app.stop().await;
}

#[tokio::test]
async fn an_import_is_delivered_signed_within_two_seconds() {
    let app = serve(Arc::new(ManualClock::new(Utc::now()))).await;
    let rx = Receiver::start(&[]).await;
    let created = create(&app, json!({"url": rx.url, "types": ["article.published"]})).await;
    let secret = created["secret"].as_str().unwrap().to_owned();
    let started = Instant::now();
    publish(&app, &["webhook-delivery-one"]).await;
    let hits = rx.wait_for(1).await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "first attempt after {took:?}");
    assert_signed(&hits[0], &[&secret]);
    let event = hits[0].json();
    assert_eq!(event["type"], "article.published");
    assert_eq!(event["data"]["slug"], "webhook-delivery-one");
    // An article.updated is not subscribed to.
    let mut changed = bare_article("webhook-delivery-one", "Changed");
    changed.excerpt = Some("new".into());
    app.store.upsert_articles(&[changed]).await.unwrap();
    rx.stays_at(1, Duration::from_millis(500)).await;
    app.stop().await;
}

/// Contract 11.5: a receiver that hangs until the timeout (10 s) delays
/// no other endpoint: the others' next events and a retry come due while
/// it hangs, and each starts within 2 s.
#[tokio::test]
async fn a_hanging_receiver_delays_no_other_endpoint() {
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let app = serve(clock.clone()).await;
    let hang = Receiver::hanging().await;
    let healthy = [Receiver::start(&[]).await, Receiver::start(&[]).await, Receiver::start(&[]).await];
    let failing = Receiver::start(&[500]).await;
    let mut ids = Vec::new();
    for rx in [&hang, &failing].into_iter().chain(&healthy) {
        ids.push(create(&app, json!({"url": rx.url, "types": ["article.published"]})).await["id"].clone());
    }
    publish(&app, &["hang-one"]).await;
    hang.wait_for(1).await;
    failing.wait_for(1).await;
    for rx in &healthy {
        rx.wait_for(1).await;
    }
    // The hanging attempt is in flight; the next event for the others.
    let started = Instant::now();
    publish(&app, &["hang-two"]).await;
    for rx in &healthy {
        rx.wait_for(2).await;
    }
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "the healthy endpoints' next event after {took:?}");
    // The failed one's retry comes due (5 s on the node's clock, once its
    // attempt is recorded).
    let attempts = format!("/v1/webhooks/{}/attempts", ids[1].as_str().unwrap());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let shown: Value = send(&app, reqwest::Method::GET, &attempts, &app.key, None).await.json().await.unwrap();
        if !shown["data"].as_array().unwrap().is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "the failed attempt is recorded");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    clock.advance(chrono::Duration::seconds(6));
    let due = Instant::now();
    failing.wait_for(2).await;
    let took = due.elapsed();
    assert!(took < Duration::from_secs(2), "the retry after {took:?}");
    assert_eq!(hang.hits().len(), 1, "one in flight at the hanging endpoint");
    app.stop().await;
}

#[tokio::test]
async fn failures_are_retried_on_the_clock_in_order_then_replayed() {
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let app = serve(clock.clone()).await;
    let rx = Receiver::start(&[500]).await;
    let created = create(&app, json!({"url": rx.url})).await;
    let id = created["id"].as_str().unwrap().to_owned();
    publish(&app, &["order-one"]).await;
    let first = rx.wait_for(1).await[0].clone();
    assert_eq!(first.json()["data"]["slug"], "order-one");
    publish(&app, &["order-two", "order-three"]).await;
    // One in flight: nothing else goes until it is delivered; the retry
    // waits 5 s on the node's clock.
    rx.stays_at(1, Duration::from_millis(600)).await;
    clock.advance(chrono::Duration::seconds(6));
    let hits = rx.wait_for(4).await;
    let ids: Vec<String> = hits.iter().map(|h| h.header("webhook-id")).collect();
    assert_eq!(ids[0], ids[1], "a retry carries the same webhook-id");
    let mut slugs: Vec<String> = hits.iter().map(|h| h.json()["data"]["slug"].as_str().unwrap().to_owned()).collect();
    // One import's events are numbered in no particular order among
    // themselves; delivery follows the numbers.
    slugs[2..].sort();
    assert_eq!(slugs, ["order-one", "order-one", "order-three", "order-two"]);
    assert!(ids[1] < ids[2] && ids[2] < ids[3], "id order: {ids:?}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let attempts: Value = send(&app, reqwest::Method::GET, &format!("/v1/webhooks/{id}/attempts"), &app.key, None)
        .await
        .json()
        .await
        .unwrap();
    let statuses: Vec<Value> = attempts["data"].as_array().unwrap().iter().map(|a| a["status"].clone()).collect();
    assert_eq!(statuses, [json!(200), json!(200), json!(200), json!(500)]);
    assert_eq!(attempts["data"][2]["attempt"], 2);

    // Replay from before the first: all three again, in order.
    let before = format!("evt_{:016x}", i64::from_str_radix(&ids[0][4..], 16).unwrap() - 1);
    let r = send(
        &app,
        reqwest::Method::POST,
        &format!("/v1/webhooks/{id}/replay"),
        &app.key,
        Some(json!({"since": before})),
    )
    .await;
    assert_eq!(r.status(), 202);
    let hits = rx.wait_for(7).await;
    let again: Vec<String> = hits[4..].iter().map(|h| h.header("webhook-id")).collect();
    assert_eq!(again, ids[1..]);
    let r = send(
        &app,
        reqwest::Method::POST,
        &format!("/v1/webhooks/{id}/replay"),
        &app.key,
        Some(json!({"since": "evt_x"})),
    )
    .await;
    assert_eq!(assert_problem(r, 400, "invalid_field").await["param"], "since");
    app.stop().await;
}

#[tokio::test]
async fn gone_disables_the_endpoint() {
    let app = serve(Arc::new(ManualClock::new(Utc::now()))).await;
    let rx = Receiver::start(&[410]).await;
    let id = create(&app, json!({"url": rx.url})).await["id"].as_str().unwrap().to_owned();
    publish(&app, &["gone-one"]).await;
    rx.wait_for(1).await;
    let path = format!("/v1/webhooks/{id}");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let shown: Value = send(&app, reqwest::Method::GET, &path, &app.key, None).await.json().await.unwrap();
        if shown["status"] == "disabled" {
            assert!(shown["disabled_reason"].as_str().unwrap().contains("410"));
            break;
        }
        assert!(Instant::now() < deadline, "not disabled: {shown}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    publish(&app, &["gone-two"]).await;
    rx.stays_at(1, Duration::from_millis(500)).await;
    // Re-enabled: the event in flight goes again.
    let r = send(&app, reqwest::Method::PATCH, &path, &app.key, Some(json!({"status": "enabled"}))).await;
    assert_eq!(r.status(), 200);
    let hits = rx.wait_for(3).await;
    assert_eq!(hits[1].json()["data"]["slug"], "gone-one");
    app.stop().await;
}

#[tokio::test]
async fn a_ping_and_a_rotation_sign_with_both_secrets() {
    let app = serve(Arc::new(ManualClock::new(Utc::now()))).await;
    let rx = Receiver::start(&[]).await;
    let created = create(&app, json!({"url": rx.url})).await;
    let (id, old) = (created["id"].as_str().unwrap().to_owned(), created["secret"].as_str().unwrap().to_owned());
    let r = send(&app, reqwest::Method::POST, &format!("/v1/webhooks/{id}/test"), &app.key, None).await;
    assert_eq!(r.status(), 202);
    let ping: Value = r.json().await.unwrap();
    let hit = rx.wait_for(1).await[0].clone();
    assert_eq!(hit.json()["type"], "ping");
    assert_eq!(hit.header("webhook-id"), ping["event_id"].as_str().unwrap());
    assert_signed(&hit, &[&old]);

    let r = send(
        &app,
        reqwest::Method::POST,
        &format!("/v1/webhooks/{id}/rotate-secret"),
        &app.key,
        Some(json!({"expires_in": 3600})),
    )
    .await;
    assert_eq!(r.status(), 200);
    let new = r.json::<Value>().await.unwrap()["secret"].as_str().unwrap().to_owned();
    assert_ne!(new, old);
    send(&app, reqwest::Method::POST, &format!("/v1/webhooks/{id}/test"), &app.key, None).await;
    let hit = rx.wait_for(2).await[1].clone();
    assert_signed(&hit, &[&new, &old]);
    // A ping is not in the log.
    let log = app.store.event_page(mds_domain::EventId(0), &Default::default(), 1000).await.unwrap();
    assert!(log.events.iter().all(|e| e.event.kind != mds_domain::EventType::Ping));
    app.stop().await;
}

#[tokio::test]
async fn operators_list_and_disable_any_accounts_endpoints() {
    let app = spawn_with(Options { config: delivering(), admin: true, ..Options::default() }).await;
    let rx = Receiver::start(&[]).await;
    let id = create(&app, json!({"url": rx.url})).await["id"].as_str().unwrap().to_owned();
    let name = mds_domain::AdminTokenName::parse("ops").unwrap();
    let (token, _) = mds_node::admin::Audited::cli(&*app.store).create_admin_token(&name).await.unwrap();
    let token = token.expose_secret().to_owned();
    let admin = app.admin_base.clone().unwrap();
    let list: Value = app
        .call(reqwest::Method::GET, &format!("{admin}/admin/v1/webhooks?account=acme"), &token, None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(list["data"][0]["id"], id.as_str());
    assert_eq!(list["data"][0]["account"], "acme");
    assert!(list["data"][0].get("secret").is_none());
    let disable = |id: &str| format!("{admin}/admin/v1/webhooks/{id}/disable");
    let r = app.call(reqwest::Method::POST, &disable(&id), &token, Some(&json!({"reason": "abuse report"}))).await;
    assert_eq!(r.status(), 200);
    let shown: Value =
        send(&app, reqwest::Method::GET, &format!("/v1/webhooks/{id}"), &app.key, None).await.json().await.unwrap();
    assert_eq!((shown["status"].clone(), shown["disabled_reason"].clone()), (json!("disabled"), json!("abuse report")));
    let audit = app.store.audit_log(None, 5).await.unwrap();
    assert_eq!((audit[0].action.as_str(), audit[0].actor.as_str()), ("webhook.disable", "ops"));
    publish(&app, &["disabled-by-operator"]).await;
    rx.stays_at(0, Duration::from_millis(500)).await;
    let r = app.call(reqwest::Method::POST, &disable("we_ffff"), &token, Some(&json!({}))).await;
    assert_problem(r, 404, "not_found").await;
    app.stop().await;
}

/// Two nodes on one store (each its own pool) deliver 1,000 events to 5
/// endpoints: every event at least once, each endpoint's in id order;
/// duplicates are counted (a lease lapsing mid-delivery is the only way to
/// get one).
#[tokio::test]
async fn two_nodes_deliver_every_event_at_least_once_in_order() {
    let config = delivering();
    let app = spawn_with(Options { config: config.clone(), ..Options::default() }).await;
    let other_store = mds_store::open(&app.url).await.unwrap();
    let second = common::Node::start(other_store, config).await;
    let mut receivers = Vec::new();
    for _ in 0..5 {
        let rx = Receiver::start(&[]).await;
        create(&app, json!({"url": rx.url})).await;
        receivers.push(rx);
    }
    let started = Instant::now();
    for batch in 0..10 {
        let articles: Vec<_> = (0..100).map(|i| bare_article(&format!("bulk-{batch}-{i:03}"), "Bulk")).collect();
        app.store.upsert_articles(&articles).await.unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(240);
    let mut duplicates = 0;
    for rx in &receivers {
        let hits = loop {
            let hits = rx.hits();
            let distinct: std::collections::BTreeSet<String> = hits.iter().map(|h| h.header("webhook-id")).collect();
            if distinct.len() >= 1000 {
                break hits;
            }
            assert!(Instant::now() < deadline, "{} of 1000 delivered", distinct.len());
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let ids: Vec<String> = hits.iter().map(|h| h.header("webhook-id")).collect();
        let mut firsts = ids.clone();
        firsts.dedup();
        assert!(firsts.windows(2).all(|w| w[0] < w[1]), "id order per endpoint");
        duplicates += ids.len() - 1000;
    }
    eprintln!("two nodes: 5 x 1000 deliveries in {:?}, {duplicates} duplicates", started.elapsed());
    second.stop().await;
    app.stop().await;
}

/// The nice value of the thread whose `/proc` directory is `dir`.
fn nice_of(dir: &std::path::Path) -> i32 {
    let stat = std::fs::read_to_string(dir.join("stat")).unwrap();
    // After the command in parentheses: state is field 3, nice field 19.
    stat[stat.rfind(')').unwrap() + 2..].split(' ').nth(16).unwrap().parse().unwrap()
}

/// The nice value of each of this process's threads named `name`.
fn nice_of_threads(name: &str) -> Vec<i32> {
    let tasks = std::fs::read_dir("/proc/self/task").unwrap().flatten();
    let named = tasks.filter(|t| std::fs::read_to_string(t.path().join("comm")).unwrap_or_default().trim_end() == name);
    named.map(|t| nice_of(&t.path())).collect()
}

/// Deliveries run on a thread of their own at a lower OS priority than the
/// node's, so that a node busy with requests serves them first; on SQLite,
/// so do the connection threads of their own pool.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn deliveries_run_on_a_thread_of_lower_priority() {
    let app = serve(Arc::new(ManualClock::new(chrono::Utc::now()))).await;
    let node = nice_of(std::path::Path::new("/proc/thread-self"));
    let lower = (node + mds_node::webhooks::worker::NICE).min(19);
    let sqlite = app.url.backend() == mds_store::url::Backend::Sqlite;
    // The delivery thread starts with the node, and its pool's first
    // connection (a thread of its own on SQLite) when the deliveries first
    // read the store, which on busy cores can be a while later: both are
    // waited for, not read once.
    let deadline = Instant::now() + Duration::from_secs(30);
    let (nice, connections) = loop {
        let nice = nice_of_threads("mds-webhooks");
        // sqlx names them `sqlx-sqlite-worker-N`; a thread's name is cut at 15 bytes.
        let connections = if sqlite { nice_of_threads("sqlx-sqlite-wor") } else { Vec::new() };
        let there = !nice.is_empty() && (!sqlite || connections.contains(&lower));
        if there || Instant::now() > deadline {
            break (nice, connections);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(!nice.is_empty(), "a delivery thread");
    assert!(nice.iter().all(|&n| n == lower), "{nice:?} against {node}");
    if sqlite {
        assert!(
            connections.contains(&lower) && connections.contains(&node),
            "the deliveries' and the node's: {connections:?}"
        );
    }
    app.stop().await;
}
