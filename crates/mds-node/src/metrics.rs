//! Prometheus metrics of a node: requests by route and status, latency
//! histograms, limiter verdicts, store errors, cache reloads and the usage
//! flush. The route labels are the HTTP layer's route table, given at
//! construction ([`Metrics::new`]).
//!
//! Recording is a few relaxed atomic adds on fixed arrays (no lock, no
//! allocation), in one of several shards chosen by thread, so that worker
//! threads on different cores do not fight over the same cache lines;
//! `/metrics` sums the shards and renders the text format. Labels are route
//! templates and status codes only: no key, prefix or query ever becomes a
//! label.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mds_limits::clock::Clock;

/// The version of this build, `mds_build_info{version}`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The commit this process was built from ([`set_build_commit`]).
static COMMIT: OnceLock<&'static str> = OnceLock::new();

/// Sets the commit `mds_build_info{commit}` shows, once per process (the
/// binary does, from its build script); a value that is not a hex commit
/// id is shown as `unknown`, as is a process that never sets it.
pub fn set_build_commit(commit: &'static str) {
    let hex = !commit.is_empty() && commit.len() <= 40 && commit.bytes().all(|b| b.is_ascii_hexdigit());
    let _ = COMMIT.set(if hex { commit } else { "unknown" });
}

/// Log lines dropped because the log writer could not keep up
/// ([`log_line_dropped`]), `mds_log_lines_dropped_total`: one count per
/// process, like the log itself.
static LOG_LINES_DROPPED: AtomicU64 = AtomicU64::new(0);

/// Counts one log line dropped: the process's log writer was behind and
/// the line would have made a request wait.
pub fn log_line_dropped() {
    LOG_LINES_DROPPED.fetch_add(1, Ordering::Relaxed);
}

/// Spans the trace exporter sent (`mds_trace_spans_exported_total`) and
/// dropped, its queue full or its receiver failing
/// (`mds_trace_spans_dropped_total`): one count per process, like the
/// exporter.
static TRACE_SPANS: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];

/// Counts `n` spans taken by the trace receiver.
pub fn trace_spans_exported(n: u64) {
    TRACE_SPANS[0].fetch_add(n, Ordering::Relaxed);
}

/// Counts `n` spans dropped: the exporter's queue was full (the span
/// would have made a request wait) or the receiver did not take them.
pub fn trace_spans_dropped(n: u64) {
    TRACE_SPANS[1].fetch_add(n, Ordering::Relaxed);
}

/// Status codes with their own series; the rest are counted under `other`.
const STATUSES: &[u16] = &[200, 304, 400, 401, 404, 405, 429, 500, 503];

/// Latency histogram bucket bounds, in seconds.
const BUCKETS: &[f64] = &[0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

const NS: usize = STATUSES.len() + 1;
const NB: usize = BUCKETS.len() + 1;

/// What the limiter made of a request (its `mds_limits::Decision`, as a
/// metric label).
#[derive(Debug, Clone, Copy)]
pub enum Verdict {
    /// Admitted.
    Admitted = 0,
    /// Refused: per-minute limit.
    RateLimited = 1,
    /// Refused: monthly quota.
    QuotaExceeded = 2,
}

const VERDICTS: &[&str] = &["admitted", "rate_limited", "quota_exceeded"];

/// Tiers with a series of their own in `mds_tier_requests_total`: the
/// first this many a node sees. Tiers are data (operators make them), so
/// the label set is capped; the requests of any further tier are counted
/// under [`OTHER_TIERS`].
pub const TIER_LABELS: usize = 16;

/// The `tier` label of the requests of tiers beyond [`TIER_LABELS`] (no
/// tier name can start with `_`).
pub const OTHER_TIERS: &str = "_other";

/// Background-task and store events; each is counted under the row of
/// `EVENTS` at its position.
#[derive(Debug, Clone, Copy)]
pub enum Event {
    /// A store call on the request path failed.
    StoreError,
    /// The company catalog was rebuilt.
    CatalogReload,
    /// Key, tier or account changes were applied to the key cache (or the
    /// directory first loaded).
    AuthReload,
    /// A reload attempt failed.
    ReloadFailure,
    /// A usage flush wrote to the store.
    Flush,
    /// A usage flush failed (counts wait and are retried).
    FlushFailure,
    /// A well-formed key was found in the node's key cache.
    KeyCacheHit,
    /// A well-formed key was not in the node's key cache: looked up in the
    /// store, or refused by the negative cache or the lookup budget.
    KeyCacheMiss,
    /// A company page was served from the page cache.
    PageCacheHit,
    /// A company page was made (and kept, within the cache's bound).
    PageCacheMiss,
    /// A new connection was refused: at the cap, every connection serving.
    ConnectionRefused,
    /// A connection was closed: its request head took too long.
    ConnectionHeaderTimeout,
    /// A connection was closed: idle too long.
    ConnectionIdleClosed,
    /// A connection waiting between requests was closed to make room.
    ConnectionEvicted,
    /// A background task (reload, flush) stopped: the node is not ready.
    TaskStopped,
    /// A key not in the cache was looked up in the store.
    KeyLookup,
    /// A key not in the cache was refused without a lookup: known to the
    /// negative cache as absent.
    KeyNegativeHit,
    /// A key not in the cache got `503`: the node's budget of store
    /// lookups was spent.
    KeyLookupThrottled,
    /// A held key was read again after a change to it.
    KeyReread,
    /// A webhook delivery got a `2xx`.
    WebhookDelivered,
    /// A webhook delivery attempt failed (any failure, retried or not).
    WebhookFailed,
    /// A webhook event was given up after its last retry.
    WebhookGivenUp,
    /// A failed webhook delivery was scheduled again.
    WebhookRetry,
    /// A webhook endpoint was disabled (`410`, or failing for 3 days).
    WebhookDisabled,
}

const EVENTS: &[(&str, &str)] = &[
    ("mds_store_errors_total", "Store calls on the request path that failed."),
    ("mds_catalog_reloads_total", "Company catalog rebuilds after an import."),
    ("mds_auth_reloads_total", "Key, tier and account changes applied to the key cache (and the first load)."),
    ("mds_reload_failures_total", "Cache reload attempts that failed (the node keeps serving what it has)."),
    ("mds_usage_flushes_total", "Usage flushes that wrote to the store."),
    ("mds_usage_flush_failures_total", "Usage flushes that failed; their counts wait in memory and are retried."),
    ("mds_key_cache_hits_total", "Well-formed keys found in the node's in-memory key index."),
    ("mds_key_cache_misses_total", "Well-formed keys not in the key cache (looked up, or refused without a lookup)."),
    (
        "mds_page_cache_hits_total",
        "Company pages, histories and symbol lookups served as kept from an earlier request for the same query.",
    ),
    (
        "mds_page_cache_misses_total",
        "Company pages, histories and symbol lookups made for a query (then kept, within the cache's bound).",
    ),
    ("mds_connections_refused_total", "Connections refused at the cap (every open one was serving a request)."),
    ("mds_connections_header_timeouts_total", "Connections closed because a request head was not complete in time."),
    ("mds_connections_idle_closed_total", "Connections closed after the idle timeout."),
    ("mds_connections_evicted_total", "Connections waiting between requests closed to make room at the cap."),
    (
        "mds_background_task_failures_total",
        "Background tasks (reload, flush) that stopped; the node is then not ready.",
    ),
    ("mds_key_lookups_total", "Store lookups of keys not in the key cache."),
    ("mds_key_negative_hits_total", "Keys refused without a lookup: the negative cache knows them as absent."),
    ("mds_key_lookups_throttled_total", "Keys answered 503: the node's budget of key lookups was spent."),
    ("mds_key_rereads_total", "Held keys read again after a change to them (or after falling behind the change log)."),
    ("mds_webhook_delivered_total", "Webhook deliveries answered 2xx."),
    ("mds_webhook_failed_total", "Webhook delivery attempts that failed (status, timeout, refused address)."),
    ("mds_webhook_given_up_total", "Webhook events given up after their last retry."),
    ("mds_webhook_retries_total", "Failed webhook deliveries scheduled again."),
    ("mds_webhook_endpoints_disabled_total", "Webhook endpoints disabled by delivery (410, or failing for 3 days)."),
];

/// Counter shards; a thread records into one (threads beyond this share).
const SHARDS: usize = 8;

/// One shard of the counters, on cache lines of its own.
#[derive(Debug)]
#[repr(align(128))]
struct Counters {
    requests: Box<[[AtomicU64; NS]]>,
    buckets: Box<[[AtomicU64; NB]]>,
    latency_sum_us: Box<[AtomicU64]>,
    decisions: [AtomicU64; 3],
    events: [AtomicU64; EVENTS.len()],
    /// By the slot of `Metrics::tiers`, then [`OTHER_TIERS`].
    tiers: [AtomicU64; TIER_LABELS + 1],
}

impl Counters {
    fn new(routes: usize) -> Self {
        Counters {
            requests: (0..routes).map(|_| std::array::from_fn(|_| AtomicU64::new(0))).collect(),
            buckets: (0..routes).map(|_| std::array::from_fn(|_| AtomicU64::new(0))).collect(),
            latency_sum_us: (0..routes).map(|_| AtomicU64::new(0)).collect(),
            decisions: std::array::from_fn(|_| AtomicU64::new(0)),
            events: std::array::from_fn(|_| AtomicU64::new(0)),
            tiers: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

/// Microseconds of `clock`'s monotonic side.
fn elapsed_us(clock: &dyn Clock) -> u64 {
    u64::try_from(clock.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// The metrics of one node.
#[derive(Debug)]
pub struct Metrics {
    routes: &'static [&'static str],
    shards: Box<[Counters; SHARDS]>,
    /// The node's clock: the flush lag is measured on its monotonic side.
    clock: Arc<dyn Clock>,
    /// When the last flush wrote (or the metrics were made), in
    /// microseconds of [`Clock::elapsed`].
    last_flush_us: AtomicU64,
    connections: AtomicI64,
    webhooks_pending: AtomicI64,
    store_up: AtomicBool,
    /// The tier names of the `tier` label, each slot taken once, in the
    /// order the node first saw them.
    tiers: [OnceLock<Box<str>>; TIER_LABELS],
}

impl Metrics {
    /// Metrics whose requests are labelled by `routes` (route templates,
    /// the last one standing for anything unmatched): a request is
    /// recorded by its index in them. Times are read on `clock` (the
    /// node's).
    pub fn new(routes: &'static [&'static str], clock: Arc<dyn Clock>) -> Self {
        Metrics {
            routes,
            shards: Box::new(std::array::from_fn(|_| Counters::new(routes.len()))),
            last_flush_us: AtomicU64::new(elapsed_us(&*clock)),
            clock,
            connections: AtomicI64::new(0),
            webhooks_pending: AtomicI64::new(0),
            // A node is made after loading from the store: it answered.
            store_up: AtomicBool::new(true),
            tiers: std::array::from_fn(|_| OnceLock::new()),
        }
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

    /// Records a limiter verdict.
    pub fn verdict(&self, d: Verdict) {
        self.shard().decisions[d as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Records a request of a key on `tier` (the tier enforced), under the
    /// tier's own label while there are fewer than [`TIER_LABELS`] of
    /// them, else under [`OTHER_TIERS`].
    pub fn tier_request(&self, tier: &str) {
        let slot = self.tiers.iter().position(|t| &**t.get_or_init(|| tier.into()) == tier).unwrap_or(TIER_LABELS);
        self.shard().tiers[slot].fetch_add(1, Ordering::Relaxed);
    }

    /// A client connection opened.
    pub fn connection_opened(&self) {
        self.connections.fetch_add(1, Ordering::Relaxed);
    }

    /// A client connection closed.
    pub fn connection_closed(&self) {
        self.connections.fetch_sub(1, Ordering::Relaxed);
    }

    /// Sets how many webhook endpoints have a delivery pending (as the
    /// delivery task last counted).
    pub fn set_webhooks_pending(&self, n: u64) {
        self.webhooks_pending.store(i64::try_from(n).unwrap_or(i64::MAX), Ordering::Relaxed);
    }

    /// Sets whether the store answered the last probe
    /// ([`crate::health`]'s probe task).
    pub fn set_store_up(&self, up: bool) {
        self.store_up.store(up, Ordering::Relaxed);
    }

    /// Records an event.
    pub fn event(&self, e: Event) {
        self.events(e, 1);
    }

    /// Records `n` events of one kind.
    pub fn events(&self, e: Event, n: u64) {
        self.shard().events[e as usize].fetch_add(n, Ordering::Relaxed);
        if matches!(e, Event::Flush) {
            self.last_flush_us.store(elapsed_us(&*self.clock), Ordering::Relaxed);
        }
    }

    /// The Prometheus text exposition. `backlog` is the count of requests
    /// counted but not yet in the store; `degraded` whether limits run
    /// without their shared backend.
    pub fn render(&self, backlog: u64, degraded: bool) -> String {
        let mut out = String::with_capacity(16 * 1024);
        let _ = writeln!(
            out,
            "# HELP mds_build_info The version and commit of this node's build (always 1).\n\
             # TYPE mds_build_info gauge\nmds_build_info{{version=\"{VERSION}\",commit=\"{}\"}} 1",
            COMMIT.get().copied().unwrap_or("unknown")
        );
        let _ = writeln!(
            out,
            "# HELP mds_log_lines_dropped_total Access-log lines dropped because the log writer could not keep up.\n\
             # TYPE mds_log_lines_dropped_total counter\nmds_log_lines_dropped_total {}",
            LOG_LINES_DROPPED.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "# HELP mds_trace_spans_exported_total Spans the OTLP receiver took (with --otlp-endpoint).\n\
             # TYPE mds_trace_spans_exported_total counter\nmds_trace_spans_exported_total {}\n\
             # HELP mds_trace_spans_dropped_total Spans dropped: the exporter's queue was full or the receiver failed.\n\
             # TYPE mds_trace_spans_dropped_total counter\nmds_trace_spans_dropped_total {}",
            TRACE_SPANS[0].load(Ordering::Relaxed),
            TRACE_SPANS[1].load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "# HELP mds_store_up 1 while the store answered the node's last probe (every few seconds), else 0.\n\
             # TYPE mds_store_up gauge\nmds_store_up {}",
            u8::from(self.store_up.load(Ordering::Relaxed))
        );
        out.push_str("# HELP mds_http_requests_total Requests answered, by route template and status.\n");
        out.push_str("# TYPE mds_http_requests_total counter\n");
        for (r, route) in self.routes.iter().enumerate() {
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
        for (r, route) in self.routes.iter().enumerate() {
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
        out.push_str("# HELP mds_tier_requests_total Requests of keys by the tier enforced (the first 16 tiers seen; the rest under _other).\n");
        out.push_str("# TYPE mds_tier_requests_total counter\n");
        let named = self.tiers.iter().map_while(OnceLock::get).map(|t| &**t);
        for (slot, tier) in named.enumerate().chain([(TIER_LABELS, OTHER_TIERS)]) {
            let n = self.sum(|c| &c.tiers[slot]);
            if n > 0 || slot < TIER_LABELS {
                let _ = writeln!(out, "mds_tier_requests_total{{tier=\"{tier}\"}} {n}");
            }
        }
        out.push_str("# HELP mds_limiter_decisions_total Admission decisions of the rate limiter and quota.\n");
        out.push_str("# TYPE mds_limiter_decisions_total counter\n");
        for (i, name) in VERDICTS.iter().enumerate() {
            let _ =
                writeln!(out, "mds_limiter_decisions_total{{decision=\"{name}\"}} {}", self.sum(|c| &c.decisions[i]));
        }
        for (i, (name, help)) in EVENTS.iter().enumerate() {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter\n{name} {}", self.sum(|c| &c.events[i]));
        }
        let lag = elapsed_us(&*self.clock).saturating_sub(self.last_flush_us.load(Ordering::Relaxed)) as f64 / 1e6;
        let _ = writeln!(
            out,
            "# HELP mds_usage_flush_lag_seconds Seconds since the last usage flush that wrote (or since start).\n\
             # TYPE mds_usage_flush_lag_seconds gauge\nmds_usage_flush_lag_seconds {lag}"
        );
        let _ = writeln!(
            out,
            "# HELP mds_http_open_connections Client connections open now.\n\
             # TYPE mds_http_open_connections gauge\nmds_http_open_connections {}",
            self.connections.load(Ordering::Relaxed)
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
        let _ = writeln!(
            out,
            "# HELP mds_webhook_endpoints_pending Enabled webhook endpoints with a delivery pending.\n\
             # TYPE mds_webhook_endpoints_pending gauge\nmds_webhook_endpoints_pending {}",
            self.webhooks_pending.load(Ordering::Relaxed)
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The flush lag is read on the node's clock, on its monotonic side: a
    /// step of the wall clock moves it not at all.
    #[test]
    fn the_flush_lag_follows_the_nodes_clock() {
        let start = chrono::DateTime::parse_from_rfc3339("2026-11-30T23:59:00Z").unwrap().to_utc();
        let clock = Arc::new(mds_limits::clock::ManualClock::new(start));
        let m = Metrics::new(&["other"], clock.clone());
        let lag = |m: &Metrics| {
            m.render(0, false).lines().find_map(|l| l.strip_prefix("mds_usage_flush_lag_seconds ").map(str::to_owned))
        };
        assert_eq!(lag(&m).as_deref(), Some("0"));
        clock.advance(chrono::Duration::milliseconds(2_500));
        assert_eq!(lag(&m).as_deref(), Some("2.5"));
        clock.step(start - chrono::Duration::days(1));
        assert_eq!(lag(&m).as_deref(), Some("2.5"));
        m.events(Event::Flush, 1);
        assert_eq!(lag(&m).as_deref(), Some("0"));
    }

    #[test]
    fn renders_counters_and_cumulative_buckets() {
        let m = Metrics::new(&["/v1/companies", "other"], Arc::new(mds_limits::clock::SystemClock));
        m.request(0, 200, Duration::from_micros(700));
        m.request(0, 200, Duration::from_millis(30));
        m.request(0, 418, Duration::from_millis(1));
        m.verdict(Verdict::RateLimited);
        let text = m.render(5, false);
        assert!(text.contains("mds_http_requests_total{route=\"/v1/companies\",status=\"200\"} 2"));
        assert!(text.contains("mds_http_requests_total{route=\"/v1/companies\",status=\"other\"} 1"));
        assert!(text.contains("mds_http_request_duration_seconds_bucket{route=\"/v1/companies\",le=\"0.001\"} 2"));
        assert!(text.contains("mds_http_request_duration_seconds_bucket{route=\"/v1/companies\",le=\"+Inf\"} 3"));
        assert!(text.contains("mds_limiter_decisions_total{decision=\"rate_limited\"} 1"));
        assert!(text.contains("mds_usage_backlog_requests 5"));
        assert!(text.contains("mds_store_up 1\n"));
        m.set_store_up(false);
        assert!(m.render(0, false).contains("mds_store_up 0\n"));
    }

    #[test]
    fn tiers_get_labels_up_to_the_cap_and_the_rest_share_one() {
        let m = Metrics::new(&["other"], Arc::new(mds_limits::clock::SystemClock));
        assert!(!m.render(0, false).contains("mds_tier_requests_total{"), "no tier seen yet");
        m.tier_request("pro");
        m.tier_request("pro");
        for i in 0..TIER_LABELS + 4 {
            m.tier_request(&format!("t{i}"));
        }
        let text = m.render(0, false);
        assert!(text.contains("mds_tier_requests_total{tier=\"pro\"} 2\n"), "{text}");
        assert!(text.contains("mds_tier_requests_total{tier=\"t0\"} 1\n"));
        assert!(text.contains(&format!("mds_tier_requests_total{{tier=\"t{}\"}} 1\n", TIER_LABELS - 2)));
        assert!(!text.contains(&format!("tier=\"t{}\"", TIER_LABELS - 1)), "the 17th tier has no label");
        assert!(text.contains("mds_tier_requests_total{tier=\"_other\"} 5\n"), "{text}");
        assert_eq!(text.matches("mds_tier_requests_total{").count(), TIER_LABELS + 1);
    }

    #[test]
    fn build_info_names_a_hex_commit_or_unknown() {
        let m = Metrics::new(&["other"], Arc::new(mds_limits::clock::SystemClock));
        set_build_commit("not a commit\"}");
        let line = format!("mds_build_info{{version=\"{VERSION}\",commit=\"unknown\"}} 1\n");
        assert!(m.render(0, false).contains(&line));
    }
}
