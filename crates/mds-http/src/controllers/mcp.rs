//! `POST /mcp`: the Model Context Protocol's streamable HTTP transport
//! (contract section 12), answering in JSON only (no event streams, no
//! session id: [`crate::mcp::session`]).
//!
//! A request whose `Origin` is not one of `--mcp-allowed-origins` is
//! `403` before anything else (the transport's guard against DNS
//! rebinding); one without `Origin` goes on.
//!
//! The route is [`Access::Delegated`](crate::route::Access::Delegated):
//! the envelope neither guards nor counts the `POST` itself. The handler
//! checks the key first (`401` before the message is read), then makes
//! each tool call's request through the envelope it is handed, as the
//! caller's own `GET` to the route, with the caller's `Authorization`: so
//! a tool call is authenticated, rate limited, counted (by the route's
//! template in the daily ledger), cached and answered exactly as that
//! route, and logged as it.

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use mds_domain::{ErrorCode, Problem};
use tower::Service;

use crate::auth;
use crate::controllers::json;
use crate::error::ApiError;
use crate::mcp::tools::{Reply, Upstream};
use crate::mcp::{ACCEPTED_VERSIONS, session};
use crate::middleware::envelope::Envelope;
use crate::middleware::request_id::X_REQUEST_ID;
use crate::state::AppState;

/// The largest message read: a tool call is a few hundred bytes.
const MAX_MESSAGE: usize = 256 * 1024;

/// The largest route answer taken into a tool result (a page of 200
/// companies is some 100 KiB).
const MAX_ANSWER: usize = 16 * 1024 * 1024;

/// The header naming the protocol version the client speaks.
const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

/// `POST /mcp`: one JSON-RPC message in; its answer (`200`, JSON), or
/// `202` and no body for a notification or a response.
pub async fn post(State(state): State<AppState>, req: Request) -> Result<Response, ApiError> {
    if let Some(refused) = foreign_origin(&state, req.headers()) {
        return Ok(refused);
    }
    auth::refuse_key_in_query(req.uri())?;
    auth::authenticate(&state, req.headers()).await?;
    if let Some(v) = req.headers().get(PROTOCOL_VERSION_HEADER) {
        if !v.to_str().is_ok_and(|v| ACCEPTED_VERSIONS.contains(&v)) {
            return Err(ApiError::new(
                ErrorCode::InvalidParameter,
                "unsupported MCP-Protocol-Version: this server speaks 2025-06-18",
            ));
        }
    }
    let envelope = req.extensions().get::<Envelope>().cloned().ok_or_else(|| {
        ApiError::internal(&"the envelope did not hand itself to POST /mcp (is its row Access::Delegated?)")
    })?;
    let through = Through {
        envelope,
        authorization: req.headers().get(header::AUTHORIZATION).cloned().expect("authenticated above"),
        request_id: req.headers().get(&X_REQUEST_ID).cloned(),
    };
    let message = to_bytes(req.into_body(), MAX_MESSAGE).await.map_err(|_| {
        ApiError::new(ErrorCode::PayloadTooLarge, "an MCP message is at most 256 KiB: send one JSON-RPC message")
    })?;
    Ok(match session::handle(&message, &through).await {
        Some(answer) => json(answer.to_string()),
        None => StatusCode::ACCEPTED.into_response(),
    })
}

/// `403` when the request names an `Origin` not in
/// `--mcp-allowed-origins` (the transport's guard against DNS rebinding: a
/// web page cannot drive the tools through a browser); `None` to go on.
/// A request without `Origin` (an agent, not a browser) goes on.
fn foreign_origin(state: &AppState, headers: &HeaderMap) -> Option<Response> {
    let origin = headers.get(header::ORIGIN)?;
    let allowed = &state.http().mcp_allowed_origins;
    if origin.to_str().is_ok_and(|o| allowed.iter().any(|a| a == o.trim_end_matches('/'))) {
        return None;
    }
    let detail = "this Origin may not call POST /mcp: a browser page reaches the MCP tools only from an origin \
                  the operator allows (--mcp-allowed-origins); agents send no Origin";
    let mut problem = Problem::new(ErrorCode::InvalidParameter, detail);
    problem.code = "forbidden_origin".to_owned();
    problem.type_ = "/problems/forbidden_origin".to_owned();
    problem.title = "Origin not allowed".to_owned();
    problem.status = 403;
    problem.param = Some("Origin".to_owned());
    let mut resp = StatusCode::FORBIDDEN.into_response();
    resp.extensions_mut().insert(problem);
    Some(resp)
}

/// A tool call's requests, made through the envelope with the caller's
/// key (and request id, so the log lines go together).
struct Through {
    envelope: Envelope,
    authorization: HeaderValue,
    request_id: Option<HeaderValue>,
}

impl Upstream for Through {
    async fn get(&self, path_and_query: &str) -> Result<Reply, String> {
        let mut req = Request::get(path_and_query)
            .header(header::AUTHORIZATION, self.authorization.clone())
            .body(Body::empty())
            .map_err(|e| format!("cannot make the route's request ({e}): are the arguments too long?"))?;
        if let Some(id) = &self.request_id {
            req.headers_mut().insert(X_REQUEST_ID.clone(), id.clone());
        }
        let Ok(resp) = self.envelope.clone().call(req).await;
        let status = resp.status().as_u16();
        let body = to_bytes(resp.into_body(), MAX_ANSWER).await.map_err(|_| "the answer is too large".to_owned())?;
        Ok(Reply { status, body: body.to_vec() })
    }
}
