//! Traces (API.md 16): with `--otlp-endpoint`, one OpenTelemetry span per
//! request ([`RequestSpan`]), handed to the exporter ([`otlp::Tracer`]),
//! which sends them in batches over OTLP/HTTP from a task of its own.
//!
//! A W3C Trace Context `traceparent` from the caller is continued: the
//! request's span joins the caller's trace as a child of the caller's span
//! (and `tracestate` is kept with it). A request without one, or with one
//! that does not parse, starts a trace. A caller that says its span is not
//! sampled (flag `01` unset) gets no span, as OpenTelemetry's default
//! parent-based sampler decides.
//!
//! The span is an `http.server` span of the semantic conventions: its name
//! `{method} {http.route}`, its attributes `http.request.method`,
//! `http.route` (the route table's template, never the raw path, which may
//! carry identifiers or a key sent by mistake), `http.response.status_code`,
//! `error.type` on a `5xx` (whose status is then `ERROR`), and two of ours:
//! `mds.key_prefix` (the caller's key prefix when it sent a key that was
//! found; never the key; on the admin listener `mds.admin_token`, the
//! token's name) and `mds.request_id` (the `X-Request-Id` of the access
//! log's line).
//!
//! Each store and Redis call made while serving the request
//! ([`mds_domain::calls`]) is a child span of it: a client span named
//! `{operation} {system}` (`action_page sqlite`, `EVALSHA redis`), with
//! `db.system` and `db.operation.name`, its status `ERROR` when it failed.

pub mod otlp;

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use rand::Rng;

use mds_domain::calls::Call;

use super::access_log::Caller;
use super::problem::STANDARD_METHODS;
use otlp::{Attr, Span, SpanKind, Tracer};

/// The W3C Trace Context header naming the caller's span.
pub static TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");

/// The W3C Trace Context header of vendors' trace state, kept with the span.
pub static TRACESTATE: HeaderName = HeaderName::from_static("tracestate");

/// The longest `tracestate` kept (the W3C's limit on what a vendor must
/// pass on is 512 characters); a longer one is dropped.
const MAX_TRACESTATE: usize = 512;

/// The caller's span, from a valid `traceparent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parent {
    /// The trace the caller's span belongs to (never all zero).
    pub trace_id: [u8; 16],
    /// The caller's span (never all zero).
    pub span_id: [u8; 8],
    /// Whether the caller sampled its span (flag `01`).
    pub sampled: bool,
}

impl Parent {
    /// Reads a `traceparent` value (`version-traceid-parentid-flags`, lower
    /// case hex) as the W3C Trace Context (level 1) says: version `ff` is
    /// invalid, version `00` is exactly 55 characters, a later version at
    /// least that and then `-` before anything further; ids all zero are
    /// invalid.
    pub fn parse(v: &[u8]) -> Option<Parent> {
        if v.len() < 55 || v[2] != b'-' || v[35] != b'-' || v[52] != b'-' {
            return None;
        }
        let version = hex::<1>(&v[0..2])?[0];
        if version == 0xff || (version == 0 && v.len() != 55) || (v.len() > 55 && v[55] != b'-') {
            return None;
        }
        let trace_id = hex::<16>(&v[3..35])?;
        let span_id = hex::<8>(&v[36..52])?;
        let flags = hex::<1>(&v[53..55])?[0];
        if trace_id == [0; 16] || span_id == [0; 8] {
            return None;
        }
        Some(Parent { trace_id, span_id, sampled: flags & 1 == 1 })
    }
}

/// `N` bytes of `2 * N` lower-case hex digits.
fn hex<const N: usize>(digits: &[u8]) -> Option<[u8; N]> {
    fn nibble(d: u8) -> Option<u8> {
        match d {
            b'0'..=b'9' => Some(d - b'0'),
            b'a'..=b'f' => Some(d - b'a' + 10),
            _ => None,
        }
    }
    if digits.len() != 2 * N {
        return None;
    }
    let mut out = [0u8; N];
    for (o, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        *o = nibble(pair[0])? << 4 | nibble(pair[1])?;
    }
    Some(out)
}

/// A request's span from its start: its ids, its parent, its clock.
pub struct RequestSpan {
    trace_id: [u8; 16],
    span_id: [u8; 8],
    parent: Option<[u8; 8]>,
    trace_state: Option<Box<str>>,
    /// The method as the request came (`HEAD` before it is served as `GET`).
    method: Method,
    /// Wall-clock start, nanoseconds since the Unix epoch.
    start_ns: u64,
    /// Monotonic start: the span's end is its start plus what this measures.
    started: Instant,
}

impl RequestSpan {
    /// Starts the span of a request with `headers` and `method`: in the
    /// caller's trace when its `traceparent` is valid, else in a new one;
    /// `None` when the caller did not sample its span.
    pub fn begin(headers: &HeaderMap, method: &Method) -> Option<Self> {
        let parent = headers.get(&TRACEPARENT).and_then(|v| Parent::parse(v.as_bytes()));
        if parent.is_some_and(|p| !p.sampled) {
            return None;
        }
        let mut rng = rand::thread_rng();
        let trace_id = match parent {
            Some(p) => p.trace_id,
            None => loop {
                let id: [u8; 16] = rng.r#gen();
                if id != [0; 16] {
                    break id;
                }
            },
        };
        let span_id = span_id(&mut rng);
        let trace_state = parent
            .and_then(|_| headers.get(&TRACESTATE))
            .and_then(|v| v.to_str().ok())
            .filter(|s| !s.is_empty() && s.len() <= MAX_TRACESTATE)
            .map(Into::into);
        let start_ns = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        Some(RequestSpan {
            trace_id,
            span_id,
            parent: parent.map(|p| p.span_id),
            trace_state,
            method: method.clone(),
            start_ns,
            started: Instant::now(),
        })
    }

    /// The trace this span is in.
    pub fn trace_id(&self) -> [u8; 16] {
        self.trace_id
    }

    /// Ends the span with what the request came to, and hands it to
    /// `tracer` (which drops it, counted, rather than wait when its queue
    /// is full), with a child span for each of `calls`, the store and
    /// Redis calls made while serving it. `route` is the route table's
    /// template of the request (`None` when no route matched), `caller`
    /// who made it.
    pub fn finish(
        self,
        tracer: &Tracer,
        route: Option<&'static str>,
        status: StatusCode,
        caller: Caller<'_>,
        request_id: &HeaderValue,
        calls: Vec<Call>,
    ) {
        let end_ns = self.start_ns + self.started.elapsed().as_nanos() as u64;
        let (method, original) = known_method(&self.method);
        let name = match route {
            Some(route) => format!("{method} {route}"),
            None => method.to_owned(),
        };
        let mut attributes = Vec::with_capacity(7);
        attributes.push(("http.request.method", Attr::Str(method.into())));
        if let Some(original) = original {
            attributes.push(("http.request.method_original", Attr::Str(original.to_owned().into())));
        }
        if let Some(route) = route {
            attributes.push(("http.route", Attr::Str(route.into())));
        }
        attributes.push(("http.response.status_code", Attr::Int(i64::from(status.as_u16()))));
        let error = status.is_server_error();
        if error {
            attributes.push(("error.type", Attr::Str(status.as_str().to_owned().into())));
        }
        match caller {
            Caller::Key(key) => attributes.push(("mds.key_prefix", Attr::Str(key.prefix.as_str().to_owned().into()))),
            Caller::Admin(actor) => attributes.push(("mds.admin_token", Attr::Str(actor.as_str().to_owned().into()))),
            Caller::None => {}
        }
        if let Ok(id) = request_id.to_str() {
            attributes.push(("mds.request_id", Attr::Str(id.to_owned().into())));
        }
        for call in calls {
            tracer.export(self.child(call));
        }
        tracer.export(Span {
            trace_id: self.trace_id,
            span_id: self.span_id,
            parent_span_id: self.parent,
            trace_state: self.trace_state,
            name,
            start_ns: self.start_ns,
            end_ns,
            attributes,
            error,
            kind: SpanKind::Server,
        });
    }

    /// The client span of `call`, a child of this one: named by its
    /// operation, with the semantic conventions' `db.system` and
    /// `db.operation.name` (the store's method, or the Redis command).
    fn child(&self, call: Call) -> Span {
        let mut attributes =
            vec![("db.system", Attr::Str(call.system.into())), ("db.operation.name", Attr::Str(call.operation.into()))];
        if call.error {
            attributes.push(("error.type", Attr::Str("error".into())));
        }
        Span {
            trace_id: self.trace_id,
            span_id: span_id(&mut rand::thread_rng()),
            parent_span_id: Some(self.span_id),
            trace_state: self.trace_state.clone(),
            name: format!("{} {}", call.operation, call.system),
            start_ns: call.start_ns,
            end_ns: call.end_ns,
            attributes,
            error: call.error,
            kind: SpanKind::Client,
        }
    }
}

/// A random span id (never all zero).
fn span_id(rng: &mut impl Rng) -> [u8; 8] {
    loop {
        let id: [u8; 8] = rng.r#gen();
        if id != [0; 8] {
            break id;
        }
    }
}

/// The method as `http.request.method` has it: one of the methods the
/// conventions know, else `_OTHER` with the original (at most 32
/// characters of it) beside.
fn known_method(method: &Method) -> (&'static str, Option<&str>) {
    // In the order of [`STANDARD_METHODS`].
    const NAMES: [&str; 9] = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"];
    match STANDARD_METHODS.iter().position(|m| m == method) {
        Some(i) => (NAMES[i], None),
        None => {
            let s = method.as_str();
            ("_OTHER", Some(&s[..s.len().min(32)]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_valid_traceparent_is_read() {
        let p = Parent::parse(VALID.as_bytes()).unwrap();
        assert_eq!(p.trace_id[0], 0x4b);
        assert_eq!(p.trace_id[15], 0x36);
        assert_eq!(p.span_id, [0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]);
        assert!(p.sampled);
        assert!(!Parent::parse(VALID.replace("-01", "-00").as_bytes()).unwrap().sampled);
        // A later version may carry more, after a dash.
        let later = VALID.replacen("00-", "01-", 1);
        assert!(Parent::parse(format!("{later}-whatever").as_bytes()).is_some());
        assert!(Parent::parse(format!("{later}x").as_bytes()).is_none());
    }

    #[test]
    fn invalid_traceparents_are_refused() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
        ] {
            assert_eq!(Parent::parse(bad.as_bytes()), None, "{bad}");
        }
    }

    #[test]
    fn spans_continue_the_callers_trace_or_start_one() {
        let mut h = HeaderMap::new();
        let fresh = RequestSpan::begin(&h, &Method::GET).unwrap();
        assert!(fresh.parent.is_none() && fresh.trace_id != [0; 16]);
        h.insert(&TRACEPARENT, HeaderValue::from_static(VALID));
        h.insert(&TRACESTATE, HeaderValue::from_static("congo=t61rcWkgMzE"));
        let joined = RequestSpan::begin(&h, &Method::GET).unwrap();
        assert_eq!(joined.trace_id, Parent::parse(VALID.as_bytes()).unwrap().trace_id);
        assert_eq!(joined.parent, Some([0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]));
        assert_eq!(joined.trace_state.as_deref(), Some("congo=t61rcWkgMzE"));
        h.insert(&TRACEPARENT, HeaderValue::from_static("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"));
        assert!(RequestSpan::begin(&h, &Method::GET).is_none(), "not sampled by the caller");
    }

    #[test]
    fn unknown_methods_are_other() {
        assert_eq!(known_method(&Method::HEAD), ("HEAD", None));
        let odd = Method::from_bytes(b"PROPFIND").unwrap();
        assert_eq!(known_method(&odd), ("_OTHER", Some("PROPFIND")));
    }
}
