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
//! 4. The handler, bounded by the request timeout ([`timeout`]).
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
use mds_domain::Actor;

use super::problems;
use crate::auth;
use crate::middleware::request_id::{self, X_REQUEST_ID};
use crate::middleware::{etag, head, problem, timeout};
use crate::state::AppState;

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
                req.extensions_mut().insert(a);
                let if_none_match = (method == Method::GET).then(|| req.headers().get(header::IF_NONE_MATCH).cloned());
                let serve = pin!(next.run(req));
                let mut resp = timeout::bound(state.http.request_timeout, serve).await;
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
        timeout::bound(state.http.request_timeout, serve).await
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
    match mds_node::admin::authenticate_admin(&*state.store, token).await {
        Ok(Some(record)) => Ok(Actor::Token(record.name)),
        Ok(None) => Err(problems::invalid_token()),
        Err(e) => Err(e.into()),
    }
}
