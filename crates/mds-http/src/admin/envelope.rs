//! The envelope of every request on the admin listener (an axum
//! middleware: admin traffic is light, so the public envelope's hand-written
//! service is not needed here). In order:
//!
//! 1. `X-Request-Id` in and out ([`request_id`]), as on the public listener.
//! 2. `HEAD` served as `GET` ([`head`]).
//! 3. On `/admin/…`: a key-like value in the query string is refused
//!    (`400 api_key_in_query`, contract 2.3), then the admin token is
//!    checked (`401 missing_admin_token` / `invalid_admin_token`); the
//!    caller's [`Actor`] goes into the request's extensions.
//! 4. The handler, bounded by the request timeout ([`timeout`]); a `POST`
//!    with `Idempotency-Key` runs once per key and request
//!    ([`mds_node::idempotency`]): a retry gets the first answer (with
//!    `Idempotent-Replayed: true`), the same key with another request
//!    `409 idempotency_conflict`, and a retry while the first still runs
//!    waits for its answer (up to the request timeout).
//! 5. A `GET` whose `If-None-Match` names the answer's `ETag` gets `304`
//!    ([`etag::not_modified`]); admin answers are `Cache-Control: private,
//!    no-cache` (kept, revalidated every time) and problems `no-store`.
//! 6. Every error as problem+json with the request id ([`problem`]).
//! 7. One log line: method, path (key-like segments are never written:
//!    paths name prefixes, not keys), status, latency, request id and the
//!    token's name.

use std::pin::pin;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use mds_domain::{Actor, Problem};

use super::problems;
use crate::auth;
use crate::error::ApiError;
use crate::middleware::request_id::{self, X_REQUEST_ID};
use crate::middleware::{etag, head, problem, timeout};
use crate::state::AppState;

/// The request header of idempotent `POST`s.
const IDEMPOTENCY_KEY: &str = "idempotency-key";

/// The largest body an idempotent `POST` may have (it is read whole to be
/// compared).
const MAX_BODY: usize = 1 << 20;

/// `Cache-Control` of the admin API's `200`s.
const ADMIN_CACHING: &str = "private, no-cache";

/// Serves `req` in the envelope (see the [module](self)).
pub async fn wrap(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let started = Instant::now();
    let request_id = request_id::assign(req.headers());
    let head = head::as_get(&mut req);
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let mut actor = None;
    let resp = if path.starts_with("/admin/") {
        let authorization = req.headers().get(header::AUTHORIZATION).cloned();
        match admit(&state, req.uri(), authorization).await {
            Ok(a) => {
                actor = Some(a.clone());
                req.extensions_mut().insert(a.clone());
                let if_none_match = (method == Method::GET).then(|| req.headers().get(header::IF_NONE_MATCH).cloned());
                let idempotency_key = req.headers().get(IDEMPOTENCY_KEY).cloned();
                let mut resp = match idempotency_key {
                    Some(key) if method == Method::POST => idempotent(&state, &a, &key, req, next).await,
                    _ => {
                        let serve = pin!(next.run(req));
                        timeout::bound(state.http().request_timeout, serve).await
                    }
                };
                if resp.status() == StatusCode::OK {
                    resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static(ADMIN_CACHING));
                }
                match if_none_match.flatten() {
                    Some(inm) if resp.headers().contains_key(header::ETAG) => etag::not_modified(&inm, resp),
                    _ => resp,
                }
            }
            Err(e) => e.into_response(),
        }
    } else {
        let serve = pin!(next.run(req));
        timeout::bound(state.http().request_timeout, serve).await
    };
    let mut resp = problem::render(resp, &request_id, &method);
    if head {
        head::drop_body(&mut resp);
    }
    tracing::info!(
        listener = "admin",
        method = %method,
        path = %redacted(&path),
        status = resp.status().as_u16(),
        latency_ms = started.elapsed().as_secs_f64() * 1000.0,
        request_id = request_id.to_str().unwrap_or(""),
        admin_token = actor.as_ref().map(Actor::as_str).unwrap_or("-"),
        "admin request"
    );
    resp.headers_mut().insert(X_REQUEST_ID.clone(), request_id);
    resp
}

/// The path for the log: a segment that could be a secret (a key or a
/// token pasted where a prefix belongs) is replaced.
fn redacted(path: &str) -> String {
    path.split('/')
        .map(|seg| {
            let secretish = seg.len() > mds_domain::key::KEY_PREFIX_LEN + 1
                && (mds_domain::key::looks_like_key(seg) || seg.starts_with(mds_domain::admin::ADMIN_TOKEN_SCHEME));
            if secretish { "[redacted]" } else { seg }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The caller of an `/admin/…` request, or the refusal.
async fn admit(
    state: &AppState,
    uri: &axum::http::Uri,
    authorization: Option<HeaderValue>,
) -> Result<Actor, crate::error::ApiError> {
    auth::refuse_key_in_query(uri)?;
    let value = authorization.ok_or_else(problems::missing_token)?;
    let value = value.to_str().map_err(|_| problems::invalid_token())?;
    let token = auth::bearer_token(value).ok_or_else(problems::missing_token)?;
    match mds_node::admin::authenticate_admin(state.node().store(), token).await {
        Ok(Some(record)) => Ok(Actor::Token(record.name)),
        Ok(None) => Err(problems::invalid_token()),
        Err(e) => Err(e.into()),
    }
}

/// Runs a `POST` with an `Idempotency-Key` once per key and request.
async fn idempotent(state: &AppState, actor: &Actor, key: &HeaderValue, req: Request, next: Next) -> Response {
    use mds_node::idempotency::{self, Claim};
    let Some(key) = key.to_str().ok().filter(|k| idempotency::valid_key(k)) else {
        return ApiError::invalid_parameter(
            "Idempotency-Key",
            "Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID, say)",
        )
        .into_response();
    };
    let (parts, body) = req.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY).await else {
        return problems::invalid_body("the body is over 1 MiB, or was cut short").into_response();
    };
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let deadline = Instant::now() + state.http().request_timeout;
    loop {
        let claim = idempotency::claim(state.node().store(), actor, key, "POST", &path, &bytes, Utc::now()).await;
        match claim {
            Err(e) => return ApiError::from(e).into_response(),
            Ok(Claim::OtherRequest) => {
                return problems::idempotency_conflict(
                    "this Idempotency-Key was used with another request in the last 24 hours; use a new key for a new \
                     request",
                )
                .into_response();
            }
            Ok(Claim::Running) if Instant::now() < deadline => {
                tokio::time::sleep(std::time::Duration::from_millis(25)).await;
            }
            Ok(Claim::Running) => {
                return problems::idempotency_conflict(
                    "a request with this Idempotency-Key is still running; retry it shortly",
                )
                .into_response();
            }
            Ok(Claim::Replay { status, body }) => return replay(status, body),
            Ok(Claim::Run(ticket)) => {
                let req = Request::from_parts(parts, axum::body::Body::from(bytes));
                let serve = pin!(next.run(req));
                let resp = timeout::bound(state.http().request_timeout, serve).await;
                return record(state, &ticket, resp).await;
            }
        }
    }
}

/// Stores the answer of a claimed request (its problem, for an error:
/// the renderer makes problem bodies later) and returns it; a `5xx`
/// releases the claim instead, so a retry runs.
async fn record(state: &AppState, ticket: &mds_node::idempotency::Ticket, resp: Response) -> Response {
    use mds_node::idempotency;
    let status = resp.status();
    if status.is_server_error() {
        if let Err(e) = idempotency::release(state.node().store(), ticket).await {
            tracing::warn!(error = %e, "could not release an idempotency key");
        }
        return resp;
    }
    let (stored, resp) = match resp.extensions().get::<Problem>() {
        Some(p) => (serde_json::to_vec(p).unwrap_or_default(), resp),
        None => {
            let (parts, body) = resp.into_parts();
            let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default();
            (bytes.to_vec(), Response::from_parts(parts, axum::body::Body::from(bytes)))
        }
    };
    if let Err(e) = idempotency::complete(state.node().store(), ticket, status.as_u16(), &stored).await {
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
