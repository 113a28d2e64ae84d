//! Traces (API.md 16): the real `mds serve --otlp-endpoint` sends a span per
//! request over OTLP/HTTP to a receiver in the test, which reads the JSON
//! as OTLP has it: the caller's `traceparent` continued (its trace, its
//! span as the parent, its `tracestate`), a trace started when there is
//! none, none exported when the caller did not sample, the route template
//! (never the path), method, status and key prefix, and no key anywhere;
//! a child span for each store and Redis call a request makes, and the
//! admin listener's requests traced too.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::{HeaderMap, StatusCode, header};
use axum::routing::post;
use common::process::{cli, field, start, store_with_key};
use serde_json::Value;

/// What the receiver was sent: each export request's body.
type Received = Arc<Mutex<Vec<String>>>;

/// An OTLP/HTTP receiver on loopback taking `POST /v1/traces` in JSON.
async fn receiver() -> (String, Received) {
    let received = Received::default();
    let sink = received.clone();
    let app = Router::new().route(
        "/v1/traces",
        post(move |headers: HeaderMap, body: String| async move {
            if headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) != Some("application/json") {
                return (StatusCode::UNSUPPORTED_MEDIA_TYPE, "{}");
            }
            sink.lock().unwrap().push(body);
            (StatusCode::OK, "{}")
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), received)
}

/// Every span of every export request received, each checked for the
/// fields OTLP/JSON gives every span.
fn spans(received: &Received) -> Vec<Value> {
    let mut out = Vec::new();
    for body in received.lock().unwrap().iter() {
        let req: Value = serde_json::from_str(body).expect("an export request is JSON");
        for rs in req["resourceSpans"].as_array().expect("resourceSpans") {
            let service = rs["resource"]["attributes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|a| a["key"] == "service.name")
                .map(|a| a["value"]["stringValue"].clone());
            assert_eq!(service, Some(Value::from("mds")));
            for ss in rs["scopeSpans"].as_array().expect("scopeSpans") {
                for span in ss["spans"].as_array().expect("spans") {
                    let hex = |f: &str, n: usize| {
                        span[f].as_str().is_some_and(|s| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit()))
                    };
                    assert!(hex("traceId", 32) && hex("spanId", 16), "{span}");
                    assert!(span["kind"] == 2 || span["kind"] == 3, "a server or a client span: {span}");
                    let time = |f: &str| span[f].as_str().and_then(|s| s.parse::<u64>().ok()).expect(f);
                    assert!(time("endTimeUnixNano") >= time("startTimeUnixNano"), "{span}");
                    out.push(span.clone());
                }
            }
        }
    }
    out
}

/// The server spans received: one per request.
fn server_spans(received: &Received) -> Vec<Value> {
    spans(received).into_iter().filter(|s| s["kind"] == 2).collect()
}

/// A span's attribute's value (`{"stringValue": ..}` or `{"intValue": ..}`).
fn attr<'a>(span: &'a Value, key: &str) -> Option<&'a Value> {
    span["attributes"].as_array()?.iter().find(|a| a["key"] == key).map(|a| &a["value"])
}

const TRACE_A: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_A: &str = "00f067aa0ba902b7";
const TRACE_B: &str = "0af7651916cd43dd8448eb211c80319c";
const TRACE_UNSAMPLED: &str = "11111111111111111111111111111111";

#[tokio::test]
async fn each_request_is_a_span_in_the_callers_trace_without_key_material() {
    let (endpoint, received) = receiver().await;
    let (dir, key) = store_with_key("pro");
    let mut server = start(&dir, &["serve", "--log-format", "json", "--otlp-endpoint", &endpoint]);
    let base = server.base();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let send = |method: reqwest::Method, path: String, traceparent: Option<String>| {
        let mut rb = client.request(method, format!("{base}{path}")).bearer_auth(&key);
        if let Some(tp) = traceparent {
            rb = rb.header("traceparent", tp).header("tracestate", "vendor=opaque-1");
        }
        async move { rb.send().await.unwrap().status().as_u16() }
    };
    let tp = |trace: &str, flags: &str| Some(format!("00-{trace}-{PARENT_A}-{flags}"));
    assert_eq!(send(reqwest::Method::GET, "/v1/companies?limit=1".into(), tp(TRACE_A, "01")).await, 200);
    // A path holding the key: the span has the template, not the path.
    assert_eq!(send(reqwest::Method::GET, format!("/v1/news/{key}"), tp(TRACE_B, "01")).await, 404);
    assert_eq!(send(reqwest::Method::HEAD, "/v1/companies".into(), None).await, 200);
    assert_eq!(send(reqwest::Method::GET, "/v1/usage".into(), tp(TRACE_UNSAMPLED, "00")).await, 200);
    assert_eq!(send(reqwest::Method::GET, "/no/such/route".into(), Some("00-garbage".into())).await, 404);

    // The batch goes within a second or so; wait for the four spans.
    let deadline = Instant::now() + Duration::from_secs(20);
    while server_spans(&received).len() < 4 {
        assert!(Instant::now() < deadline, "spans received: {:?}", spans(&received));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let metrics = client.get(format!("{base}/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("mds_trace_spans_dropped_total 0"), "{metrics}");
    assert!(server.sigterm().success());
    let spans = server_spans(&received);

    let a = spans.iter().find(|s| s["traceId"] == TRACE_A).expect("the span in the caller's trace");
    assert_eq!(a["parentSpanId"], PARENT_A);
    assert_ne!(a["spanId"], PARENT_A);
    assert_eq!(a["traceState"], "vendor=opaque-1");
    assert_eq!(a["name"], "GET /v1/companies");
    assert_eq!(attr(a, "http.route").unwrap()["stringValue"], "/v1/companies");
    assert_eq!(attr(a, "http.request.method").unwrap()["stringValue"], "GET");
    assert_eq!(attr(a, "http.response.status_code").unwrap()["intValue"], "200");
    assert_eq!(attr(a, "mds.key_prefix").unwrap()["stringValue"].as_str(), Some(&key[..17]));
    assert!(attr(a, "mds.request_id").is_some());

    let b = spans.iter().find(|s| s["traceId"] == TRACE_B).expect("the span of the path with a key");
    assert_eq!(b["name"], "GET /v1/news/{slug}");
    assert_eq!(attr(b, "http.route").unwrap()["stringValue"], "/v1/news/{slug}");
    assert_eq!(attr(b, "http.response.status_code").unwrap()["intValue"], "404");
    assert_eq!(b["status"], serde_json::json!({}), "a 4xx is not a server error");

    let head = spans.iter().find(|s| s["name"] == "HEAD /v1/companies").expect("the HEAD request's span");
    assert!(head.get("parentSpanId").is_none(), "no caller: a trace of its own");
    assert!(![TRACE_A, TRACE_B].contains(&head["traceId"].as_str().unwrap()));

    let unmatched = spans.iter().find(|s| s["name"] == "GET").expect("the unmatched request's span");
    assert!(attr(unmatched, "http.route").is_none() && unmatched.get("parentSpanId").is_none());
    assert!(!spans.iter().any(|s| s["traceId"] == TRACE_UNSAMPLED), "the caller did not sample");

    let all = received.lock().unwrap().join("\n");
    assert!(!all.contains(&key[12..]), "key material reached the receiver:\n{all}");
}

#[tokio::test]
async fn a_receiver_that_is_down_costs_spans_not_requests() {
    // A port nothing listens on: every export is refused.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let (dir, key) = store_with_key("pro");
    let mut server = start(&dir, &["serve", "--otlp-endpoint", &endpoint]);
    let base = server.base();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    for _ in 0..20 {
        let r = client.get(format!("{base}/v1/companies")).bearer_auth(&key).send().await.unwrap();
        assert_eq!(r.status(), 200);
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let metrics = client.get(format!("{base}/metrics")).send().await.unwrap().text().await.unwrap();
        let dropped = common::series(&metrics, "mds_trace_spans_dropped_total");
        if dropped >= 20 {
            assert_eq!(common::series(&metrics, "mds_trace_spans_exported_total"), 0);
            break;
        }
        assert!(Instant::now() < deadline, "spans not counted dropped:\n{metrics}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(server.sigterm().success());
    let logs = server.logs();
    assert_eq!(logs.matches("cannot export spans").count(), 1, "one warning for the outage:\n{logs}");
}

#[tokio::test]
async fn store_and_redis_calls_are_child_spans_of_their_request_on_both_listeners() {
    let Some(redis) = mds_testkit::redis::RedisServer::start() else {
        println!("skipped: cannot start redis-server");
        return;
    };
    let (endpoint, received) = receiver().await;
    let (dir, key) = store_with_key("pro");
    let token = cli(&dir, &["admin-tokens", "create", "ops"]).trim().to_owned();
    let args = ["serve", "--redis", &redis.url(), "--admin-listen", "127.0.0.1:0", "--otlp-endpoint", &endpoint];
    let mut server = start(&dir, &args);
    assert!(server.logged("serving the admin API"), "{}", server.logs());
    let admin = server.logs().lines().find_map(|l| field(l, "admin")).expect("the admin address").to_owned();
    let base = server.base();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let tp = format!("00-{TRACE_A}-{PARENT_A}-01");
    // No such article: read from the store (nothing kept), the key's limits
    // from Redis.
    let r = client.get(format!("{base}/v1/news/no-such-article")).bearer_auth(&key).header("traceparent", &tp);
    assert_eq!(r.send().await.unwrap().status(), 404);
    let r = client.get(format!("http://{admin}/admin/v1/tiers")).bearer_auth(&token).header("traceparent", &tp);
    assert_eq!(r.send().await.unwrap().status(), 200);

    let deadline = Instant::now() + Duration::from_secs(20);
    while server_spans(&received).len() < 2 {
        assert!(Instant::now() < deadline, "spans received: {:?}", spans(&received));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(server.sigterm().success());
    let all = spans(&received);
    let children_of = |parent: &Value| -> Vec<Value> {
        all.iter().filter(|s| s["kind"] == 3 && s["parentSpanId"] == parent["spanId"]).cloned().collect()
    };
    let time = |s: &Value, f: &str| s[f].as_str().and_then(|t| t.parse::<u64>().ok()).unwrap();
    let calls = |children: &[Value]| -> Vec<(String, String)> {
        children
            .iter()
            .map(|c| {
                let s = |k| attr(c, k).and_then(|v| v["stringValue"].as_str()).unwrap_or_default().to_owned();
                (s("db.system"), s("db.operation.name"))
            })
            .collect()
    };

    let news = all.iter().find(|s| s["name"] == "GET /v1/news/{slug}").expect("the news request's span");
    let children = children_of(news);
    let news_calls = calls(&children);
    assert!(news_calls.contains(&("sqlite".into(), "article".into())), "{news_calls:?}");
    assert!(news_calls.iter().any(|(system, _)| system == "redis"), "the limits' Redis call: {news_calls:?}");
    for c in &children {
        assert_eq!(c["traceId"], TRACE_A, "{c}");
        assert_eq!(
            c["name"],
            format!("{} {}", calls(std::slice::from_ref(c))[0].1, calls(std::slice::from_ref(c))[0].0)
        );
        assert!(time(c, "startTimeUnixNano") >= time(news, "startTimeUnixNano"), "{c} in {news}");
        assert!(time(c, "endTimeUnixNano") <= time(news, "endTimeUnixNano"), "{c} in {news}");
    }
    let article = children.iter().find(|c| c["name"] == "article sqlite").unwrap();
    assert_eq!(article["status"], serde_json::json!({}), "found nothing, but did not fail: {article}");

    let tiers = all.iter().find(|s| s["name"] == "GET /admin/v1/tiers").expect("the admin request's span");
    assert_eq!(attr(tiers, "mds.admin_token").unwrap()["stringValue"], "ops");
    assert!(attr(tiers, "mds.key_prefix").is_none());
    let tiers_calls = calls(&children_of(tiers));
    assert!(!tiers_calls.is_empty() && tiers_calls.iter().all(|(system, _)| system == "sqlite"), "{tiers_calls:?}");
    let sent = received.lock().unwrap().join("\n");
    assert!(!sent.contains(&token) && !sent.contains(&key[12..]), "secrets reached the receiver:\n{sent}");
}
