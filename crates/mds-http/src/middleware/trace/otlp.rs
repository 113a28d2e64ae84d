//! The OTLP/HTTP exporter of spans ([`Tracer`]): spans go into a bounded
//! queue, and a task of their own sends them in batches as
//! `ExportTraceServiceRequest`s in OTLP's JSON encoding (`POST
//! {endpoint}/v1/traces`, `Content-Type: application/json`; ids in hex, as
//! OTLP/JSON has them, 64-bit integers as decimal strings).
//!
//! A request never waits for it: when the queue is full (the receiver slow
//! or down), a span is dropped and counted in
//! `mds_trace_spans_dropped_total`, as are the spans of a batch the
//! receiver did not take; those it took are counted in
//! `mds_trace_spans_exported_total`. A failing receiver is logged once
//! when it starts failing and once when it is back.

use std::borrow::Cow;
use std::io::Write as _;
use std::time::Duration;

use mds_node::metrics;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// Spans the queue holds before new ones are dropped.
const QUEUE: usize = 8192;

/// The most spans in one export request.
const BATCH: usize = 512;

/// How long the first span of a batch waits for others before the batch
/// is sent.
const BATCH_DELAY: Duration = Duration::from_secs(1);

/// How long one export request may take.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// The path OTLP/HTTP appends to a base endpoint for traces.
const TRACES_PATH: &str = "v1/traces";

/// The OTLP/HTTP traces URL of a base endpoint (`http://collector:4318`,
/// as `OTEL_EXPORTER_OTLP_ENDPOINT` means it): `/v1/traces` appended to
/// its path. Only `http` and `https` URLs are taken.
pub fn traces_url(base: &str) -> Result<reqwest::Url, String> {
    let url = reqwest::Url::parse(base.trim()).map_err(|e| format!("not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err("an http:// or https:// URL with a host is needed".into());
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err("a base URL without query or fragment is needed".into());
    }
    let mut url = url;
    let path = format!("{}/{TRACES_PATH}", url.path().trim_end_matches('/'));
    url.set_path(&path);
    Ok(url)
}

/// An attribute's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Attr {
    /// A string (a template or a name, most often, borrowed).
    Str(Cow<'static, str>),
    /// A 64-bit integer.
    Int(i64),
}

/// A finished span, as the exporter sends it.
#[derive(Debug, Clone)]
pub struct Span {
    /// Its trace.
    pub trace_id: [u8; 16],
    /// Its own id.
    pub span_id: [u8; 8],
    /// The caller's span, when it continued one.
    pub parent_span_id: Option<[u8; 8]>,
    /// The caller's `tracestate`, kept as it came.
    pub trace_state: Option<Box<str>>,
    /// Its name (`GET /v1/companies`).
    pub name: String,
    /// Start, nanoseconds since the Unix epoch.
    pub start_ns: u64,
    /// End, nanoseconds since the Unix epoch.
    pub end_ns: u64,
    /// Its attributes, by semantic-convention name.
    pub attributes: Vec<(&'static str, Attr)>,
    /// Whether it failed (status `ERROR`); else its status is unset.
    pub error: bool,
    /// What it is: a request served, or a call made while serving one.
    pub kind: SpanKind,
}

/// A span's kind, as OTLP numbers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    /// A request served (`SPAN_KIND_SERVER`).
    Server = 2,
    /// A call to the store or Redis (`SPAN_KIND_CLIENT`).
    Client = 3,
}

/// What the export task is sent.
enum Msg {
    /// A span to export.
    Span(Box<Span>),
    /// Send what is queued, then answer.
    Flush(oneshot::Sender<()>),
}

/// The handle on the exporter: cheap to clone; [`Tracer::export`] never
/// waits.
#[derive(Clone)]
pub struct Tracer {
    tx: mpsc::Sender<Msg>,
    url: reqwest::Url,
}

impl std::fmt::Debug for Tracer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tracer").field("url", &self.url.as_str()).finish()
    }
}

impl Tracer {
    /// Starts the export task (on the current Tokio runtime), sending to
    /// `url` (made by [`traces_url`]).
    pub fn start(url: reqwest::Url) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder().timeout(EXPORT_TIMEOUT).build()?;
        let (tx, rx) = mpsc::channel(QUEUE);
        tokio::spawn(run(client, url.clone(), rx));
        Ok(Tracer { tx, url })
    }

    /// Where the spans go.
    pub fn url(&self) -> &reqwest::Url {
        &self.url
    }

    /// Queues `span` for export, or drops it (counted) when the queue is
    /// full.
    pub fn export(&self, span: Span) {
        if self.tx.try_send(Msg::Span(Box::new(span))).is_err() {
            metrics::trace_spans_dropped(1);
        }
    }

    /// Sends what is queued now, waiting at most `wait` (at the end of the
    /// process, so that its last requests' spans are not lost).
    pub async fn flush(&self, wait: Duration) {
        let (ack, done) = oneshot::channel();
        let _ = tokio::time::timeout(wait, async {
            if self.tx.send(Msg::Flush(ack)).await.is_ok() {
                let _ = done.await;
            }
        })
        .await;
    }
}

/// The export task: a batch is sent when it is full, or [`BATCH_DELAY`]
/// after its first span, or on a flush; one request at a time, so a slow
/// receiver fills the queue (and spans are dropped) rather than the
/// memory.
async fn run(client: reqwest::Client, url: reqwest::Url, mut rx: mpsc::Receiver<Msg>) {
    let mut failing = false;
    let mut batch: Vec<Span> = Vec::with_capacity(BATCH);
    loop {
        let Some(first) = rx.recv().await else { return };
        let mut ack = None;
        match first {
            Msg::Span(span) => batch.push(*span),
            Msg::Flush(a) => ack = Some(a),
        }
        let deadline = Instant::now() + BATCH_DELAY;
        while ack.is_none() && batch.len() < BATCH {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some(Msg::Span(span))) => batch.push(*span),
                Ok(Some(Msg::Flush(a))) => ack = Some(a),
                Ok(None) | Err(_) => break,
            }
        }
        if !batch.is_empty() {
            send(&client, &url, &batch, &mut failing).await;
            batch.clear();
        }
        if let Some(ack) = ack {
            let _ = ack.send(());
        }
    }
}

/// Sends one batch, counting its spans exported or dropped.
async fn send(client: &reqwest::Client, url: &reqwest::Url, batch: &[Span], failing: &mut bool) {
    let body = request(batch);
    let sent =
        client.post(url.clone()).header(reqwest::header::CONTENT_TYPE, "application/json").body(body).send().await;
    let outcome = match sent {
        Ok(r) if r.status().is_success() => Ok(()),
        Ok(r) => Err(format!("answered {}", r.status())),
        Err(e) => Err(e.without_url().to_string()),
    };
    let n = batch.len() as u64;
    match outcome {
        Ok(()) => {
            metrics::trace_spans_exported(n);
            if std::mem::take(failing) {
                tracing::info!(endpoint = %url, "the trace receiver takes spans again");
            }
        }
        Err(reason) => {
            metrics::trace_spans_dropped(n);
            if !std::mem::replace(failing, true) {
                tracing::warn!(endpoint = %url, %reason, "cannot export spans (dropped, counted in mds_trace_spans_dropped_total)");
            }
        }
    }
}

/// The `ExportTraceServiceRequest` of `spans`, in OTLP/JSON: one resource
/// (this service), one scope. Written straight into bytes (no tree of
/// values): the export task shares the cores with the requests.
fn request(spans: &[Span]) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 + spans.len() * 640);
    out.extend_from_slice(b"{\"resourceSpans\":[{\"resource\":{\"attributes\":[");
    attr(&mut out, "service.name", &Attr::Str("mds".into()));
    out.push(b',');
    attr(&mut out, "service.version", &Attr::Str(metrics::VERSION.into()));
    out.extend_from_slice(b"]},\"scopeSpans\":[{\"scope\":{\"name\":\"mds-http\",\"version\":");
    string(&mut out, metrics::VERSION);
    out.extend_from_slice(b"},\"spans\":[");
    for (i, s) in spans.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        span(&mut out, s);
    }
    out.extend_from_slice(b"]}]}]}");
    out
}

/// One span in OTLP/JSON.
fn span(out: &mut Vec<u8>, s: &Span) {
    out.extend_from_slice(b"{\"traceId\":");
    hex(out, &s.trace_id);
    out.extend_from_slice(b",\"spanId\":");
    hex(out, &s.span_id);
    if let Some(parent) = &s.parent_span_id {
        out.extend_from_slice(b",\"parentSpanId\":");
        hex(out, parent);
    }
    if let Some(state) = &s.trace_state {
        out.extend_from_slice(b",\"traceState\":");
        string(out, state);
    }
    out.extend_from_slice(b",\"name\":");
    string(out, &s.name);
    // 64-bit integers as decimal strings.
    let kind = s.kind as u8;
    let _ =
        write!(out, ",\"kind\":{kind},\"startTimeUnixNano\":\"{}\",\"endTimeUnixNano\":\"{}\"", s.start_ns, s.end_ns);
    out.extend_from_slice(b",\"attributes\":[");
    for (i, (k, a)) in s.attributes.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        attr(out, k, a);
    }
    // STATUS_CODE_ERROR, else STATUS_CODE_UNSET.
    out.extend_from_slice(if s.error { b"],\"status\":{\"code\":2}}" } else { b"],\"status\":{}}" });
}

/// A `KeyValue` in OTLP/JSON.
fn attr(out: &mut Vec<u8>, key: &str, value: &Attr) {
    out.extend_from_slice(b"{\"key\":");
    string(out, key);
    match value {
        Attr::Str(s) => {
            out.extend_from_slice(b",\"value\":{\"stringValue\":");
            string(out, s);
            out.extend_from_slice(b"}}");
        }
        Attr::Int(i) => {
            let _ = write!(out, ",\"value\":{{\"intValue\":\"{i}\"}}}}");
        }
    }
}

/// A JSON string, escaped.
fn string(out: &mut Vec<u8>, s: &str) {
    serde_json::to_writer(&mut *out, s).expect("a string serialises");
}

/// A JSON string of lower-case hex, as OTLP/JSON writes trace and span ids.
fn hex(out: &mut Vec<u8>, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)]);
        out.push(DIGITS[usize::from(b & 15)]);
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_traces_path_is_appended_to_the_base() {
        let url = |s| traces_url(s).map(|u| u.to_string());
        assert_eq!(url("http://127.0.0.1:4318").unwrap(), "http://127.0.0.1:4318/v1/traces");
        assert_eq!(url("http://collector:4318/").unwrap(), "http://collector:4318/v1/traces");
        assert_eq!(url("https://otel.example/base/").unwrap(), "https://otel.example/base/v1/traces");
        assert!(url("ftp://collector").is_err());
        assert!(url("collector:4318").is_err());
        assert!(url("http://collector:4318/?x=1").is_err());
    }

    #[test]
    fn spans_are_written_as_otlp_json() {
        let s = Span {
            trace_id: [0xab; 16],
            span_id: [1; 8],
            parent_span_id: Some([2; 8]),
            trace_state: Some("a=\"b\"".into()),
            name: "GET /v1/companies".into(),
            start_ns: 1,
            end_ns: 2,
            attributes: vec![("http.response.status_code", Attr::Int(503))],
            error: true,
            kind: SpanKind::Server,
        };
        let v: serde_json::Value = serde_json::from_slice(&request(&[s])).expect("JSON");
        let span = &v["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
        assert_eq!(span["traceId"], "ab".repeat(16));
        assert_eq!(span["spanId"], "0101010101010101");
        assert_eq!(span["parentSpanId"], "0202020202020202");
        assert_eq!(span["endTimeUnixNano"], "2");
        assert_eq!(span["status"]["code"], 2);
        assert_eq!(span["traceState"], "a=\"b\"");
        assert_eq!(span["kind"], 2);
        assert_eq!(span["name"], "GET /v1/companies");
        assert_eq!(span["attributes"][0]["value"]["intValue"], "503");
        assert_eq!(v["resourceSpans"][0]["resource"]["attributes"][0]["value"]["stringValue"], "mds");
    }
}
