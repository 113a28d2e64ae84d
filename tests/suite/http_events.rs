//! The event log (`GET /v1/events`) and the stream (`GET
//! /v1/events/stream`) through the real server: events made by imports
//! (none by an import that changes nothing), ids in order, filters, keyset
//! pages, every bad position (`400 invalid_cursor`, `410 events_expired`),
//! the stream's live delivery, resume with `Last-Event-ID`, its limit of
//! two per key, and a revoked key's stream closing, also when its reader
//! has stopped reading. Runs on SQLite, and on
//! PostgreSQL with `MDS_TEST_BACKEND=postgres`.

use crate::common;

use std::time::{Duration, Instant};

use common::{TestApp, assert_problem, new_key, spawn};
use mds_domain::{Article, Environment};
use mds_testkit::fixtures::bare_article;
use serde_json::Value;

/// Every event of the log under the query `q`, walked with `limit`.
async fn walk(app: &TestApp, q: &str, limit: usize) -> Vec<Value> {
    let mut out = Vec::new();
    let mut path = format!("/v1/events?limit={limit}{q}");
    loop {
        let page = app.get_json(&path, 200).await;
        let data = page["data"].as_array().unwrap();
        assert!(data.len() <= limit);
        out.extend(data.iter().cloned());
        match page["next_cursor"].as_str() {
            Some(c) => {
                assert_eq!(page["has_more"], true);
                path = format!("/v1/events?limit={limit}{q}&cursor={c}");
            }
            None => return out,
        }
    }
}

#[tokio::test]
async fn the_log_holds_what_imports_changed_in_order() {
    let app = spawn().await;
    let all = walk(&app, "", 200).await;
    let companies = mds_import::demo_companies().len();
    let articles = mds_import::demo_articles().len();
    assert_eq!(all.len(), companies + articles, "one event per company and article imported");
    let ids: Vec<&str> = all.iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids increase");
    assert_eq!(walk(&app, "", 97).await, all, "smaller pages walk the same log");
    let published = walk(&app, "&types=article.published", 50).await;
    assert_eq!(published.len(), articles);
    assert!(published.iter().all(|e| e["type"] == "article.published" && e["data"].get("body").is_none()));
    let first = &all[0];
    assert_eq!(first["type"], "company.changed");
    let isin = first["data"]["company"]["isin"].as_str().unwrap().to_owned();
    let about = walk(&app, &format!("&isin={isin}"), 50).await;
    assert!(!about.is_empty());
    assert!(about.iter().all(|e| e["data"]["company"]["isin"] == isin.as_str() || e["data"]["isin"] == isin.as_str()));

    // Nothing after the last; an import that changes nothing makes none.
    let last = ids.last().unwrap().to_string();
    app.store.upsert_articles(&mds_import::demo_articles()).await.unwrap();
    app.store.upsert_companies(&mds_import::demo_companies()).await.unwrap();
    let after = app.get_json(&format!("/v1/events?since={last}"), 200).await;
    assert_eq!(after["data"].as_array().unwrap().len(), 0);
    assert_eq!(after["has_more"], false);

    // One change, one event, after `since`.
    let article = Article { headline: "Changed headline".into(), ..mds_import::demo_articles()[0].clone() };
    app.store.upsert_articles(&[article]).await.unwrap();
    let after = app.get_json(&format!("/v1/events?since={last}"), 200).await;
    let data = after["data"].as_array().unwrap();
    assert_eq!(data.len(), 1);
    assert_eq!(data[0]["type"], "article.updated");
    assert_eq!(data[0]["data"]["headline"], "Changed headline");
}

#[tokio::test]
async fn bad_positions_and_filters_are_refused() {
    let app = spawn().await;
    for since in ["evt_1", "nope", "evt_000000000000001A", "evt_7fffffffffffffff"] {
        let body = assert_problem(app.get(&format!("/v1/events?since={since}")).await, 400, "invalid_cursor").await;
        assert_eq!(body["param"], "since", "{since}");
    }
    let body = assert_problem(app.get("/v1/events?types=article.deleted").await, 400, "invalid_parameter").await;
    assert_eq!(body["param"], "types");
    assert_problem(app.get("/v1/events?types=ping").await, 400, "invalid_parameter").await;
    assert_problem(app.get("/v1/events?isin=INE002A01019").await, 400, "invalid_parameter").await;
    assert_problem(app.get("/v1/events?sinse=evt_0000000000000001").await, 400, "unknown_parameter").await;
    let page = app.get_json("/v1/events?limit=1", 200).await;
    let cursor = page["next_cursor"].as_str().unwrap();
    let other = app.get(&format!("/v1/events?limit=1&types=company.changed&cursor={cursor}")).await;
    assert_eq!(assert_problem(other, 400, "invalid_cursor").await["param"], "cursor");
    let stream = app.get("/v1/events/stream?since=evt_7fffffffffffffff").await;
    assert_problem(stream, 400, "invalid_cursor").await;

    // Past retention: 410 for a position, the rest of the log without one.
    let first = page["data"][0]["id"].as_str().unwrap().to_owned();
    app.store.prune_events(chrono::Utc::now() + chrono::TimeDelta::minutes(1)).await.unwrap();
    let gone = assert_problem(app.get(&format!("/v1/events?since={first}")).await, 410, "events_expired").await;
    assert_eq!(gone["param"], "since");
    let stream = app.get(&format!("/v1/events/stream?since={first}")).await;
    assert_problem(stream, 410, "events_expired").await;
    assert_eq!(app.get_json("/v1/events", 200).await["data"].as_array().unwrap().len(), 0);
}

/// An open stream, read as it comes.
struct Sse {
    resp: reqwest::Response,
    buf: String,
}

impl Sse {
    /// Opens `path` with `key` (and extra headers) on `app`; asserts `200`.
    async fn open(app: &TestApp, path: &str, key: &str, extra: &[(&str, &str)]) -> Sse {
        Sse::open_at(&app.client, &app.base, path, key, extra).await
    }

    /// Opens `path` with `key` (and extra headers) on the node at `base`.
    async fn open_at(client: &reqwest::Client, base: &str, path: &str, key: &str, extra: &[(&str, &str)]) -> Sse {
        let mut req = client.get(format!("{base}{path}")).bearer_auth(key);
        for (k, v) in extra {
            req = req.header(*k, *v);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.headers()["content-type"], "text/event-stream");
        Sse { resp, buf: String::new() }
    }

    /// The next event frame's `(id, type, data)` within `within`; `None`
    /// when the stream ended first.
    async fn next(&mut self, within: Duration) -> Option<(String, String, Value)> {
        let deadline = Instant::now() + within;
        loop {
            while let Some(end) = self.buf.find("\n\n") {
                let frame: String = self.buf.drain(..end + 2).collect();
                if frame.starts_with(':') {
                    continue;
                }
                let field = |name: &str| {
                    frame.lines().find_map(|l| l.strip_prefix(name)).map(|v| v.trim().to_owned()).unwrap_or_default()
                };
                return Some((field("id:"), field("event:"), serde_json::from_str(&field("data:")).unwrap()));
            }
            let left = deadline.checked_duration_since(Instant::now()).expect("an event in time");
            match tokio::time::timeout(left, self.resp.chunk()).await.expect("an event in time").unwrap() {
                Some(bytes) => self.buf.push_str(std::str::from_utf8(&bytes).unwrap()),
                None => return None,
            }
        }
    }
}

#[tokio::test]
async fn a_stream_carries_new_events_and_resumes_without_a_gap() {
    let app = spawn().await;
    let mut live = Sse::open(&app, "/v1/events/stream?types=article.published", &app.key, &[]).await;
    let t0 = Instant::now();
    app.store.upsert_articles(&[bare_article("fresh-one", "Fresh one")]).await.unwrap();
    let (id, kind, data) = live.next(Duration::from_secs(3)).await.expect("the event");
    assert!(t0.elapsed() < Duration::from_secs(2), "within a second or so: {:?}", t0.elapsed());
    assert_eq!(kind, "article.published");
    assert_eq!(data["id"], id.as_str());
    assert_eq!(data["data"]["slug"], "fresh-one");
    drop(live);

    // Two more while nobody listens; resume after the first.
    app.store.upsert_articles(&[bare_article("fresh-two", "Two")]).await.unwrap();
    app.store.upsert_articles(&[bare_article("fresh-three", "Three")]).await.unwrap();
    let mut resumed =
        Sse::open(&app, "/v1/events/stream?types=article.published", &app.key, &[("last-event-id", &id)]).await;
    let (_, _, two) = resumed.next(Duration::from_secs(3)).await.unwrap();
    let (_, _, three) = resumed.next(Duration::from_secs(3)).await.unwrap();
    assert_eq!(
        (two["data"]["slug"].as_str(), three["data"]["slug"].as_str()),
        (Some("fresh-two"), Some("fresh-three"))
    );

    // The log agrees with the stream.
    let log = app.get_json(&format!("/v1/events?since={id}&types=article.published"), 200).await;
    assert_eq!(log["data"][0], two);
    assert_eq!(log["data"][1], three);
}

#[tokio::test]
async fn a_key_holds_two_streams_and_a_revoked_keys_streams_close() {
    let app = spawn().await;
    let key = new_key(&*app.store, "acme", "pro", Environment::Live).await;
    let mut one = Sse::open(&app, "/v1/events/stream", &key, &[]).await;
    let _two = Sse::open(&app, "/v1/events/stream", &key, &[]).await;
    let third = app.get_with_key("/v1/events/stream", &key).await;
    assert!(third.headers().contains_key("retry-after"));
    let body = assert_problem(third, 429, "too_many_streams").await;
    assert_eq!(body["violated_policies"], serde_json::json!(["streams"]));
    // Another key is not held back.
    let _other = Sse::open(&app, "/v1/events/stream", &app.key, &[]).await;

    let prefix = mds_domain::ApiKey::parse(&key).unwrap().prefix();
    let t0 = Instant::now();
    app.store.revoke_key(&prefix, chrono::Utc::now()).await.unwrap();
    assert!(one.next(Duration::from_secs(5)).await.is_none(), "the stream ends");
    assert!(t0.elapsed() < Duration::from_millis(1500), "within a second: {:?}", t0.elapsed());
}

/// Contract 11.5: the log is revalidated on every use (its tail changes
/// every second), and a `304` for an unchanged page stays free.
#[tokio::test]
async fn the_log_is_revalidated_and_its_304_is_free() {
    let app = spawn().await;
    let key = new_key(&*app.store, "acme", "pro", Environment::Live).await;
    app.store.upsert_articles(&[bare_article("cached-one", "Cached")]).await.unwrap();
    let first = app.get_with_key("/v1/events", &key).await;
    assert_eq!(first.status(), 200);
    assert_eq!(first.headers()["cache-control"], "private, no-cache");
    let etag = first.headers()["etag"].to_str().unwrap().to_owned();
    let again = app.client.get(format!("{}/v1/events", app.base)).bearer_auth(&key).header("if-none-match", &etag);
    let again = again.send().await.unwrap();
    assert_eq!(again.status(), 304);
    assert_eq!(again.headers()["cache-control"], "private, no-cache");
    let usage: Value = app.get_with_key("/v1/usage", &key).await.json().await.unwrap();
    assert_eq!(usage["current_month"]["requests"], 1, "{usage}");
}

/// Contract 11.5: a stream refused with `429 too_many_streams` is not
/// counted (section 3: a `429` never is); the two opened are.
#[tokio::test]
async fn a_refused_stream_is_not_counted() {
    let app = spawn().await;
    let key = new_key(&*app.store, "acme", "pro", Environment::Live).await;
    let _one = Sse::open(&app, "/v1/events/stream", &key, &[]).await;
    let _two = Sse::open(&app, "/v1/events/stream", &key, &[]).await;
    for _ in 0..3 {
        assert_problem(app.get_with_key("/v1/events/stream", &key).await, 429, "too_many_streams").await;
    }
    let usage: Value = app.get_with_key("/v1/usage", &key).await.json().await.unwrap();
    assert_eq!(usage["current_month"]["requests"], 2, "{usage}");
}

/// The node's `mds_event_streams_open`.
async fn open_streams(app: &TestApp) -> u64 {
    let text = app.client.get(format!("{}/metrics", app.base)).send().await.unwrap().text().await.unwrap();
    text.lines().find_map(|l| l.strip_prefix("mds_event_streams_open ")).unwrap().parse().unwrap()
}

/// A reader that stops reading (a small receive buffer, then no reads) while
/// far more events come than the sockets and the stream's channel hold: its
/// stream, blocked on the full connection, still closes when its key is
/// revoked, and gives back its place among the key's two. On a
/// multi-threaded runtime, as `mds serve` runs (a worker a core): on one
/// thread, the node's reload of the 3,000 articles (decoded from PostgreSQL
/// on the runtime) held up the key check for up to 2 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_whose_reader_stopped_reading_still_closes_on_revocation() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = spawn().await;
    let key = new_key(&*app.store, "acme", "pro", Environment::Live).await;
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut conn = socket.connect(app.addr).await.unwrap();
    let request = format!("GET /v1/events/stream HTTP/1.1\r\nHost: mds\r\nAuthorization: Bearer {key}\r\n\r\n");
    conn.write_all(request.as_bytes()).await.unwrap();
    let mut head = [0u8; 12];
    conn.read_exact(&mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    // About 30 MB of frames: far more than loopback's socket buffers.
    let excerpt = "An excerpt long enough to fill the buffers soon. ".repeat(200);
    let articles: Vec<Article> = (0..3000)
        .map(|i| Article { excerpt: Some(excerpt.clone()), ..bare_article(&format!("stall-{i:04}"), "Stalled") })
        .collect();
    app.store.upsert_articles(&articles).await.unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await; // fed, and blocked on the full connection
    assert_eq!(open_streams(&app).await, 1);

    let prefix = mds_domain::ApiKey::parse(&key).unwrap().prefix();
    let t0 = Instant::now();
    app.store.revoke_key(&prefix, chrono::Utc::now()).await.unwrap();
    while open_streams(&app).await > 0 {
        assert!(t0.elapsed() < Duration::from_millis(1500), "closed within a second of the revocation");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(conn);
}

#[tokio::test]
async fn a_stream_resumes_on_another_node_and_the_limit_holds_across_nodes() {
    let app = spawn().await;
    let other = mds_store::open(&app.url).await.unwrap();
    let b = common::Node::start(other, common::reloading_every(Duration::from_millis(100))).await;
    let on_b = |path: &'static str, key: String, extra: Vec<(&'static str, String)>| {
        let (client, base) = (app.client.clone(), b.base.clone());
        async move {
            let extra: Vec<(&str, &str)> = extra.iter().map(|(k, v)| (*k, v.as_str())).collect();
            Sse::open_at(&client, &base, path, &key, &extra).await
        }
    };

    let mut on_a = Sse::open(&app, "/v1/events/stream?types=article.published", &app.key, &[]).await;
    app.store.upsert_articles(&[bare_article("node-one", "One")]).await.unwrap();
    let (first, _, _) = on_a.next(Duration::from_secs(3)).await.unwrap();
    drop(on_a);
    app.store.upsert_articles(&[bare_article("node-two", "Two")]).await.unwrap();
    let mut resumed =
        on_b("/v1/events/stream?types=article.published", app.key.clone(), vec![("last-event-id", first.clone())])
            .await;
    let (_, _, two) = resumed.next(Duration::from_secs(3)).await.unwrap();
    assert_eq!(two["data"]["slug"], "node-two");
    // Committed after the stream opened on the other node: reaches it live.
    app.store.upsert_articles(&[bare_article("node-three", "Three")]).await.unwrap();
    let (_, _, three) = resumed.next(Duration::from_secs(3)).await.unwrap();
    assert_eq!(three["data"]["slug"], "node-three");

    let key = new_key(&*app.store, "acme", "pro", Environment::Live).await;
    let _one = Sse::open(&app, "/v1/events/stream", &key, &[]).await;
    let _two = on_b("/v1/events/stream", key.clone(), vec![]).await;
    let third = app.client.get(format!("{}/v1/events/stream", b.base)).bearer_auth(&key).send().await.unwrap();
    assert_problem(third, 429, "too_many_streams").await;
    assert_problem(app.get_with_key("/v1/events/stream", &key).await, 429, "too_many_streams").await;
    drop(resumed);
    b.stop().await;
}

/// Reads from `conn` until `until` is in what was read (or 5 s pass).
async fn read_until(conn: &mut tokio::net::TcpStream, seen: &mut Vec<u8>, until: &[u8]) {
    use tokio::io::AsyncReadExt;
    let deadline = Instant::now() + Duration::from_secs(5);
    while !seen.windows(until.len()).any(|w| w == until) {
        let mut buf = [0u8; 4096];
        let left = deadline.saturating_duration_since(Instant::now());
        let n = tokio::time::timeout(left, conn.read(&mut buf)).await.expect("in time").unwrap();
        assert!(n > 0, "closed before {:?}: {}", String::from_utf8_lossy(until), String::from_utf8_lossy(seen));
        seen.extend_from_slice(&buf[..n]);
    }
}

/// A stream whose head comes whole is served on a connection of its own
/// (without hyper's buffers: `connection: close`, a chunked body, ended by
/// the server's stop); one whose head comes in two parts is hyper's, and
/// works as well.
#[tokio::test]
async fn a_stream_is_served_on_a_connection_of_its_own_and_a_split_head_still_works() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = spawn().await;
    let request = format!("GET /v1/events/stream HTTP/1.1\r\nHost: mds\r\nAuthorization: Bearer {}\r\n\r\n", app.key);
    let mut whole = tokio::net::TcpStream::connect(app.addr).await.unwrap();
    whole.write_all(request.as_bytes()).await.unwrap();
    let mut split = tokio::net::TcpStream::connect(app.addr).await.unwrap();
    let (first, rest) = request.split_at(30);
    split.write_all(first.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    split.write_all(rest.as_bytes()).await.unwrap();

    let (mut a, mut b) = (Vec::new(), Vec::new());
    read_until(&mut whole, &mut a, b"\r\n\r\n").await;
    read_until(&mut split, &mut b, b"\r\n\r\n").await;
    for head in [&a, &b] {
        let text = String::from_utf8_lossy(head).to_ascii_lowercase();
        assert!(text.starts_with("http/1.1 200 ok\r\n"), "{text}");
        assert!(
            text.contains("\r\ncontent-type: text/event-stream\r\n")
                && text.contains("\r\ntransfer-encoding: chunked\r\n")
        );
        assert!(
            text.contains("\r\nx-ratelimit-limit: ") && text.contains("\r\nx-request-id: "),
            "the envelope's headers"
        );
    }
    assert!(String::from_utf8_lossy(&a).contains("\r\nconnection: close\r\n"), "the whole head is served directly");
    assert!(!String::from_utf8_lossy(&b).contains("connection: close"), "the split one by hyper");

    app.store.upsert_articles(&[bare_article("direct-one", "One")]).await.unwrap();
    read_until(&mut whole, &mut a, b"direct-one").await;
    read_until(&mut split, &mut b, b"direct-one").await;
    // One chunk: its size line, then exactly that many bytes of the frame.
    let body = &a[a.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4..];
    let line_end = body.windows(2).position(|w| w == b"\r\n").unwrap();
    let size = usize::from_str_radix(std::str::from_utf8(&body[..line_end]).unwrap(), 16).unwrap();
    read_until(&mut whole, &mut a, b"\n\n\r\n").await;
    let body = &a[a.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4..];
    let frame = &body[line_end + 2..line_end + 2 + size];
    assert!(frame.starts_with(b"id: ") && frame.ends_with(b"\n\n"), "{}", String::from_utf8_lossy(frame));
    assert_eq!(&body[line_end + 2 + size..line_end + 4 + size], b"\r\n");

    // The server's stop ends the direct stream's body, then its connection.
    app.stop().await;
    read_until(&mut whole, &mut a, b"\r\n0\r\n\r\n").await;
    let mut rest = Vec::new();
    whole.read_to_end(&mut rest).await.unwrap();
    assert!(rest.is_empty(), "nothing after the last chunk");
}

/// The value of the node's series `name` (a gauge or a counter).
async fn metric(app: &TestApp, name: &str) -> u64 {
    let text = app.client.get(format!("{}/metrics", app.base)).send().await.unwrap().text().await.unwrap();
    let prefix = format!("{name} ");
    text.lines().find_map(|l| l.strip_prefix(prefix.as_str())).unwrap_or_else(|| panic!("no {name}")).parse().unwrap()
}

/// Contract 11.5: what a stream holds for a reader that does not read is
/// bounded (64 KiB of pending frames) whatever its position: a reader that
/// resumes from the start of a log of about 4 MB and does not read holds
/// no more on the node; when it reads, it gets every event, in order, with
/// no gap (the rest read from the log as it catches up).
#[tokio::test]
async fn a_stalled_stream_holds_at_most_64_kib_then_catches_up_whole() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = spawn().await;
    let key = new_key(&*app.store, "acme", "pro", Environment::Live).await;
    let excerpt = "An excerpt from the log's long past, read again. ".repeat(100);
    let articles: Vec<Article> = (0..800)
        .map(|i| Article { excerpt: Some(excerpt.clone()), ..bare_article(&format!("past-{i:04}"), "Past") })
        .collect();
    app.store.upsert_articles(&articles).await.unwrap();
    let log: Vec<String> = walk(&app, "&types=article.published", 200)
        .await
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect();
    assert!(log.len() >= 800, "{}", log.len());
    let first = i64::from_str_radix(&log[0][4..], 16).unwrap();

    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut conn = socket.connect(app.addr).await.unwrap();
    let request = format!(
        "GET /v1/events/stream?types=article.published HTTP/1.1\r\nHost: mds\r\nAuthorization: Bearer {key}\r\n\
         Last-Event-ID: evt_{:016x}\r\n\r\n",
        first - 1
    );
    conn.write_all(request.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    read_until(&mut conn, &mut seen, b"HTTP/1.1 200").await;
    // Not reading: what the node holds for it fills up (the sockets'
    // buffers hold far less than the log), then stays within 64 KiB.
    let filled = Instant::now() + Duration::from_secs(10);
    while metric(&app, "mds_event_stream_pending_bytes").await == 0 {
        assert!(Instant::now() < filled, "the stream holds frames for its reader");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    for _ in 0..5 {
        let pending = metric(&app, "mds_event_stream_pending_bytes").await;
        assert!(pending > 0 && pending <= 64 * 1024, "pending {pending} bytes");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Reading: every event, in order.
    let deadline = Instant::now() + Duration::from_secs(30);
    let ids = |seen: &[u8]| -> Vec<String> {
        let text = String::from_utf8_lossy(seen);
        text.match_indices("\nid: evt_")
            .filter_map(|(i, _)| text.get(i + 5..i + 26))
            .filter_map(|id| id.strip_suffix('\n'))
            .map(str::to_owned)
            .collect()
    };
    while ids(&seen).len() < log.len() {
        let mut buf = [0u8; 65536];
        let left = deadline.saturating_duration_since(Instant::now());
        let n = tokio::time::timeout(left, conn.read(&mut buf)).await.expect("every event in time").unwrap();
        assert!(n > 0, "the stream ended after {} events", ids(&seen).len());
        seen.extend_from_slice(&buf[..n]);
    }
    let got = ids(&seen);
    if got != log {
        let firsts: Vec<_> = got.iter().zip(&log).enumerate().filter(|(_, (a, b))| a != b).take(5).collect();
        panic!("{} ids; first differences {firsts:?}", got.len());
    }
}
