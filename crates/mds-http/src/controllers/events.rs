//! `GET /v1/events` (a page of the event log,
//! [`Node::events_page`](mds_node::Node::events_page)) and `GET
//! /v1/events/stream` (the log as Server-Sent Events,
//! [`Node::open_stream`](mds_node::Node::open_stream)).

use std::convert::Infallible;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;
use mds_domain::{ApiKey, ErrorCode, EventsLogQuery, EventsQuery};
use mds_node::events::{STREAM_LEASE, StreamError};

use super::{Caller, tagged};
use crate::auth::bearer_token;
use crate::error::ApiError;
use crate::params::Query;
use crate::state::AppState;

/// Handler of the log.
#[utoipa::path(
    get,
    path = crate::components::PATH_IN_TABLE,
    description = "The event log, oldest first: `article.published` (a new article), `article.updated` (an \
imported article that changed; `data` is the article as the news list shows it, without `body`), and \
`company.changed` (`data`: the company's detail after the change, the top-level fields that changed, and the \
identity events it gained), `corporate_action.added` and `corporate_action.changed` (`data`: the corporate action \
as stored, new or changed by an import), `corporate_action.removed` (`data`: `action`, the action as last stored, \
and `replaced_by`, the ids of the actions its publications now belong to, when a later import resolved them to \
another ISIN), and `prices.published` (`data`: `date`, `exchange` and how many `bars` the \
day holds, for each trading day an import of daily price files wrote; about no company, so `isin` and `ticker` do \
not admit it). Ids increase in commit order across the service. Pass the last id you processed as \
`since` to read what came after it; page with `next_cursor` passed back as `cursor` (with the same filters). Events \
are kept 30 days by default: an older `since` is `410 events_expired`.",
    params(EventsQuery, mds_domain::PageParams),
    responses(
        (status = 200, description = "A page of events.", body = crate::components::EventPage, content_type = "application/json"),
        (status = 400, response = crate::components::EventsBadRequest),
        (status = 410, response = crate::components::EventsExpired),
    )
)]
pub async fn list(State(state): State<AppState>, Query(query): Query<EventsLogQuery>) -> Result<Response, ApiError> {
    Ok(tagged(state.node().events_page(&query).await?))
}

/// Handler of the stream.
#[utoipa::path(
    get,
    path = crate::components::PATH_IN_TABLE,
    description = "The event log as Server-Sent Events (`text/event-stream`): for each event, `id:` its id, \
`event:` its type and `data:` its JSON (as in `GET /v1/events`), with the log's filters. Without a position the \
stream starts with the next event committed; `Last-Event-ID` (sent by EventSource on reconnect) or `since` resumes \
after that event with no gap. A comment line every 15 s keeps proxies from closing it. Opening a stream counts as \
one request; the events it carries do not. A key may hold 2 streams open across all nodes (a third is `429 \
too_many_streams`); a revoked or expired key's streams close within a second. An event committed through any node \
reaches every node's streams within a second.",
    params(
        EventsQuery,
        ("Last-Event-ID" = Option<String>, Header, pattern = "^evt_[0-7][0-9a-f]{15}$", description = "Resume after this event id (takes precedence over `since`)."),
    ),
    responses(
        (status = 200, description = "The stream.", content_type = "text/event-stream", body = String),
        (status = 400, response = crate::components::EventsBadRequest),
        (status = 410, response = crate::components::EventsExpired),
        (status = 429, response = crate::components::StreamTooManyRequests),
    )
)]
pub async fn stream(
    State(state): State<AppState>,
    Caller(ctx): Caller,
    headers: HeaderMap,
    Query(query): Query<EventsQuery>,
) -> Result<Response, ApiError> {
    // The guard parsed this key already; it is kept to check it while the
    // stream is open.
    let key = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_token)
        .and_then(|t| ApiKey::parse(t).ok())
        .ok_or_else(|| ApiError::internal(&"the guard let a request without a key through"))?;
    let last = headers.get("last-event-id").map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let mut frames = state.shared_node().open_stream(&ctx, key, query, last).await.map_err(|e| match e {
        StreamError::Read(e) => ApiError::from(e),
        StreamError::TooMany => ApiError::new(ErrorCode::TooManyStreams, StreamError::TooMany.to_string())
            .with_violated_policies(vec!["streams".to_owned()])
            .with_header(header::RETRY_AFTER, HeaderValue::from(STREAM_LEASE.as_secs())),
    })?;
    let body = futures_util::stream::poll_fn(move |cx| frames.poll_recv(cx).map(|f| f.map(Ok::<_, Infallible>)));
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-store")
        .header("x-accel-buffering", "no")
        .body(Body::from_stream(body))
        .map_err(|e| ApiError::internal(&e))
}
