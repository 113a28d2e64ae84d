//! One log line per request: method, path (never the query string, which
//! may hold a key sent by mistake), status, latency, request id, and the
//! key prefix when the caller was authenticated. Never a key. Also the
//! request's metrics (route template, status, latency).
//!
//! Lines are at `info` (target `mds::access`), except those of the probes
//! ([`is_probe`]: a scrape every few seconds is not news), at `debug`.
//! They are written through [`mds_node::access_log`] (the sink the binary
//! installs, which formats them as the log's other lines), not as
//! `tracing` events: this module says what a line holds, once
//! ([`Entry::finish`]), the sink how it is written.
//! Latency is in microseconds (`latency_us`) on every line, admin ones too.
//! The admin listener's lines say `listener` `admin` and the admin token's
//! name (`admin_token`) instead of the key prefix, and its requests are not
//! in the metrics (which count the public routes).

use std::time::Instant;

use axum::extract::Request;
use axum::http::{HeaderValue, Method};
use axum::response::Response;

use mds_domain::{Actor, Environment};
use mds_node::KeyContext;
use mds_node::access_log::{self, Level, Line, Value};
use mds_node::metrics::Event;

use super::envelope::Listener;
use crate::error::StoreFailure;
use crate::state::AppState;

/// Who made a request, as its line (and its span) says.
#[derive(Clone, Copy)]
pub enum Caller<'a> {
    /// Nobody known (an open route, or a refused request).
    None,
    /// The holder of an API key.
    Key(&'a KeyContext),
    /// The holder of an admin token.
    Admin(&'a Actor),
}

/// One request on its way through: what its log line and metrics need,
/// taken before it runs (the request is consumed by then).
pub struct Entry {
    start: Instant,
    listener: Listener,
    route: usize,
    /// Method and redacted path, only when the line will be written.
    logged: Option<(Method, String)>,
    /// The level of its line: `debug` for a probe's.
    level: Level,
}

/// Whether `path` is a probe's on the public listener (a row of the route
/// table marked so: health, readiness, metrics), whose line is written at
/// `debug` only.
pub fn is_probe(path: &str) -> bool {
    let public = Listener::Public;
    public.route(public.route_of(path)).is_some_and(|r| r.probe)
}

impl Entry {
    /// Starts the clock on `req`, to `listener`.
    pub fn begin(req: &Request, listener: Listener) -> Self {
        let path = req.uri().path();
        let index = listener.route_of(path);
        let probe = listener.route(index).is_some_and(|r| r.probe);
        let level = if probe { Level::Debug } else { Level::Info };
        let enabled = access_log::enabled(level);
        Entry {
            start: Instant::now(),
            listener,
            route: index,
            logged: enabled.then(|| {
                let path = match listener {
                    Listener::Public => redact(path),
                    Listener::Admin => crate::admin::envelope::redacted(path),
                };
                (req.method().clone(), path)
            }),
            level,
        }
    }

    /// Whether its line will be written.
    pub fn logs(&self) -> bool {
        self.logged.is_some()
    }

    /// The request's route: an index in its listener's table (its length
    /// for none).
    pub fn route(&self) -> usize {
        self.route
    }

    /// Counts the answered request (of the public listener) in the node's
    /// metrics and writes its line, with its `caller`.
    pub fn finish(self, state: &AppState, resp: &Response, request_id: &HeaderValue, caller: Caller<'_>) {
        let latency = self.start.elapsed();
        if self.listener == Listener::Public {
            state.node().metrics().request(self.route, resp.status().as_u16(), latency);
        }
        if resp.extensions().get::<StoreFailure>().is_some() {
            state.node().metrics().event(Event::StoreError);
        }
        let Some((method, path)) = self.logged else { return };
        let request_id = request_id.to_str().unwrap_or("-");
        // The admin listener's lines say so first, and name the admin token
        // where the public ones name the key.
        let (admin, message, caller) = match self.listener {
            Listener::Admin => {
                (true, "admin request", ("admin_token", if let Caller::Admin(a) = caller { a.as_str() } else { "-" }))
            }
            Listener::Public => {
                (false, "request", ("key_prefix", if let Caller::Key(k) = caller { k.prefix.as_str() } else { "-" }))
            }
        };
        let fields = [
            ("listener", Value::Str("admin")),
            ("method", Value::Display(method.as_str())),
            ("path", Value::Display(&path)),
            ("status", Value::U64(resp.status().as_u16().into())),
            ("latency_us", Value::U64(latency.as_micros() as u64)),
            ("request_id", Value::Str(request_id)),
            (caller.0, Value::Str(caller.1)),
        ];
        let fields = if admin { &fields[..] } else { &fields[1..] };
        access_log::write(&Line { level: self.level, message, fields });
    }
}

/// The path as logged: at most 256 characters, with anything that looks like
/// a key cut off after its scheme.
fn redact(path: &str) -> String {
    // Its first 256 characters: the whole path when it has no more bytes.
    let mut out = match path.char_indices().nth(256).filter(|_| path.len() > 256) {
        Some((end, _)) => path[..end].to_owned(),
        None => path.to_owned(),
    };
    // Every scheme starts `mds_`: a path without it (every request's case)
    // has nothing to redact.
    if !out.as_bytes().windows(4).any(|w| w == b"mds_") {
        return out;
    }
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
        for (path, logged) in [
            ("/v1/news/mds_live_abcDEF123/x", "/v1/news/mds_live_[redacted]/x"),
            ("/a/mds_test_x/mds_live_y", "/a/mds_test_[redacted]/mds_live_[redacted]"),
            ("/v1/companies", "/v1/companies"),
            ("/mds_/mds_liv/x", "/mds_/mds_liv/x"),
        ] {
            assert_eq!(redact(path), logged);
        }
    }

    #[test]
    fn paths_are_cut_at_256_characters() {
        let long = format!("/{}", "é".repeat(300));
        assert_eq!(redact(&long).chars().count(), 256);
        assert_eq!(redact(&long), long.chars().take(256).collect::<String>());
        let ascii = format!("/{}", "a".repeat(255));
        assert_eq!(redact(&ascii), ascii, "256 characters are kept whole");
        assert_eq!(redact(&format!("{ascii}b")), ascii);
        let key_past_the_cut = format!("{ascii}/mds_live_abc");
        assert_eq!(redact(&key_past_the_cut), ascii);
    }
}
