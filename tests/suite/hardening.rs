//! The real `mds serve` process against hostile and careless clients, over
//! real sockets: half-sent requests (slowloris) under a low open-file limit,
//! idle keep-alive connections, a SIGTERM while a client holds a
//! connection it never reads, and a body too large sent whole before its
//! answer is read.

use crate::common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::process::{Proc, burst, cli, in_dir, requests_this_month, start, store_with_key};
use mds_testkit::faketime::libfaketime;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Reads from `s` until the server closes it (EOF or reset), or `within`
/// passes; whether it closed.
async fn closed_within(s: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline.into(), s.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0) | Err(_)) => return true,
            Ok(Ok(_)) => {}
        }
    }
}

async fn healthz_ok(base: &str) -> bool {
    // A fresh connection each time, as a load balancer's probe makes.
    let client = reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(3)).build().unwrap();
    client.get(format!("{base}/healthz")).send().await.is_ok_and(|r| r.status() == 200)
}

#[tokio::test]
async fn half_sent_requests_neither_crowd_out_healthz_nor_stay() {
    let dir = tempfile::tempdir().unwrap();
    cli(&dir, &["migrate"]);
    // 256 descriptors: fewer than the half-sent requests below.
    let mut cmd = Command::new("prlimit");
    cmd.arg("--nofile=256:256").arg("--").arg(env!("CARGO_BIN_EXE_mds"));
    cmd.env("MDS_DATABASE_URL", dir.path().join("mds.db")).env("MDS_LOG", "info");
    cmd.args(["serve", "--header-read-timeout", "3"]);
    let server = Proc::start(cmd);
    let base = server.base();

    let mut held = Vec::new();
    for _ in 0..300 {
        let Ok(mut s) = TcpStream::connect(&server.addr).await else { continue };
        let _ = s.write_all(b"GET /healthz HTTP/1.1\r\nHost: mds\r\n").await;
        held.push(s);
    }
    for i in 0..20 {
        assert!(healthz_ok(&base).await, "/healthz unanswered (try {i}) with 300 half-sent requests open");
    }
    // Every half-sent request is dropped: evicted, or timed out after 3 s.
    for (i, s) in held.iter_mut().enumerate() {
        assert!(closed_within(s, Duration::from_secs(15)).await, "half-sent request {i} still open");
    }
    assert!(healthz_ok(&base).await, "{}", server.logs());
}

#[tokio::test]
async fn idle_keep_alive_connections_are_closed() {
    let dir = tempfile::tempdir().unwrap();
    cli(&dir, &["migrate"]);
    let server = start(&dir, &["serve", "--idle-timeout", "2"]);
    let mut s = TcpStream::connect(&server.addr).await.unwrap();
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: mds\r\n\r\n").await.unwrap();
    let mut buf = [0u8; 1024];
    let n = s.read(&mut buf).await.unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&buf[..n]));
    let t = Instant::now();
    assert!(closed_within(&mut s, Duration::from_secs(15)).await, "idle connection kept open");
    assert!(t.elapsed() >= Duration::from_secs(1), "closed before it was idle for long: {:?}", t.elapsed());
}

/// A client that sends a body over the 1 MiB cap whole before it reads the
/// answer (as Python's `http.client` and reqwest do) gets its `413`: the
/// server reads and drops the rest of the body as it closes (a lingering
/// close). It used to close with the body unread, and the kernel answered
/// with a reset: the client's write broke, and it never saw the `413`.
#[tokio::test]
async fn a_body_too_large_sent_whole_gets_its_413_not_a_reset() {
    let (dir, key) = store_with_key("enterprise");
    let server = start(&dir, &["serve"]);
    for i in 0..5 {
        let (addr, key) = (server.addr.clone(), key.clone());
        let answer = tokio::task::spawn_blocking(move || {
            use std::io::{Read, Write};
            let body = format!("{{\"url\": \"https://h.example/\", \"pad\": \"{}\"}}", "x".repeat(5 << 20));
            let head = format!(
                "POST /v1/webhooks HTTP/1.1\r\nHost: mds\r\nAuthorization: Bearer {key}\r\n\
                 Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                body.len()
            );
            let mut s = std::net::TcpStream::connect(&addr).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            s.write_all(head.as_bytes()).and_then(|()| s.write_all(body.as_bytes()))?;
            let mut answer = Vec::new();
            s.read_to_end(&mut answer)?;
            Ok::<_, std::io::Error>(String::from_utf8_lossy(&answer).into_owned())
        })
        .await
        .unwrap();
        let answer = answer.unwrap_or_else(|e| panic!("try {i}: the body's write or the read broke: {e}"));
        assert!(answer.starts_with("HTTP/1.1 413"), "try {i}: {answer}");
        assert!(answer.contains("payload_too_large"), "try {i}: {answer}");
    }
}

#[tokio::test]
async fn sigterm_with_a_stuck_client_exits_within_the_grace_and_loses_no_count() {
    let (dir, key) = store_with_key("enterprise");
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let mut server = start(&dir, &["serve", "--shutdown-grace", "2"]);
    let base = server.base();
    burst(&client, &base, &key, 50).await;

    // A client that pipelines large pages and never reads them: its
    // connection stalls with a response half-written.
    let mut stuck = TcpStream::connect(&server.addr).await.unwrap();
    let request = format!("GET /v1/companies?limit=200 HTTP/1.1\r\nHost: mds\r\nAuthorization: Bearer {key}\r\n\r\n");
    let flood = request.repeat(400);
    let _ = tokio::time::timeout(Duration::from_secs(2), stuck.write_all(flood.as_bytes())).await;
    // And one that sent half a request.
    let mut half = TcpStream::connect(&server.addr).await.unwrap();
    half.write_all(b"GET /v1/usage HTTP/1.1\r\nHost: mds\r\n").await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let counted = requests_this_month(&client, &base, &key).await;
    assert!(counted > 50, "the stuck client's requests were served (and counted): {counted}");

    let t = Instant::now();
    assert!(server.sigterm_within(Duration::from_secs(8)).success());
    assert!(t.elapsed() < Duration::from_secs(8));
    assert!(server.logs().contains("after the shutdown grace"), "{}", server.logs());
    drop(server);
    drop((stuck, half));

    let server = start(&dir, &["serve"]);
    assert_eq!(
        requests_this_month(&client, &server.base(), &key).await,
        counted,
        "every request counted before SIGTERM is in the store"
    );
}

#[tokio::test]
async fn stepping_the_wall_clock_back_an_hour_refuses_no_one() {
    let Some(lib) = libfaketime() else { return };
    let (dir, key) = store_with_key("pro");
    let offset = dir.path().join("faketime");
    std::fs::write(&offset, "+0\n").unwrap();
    let mut cmd = in_dir(dir.path());
    cmd.args(["serve"])
        .env("LD_PRELOAD", lib)
        .env("FAKETIME_TIMESTAMP_FILE", &offset)
        .env("FAKETIME_NO_CACHE", "1")
        // As NTP steps it: the wall clock only.
        .env("DONT_FAKE_MONOTONIC", "1");
    let server = Proc::start(cmd);
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let get = || client.get(format!("{}/v1/companies?limit=1", server.base())).bearer_auth(&key).send();
    for _ in 0..20 {
        assert_eq!(get().await.unwrap().status(), 200);
    }
    std::fs::write(&offset, "-3600\n").unwrap();
    for i in 0..5 {
        let r = get().await.unwrap();
        assert_eq!(r.status(), 200, "request {i} after the step: {:?}", r.headers().get("retry-after"));
    }
    // The step took: the server's log lines (its wall clock) are an hour
    // behind ours now. The log is written off the request path, a few
    // milliseconds after the answers: wait for the last request's line.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let logs = server.logs();
        let last = logs.lines().rev().find(|l| l.contains("status=200")).expect("access log line");
        let logged: chrono::DateTime<chrono::Utc> = last.split_whitespace().next().unwrap().parse().unwrap();
        if chrono::Utc::now() - logged > chrono::Duration::minutes(50) {
            break;
        }
        assert!(Instant::now() < deadline, "the server's clock was not stepped back: {last}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
