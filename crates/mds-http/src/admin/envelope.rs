//! What the envelope ([`crate::middleware::envelope`], one for both
//! listeners) does on the admin routes, which it finds in the admin route
//! table ([`super::routes`]), and on a path that table does not have
//! ([`serve`]). In order:
//!
//! 1. A key-like value in the query string is refused (`400
//!    api_key_in_query`, contract 2.3), then the admin token is checked
//!    (`401 missing_admin_token` / `invalid_admin_token`); the caller's
//!    [`Actor`] goes into the request's extensions. A path no row has needs
//!    the token too, then is `404`.
//! 2. An operation that takes a JSON body: a body over [`MAX_BODY`] is
//!    `413 payload_too_large`, a body not sent as `Content-Type:
//!    application/json` (or `application/…+json`, parameters such as
//!    `charset` allowed) `415 unsupported_media_type`; an empty body needs
//!    no type (the handler says whether it takes none).
//! 3. The handler, bounded by the request timeout ([`timeout`]); on an
//!    idempotent operation (a `POST`) with `Idempotency-Key`, once per key
//!    and request ([`mds_node::idempotency`], claimed at the node's clock's
//!    now): a retry gets the first answer (with `Idempotent-Replayed:
//!    true`), the same key with another request `409
//!    idempotency_conflict`, and a retry while the first still runs waits
//!    for its answer (up to the request timeout).
//! 4. A `200` gets its row's `Cache-Control` (`private, no-cache`: kept,
//!    revalidated every time); a `GET` whose `If-None-Match` names the
//!    answer's `ETag` gets `304` ([`etag::not_modified`]).
//!
//! The request id, `HEAD`, problems and the log line (with the token's
//! name) are the envelope's, as on the public listener.

use std::pin::pin;
use std::time::Instant;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use mds_domain::{Actor, ErrorCode, Problem};

use super::problems;
use crate::auth;
use crate::error::ApiError;
use crate::middleware::{etag, timeout};
use crate::route::{Input, MAX_BODY, Operation, Route};
use crate::state::AppState;

/// The request header of idempotent `POST`s.
const IDEMPOTENCY_KEY: &str = "idempotency-key";

/// Serves `req`, to `route` (`None`: a path the table does not have), in
/// the envelope (see the [module](self)); `call` calls the router, and
/// `actor` is set to the caller once admitted.
pub(crate) async fn serve(
    state: &AppState,
    route: Option<&'static Route>,
    mut req: Request,
    actor: &mut Option<Actor>,
    call: impl AsyncFnOnce(Request) -> Response,
) -> Response {
    let authorization = req.headers().get(header::AUTHORIZATION).cloned();
    let caller = match admit(state, req.uri(), authorization).await {
        Ok(a) => a,
        Err(e) => return e.into_response(),
    };
    *actor = Some(caller.clone());
    req.extensions_mut().insert(caller.clone());
    let method = req.method().clone();
    let if_none_match = req.headers().get(header::IF_NONE_MATCH).filter(|_| method == Method::GET).cloned();
    let mut resp = match route.and_then(|r| r.operation_on(&method)) {
        Some(op) => run(state, &caller, op, req, call).await.unwrap_or_else(|e| e.into_response()),
        None => bounded(state, call(req)).await,
    };
    if let Some(route) = route.filter(|_| resp.status() == StatusCode::OK) {
        resp.headers_mut().insert(header::CACHE_CONTROL, route.caching.header_value(state));
    }
    match if_none_match {
        Some(inm) if resp.headers().contains_key(header::ETAG) => etag::not_modified(&inm, resp),
        _ => resp,
    }
}

/// `serve` bounded by the request timeout.
async fn bounded(state: &AppState, serve: impl Future<Output = Response>) -> Response {
    timeout::bound(state.http().request_timeout, pin!(serve)).await
}

/// Serves an admitted request of `op`: its body read as the row says,
/// then the handler, once per `Idempotency-Key` on an idempotent operation.
async fn run(
    state: &AppState,
    actor: &Actor,
    op: &Operation,
    req: Request,
    call: impl AsyncFnOnce(Request) -> Response,
) -> Result<Response, ApiError> {
    let (parts, body) = req.into_parts();
    let body = match op.input {
        Input::Json => {
            let read = json_body(&parts.headers, body);
            tokio::time::timeout(state.http().request_timeout, read)
                .await
                .map_err(|_| ApiError::timed_out(state.http().request_timeout))??
        }
        // Not read: the handler takes none.
        Input::Nothing => Bytes::new(),
    };
    match parts.headers.get(IDEMPOTENCY_KEY).cloned() {
        Some(key) if op.idempotent => idempotent(state, actor, &key, parts, body, call).await,
        _ => Ok(bounded(state, call(Request::from_parts(parts, Body::from(body)))).await),
    }
}

/// The body of a request to a route that takes JSON: at most [`MAX_BODY`]
/// bytes (else `413 payload_too_large`, refused by its declared length
/// before a byte is read), and, unless empty, sent as JSON (else `415
/// unsupported_media_type`).
pub(crate) async fn json_body(headers: &HeaderMap, body: Body) -> Result<Bytes, ApiError> {
    let too_large = || {
        ApiError::new(
            ErrorCode::PayloadTooLarge,
            format!("the body is over {} KiB, the most a route takes", MAX_BODY >> 10),
        )
    };
    let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        return Err(too_large());
    }
    let mut body = pin!(body);
    let mut bytes = Vec::new();
    while let Some(frame) = std::future::poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
        let frame = frame.map_err(|_| ApiError::new(ErrorCode::InvalidBody, "the body was cut short"))?;
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > MAX_BODY {
                return Err(too_large());
            }
            bytes.extend_from_slice(&data);
        }
    }
    if !bytes.is_empty() && !is_json(headers.get(header::CONTENT_TYPE)) {
        return Err(ApiError::new(
            ErrorCode::UnsupportedMediaType,
            "the body must be JSON, sent with Content-Type: application/json",
        ));
    }
    Ok(Bytes::from(bytes))
}

/// Whether a `Content-Type` names JSON: `application/json` or
/// `application/…+json`, with any parameters (`charset=utf-8`).
fn is_json(content_type: Option<&HeaderValue>) -> bool {
    let Some(value) = content_type.and_then(|v| v.to_str().ok()) else { return false };
    let essence = value.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    essence == "application/json" || essence.strip_prefix("application/").is_some_and(|s| s.ends_with("+json"))
}

/// The path for the log: a segment that could be a secret (a key or a
/// token pasted where a prefix belongs) is replaced; a key's prefix (what
/// admin paths name) is kept.
pub(crate) fn redacted(path: &str) -> String {
    path.split('/')
        .map(|seg| {
            let secretish = seg.len() > mds_domain::key::KEY_PREFIX_LEN + 1
                && (mds_domain::key::looks_like_key(seg) || seg.starts_with(mds_domain::admin::ADMIN_TOKEN_SCHEME));
            if secretish { "[redacted]" } else { seg }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The caller of a request that needs an admin token, or the refusal.
async fn admit(
    state: &AppState,
    uri: &axum::http::Uri,
    authorization: Option<HeaderValue>,
) -> Result<Actor, crate::error::ApiError> {
    auth::refuse_key_in_query(uri)?;
    let value = authorization.ok_or_else(problems::missing_token)?;
    let value = value.to_str().map_err(|_| problems::invalid_token())?;
    let token = auth::bearer_token(value).ok_or_else(problems::missing_token)?;
    match state.node().operator().authenticate(token).await {
        Ok(Some(record)) => Ok(Actor::Token(record.name)),
        Ok(None) => Err(problems::invalid_token()),
        Err(e) => Err(e.into()),
    }
}

/// Runs a request of an idempotent route that carries an
/// `Idempotency-Key` once per key and request (method, path and query,
/// `body`).
async fn idempotent(
    state: &AppState,
    actor: &Actor,
    key: &HeaderValue,
    parts: Parts,
    body: Bytes,
    call: impl AsyncFnOnce(Request) -> Response,
) -> Result<Response, ApiError> {
    use mds_node::idempotency::{self, Claim};
    let Some(key) = key.to_str().ok().filter(|k| idempotency::valid_key(k)) else {
        return Err(ApiError::invalid_parameter(
            "Idempotency-Key",
            "Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID, say)",
        ));
    };
    let conflict = |detail: &str| ApiError::new(ErrorCode::IdempotencyConflict, detail);
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let method = parts.method.as_str().to_owned();
    let deadline = Instant::now() + state.http().request_timeout;
    loop {
        match state.node().operator().claim(actor, key, &method, &path, &body).await? {
            Claim::OtherRequest => {
                return Err(conflict(
                    "this Idempotency-Key was used with another request in the last 24 hours; use a new key for a new \
                     request",
                ));
            }
            Claim::Running if Instant::now() < deadline => {
                tokio::time::sleep(std::time::Duration::from_millis(25)).await;
            }
            Claim::Running => {
                return Err(conflict("a request with this Idempotency-Key is still running; retry it shortly"));
            }
            Claim::Replay { status, body } => return Ok(replay(status, body)),
            Claim::Run(claimed) => {
                let resp = bounded(state, call(Request::from_parts(parts, Body::from(body)))).await;
                return Ok(record(state, &claimed, resp).await);
            }
        }
    }
}

/// Stores the answer of a claimed request (its problem, for an error:
/// the renderer makes problem bodies later) and returns it; a `5xx`
/// releases the claim instead, so a retry runs.
async fn record(state: &AppState, claimed: &mds_node::idempotency::ClaimedKey, resp: Response) -> Response {
    let status = resp.status();
    if status.is_server_error() {
        if let Err(e) = state.node().operator().release(claimed).await {
            tracing::warn!(error = %e, "could not release an idempotency key");
        }
        return resp;
    }
    let (stored, resp) = match resp.extensions().get::<Problem>() {
        Some(p) => (serde_json::to_vec(p).unwrap_or_default(), resp),
        None => {
            let (parts, body) = resp.into_parts();
            let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default();
            (bytes.to_vec(), Response::from_parts(parts, Body::from(bytes)))
        }
    };
    if let Err(e) = state.node().operator().complete(claimed, status.as_u16(), &stored).await {
        // The change is made; a retry would make it again. Said in the log.
        tracing::warn!(error = %e, "could not store the answer of an idempotent request");
    }
    resp
}

/// The first answer again.
fn replay(status: u16, body: Vec<u8>) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut resp = if status.is_client_error() {
        let mut resp = status.into_response();
        if let Ok(p) = serde_json::from_slice::<Problem>(&body) {
            resp.extensions_mut().insert(p);
        }
        resp
    } else {
        let mut resp = crate::controllers::json(body);
        *resp.status_mut() = status;
        resp
    };
    resp.headers_mut().insert("idempotent-replayed", HeaderValue::from_static("true"));
    resp
}
