//! Events (contract section 11): the log (`GET /v1/events`, a list request
//! like the others: [`EventsRequest`]), the stream (`GET
//! /v1/events/stream`, followed with resume: [`EventStreamRequest`]) and
//! the check of a webhook delivery ([`verify_webhook`]).

use std::collections::VecDeque;
use std::time::Duration;

use futures_util::Stream;
use mds_domain::event::{ISIN, SINCE, TAG, TICKER, TYPES};
use mds_domain::webhook::VerifyError;
use mds_domain::{Event, Problem};
use reqwest::header::{AUTHORIZATION, HeaderMap};

use crate::client::Client;
use crate::error::{Error, Result};
use crate::list::ListRequest;

/// A `GET /v1/events` request: the log oldest first, filters combined with
/// AND; one page, every page, a stream or a vector as every list.
///
/// ```no_run
/// # async fn example(client: mds_client::Client) -> Result<(), mds_client::Error> {
/// use mds_client::EventFilters as _;
/// let page = client.events().types(&["article.published"]).limit(100).send().await?;
/// if let Some(last) = page.data.last() {
///     // Later: what came after it.
///     let newer = client.events().since(&last.id.to_string()).all().await?;
///     println!("{} new events", newer.len());
/// }
/// # Ok(()) }
/// ```
pub type EventsRequest = ListRequest<Event>;

/// The filters of the event log and the stream, named once for both
/// requests (`since` aside: a list parameter of the log, `Last-Event-ID`
/// for the stream).
pub trait EventFilters: Sized {
    /// Sets the filter parameter `name`.
    #[doc(hidden)]
    fn with(self, name: &'static str, value: String) -> Self;

    /// Only these types (`article.published`, `article.updated`,
    /// `company.changed`, `corporate_action.added`, `corporate_action.changed`,
    /// `corporate_action.removed`, `prices.published`).
    fn types(self, types: &[&str]) -> Self {
        self.with(TYPES, types.join(","))
    }

    /// Only events about the company with this ISIN.
    fn isin(self, isin: impl Into<String>) -> Self {
        self.with(ISIN, isin.into())
    }

    /// Only events about the company with this ticker.
    fn ticker(self, ticker: impl Into<String>) -> Self {
        self.with(TICKER, ticker.into())
    }

    /// Only article events carrying this tag.
    fn tag(self, tag: impl Into<String>) -> Self {
        self.with(TAG, tag.into())
    }
}

impl EventFilters for EventsRequest {
    fn with(self, name: &'static str, value: String) -> Self {
        self.set(name, value)
    }
}

/// The position of `GET /v1/events`.
impl EventsRequest {
    /// After this event id (exclusive).
    pub fn since(self, id: &str) -> Self {
        self.set(SINCE, id.to_owned())
    }
}

/// How long a stream may be silent (the server comments every 15 s) before
/// the client takes the connection for dead and resumes on a new one.
pub const STREAM_SILENCE: Duration = Duration::from_secs(45);

/// A `GET /v1/events/stream` request: filters, a position, then
/// [`follow`](Self::follow).
#[derive(Debug, Clone)]
#[must_use]
pub struct EventStreamRequest {
    client: Client,
    params: Vec<(&'static str, String)>,
    last_event_id: Option<String>,
}

impl EventStreamRequest {
    /// A stream request without filters, from the next event committed.
    pub(crate) fn new(client: Client) -> Self {
        EventStreamRequest { client, params: Vec::new(), last_event_id: None }
    }

    /// Starts after this event id (no gap from it), as `Last-Event-ID`.
    pub fn since(mut self, id: &str) -> Self {
        self.last_event_id = Some(id.to_owned());
        self
    }

    /// Every event from the position on, as it is committed. A connection
    /// that drops (or falls silent for [`STREAM_SILENCE`]) is opened again
    /// after the last event received (`Last-Event-ID`), so nothing is
    /// missed or repeated; the wait between tries grows from the client's
    /// backoff to its cap. An answer that is an error (`400`, `401`, `410`,
    /// `429` beyond the client's retries) is yielded, and the stream ends.
    ///
    /// ```no_run
    /// # async fn example(client: mds_client::Client) -> Result<(), mds_client::Error> {
    /// use futures_util::StreamExt as _;
    /// use mds_client::EventFilters as _;
    /// let mut events = std::pin::pin!(client.event_stream().types(&["article.published"]).follow());
    /// while let Some(e) = events.next().await {
    ///     let e = e?;
    ///     println!("{} {}", e.id, e.data["headline"]);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn follow(self) -> impl Stream<Item = Result<Event>> + Send + 'static {
        let state = Following { req: self, resp: None, buf: Vec::new(), ready: VecDeque::new(), failures: 0 };
        futures_util::stream::unfold(Some(state), |state| async move {
            let mut state = state?;
            match state.next().await {
                Ok(e) => Some((Ok(e), Some(state))),
                Err(e) => Some((Err(e), None)),
            }
        })
    }
}

impl EventFilters for EventStreamRequest {
    fn with(mut self, name: &'static str, value: String) -> Self {
        self.params.retain(|(n, _)| *n != name);
        self.params.push((name, value));
        self
    }
}

/// A stream being followed.
struct Following {
    req: EventStreamRequest,
    resp: Option<reqwest::Response>,
    buf: Vec<u8>,
    ready: VecDeque<Event>,
    /// Connections in a row that failed.
    failures: u32,
}

impl Following {
    /// The next event, connecting (again) as needed.
    async fn next(&mut self) -> Result<Event> {
        loop {
            if let Some(e) = self.ready.pop_front() {
                self.req.last_event_id = Some(e.id.to_string());
                return Ok(e);
            }
            let Some(resp) = self.resp.as_mut() else {
                self.connect().await?;
                continue;
            };
            match tokio::time::timeout(STREAM_SILENCE, resp.chunk()).await {
                Ok(Ok(Some(bytes))) => {
                    self.failures = 0;
                    self.buf.extend_from_slice(&bytes);
                    self.take_frames()?;
                }
                // Ended, failed or silent: resume on a new connection.
                _ => {
                    self.resp = None;
                    self.buf.clear();
                }
            }
        }
    }

    /// Opens the stream after the last event received; waits before a
    /// retry of a connection that failed.
    async fn connect(&mut self) -> Result<()> {
        let client = &self.req.client;
        if self.failures > 0 {
            tokio::time::sleep(client.backoff_for(self.failures)).await;
        }
        let mut url = client.url(&["v1", "events", "stream"]);
        for (n, v) in &self.req.params {
            url.query_pairs_mut().append_pair(n, v);
        }
        let mut req = client
            .http()
            .get(url)
            .header(AUTHORIZATION, client.auth_header())
            // A stream has no end: no overall timeout (silence is watched).
            .timeout(Duration::from_secs(100 * 365 * 86_400));
        if let Some(id) = &self.req.last_event_id {
            req = req.header("last-event-id", id.as_str());
        }
        match req.send().await {
            Ok(resp) if resp.status().is_success() => {
                self.resp = Some(resp);
                Ok(())
            }
            Ok(resp) => {
                let status = resp.status().as_u16();
                let body = resp.bytes().await.unwrap_or_default();
                match serde_json::from_slice::<Problem>(&body) {
                    // The node is busy or not ready: retried as a drop is.
                    Ok(_) if status == 503 => {
                        self.failures += 1;
                        Ok(())
                    }
                    Ok(problem) => Err(Error::Api { status, problem: Box::new(problem) }),
                    Err(_) => Err(Error::UnexpectedResponse {
                        status,
                        body: String::from_utf8_lossy(&body[..body.len().min(512)]).into_owned(),
                    }),
                }
            }
            Err(_) => {
                self.failures += 1;
                Ok(())
            }
        }
    }

    /// Moves the complete frames of the buffer to `ready` (comments
    /// skipped).
    fn take_frames(&mut self) -> Result<()> {
        while let Some(end) = self.buf.windows(2).position(|w| w == b"\n\n") {
            let frame: Vec<u8> = self.buf.drain(..end + 2).collect();
            let frame = String::from_utf8_lossy(&frame);
            let data: String = frame.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim_start).collect();
            if data.is_empty() {
                continue;
            }
            self.ready.push_back(serde_json::from_str(&data).map_err(Error::Decode)?);
        }
        Ok(())
    }
}

/// Checks a webhook delivery received by your endpoint: `secret` is the
/// endpoint's (`whsec_…`), `headers` and `body` the request as received
/// (the body's exact bytes, before any JSON parsing). Passes when one of
/// the `webhook-signature` values is the endpoint's signature of
/// `"{webhook-id}.{webhook-timestamp}.{body}"` and the timestamp is within
/// 5 minutes of this machine's clock; refuse the delivery otherwise.
///
/// ```no_run
/// # fn example(headers: &reqwest::header::HeaderMap, body: &[u8]) {
/// let secret = std::env::var("MDS_WEBHOOK_SECRET").unwrap();
/// match mds_client::verify_webhook(&secret, headers, body) {
///     Ok(()) => { /* process the event */ }
///     Err(e) => eprintln!("refused: {e}"),
/// }
/// # }
/// ```
pub fn verify_webhook(secret: &str, headers: &HeaderMap, body: &[u8]) -> std::result::Result<(), VerifyError> {
    let now = chrono::Utc::now().timestamp();
    mds_domain::webhook::verify(secret, |name| headers.get(name).and_then(|v| v.to_str().ok()), body, now)
}
