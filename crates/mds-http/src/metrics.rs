//! Prometheus metrics: requests by route and status, latency histograms,
//! limiter decisions, store errors, cache reloads and the usage flush.
//!
//! Recording is a few relaxed atomic adds on fixed arrays (no lock, no
//! allocation), in one of several shards chosen by thread, so that worker
//! threads on different cores do not fight over the same cache lines;
//! `/metrics` sums the shards and renders the text format. Labels are route
//! templates and status codes only: no key, prefix or query ever becomes a
//! label.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

/// Route labels; `other` is anything unmatched.
pub const ROUTES: &[&str] =
    &["/v1/companies", "/v1/news/{slug}", "/v1/usage", "/healthz", "/readyz", "/metrics", "other"];

/// Status codes with their own series; the rest are counted under `other`.
const STATUSES: &[u16] = &[200, 304, 400, 401, 404, 405, 429, 500, 503];

/// Latency histogram bucket bounds, in seconds.
const BUCKETS: &[f64] = &[0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

const NR: usize = ROUTES.len();
const NS: usize = STATUSES.len() + 1;
const NB: usize = BUCKETS.len() + 1;

/// Limiter outcomes.
#[derive(Debug, Clone, Copy)]
pub enum Decision {
    /// Admitted.
    Admitted = 0,
    /// Refused: per-minute limit.
    RateLimited = 1,
    /// Refused: monthly quota.
    QuotaExceeded = 2,
}

const DECISIONS: &[&str] = &["admitted", "rate_limited", "quota_exceeded"];

/// Background-task and store events.
#[derive(Debug, Clone, Copy)]
pub enum Event {
    /// A store call on the request path failed.
    StoreError = 0,
    /// The company catalog was rebuilt.
    CatalogReload = 1,
    /// The key index was rebuilt.
    AuthReload = 2,
    /// A reload attempt failed.
    ReloadFailure = 3,
    /// A usage flush wrote to the store.
    Flush = 4,
    /// A usage flush failed (counts wait and are retried).
    FlushFailure = 5,
    /// A well-formed key was found in the node's key cache.
    KeyCacheHit = 6,
    /// A well-formed key was not in the node's key cache (unknown or revoked).
    KeyCacheMiss = 7,
    /// A company page was served from the page cache.
    PageCacheHit = 8,
    /// A company page was made (and kept, within the cache's bound).
    PageCacheMiss = 9,
}

const EVENTS: &[(&str, &str)] = &[
    ("mds_store_errors_total", "Store calls on the request path that failed."),
    ("mds_catalog_reloads_total", "Company catalog rebuilds after an import."),
    ("mds_auth_reloads_total", "Key index rebuilds after a key, tier or account change."),
    ("mds_reload_failures_total", "Cache reload attempts that failed (the node keeps serving what it has)."),
    ("mds_usage_flushes_total", "Usage flushes that wrote to the store."),
    ("mds_usage_flush_failures_total", "Usage flushes that failed; their counts wait in memory and are retried."),
    ("mds_key_cache_hits_total", "Well-formed keys found in the node's in-memory key index."),
    ("mds_key_cache_misses_total", "Well-formed keys not in the index (unknown or revoked); no store lookup follows."),
    ("mds_page_cache_hits_total", "Company pages served as kept from an earlier request for the same query."),
    ("mds_page_cache_misses_total", "Company pages made for a query (then kept, within the cache's bound)."),
];

/// Counter shards; a thread records into one (threads beyond this share).
const SHARDS: usize = 8;

/// One shard of the counters, on cache lines of its own.
#[derive(Debug)]
#[repr(align(128))]
struct Counters {
    requests: [[AtomicU64; NS]; NR],
    buckets: [[AtomicU64; NB]; NR],
    latency_sum_us: [AtomicU64; NR],
    decisions: [AtomicU64; 3],
    events: [AtomicU64; EVENTS.len()],
}

impl Default for Counters {
    fn default() -> Self {
        Counters {
            requests: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU64::new(0))),
            buckets: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU64::new(0))),
            latency_sum_us: std::array::from_fn(|_| AtomicU64::new(0)),
            decisions: std::array::from_fn(|_| AtomicU64::new(0)),
            events: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

/// The metrics of one node.
#[derive(Debug)]
pub struct Metrics {
    shards: Box<[Counters; SHARDS]>,
    last_flush_ms: AtomicI64,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            shards: Box::new(std::array::from_fn(|_| Counters::default())),
            last_flush_ms: AtomicI64::new(chrono::Utc::now().timestamp_millis()),
        }
    }
}

/// How many of [`ROUTES`], from the first, are the keyed `/v1` routes
/// (authenticated, rate limited, tagged).
pub const KEYED_ROUTES: usize = 3;

/// The route label of a request path: the index in [`ROUTES`] of the route
/// the router matches it to, by the same rules (exact paths, one non-empty
/// segment for a slug).
pub fn route_of(path: &str) -> usize {
    match path {
        "/v1/companies" => 0,
        "/v1/usage" => 2,
        "/healthz" => 3,
        "/readyz" => 4,
        "/metrics" => 5,
        p if p.starts_with("/v1/news/") && p.len() > "/v1/news/".len() && !p[9..].contains('/') => 1,
        _ => 6,
    }
}

impl Metrics {
    /// The shard of the calling thread.
    fn shard(&self) -> &Counters {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        thread_local! {
            static SHARD: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
        }
        &self.shards[SHARD.with(|s| *s)]
    }

    /// The sum over the shards of the counter `at` picks.
    fn sum(&self, at: impl Fn(&Counters) -> &AtomicU64) -> u64 {
        self.shards.iter().map(|c| at(c).load(Ordering::Relaxed)).sum()
    }

    /// Records one answered request.
    pub fn request(&self, route: usize, status: u16, latency: Duration) {
        let c = self.shard();
        let s = STATUSES.iter().position(|&x| x == status).unwrap_or(STATUSES.len());
        c.requests[route][s].fetch_add(1, Ordering::Relaxed);
        let secs = latency.as_secs_f64();
        let b = BUCKETS.iter().position(|&le| secs <= le).unwrap_or(BUCKETS.len());
        c.buckets[route][b].fetch_add(1, Ordering::Relaxed);
        c.latency_sum_us[route].fetch_add(latency.as_micros() as u64, Ordering::Relaxed);
    }

    /// Records a limiter decision.
    pub fn decision(&self, d: Decision) {
        self.shard().decisions[d as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Records an event.
    pub fn event(&self, e: Event) {
        self.shard().events[e as usize].fetch_add(1, Ordering::Relaxed);
        if matches!(e, Event::Flush) {
            self.last_flush_ms.store(chrono::Utc::now().timestamp_millis(), Ordering::Relaxed);
        }
    }

    /// How many times `e` happened.
    pub fn count(&self, e: Event) -> u64 {
        self.sum(|c| &c.events[e as usize])
    }

    /// The Prometheus text exposition. `backlog` is the count of requests
    /// counted but not yet in the store; `degraded` whether limits run
    /// without their shared backend.
    pub fn render(&self, backlog: u64, degraded: bool) -> String {
        let mut out = String::with_capacity(16 * 1024);
        out.push_str("# HELP mds_http_requests_total Requests answered, by route template and status.\n");
        out.push_str("# TYPE mds_http_requests_total counter\n");
        for (r, route) in ROUTES.iter().enumerate() {
            for s in 0..NS {
                let n = self.sum(|c| &c.requests[r][s]);
                if n > 0 {
                    let status = STATUSES.get(s).map_or("other".to_owned(), u16::to_string);
                    let _ = writeln!(out, "mds_http_requests_total{{route=\"{route}\",status=\"{status}\"}} {n}");
                }
            }
        }
        out.push_str("# HELP mds_http_request_duration_seconds Time from request to response, by route template.\n");
        out.push_str("# TYPE mds_http_request_duration_seconds histogram\n");
        for (r, route) in ROUTES.iter().enumerate() {
            let mut cumulative = 0;
            for b in 0..NB {
                cumulative += self.sum(|c| &c.buckets[r][b]);
                let le = BUCKETS.get(b).map_or("+Inf".to_owned(), f64::to_string);
                let _ = writeln!(
                    out,
                    "mds_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"{le}\"}} {cumulative}"
                );
            }
            let sum = self.sum(|c| &c.latency_sum_us[r]) as f64 / 1e6;
            let _ = writeln!(out, "mds_http_request_duration_seconds_sum{{route=\"{route}\"}} {sum}");
            let _ = writeln!(out, "mds_http_request_duration_seconds_count{{route=\"{route}\"}} {cumulative}");
        }
        out.push_str("# HELP mds_limiter_decisions_total Admission decisions of the rate limiter and quota.\n");
        out.push_str("# TYPE mds_limiter_decisions_total counter\n");
        for (i, name) in DECISIONS.iter().enumerate() {
            let _ =
                writeln!(out, "mds_limiter_decisions_total{{decision=\"{name}\"}} {}", self.sum(|c| &c.decisions[i]));
        }
        for (i, (name, help)) in EVENTS.iter().enumerate() {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter\n{name} {}", self.sum(|c| &c.events[i]));
        }
        let lag =
            (chrono::Utc::now().timestamp_millis() - self.last_flush_ms.load(Ordering::Relaxed)).max(0) as f64 / 1e3;
        let _ = writeln!(
            out,
            "# HELP mds_usage_flush_lag_seconds Seconds since the last usage flush that wrote (or since start).\n\
             # TYPE mds_usage_flush_lag_seconds gauge\nmds_usage_flush_lag_seconds {lag}"
        );
        let _ = writeln!(
            out,
            "# HELP mds_usage_backlog_requests Requests counted but not yet written to the store.\n\
             # TYPE mds_usage_backlog_requests gauge\nmds_usage_backlog_requests {backlog}"
        );
        let _ = writeln!(
            out,
            "# HELP mds_limits_degraded 1 when limits run locally because their shared backend is unreachable.\n\
             # TYPE mds_limits_degraded gauge\nmds_limits_degraded {}",
            u8::from(degraded)
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_templates() {
        assert_eq!(ROUTES[route_of("/v1/news/some-slug")], "/v1/news/{slug}");
        assert_eq!(ROUTES[route_of("/v1/news/a/b")], "other");
        assert_eq!(ROUTES[route_of("/v1/news/")], "other");
        assert_eq!(ROUTES[route_of("/v1/companies")], "/v1/companies");
        assert_eq!(ROUTES[route_of("/nope")], "other");
    }

    /// The envelope guards the keyed routes by [`route_of`], so it must
    /// agree with the router's matching, above all never call a path the
    /// router gives to a keyed route unkeyed.
    #[test]
    fn route_of_agrees_with_the_router() {
        use axum::Router;
        use axum::body::{Body, to_bytes};
        use axum::http::Request;
        use axum::routing::get;
        use tower::ServiceExt;

        let mut router = Router::new();
        for (i, template) in ROUTES[..KEYED_ROUTES].iter().enumerate() {
            router = router.route(template, get(move || async move { i.to_string() }));
        }
        let router = router.fallback(|| async { "other" });
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        for path in [
            "/v1/companies",
            "/v1/companies/",
            "/v1/companies/x",
            "//v1/companies",
            "/V1/companies",
            "/v1/usage",
            "/v1/usage/",
            "/v1/news/a-slug",
            "/v1/news/BAD%20slug",
            "/v1/news/a%2Fb",
            "/v1/news/",
            "/v1/news",
            "/v1/news//x",
            "/v1/news/a/b",
            "/v1/newsx/a",
            "/v1/openapi.json",
        ] {
            let matched = rt.block_on(async {
                let resp = router.clone().oneshot(Request::get(path).body(Body::empty()).unwrap()).await.unwrap();
                String::from_utf8(to_bytes(resp.into_body(), 64).await.unwrap().to_vec()).unwrap()
            });
            let keyed = Some(route_of(path)).filter(|&r| r < KEYED_ROUTES);
            assert_eq!(keyed, matched.parse::<usize>().ok(), "{path}");
        }
    }

    #[test]
    fn renders_counters_and_cumulative_buckets() {
        let m = Metrics::default();
        m.request(0, 200, Duration::from_micros(700));
        m.request(0, 200, Duration::from_millis(30));
        m.request(0, 418, Duration::from_millis(1));
        m.decision(Decision::RateLimited);
        let text = m.render(5, false);
        assert!(text.contains("mds_http_requests_total{route=\"/v1/companies\",status=\"200\"} 2"));
        assert!(text.contains("mds_http_requests_total{route=\"/v1/companies\",status=\"other\"} 1"));
        assert!(text.contains("mds_http_request_duration_seconds_bucket{route=\"/v1/companies\",le=\"0.001\"} 2"));
        assert!(text.contains("mds_http_request_duration_seconds_bucket{route=\"/v1/companies\",le=\"+Inf\"} 3"));
        assert!(text.contains("mds_limiter_decisions_total{decision=\"rate_limited\"} 1"));
        assert!(text.contains("mds_usage_backlog_requests 5"));
    }
}
