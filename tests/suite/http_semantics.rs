//! HTTP behaviour of the real server (API.md section 1): problem+json for
//! every error, request ids, ETag/304, HEAD, compression, caching, timeouts,
//! health and readiness, and store outages.

use crate::common;

use std::io::Read;
use std::time::Duration;

use common::faults::Fault;
use common::{assert_problem, reloading_every, series, spawn, spawn_faulty};
use mds_domain::Environment;
use mds_http::HttpConfig;

#[tokio::test]
async fn missing_and_invalid_keys_are_401_with_www_authenticate() {
    let app = spawn().await;
    let url = format!("{}/v1/companies", app.base);
    // No header at all, and headers that are not a bearer key.
    for auth in [None, Some("Basic dXNlcjpwYXNz"), Some("Bearer"), Some("Bearer   "), Some(app.key.as_str())] {
        let mut rb = app.client.get(&url);
        if let Some(a) = auth {
            rb = rb.header("authorization", a);
        }
        let r = rb.send().await.unwrap();
        assert!(r.headers()["www-authenticate"].to_str().unwrap().starts_with("Bearer"));
        assert_problem(r, 401, "missing_api_key").await;
    }
    // Malformed, bad checksum, unknown, wrong environment, revoked: one response.
    let k = app.key.clone();
    let typo = format!("{}{}", &k[..20], if &k[20..21] == "a" { "b" } else { "a" }) + &k[21..];
    let unknown = mds_domain::ApiKey::generate(Environment::Live).expose_secret().to_owned();
    let other_env = format!("mds_test_{}", &k[9..]);
    let revoked = common::new_key(&*app.store, "acme", "pro", Environment::Test).await;
    app.store.revoke_key(&mds_domain::ApiKey::parse(&revoked).unwrap().prefix(), chrono::Utc::now()).await.unwrap();
    app.wait_for_status("/v1/companies", &revoked, 401).await;
    let mut details = std::collections::HashSet::new();
    for bad in ["nonsense", "mds_live_short", &typo, &unknown, &other_env, &revoked, &format!("{k}x")] {
        let r = app.get_with_key("/v1/companies", bad).await;
        assert!(r.headers()["www-authenticate"].to_str().unwrap().contains("invalid_token"));
        let b = assert_problem(r, 401, "invalid_api_key").await;
        details.insert(b["detail"].as_str().unwrap().to_owned());
        assert!(!b.to_string().contains(bad), "the key is never echoed");
    }
    assert_eq!(details.len(), 1, "one response for every kind of bad key");
    // The scheme is case-insensitive.
    let r = app.client.get(&url).header("authorization", format!("bearer {k}")).send().await.unwrap();
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn keys_in_query_strings_are_refused_even_with_a_valid_header() {
    let app = spawn().await;
    let k = app.key.clone();
    for q in [
        format!("api_key={k}"),
        "apikey=x".into(),
        "api-key=x".into(),
        "key=x".into(),
        "token=x".into(),
        "access_token=x".into(),
        "API_KEY=x".into(),
        format!("search={k}"),
        format!("limit=5&cursor={}", &k[..20]),
        "search=mds_test_whatever".into(),
    ] {
        let r = app.get(&format!("/v1/companies?{q}")).await;
        let b = assert_problem(r, 400, "api_key_in_query").await;
        assert!(!b.to_string().contains(&k), "never echoed");
    }
    // Also without any header, and on news.
    let r = app.client.get(format!("{}/v1/news/x?token=abc", app.base)).send().await.unwrap();
    assert_problem(r, 400, "api_key_in_query").await;
}

#[tokio::test]
async fn unknown_routes_and_wrong_methods() {
    let app = spawn().await;
    for path in ["/", "/v1", "/v2/companies", "/v1/companies/extra", "/v1/news/", "/v1/newsx"] {
        assert_problem(app.get(path).await, 404, "not_found").await;
    }
    for method in [reqwest::Method::POST, reqwest::Method::PUT, reqwest::Method::DELETE, reqwest::Method::PATCH] {
        for path in ["/v1/companies", "/v1/news", "/v1/news/some-slug"] {
            let r = app.client.request(method.clone(), format!("{}{path}", app.base)).send().await.unwrap();
            let allow = r.headers()["allow"].to_str().unwrap().to_owned();
            assert!(allow.contains("GET") && allow.contains("HEAD"), "{allow}");
            assert_problem(r, 405, "method_not_allowed").await;
        }
    }
}

#[tokio::test]
async fn news_article_has_the_full_shape() {
    let app = spawn().await;
    let articles = mds_import::demo_articles();
    let full = articles.iter().find(|a| a.subheadline.is_some() && a.isin.is_some()).unwrap();
    let b = app.get_json(&format!("/v1/news/{}", full.slug), 200).await;
    assert_eq!(b, serde_json::to_value(full).unwrap());
    assert!(b["body"].as_str().is_some_and(|s| !s.is_empty()));
    let sparse = articles.iter().find(|a| a.hero_image.is_none()).expect("some demo article lacks an image");
    let b = app.get_json(&format!("/v1/news/{}", sparse.slug), 200).await;
    assert_eq!(b.as_object().unwrap().len(), 15, "every field present");
    assert!(b["hero_image"].is_null());
    assert!(b["tags"].is_array());
    if let Some(p) = b["published_at"].as_str() {
        assert!(p.ends_with("+00:00"), "{p}");
    }
    // Unknown and impossible slugs.
    let long = "a".repeat(201);
    for slug in ["no-such-article", "UPPER", "under_score", "%F0%9F%98%80", long.as_str(), "a%2Fb"] {
        assert_problem(app.get(&format!("/v1/news/{slug}")).await, 404, "not_found").await;
    }
    assert_problem(app.get(&format!("/v1/news/{}?x=1", full.slug)).await, 400, "unknown_parameter").await;
}

#[tokio::test]
async fn request_ids_are_echoed_when_sane_and_made_otherwise() {
    let app = spawn().await;
    let r = app.get_with_headers("/v1/companies?limit=1", &[("x-request-id", "abc-123")]).await;
    assert_eq!(r.headers()["x-request-id"], "abc-123");
    let r = app.get_with_headers("/v1/companies?limit=0", &[("x-request-id", "trace:42")]).await;
    let b = assert_problem(r, 400, "invalid_parameter").await;
    assert_eq!(b["request_id"], "trace:42");
    for insane in ["has space", "<script>", &"x".repeat(200)] {
        let r = app.client.get(format!("{}/healthz", app.base)).header("x-request-id", insane).send().await.unwrap();
        let id = r.headers()["x-request-id"].to_str().unwrap();
        assert_ne!(id, insane);
        assert_eq!(id.len(), 26, "a ULID");
    }
    let a = app.get("/v1/companies?limit=1").await.headers()["x-request-id"].clone();
    let b = app.get("/v1/companies?limit=1").await.headers()["x-request-id"].clone();
    assert_ne!(a, b);
}

#[tokio::test]
async fn etags_are_strong_and_if_none_match_gives_304() {
    let app = spawn().await;
    let url = format!("{}/v1/companies?limit=5", app.base);
    let r = app.get("/v1/companies?limit=5").await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/json");
    assert_eq!(r.headers()["cache-control"], "private, max-age=60");
    let etag = r.headers()["etag"].to_str().unwrap().to_owned();
    assert!(etag.starts_with('"') && !etag.starts_with("W/"), "{etag}");
    let r = app.client.get(&url).bearer_auth(&app.key).header("if-none-match", &etag).send().await.unwrap();
    assert_eq!(r.status(), 304);
    assert_eq!(r.headers()["etag"].to_str().unwrap(), etag);
    assert!(r.bytes().await.unwrap().is_empty());
    // A different page has a different tag; a stale tag gets the full body.
    let other = app.get("/v1/companies?limit=6").await.headers()["etag"].to_str().unwrap().to_owned();
    assert_ne!(other, etag);
    let r =
        app.client.get(&url).bearer_auth(&app.key).header("if-none-match", "\"stale\", W/\"x\"").send().await.unwrap();
    assert_eq!(r.status(), 200);
    // The same representation keeps its tag.
    assert_eq!(app.get("/v1/companies?limit=5").await.headers()["etag"].to_str().unwrap(), etag);
    // 304 needs authentication first.
    let r = app.client.get(&url).header("if-none-match", &etag).send().await.unwrap();
    assert_problem(r, 401, "missing_api_key").await;
    // News too.
    let slug = &mds_import::demo_articles()[0].slug;
    let r = app.get(&format!("/v1/news/{slug}")).await;
    let t = r.headers()["etag"].to_str().unwrap().to_owned();
    let r = app.get_with_headers(&format!("/v1/news/{slug}"), &[("if-none-match", &t)]).await;
    assert_eq!(r.status(), 304);
}

#[tokio::test]
async fn tags_follow_imports_of_companies_and_news() {
    let app = spawn().await;
    let tag = |r: &reqwest::Response| r.headers()["etag"].to_str().unwrap().to_owned();
    let eventually = |pred: &'static str| {
        move |t: std::time::Instant| assert!(t.elapsed() < Duration::from_secs(5), "{pred} never happened")
    };
    // Companies: a page's tag holds until the catalog changes, then changes
    // (whether or not the page's rows did), and the old tag gets a 200.
    let page = "/v1/companies?limit=3&exchange=nse";
    let before = tag(&app.get(page).await);
    assert_eq!(tag(&app.get(page).await), before);
    let mut c = mds_import::demo_companies().into_iter().find(|c| c.is_nse).unwrap();
    c.name.push_str(" Renamed");
    app.store.upsert_companies(&[c.clone()]).await.unwrap();
    let (t, wait) = (std::time::Instant::now(), eventually("the import reaching the catalog"));
    while !app
        .get_json(&format!("/v1/companies?ticker={}", c.ticker.as_str()), 200)
        .await
        .to_string()
        .contains("Renamed")
    {
        wait(t);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let r = app.client.get(format!("{}{page}", app.base)).bearer_auth(&app.key).header("if-none-match", &before);
    let r = r.send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_ne!(tag(&r), before);
    // News: an article is served from the node's cache, and an update
    // reaches it (new body, new tag) once the node sees the new generation.
    let mut a = mds_import::demo_articles().remove(0);
    let path = format!("/v1/news/{}", a.slug.as_str());
    let first = app.get(&path).await;
    let old = tag(&first);
    let old_body = first.bytes().await.unwrap();
    let again = app.get(&path).await;
    assert_eq!(tag(&again), old);
    assert_eq!(again.bytes().await.unwrap(), old_body);
    a.headline.push_str(" (updated)");
    app.store.upsert_articles(&[a]).await.unwrap();
    let (t, wait) = (std::time::Instant::now(), eventually("the update reaching the node"));
    loop {
        let r = app.get(&path).await;
        if tag(&r) != old {
            assert!(r.text().await.unwrap().contains("(updated)"));
            break;
        }
        wait(t);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn vary_is_sent_with_or_without_accept_encoding() {
    let app = spawn().await;
    for path in ["/v1/companies?limit=5", "/v1/usage", "/v1/openapi.json"] {
        let plain = app.get(path).await;
        assert_eq!(plain.headers()["vary"], "accept-encoding", "{path}");
        assert!(plain.headers().get("content-encoding").is_none());
        let identity = app.client.get(format!("{}{path}", app.base)).bearer_auth(&app.key);
        let identity = identity.header("accept-encoding", "identity").send().await.unwrap();
        assert_eq!(identity.headers()["vary"], "accept-encoding", "{path}");
        assert!(identity.headers().get("content-encoding").is_none());
    }
    // Bodies too small to compress (under 32 bytes) have none, either way;
    // nor have problems, which are written after compression.
    for path in ["/healthz", "/v1/nope"] {
        assert!(app.get(path).await.headers().get("vary").is_none(), "{path}");
        let r = app.client.get(format!("{}{path}", app.base)).header("accept-encoding", "gzip").send().await.unwrap();
        assert!(r.headers().get("vary").is_none(), "{path}");
    }
}

#[tokio::test]
async fn head_answers_like_get_without_a_body() {
    let app = spawn().await;
    let url = format!("{}/v1/companies?limit=20", app.base);
    let get = app.client.get(&url).bearer_auth(&app.key).send().await.unwrap();
    let get_etag = get.headers()["etag"].clone();
    let get_len = get.bytes().await.unwrap().len();
    let head = app.client.head(&url).bearer_auth(&app.key).send().await.unwrap();
    assert_eq!(head.status(), 200);
    assert_eq!(head.headers()["etag"], get_etag);
    assert_eq!(head.headers()["content-length"].to_str().unwrap(), get_len.to_string());
    assert!(head.bytes().await.unwrap().is_empty());
    let r = app.client.head(&url).send().await.unwrap();
    assert_eq!(r.status(), 401);
}

#[tokio::test]
async fn responses_are_compressed_when_asked() {
    let app = spawn().await;
    let path = "/v1/companies?limit=200";
    let plain = app.get(path).await;
    let plain_tag = plain.headers()["etag"].to_str().unwrap().to_owned();
    let plain_body = plain.bytes().await.unwrap();
    for coding in ["gzip", "br", "zstd"] {
        let r = app.get_with_headers(path, &[("accept-encoding", coding)]).await;
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()["content-encoding"], coding);
        assert!(r.headers()["vary"].to_str().unwrap().to_lowercase().contains("accept-encoding"));
        let tag = r.headers()["etag"].to_str().unwrap().to_owned();
        assert_eq!(tag, format!("{}.{coding}\"", plain_tag.trim_end_matches('"')), "own strong tag per coding");
        let body = r.bytes().await.unwrap();
        assert!(body.len() < plain_body.len() / 3, "{coding}: {} vs {}", body.len(), plain_body.len());
        if coding == "gzip" {
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(&body[..]).read_to_end(&mut out).unwrap();
            assert_eq!(out, plain_body);
        }
        // The compressed tag validates too.
        let r = app.get_with_headers(path, &[("accept-encoding", coding), ("if-none-match", &tag)]).await;
        assert_eq!(r.status(), 304);
    }
}

#[tokio::test]
async fn health_and_readiness() {
    let (app, f) = spawn_faulty(test_config()).await;
    let r = app.client.get(format!("{}/healthz", app.base)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let r = app.client.get(format!("{}/readyz", app.base)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let b: serde_json::Value = r.json().await.unwrap();
    assert!(b["companies"].as_u64().unwrap() > 4_500);
    f.set(Fault::Unreachable);
    let r = app.client.get(format!("{}/readyz", app.base)).send().await.unwrap();
    assert_problem(r, 503, "unavailable").await;
    let r = app.client.get(format!("{}/healthz", app.base)).send().await.unwrap();
    assert_eq!(r.status(), 200, "alive even when the store is down");
    f.set(Fault::None);
    let r = app.client.get(format!("{}/readyz", app.base)).send().await.unwrap();
    assert_eq!(r.status(), 200, "recovers by itself");
}

#[tokio::test]
async fn store_outages_are_503_bugs_are_500_and_both_recover() {
    let (app, f) = spawn_faulty(test_config()).await;
    let slug = mds_import::demo_articles()[0].slug.clone();
    // A key this node has served keeps its quota count in memory.
    assert_eq!(app.get("/v1/companies?limit=1").await.status(), 200);
    let newcomer = common::new_key(&*app.store, "acme", "pro", Environment::Live).await;
    // Keys reload as one snapshot: once a key made after it is known, so is
    // the newcomer, which has not been used (so not counted) yet.
    let later = common::new_key(&*app.store, "acme", "pro", Environment::Live).await;
    app.wait_for_status("/v1/companies?limit=1", &later, 200).await;
    f.set(Fault::Unreachable);
    // A key first seen during the outage cannot have its quota checked.
    assert_problem(app.get_with_key("/v1/companies?limit=1", &newcomer).await, 503, "unavailable").await;
    let r = app.get(&format!("/v1/news/{slug}")).await;
    assert!(r.headers().contains_key("retry-after"));
    let b = assert_problem(r, 503, "unavailable").await;
    assert!(!b.to_string().contains("injected"), "no internal detail: {b}");
    // Companies are served from the node's catalog through an outage.
    assert_eq!(app.get("/v1/companies?limit=1").await.status(), 200);
    f.set(Fault::Broken);
    let b = assert_problem(app.get(&format!("/v1/news/{slug}")).await, 500, "internal").await;
    let text = b.to_string();
    assert!(!text.contains("injected") && !text.contains("secrets") && !text.contains("sqlx"), "{text}");
    f.set(Fault::None);
    assert_eq!(app.get(&format!("/v1/news/{slug}")).await.status(), 200);
}

#[tokio::test]
async fn slow_requests_time_out_with_503() {
    let (app, f) = spawn_faulty(HttpConfig {
        request_timeout: Duration::from_millis(300),
        ..reloading_every(Duration::from_secs(3600))
    })
    .await;
    f.set(Fault::Slow);
    let slug = mds_import::demo_articles()[0].slug.clone();
    let started = std::time::Instant::now();
    let r = app.get(&format!("/v1/news/{slug}")).await;
    assert_problem(r, 503, "unavailable").await;
    assert!(started.elapsed() < Duration::from_millis(1500), "answered at the timeout, not after the store");
    f.set(Fault::None);
}

#[tokio::test]
async fn revocation_is_seen_within_a_second() {
    let app = spawn().await;
    let key = common::new_key(&*app.store, "acme", "starter", Environment::Live).await;
    app.wait_for_status("/v1/companies?limit=1", &key, 200).await;
    app.store.revoke_key(&mds_domain::ApiKey::parse(&key).unwrap().prefix(), chrono::Utc::now()).await.unwrap();
    let t = std::time::Instant::now();
    loop {
        let s = app.get_with_key("/v1/companies?limit=1", &key).await.status();
        if s == 401 {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(1), "still accepted after 1 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn graceful_shutdown_finishes_in_flight_requests() {
    let (app, f) = spawn_faulty(reloading_every(Duration::from_secs(3600))).await;
    f.set(Fault::Slow);
    let slug = mds_import::demo_articles()[0].slug.clone();
    let client = app.client.clone();
    let url = format!("{}/v1/news/{slug}", app.base);
    let key = app.key.clone();
    let inflight = tokio::spawn(async move { client.get(url).bearer_auth(key).send().await.unwrap().status() });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let base = app.base.clone();
    app.stop().await;
    assert_eq!(inflight.await.unwrap(), 200, "the in-flight request completed");
    assert!(reqwest::get(format!("{base}/healthz")).await.is_err(), "no longer accepting");
}

fn test_config() -> HttpConfig {
    reloading_every(Duration::from_millis(100))
}

#[tokio::test]
async fn metrics_count_requests_decisions_and_store_errors_without_key_material() {
    let (app, f) = spawn_faulty(test_config()).await;
    for _ in 0..3 {
        assert_eq!(app.get("/v1/companies?limit=1").await.status(), 200);
    }
    assert_eq!(app.get("/v1/companies?limit=0").await.status(), 400);
    assert_eq!(app.get_with_key("/v1/companies", "mds_live_nonsense").await.status(), 401);
    f.set(Fault::Unreachable);
    let slug = &mds_import::demo_articles()[0].slug;
    assert_eq!(app.get(&format!("/v1/news/{slug}")).await.status(), 503);
    f.set(Fault::None);
    let r = app.client.get(format!("{}/metrics", app.base)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/plain; version=0.0.4"));
    let text = r.text().await.unwrap();
    assert_eq!(series(&text, "mds_http_requests_total{route=\"/v1/companies\",status=\"200\"}"), 3);
    assert_eq!(series(&text, "mds_http_requests_total{route=\"/v1/companies\",status=\"400\"}"), 1);
    assert_eq!(series(&text, "mds_http_requests_total{route=\"/v1/companies\",status=\"401\"}"), 1);
    assert_eq!(series(&text, "mds_http_requests_total{route=\"/v1/news/{slug}\",status=\"503\"}"), 1);
    assert_eq!(series(&text, "mds_http_request_duration_seconds_count{route=\"/v1/companies\"}"), 5);
    assert_eq!(
        series(&text, "mds_limiter_decisions_total{decision=\"admitted\"}"),
        5,
        "3 + the 400 + the news request"
    );
    assert_eq!(series(&text, "mds_store_errors_total"), 1);
    assert_eq!(
        series(&text, "mds_tier_requests_total{tier=\"pro\"}"),
        5,
        "the key's requests by its tier; not the 401 (no key, no tier)"
    );
    assert_eq!(
        series(&text, "mds_key_cache_hits_total"),
        4,
        "3 + the 400 + the news request, the first of them looked up in the store"
    );
    assert_eq!(series(&text, "mds_key_cache_misses_total"), 1, "a malformed key never reaches the cache");
    assert_eq!(series(&text, "mds_key_lookups_total"), 1, "the key, once");
    assert_eq!(series(&text, "mds_page_cache_misses_total"), 1, "the first of the 3 same queries; not the 400");
    assert_eq!(series(&text, "mds_page_cache_hits_total"), 2);
    assert!(series(&text, "mds_auth_reloads_total") >= 1);
    assert!(!text.contains("mds_live_") && !text.contains(&app.key[..12]), "no key material in metrics");
    assert!(!text.contains(slug.as_str()), "routes are templates");
}

#[tokio::test]
async fn no_response_echoes_a_key_sent_anywhere() {
    let app = spawn().await;
    let valid = app.key.clone();
    let unknown = mds_domain::ApiKey::generate(Environment::Test).expose_secret().to_owned();
    let mut checked = 0;
    for key in [valid.as_str(), unknown.as_str()] {
        let secret = &key[9..]; // the random part and checksum
        let paths = [
            format!("/v1/news/{key}"),
            format!("/docs/{key}"),
            format!("/{key}"),
            format!("/v1/{key}/x"),
            format!("/v1/companies/{key}"),
            format!("/v1/companies?search={key}"),
            format!("/v1/companies?{key}=1"),
            format!("/v1/companies?cursor={key}"),
            format!("/v1/companies?limit={key}"),
            format!("/v1/usage?x={key}"),
            format!("/healthz?x={key}"),
            format!("/v1/openapi.json?{key}"),
            "/v1/companies".to_owned(),
        ];
        let methods = [
            reqwest::Method::GET,
            reqwest::Method::POST,
            reqwest::Method::DELETE,
            reqwest::Method::from_bytes(key.as_bytes()).unwrap(),
        ];
        for path in &paths {
            for method in &methods {
                let headers: [(&str, String); 5] = [
                    ("authorization", format!("Bearer {key}")),
                    ("authorization", key.to_owned()),
                    ("x-request-id", key.to_owned()),
                    ("if-none-match", format!("\"{key}\"")),
                    ("x-api-key", key.to_owned()),
                ];
                for (name, value) in &headers {
                    let mut rb = app.client.request(method.clone(), format!("{}{path}", app.base)).header(*name, value);
                    if *name != "authorization" {
                        rb = rb.bearer_auth(&valid);
                    }
                    let r = rb.send().await.unwrap();
                    let status = r.status();
                    for (h, v) in r.headers() {
                        let v = String::from_utf8_lossy(v.as_bytes());
                        assert!(
                            !v.contains(secret),
                            "{method} {path} with {name}: header {h} echoes the key ({status})"
                        );
                    }
                    let body = r.text().await.unwrap();
                    assert!(
                        !body.contains(secret),
                        "{method} {path} with {name}: body echoes the key ({status}): {body}"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 2 * 13 * 4 * 5);
}

#[tokio::test]
async fn an_authorization_header_that_is_not_text_is_an_invalid_key() {
    let app = spawn().await;
    let value = reqwest::header::HeaderValue::from_bytes(b"Bearer mds_live_\xff\xfe").unwrap();
    let r = app.client.get(format!("{}/v1/companies", app.base)).header("authorization", value).send().await.unwrap();
    assert_problem(r, 401, "invalid_api_key").await;
    let r = app.client.get(format!("{}/v1/companies", app.base)).send().await.unwrap();
    assert_problem(r, 401, "missing_api_key").await;
}

#[tokio::test]
async fn a_background_task_that_stops_makes_the_node_not_ready() {
    let (app, f) = spawn_faulty(reloading_every(Duration::from_millis(50))).await;
    let ready = || async { app.client.get(format!("{}/readyz", app.base)).send().await.unwrap() };
    assert_eq!(ready().await.status(), 200);
    // The next poll of the store by a background task (a reload, the event
    // feed, the webhook worker: whichever polls first) panics.
    // The fault stays on until the node says a task stopped: on a loaded
    // machine this task may wake in the same turn as the background tasks'
    // ticks and run first, and the webhook worker's panic reaches its
    // watcher through a thread of lower priority.
    f.set(Fault::Panic);
    let t = std::time::Instant::now();
    let stopped = loop {
        let r = ready().await;
        if r.status() == 503 {
            break r;
        }
        assert!(t.elapsed() < Duration::from_secs(20), "no background task stopped");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    f.set(Fault::None);
    let body = assert_problem(stopped, 503, "unavailable").await;
    let detail = body["detail"].as_str().unwrap();
    assert!(detail.contains(" task panicked: injected"), "{body}");
    let metrics = app.client.get(format!("{}/metrics", app.base)).send().await.unwrap().text().await.unwrap();
    let failures = metrics.lines().find_map(|l| l.strip_prefix("mds_background_task_failures_total ")).unwrap();
    assert!(failures.parse::<u64>().unwrap() >= 1, "{metrics}");
    // Still not ready once the store is fine: the node follows it no more.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(ready().await.status(), 503);
}

#[tokio::test]
async fn keys_with_the_old_twelve_character_prefix_keep_working_beside_new_ones() {
    let app = spawn().await;
    // A key issued before prefixes grew: stored under its first 12 characters.
    let old = mds_domain::ApiKey::generate(Environment::Live);
    let legacy = mds_domain::KeyPrefix::parse(&old.expose_secret()[..12]).unwrap();
    app.store
        .create_key(&mds_store::KeyRecord {
            prefix: legacy.clone(),
            hash: old.hash(),
            account: mds_domain::AccountName::parse("acme").unwrap(),
            tier: mds_domain::TierName::parse("pro").unwrap(),
            environment: Environment::Live,
            created_at: chrono::Utc::now(),
            revoked_at: None,
            expires_at: None,
        })
        .await
        .unwrap();
    let old = old.expose_secret().to_owned();
    app.wait_for_status("/v1/companies?limit=1", &old, 200).await;
    let u: serde_json::Value = app.get_with_key("/v1/usage", &old).await.json().await.unwrap();
    assert_eq!(u["key_prefix"], &old[..12], "it keeps its prefix");
    // A new key answers with its 17-character prefix, side by side.
    let u: serde_json::Value = app.get_with_key("/v1/usage", &app.key).await.json().await.unwrap();
    assert_eq!(u["key_prefix"], &app.key[..17]);
    // Revoked by its old prefix: refused; the new key is untouched.
    app.store.revoke_key(&legacy, chrono::Utc::now()).await.unwrap();
    app.wait_for_status("/v1/companies?limit=1", &old, 401).await;
    assert_eq!(app.get("/v1/companies?limit=1").await.status(), 200);
}

#[tokio::test]
async fn a_revocation_does_not_wait_for_a_catalog_being_built() {
    let app = spawn().await;
    let key = common::new_key(&*app.store, "acme", "starter", Environment::Live).await;
    app.wait_for_status("/v1/companies?limit=1", &key, 200).await;
    let before: serde_json::Value =
        app.client.get(format!("{}/readyz", app.base)).send().await.unwrap().json().await.unwrap();
    // An import with no catalog snapshot: the node builds the catalog from
    // the rows, which takes seconds at this size.
    let companies: Vec<mds_domain::Company> =
        (0..100_000).map(|i| mds_testkit::fixtures::company(i, &format!("X{i:06}"))).collect();
    app.store.upsert_companies(&companies).await.unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    app.store.revoke_key(&mds_domain::ApiKey::parse(&key).unwrap().prefix(), chrono::Utc::now()).await.unwrap();
    // What shows the revocation did not wait is the catalog it is seen
    // beside (still the old one, below), not a time: on a loaded machine
    // the node's reloads (on this test's one runtime thread) can take over
    // a second between them. The bound only ends a hang.
    let t = std::time::Instant::now();
    while app.get_with_key("/v1/companies?limit=1", &key).await.status() != 401 {
        assert!(t.elapsed() < Duration::from_secs(10), "the revocation was never seen");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let during: serde_json::Value =
        app.client.get(format!("{}/readyz", app.base)).send().await.unwrap().json().await.unwrap();
    assert_eq!(during["companies"], before["companies"], "the new catalog was still being built");
}

#[tokio::test]
async fn store_up_follows_a_probe_of_the_store_without_traffic() {
    let mut config = test_config();
    config.node.store_probe_interval = Duration::from_millis(100);
    let (app, f) = spawn_faulty(config).await;
    // Only /metrics is asked for, which reads no store: the probe alone
    // moves the gauge.
    let until = |want: u64| {
        let app = &app;
        async move {
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            loop {
                let up = app.metric("mds_store_up").await;
                if up == want {
                    return;
                }
                assert!(std::time::Instant::now() < deadline, "mds_store_up stayed {up}, not {want}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    assert_eq!(app.metric("mds_store_up").await, 1);
    f.set(Fault::Unreachable);
    until(0).await;
    f.set(Fault::None);
    until(1).await;
    // A store that answers, but later than 1 s, is down too.
    f.set(Fault::Slow);
    until(0).await;
    f.set(Fault::None);
    until(1).await;
}

/// Sends `request` on a fresh connection (while reading, so a server that
/// answers before reading it all is heard) and returns the answer's head
/// and body.
async fn raw_answer(app: &common::TestApp, request: Vec<u8>) -> (String, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let conn = tokio::net::TcpStream::connect(app.addr).await.unwrap();
    let (mut rd, mut wr) = conn.into_split();
    let writer = tokio::spawn(async move {
        // The server may close before reading it all: a failed write is fine.
        let _ = wr.write_all(&request).await;
        wr
    });
    let mut got = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), rd.read_to_end(&mut got)).await;
    drop(writer.await);
    let text = String::from_utf8_lossy(&got).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (head.to_owned(), body.to_owned())
}

/// The head of a `POST /v1/webhooks` with `key` whose body (5 MiB, over
/// the 1 MiB cap) is refused `413` unread, and the first `body` bytes of it.
fn refused_post(key: &str, body: &[u8]) -> Vec<u8> {
    let head = format!(
        "POST /v1/webhooks HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {key}\r\n\
         content-type: application/json\r\ncontent-length: {}\r\n\r\n",
        5 << 20
    );
    [head.as_bytes(), body].concat()
}

/// A body refused unread is read and dropped while its client still sends
/// it (the lingering close), but a client that falls quiet, neither sending
/// nor closing, does not hold the connection: it is closed after 5 s
/// without a byte.
#[tokio::test]
async fn a_lingering_close_ends_when_its_client_falls_quiet() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = spawn().await;
    let mut conn = tokio::net::TcpStream::connect(app.addr).await.unwrap();
    conn.write_all(&refused_post(&app.key, &[b' '; 64 << 10])).await.unwrap();
    // The answer, then the end of what the server sends.
    let mut got = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), conn.read_to_end(&mut got)).await.unwrap().unwrap();
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 413 "), "{text}");
    assert!(text.to_ascii_lowercase().contains("\r\nconnection: close\r\n"), "{text}");
    // Still read 2 s later (a write to a closed socket draws a reset, and
    // the write after it fails).
    let sends = async |conn: &mut tokio::net::TcpStream| {
        let first = conn.write_all(&[b' '; 1024]).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        first.and(conn.write_all(&[b' '; 1024]).await)
    };
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(sends(&mut conn).await.is_ok(), "closed while its client still sent");
    // Quiet for 7 s: closed.
    tokio::time::sleep(Duration::from_secs(7)).await;
    assert!(sends(&mut conn).await.is_err(), "still open after 7 s of quiet");
    app.stop().await;
}

/// A client whose refused body pauses until after the answer, then goes
/// on, still gets the answer: the server lingers because the body was left
/// unread, though no byte of it came while the request was served.
#[tokio::test]
async fn a_body_that_resumes_after_its_413_is_still_read() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = spawn().await;
    let mut conn = tokio::net::TcpStream::connect(app.addr).await.unwrap();
    conn.write_all(&refused_post(&app.key, &[b' '; 1024])).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let more = conn.write_all(&[b' '; 64 << 10]).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let more = more.and(conn.write_all(&[b' '; 1024]).await);
    let mut got = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), conn.read_to_end(&mut got)).await.unwrap();
    assert!(more.is_ok() && read.is_ok(), "the rest of the body: {more:?}; the answer: {read:?}");
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 413 "), "{text}");
    drop(conn);
    app.stop().await;
}

/// A stop closes a keep-alive connection between requests at once, even
/// when its client does not close its side (a pool that looks at its
/// connections only when it uses them): there is nothing left to read, so
/// nothing to linger for.
#[tokio::test]
async fn a_stop_does_not_linger_on_an_idle_keep_alive() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = spawn().await;
    let mut conn = tokio::net::TcpStream::connect(app.addr).await.unwrap();
    conn.write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n").await.unwrap();
    let mut buf = [0u8; 4096];
    let n = conn.read(&mut buf).await.unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200 "), "{}", String::from_utf8_lossy(&buf[..n]));
    let t = std::time::Instant::now();
    app.stop().await;
    assert!(t.elapsed() < Duration::from_secs(3), "the stop waited {:?} on an idle client", t.elapsed());
    drop(conn);
}

/// hyper refuses a 180 KB request target (`414`) and a 1 MB header (`431`)
/// before the service sees them; the answers carry problem+json bodies.
#[tokio::test]
async fn oversized_targets_and_heads_get_problem_bodies() {
    let app = spawn().await;
    let long = format!("GET /v1/companies?q={} HTTP/1.1\r\nhost: x\r\n\r\n", "a".repeat(180_000));
    let big = format!("GET /v1/companies HTTP/1.1\r\nhost: x\r\nx-big: {}\r\n\r\n", "b".repeat(1 << 20));
    for (request, status, code) in [(long, 414, "uri_too_long"), (big, 431, "request_header_fields_too_large")] {
        let (head, body) = raw_answer(&app, request.into_bytes()).await;
        assert!(head.starts_with(&format!("HTTP/1.1 {status} ")), "{head}");
        let lower = head.to_ascii_lowercase();
        assert!(lower.contains("content-type: application/problem+json"), "{head}");
        assert!(lower.contains(&format!("content-length: {}", body.len())), "{head}");
        let p: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!((p["status"].as_u64(), p["code"].as_str()), (Some(status), Some(code)), "{body}");
        assert_eq!(p["type"], format!("/problems/{code}"));
    }
}
