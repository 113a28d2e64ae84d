//! One log line per request: method, path (never the query string, which
//! may hold a key sent by mistake), status, latency, request id, and the
//! key prefix when the caller was authenticated. Never a key. Also the
//! request's metrics (route template, status, latency).
//!
//! Lines are at `info` (target `mds::access`), except those of the probes
//! ([`is_probe`]: a scrape every few seconds is not news), at `debug`.
//! Latency is in microseconds (`latency_us`) on every line, admin ones too.

use std::time::Instant;

use axum::extract::Request;
use axum::http::{HeaderValue, Method};
use axum::response::Response;

use mds_domain::Environment;
use mds_node::KeyContext;
use mds_node::metrics::Event;

use crate::error::StoreFailure;
use crate::routes::{route, route_of};
use crate::state::AppState;

/// One request on its way through: what its log line and metrics need,
/// taken before it runs (the request is consumed by then).
pub struct Entry {
    start: Instant,
    route: usize,
    /// Method and redacted path, only when the line will be written.
    logged: Option<(Method, String)>,
    /// Whether the request is a probe's, logged at `debug`.
    probe: bool,
}

/// Whether `path` is a probe's (a row of the route table marked so:
/// health, readiness, metrics), whose line is written at `debug` only.
pub fn is_probe(path: &str) -> bool {
    probe_route(route_of(path))
}

/// Whether the route table's row `index` is a probe's.
fn probe_route(index: usize) -> bool {
    route(index).is_some_and(|r| r.probe)
}

impl Entry {
    /// Starts the clock on `req`.
    pub fn begin(req: &Request) -> Self {
        let path = req.uri().path();
        let index = route_of(path);
        let probe = probe_route(index);
        let enabled = if probe {
            tracing::enabled!(target: "mds::access", tracing::Level::DEBUG)
        } else {
            tracing::enabled!(target: "mds::access", tracing::Level::INFO)
        };
        Entry {
            start: Instant::now(),
            route: index,
            logged: enabled.then(|| (req.method().clone(), redact(path))),
            probe,
        }
    }

    /// Whether its line will be written.
    pub fn logs(&self) -> bool {
        self.logged.is_some()
    }

    /// The request's route: an index in [`crate::routes::ROUTES`] (its
    /// length for none).
    pub fn route(&self) -> usize {
        self.route
    }

    /// Counts the answered request in the node's metrics and writes its
    /// line, with the caller's `key` when it was authenticated.
    pub fn finish(self, state: &AppState, resp: &Response, request_id: &HeaderValue, key: Option<&KeyContext>) {
        let latency = self.start.elapsed();
        state.node().metrics().request(self.route, resp.status().as_u16(), latency);
        if resp.extensions().get::<StoreFailure>().is_some() {
            state.node().metrics().event(Event::StoreError);
        }
        if let Some((method, path)) = self.logged {
            let key = key.map(|k| k.prefix.as_str());
            // One line, at the level of its kind (a macro's level is fixed).
            macro_rules! line {
                ($level:ident) => {
                    tracing::$level!(
                        target: "mds::access",
                        %method,
                        %path,
                        status = resp.status().as_u16(),
                        latency_us = latency.as_micros() as u64,
                        request_id = request_id.to_str().unwrap_or("-"),
                        key_prefix = key.unwrap_or("-"),
                        "request"
                    )
                };
            }
            if self.probe {
                line!(debug);
            } else {
                line!(info);
            }
        }
    }
}

/// The path as logged: at most 256 characters, with anything that looks like
/// a key cut off after its scheme.
fn redact(path: &str) -> String {
    let mut out: String = path.chars().take(256).collect();
    for scheme in Environment::ALL.map(Environment::scheme) {
        let mut from = 0;
        while let Some(i) = out[from..].find(scheme) {
            let start = from + i + scheme.len();
            let end = out[start..].find(|c: char| !c.is_ascii_alphanumeric()).map_or(out.len(), |j| start + j);
            out.replace_range(start..end, "[redacted]");
            from = start + "[redacted]".len();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{is_probe, redact};

    #[test]
    fn probes_are_the_three_probe_paths() {
        assert!(is_probe("/metrics") && is_probe("/healthz") && is_probe("/readyz"));
        assert!(!is_probe("/metrics/") && !is_probe("/v1/companies") && !is_probe("/healthz/x"));
    }

    #[test]
    fn keys_in_paths_are_redacted() {
        assert_eq!(redact("/v1/news/mds_live_abcDEF123/x"), "/v1/news/mds_live_[redacted]/x");
        assert_eq!(redact("/a/mds_test_x/mds_live_y"), "/a/mds_test_[redacted]/mds_live_[redacted]");
        assert_eq!(redact("/v1/companies"), "/v1/companies");
    }
}
