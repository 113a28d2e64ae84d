//! The webhook routes (contract 11.2): an account manages its endpoints
//! with its API key. Bodies are JSON objects read field by field as the
//! admin API reads them ([`crate::admin::body`]: `413` over the size cap,
//! `415` for another content type, `400 unknown_field` / `invalid_field`
//! naming the field); the work is the node's ([`mds_node::webhooks`]). An
//! endpoint of another account is `404`, as one that does not exist.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use mds_domain::EventId;
use mds_domain::time::format_utc;
use mds_node::webhooks::{EndpointInput, MAX_EXPIRES_IN, Owned, WebhookError};
use mds_store::{WebhookAttempt, WebhookEndpoint};
use serde::Serialize;
use utoipa::ToSchema;

use super::{Caller, Id, Identifier};
use crate::admin::body::Body;
use crate::admin::envelope::json_body;
use crate::admin::problems;
use crate::error::ApiError;
use crate::params::Query;
use crate::state::AppState;

/// The fields of a create.
const CREATE_FIELDS: &[&str] = &["url", "description", "types", "isins", "tickers", "tags"];

/// The fields of an update.
const UPDATE_FIELDS: &[&str] = &["url", "description", "types", "isins", "tickers", "tags", "status"];

/// The default `expires_in` of a rotation: a day.
const DEFAULT_EXPIRES_IN: u64 = 86_400;

/// The id of a webhook endpoint in a path: `we_` and hex digits.
#[derive(Debug)]
pub struct WebhookId(pub String);

impl Identifier for WebhookId {
    const NOT_FOUND: &'static str = "no webhook endpoint with this id";

    fn from_segment(s: &str) -> Option<Self> {
        let hex = s.strip_prefix("we_")?;
        (!hex.is_empty() && hex.len() <= 64 && hex.bytes().all(|b| b.is_ascii_hexdigit())).then(|| WebhookId(s.into()))
    }
}

/// Extractor of the routes of one endpoint (`/v1/webhooks/{id}…`): the
/// node, the calling key's account and the endpoint's id, taken as
/// [`Caller`] and then [`Id`] take them (a query parameter is `400`, a
/// malformed id `404`).
pub struct Endpoint {
    state: AppState,
    it: Owned,
}

impl FromRequestParts<AppState> for Endpoint {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let Caller(ctx) = Caller::from_request_parts(parts, state).await?;
        let Id(WebhookId(id)) = Id::<WebhookId>::from_request_parts(parts, state).await?;
        Ok(Endpoint { state: state.clone(), it: Owned { account: ctx.account.clone(), id } })
    }
}

/// Extractor: a request's JSON body, as [`json_body`] takes it (`413` over
/// the size cap, `415` for another content type); empty is `{}`.
pub struct Posted(Bytes);

impl FromRequest<AppState> for Posted {
    type Rejection = ApiError;

    async fn from_request(req: Request, _: &AppState) -> Result<Self, ApiError> {
        let (parts, body) = req.into_parts();
        let bytes = json_body(&parts.headers, body).await?;
        Ok(Posted(if bytes.is_empty() { Bytes::from_static(b"{}") } else { bytes }))
    }
}

impl Posted {
    /// The body as a JSON object, its fields among `allowed`; `null` only
    /// for `description` (which it removes): a `null` where a value is
    /// required is refused, not taken as absent (contract 11.5).
    fn fields(&self, allowed: &[&str]) -> Result<Body, ApiError> {
        let body = Body::parse(&self.0, allowed)?;
        match body.first_null().filter(|f| *f != "description") {
            Some(field) => Err(problems::invalid_field(field, format!("{field} may not be null"))),
            None => Ok(body),
        }
    }
}

/// A webhook endpoint (never its secret).
#[derive(Debug, Serialize, ToSchema)]
pub struct V1WebhookEndpoint {
    /// Its id.
    #[schema(example = "we_3f9a0c1d2b4e5f6a7b8c9d0e")]
    pub id: String,
    /// Where events are `POST`ed.
    #[schema(example = "https://hooks.example.com/mds")]
    pub url: String,
    /// The owner's note.
    pub description: Option<String>,
    /// The event types it receives (empty: all).
    pub types: Vec<String>,
    /// The ISINs it receives events about (empty: all).
    pub isins: Vec<String>,
    /// The tickers it receives events about (empty: all).
    pub tickers: Vec<String>,
    /// The article tags it receives events about (empty: all).
    pub tags: Vec<String>,
    /// `enabled` or `disabled`.
    #[schema(example = "enabled")]
    pub status: String,
    /// Why it was disabled (`410`, failing for 3 days, by its owner, by an
    /// operator).
    pub disabled_reason: Option<String>,
    /// When it was created (RFC 3339).
    #[schema(format = DateTime)]
    pub created_at: String,
    /// When it was last changed (RFC 3339).
    #[schema(format = DateTime)]
    pub updated_at: String,
}

impl V1WebhookEndpoint {
    /// The wire shape of `e`.
    pub fn of(e: &WebhookEndpoint) -> Self {
        V1WebhookEndpoint {
            id: e.id.clone(),
            url: e.url.clone(),
            description: e.description.clone(),
            types: e.filter.types.iter().map(|t| t.as_str().to_owned()).collect(),
            isins: e.filter.isins.iter().map(|i| i.as_str().to_owned()).collect(),
            tickers: e.filter.tickers.clone(),
            tags: e.filter.tags.clone(),
            status: if e.disabled.is_some() { "disabled" } else { "enabled" }.into(),
            disabled_reason: e.disabled.as_ref().map(|d| d.1.clone()),
            created_at: format_utc(&e.created_at),
            updated_at: format_utc(&e.updated_at),
        }
    }
}

/// An endpoint with its signing secret: the answer of a create and of a
/// rotation, the only times the secret is shown.
#[derive(Debug, Serialize, ToSchema)]
pub struct V1WebhookEndpointWithSecret {
    /// The endpoint.
    #[serde(flatten)]
    pub endpoint: V1WebhookEndpoint,
    /// The signing secret: `whsec_` and base64.
    #[schema(example = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")]
    pub secret: String,
}

/// The endpoints of the caller's account, oldest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct V1WebhookEndpointList {
    /// The endpoints (at most 10).
    pub data: Vec<V1WebhookEndpoint>,
}

/// One delivery attempt.
#[derive(Debug, Serialize, ToSchema)]
pub struct V1WebhookAttempt {
    /// The event sent.
    #[schema(example = "evt_000000000000001a")]
    pub event_id: String,
    /// Its attempt number for this event, from 1.
    pub attempt: u32,
    /// When it started (RFC 3339).
    #[schema(format = DateTime)]
    pub attempted_at: String,
    /// The receiver's status, if it answered.
    pub status: Option<u16>,
    /// Why there is no status (a timeout, a refused address, ...).
    pub error: Option<String>,
    /// How long it took, in milliseconds.
    pub duration_ms: u64,
}

impl V1WebhookAttempt {
    fn of(a: &WebhookAttempt) -> Self {
        V1WebhookAttempt {
            event_id: a.event_id.to_string(),
            attempt: a.attempt,
            attempted_at: format_utc(&a.attempted_at),
            status: a.status,
            error: a.error.clone(),
            duration_ms: a.duration_ms,
        }
    }
}

/// The latest attempts of an endpoint, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct V1WebhookAttemptList {
    /// The attempts (at most 50).
    pub data: Vec<V1WebhookAttempt>,
}

/// The `ping` queued by a test.
#[derive(Debug, Serialize, ToSchema)]
pub struct V1WebhookPing {
    /// The id of the `ping` event (its `webhook-id`).
    #[schema(example = "evt_000000000000001b")]
    pub event_id: String,
}

/// Declares a webhook body's schema: the fields given, then the four
/// filter lists every body shares (written once here). A field that may be
/// left out but not given as `null` (the server refuses a `null` where a
/// value is required) says `nullable = false`.
macro_rules! webhook_body {
    ($(#[$m:meta])* $name:ident { $($fields:tt)* }) => {
        $(#[$m])*
        #[derive(Debug, ToSchema, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        pub struct $name {
            $($fields)*
            /// Event types to receive (absent or empty: all).
            #[schema(max_items = 1000, nullable = false)]
            types: Option<Vec<SubscribableType>>,
            /// ISINs to receive events about (any case; check digits
            /// verified).
            #[schema(max_items = 1000, nullable = false, inline, value_type = Option<Vec<mds_domain::params::param_schema::Isin>>)]
            isins: Option<Vec<String>>,
            /// Tickers (any case) to receive events about.
            #[schema(max_items = 1000, nullable = false)]
            tickers: Option<Vec<String>>,
            /// Article tags to receive events about.
            #[schema(max_items = 1000, nullable = false)]
            tags: Option<Vec<String>>,
        }
    };
}

webhook_body!(
    /// The body of `POST /v1/webhooks`.
    V1WebhookCreate {
        /// An `https` URL (not an address in a private, loopback or
        /// link-local range), at most 2048 characters.
        #[schema(example = "https://hooks.example.com/mds", max_length = 2048, format = "iri", pattern = "^https://")]
        url: String,
        /// A note, at most 500 characters.
        #[schema(max_length = 500)]
        description: Option<String>,
    }
);

webhook_body!(
    /// The body of `PATCH /v1/webhooks/{id}`: the fields given are set
    /// (a list given replaces the list).
    V1WebhookUpdate {
        /// An `https` URL.
        #[schema(example = "https://hooks.example.com/mds", max_length = 2048, format = "iri", pattern = "^https://", nullable = false)]
        url: Option<String>,
        /// A note (`null` removes it).
        #[schema(max_length = 500)]
        description: Option<String>,
        /// `enabled` (after it was disabled: deliveries resume with the
        /// event in flight) or `disabled`.
        #[schema(nullable = false)]
        status: Option<EndpointStatus>,
    }
);

/// An event type an endpoint may subscribe to: its schema written once, in
/// the domain, from the types a filter may name.
pub use mds_domain::event::SubscribableType;

/// An endpoint's status.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "lowercase")]
#[derive(serde::Deserialize)]
#[allow(dead_code)]
pub enum EndpointStatus {
    /// Receives events.
    Enabled,
    /// Does not.
    Disabled,
}

/// The body of `POST /v1/webhooks/{id}/rotate-secret`.
#[derive(Debug, ToSchema, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct V1WebhookRotate {
    /// Seconds the current secret keeps signing beside the new one
    /// (default 86400; 0 ends it now).
    #[schema(minimum = 0, maximum = 2592000, nullable = false)]
    expires_in: Option<u64>,
}

/// The body of `POST /v1/webhooks/{id}/replay`.
#[derive(Debug, ToSchema, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct V1WebhookReplay {
    /// The event after which everything the endpoint matches is sent again.
    #[schema(example = "evt_000000000000001a", pattern = "^evt_[0-7][0-9a-f]{15}$")]
    since: String,
}

/// A webhook operation's error as a problem.
fn problem(e: WebhookError) -> ApiError {
    match e {
        WebhookError::Invalid { param, detail } => problems::invalid_field(param, detail),
        WebhookError::NotFound => ApiError::not_found(WebhookId::NOT_FOUND),
        WebhookError::Store(e) => e.into(),
    }
}

/// `value` as a JSON response with `status`.
fn answer<T: Serialize>(status: StatusCode, value: &T) -> Result<Response, ApiError> {
    let body = serde_json::to_vec(value).map_err(|e| ApiError::internal(&e))?;
    let mut resp = super::json(body);
    *resp.status_mut() = status;
    Ok(resp)
}

/// What a create or an update body gives.
fn input(b: &Body) -> Result<EndpointInput, ApiError> {
    let status = b.optional("status", |s| match s {
        "enabled" => Ok(true),
        "disabled" => Ok(false),
        _ => Err("status is enabled or disabled".to_owned()),
    })?;
    let url = b.optional("url", |s| Ok(s.to_owned()))?;
    let description = b.nullable("description")?;
    // The filter's lists, read alike; the first wrong one is the answer.
    let [types, isins, tickers, tags] = ["types", "isins", "tickers", "tags"].map(|field| b.strings(field));
    Ok(EndpointInput {
        url,
        description,
        types: types?,
        isins: isins?,
        tickers: tickers?,
        tags: tags?,
        enabled: status,
    })
}

/// `POST /v1/webhooks`.
#[utoipa::path(
    post,
    path = crate::components::PATH_IN_TABLE,
    description = "Creates an endpoint of the caller's account (at most 10). Only events committed from now on are \
sent to it. The answer is the only time the signing secret is shown.",
    request_body(content = V1WebhookCreate, content_type = "application/json"),
    responses(
        (status = 201, description = "Created, with its secret.", body = V1WebhookEndpointWithSecret, content_type = "application/json"),
        crate::components::WebhookBodyRefused,
    )
)]
pub async fn create(
    State(state): State<AppState>,
    Caller(ctx): Caller,
    _: Query<()>,
    body: Posted,
) -> Result<Response, ApiError> {
    let b = body.fields(CREATE_FIELDS)?;
    let e = state.node().create_webhook(&ctx.account, &input(&b)?).await.map_err(problem)?;
    let secret = e.secret.clone();
    answer(StatusCode::CREATED, &V1WebhookEndpointWithSecret { endpoint: V1WebhookEndpoint::of(&e), secret })
}

/// `GET /v1/webhooks`.
#[utoipa::path(
    get,
    path = crate::components::PATH_IN_TABLE,
    description = "The caller's account's endpoints, oldest first (never their secrets).",
    responses(
        (status = 200, description = "The endpoints.", body = V1WebhookEndpointList, content_type = "application/json"),
    )
)]
pub async fn list(State(state): State<AppState>, Caller(ctx): Caller, _: Query<()>) -> Result<Response, ApiError> {
    let all = state.node().webhooks_of(&ctx.account).await.map_err(problem)?;
    answer(StatusCode::OK, &V1WebhookEndpointList { data: all.iter().map(V1WebhookEndpoint::of).collect() })
}

/// `GET /v1/webhooks/{id}`.
#[utoipa::path(
    get,
    path = crate::components::PATH_IN_TABLE,
    params(crate::components::WebhookPath),
    description = "One endpoint of the caller's account.",
    responses(
        (status = 200, description = "The endpoint.", body = V1WebhookEndpoint, content_type = "application/json"),
    )
)]
pub async fn show(ep: Endpoint) -> Result<Response, ApiError> {
    let e = ep.state.node().webhook_of(&ep.it).await.map_err(problem)?;
    answer(StatusCode::OK, &V1WebhookEndpoint::of(&e))
}

/// `PATCH /v1/webhooks/{id}`.
#[utoipa::path(
    patch,
    path = crate::components::PATH_IN_TABLE,
    params(crate::components::WebhookPath),
    description = "Changes the fields given. `status: enabled` re-enables a disabled endpoint: delivery resumes \
with the event that was in flight.",
    request_body(content = V1WebhookUpdate, content_type = "application/json"),
    responses(
        (status = 200, description = "The endpoint as changed.", body = V1WebhookEndpoint, content_type = "application/json"),
        crate::components::WebhookBodyRefused,
    )
)]
pub async fn update(ep: Endpoint, body: Posted) -> Result<Response, ApiError> {
    let input = input(&body.fields(UPDATE_FIELDS)?)?;
    let e = ep.state.node().update_webhook(&ep.it, &input).await.map_err(problem)?;
    answer(StatusCode::OK, &V1WebhookEndpoint::of(&e))
}

/// `DELETE /v1/webhooks/{id}`.
#[utoipa::path(
    delete,
    path = crate::components::PATH_IN_TABLE,
    params(crate::components::WebhookPath),
    description = "Deletes the endpoint with its attempts; nothing more is sent to it.",
    responses((status = 204, description = "Deleted."))
)]
pub async fn delete(ep: Endpoint) -> Result<Response, ApiError> {
    ep.state.node().delete_webhook(&ep.it).await.map_err(problem)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `POST /v1/webhooks/{id}/rotate-secret`.
#[utoipa::path(
    post,
    path = crate::components::PATH_IN_TABLE,
    params(crate::components::WebhookPath),
    description = "A new signing secret. The current one keeps signing beside it (two signatures in \
`webhook-signature`) for `expires_in` seconds (default 86400, at most 30 days). The answer is the only time \
the new secret is shown.",
    request_body(content = V1WebhookRotate, content_type = "application/json"),
    responses(
        (status = 200, description = "The endpoint with its new secret.", body = V1WebhookEndpointWithSecret, content_type = "application/json"),
        crate::components::WebhookBodyRefused,
    )
)]
pub async fn rotate(ep: Endpoint, body: Posted) -> Result<Response, ApiError> {
    let b = body.fields(&["expires_in"])?;
    let expires_in = b.optional_int("expires_in", 0, MAX_EXPIRES_IN)?.unwrap_or(DEFAULT_EXPIRES_IN);
    let e = ep.state.node().rotate_webhook_secret(&ep.it, expires_in).await.map_err(problem)?;
    let secret = e.secret.clone();
    answer(StatusCode::OK, &V1WebhookEndpointWithSecret { endpoint: V1WebhookEndpoint::of(&e), secret })
}

/// `POST /v1/webhooks/{id}/test`.
#[utoipa::path(
    post,
    path = crate::components::PATH_IN_TABLE,
    params(crate::components::WebhookPath),
    description = "Queues a `ping` event for this endpoint only (it is not in the log), delivered and signed as \
any event, after what is already queued for it.",
    responses(
        (status = 202, description = "Queued.", body = V1WebhookPing, content_type = "application/json"),
    )
)]
pub async fn test(ep: Endpoint) -> Result<Response, ApiError> {
    let event = ep.state.node().test_webhook(&ep.it).await.map_err(problem)?;
    answer(StatusCode::ACCEPTED, &V1WebhookPing { event_id: event.to_string() })
}

/// `GET /v1/webhooks/{id}/attempts`.
#[utoipa::path(
    get,
    path = crate::components::PATH_IN_TABLE,
    params(crate::components::WebhookPath),
    description = "The latest delivery attempts (at most 50), newest first: when, which event, the status or the \
error, how long.",
    responses(
        (status = 200, description = "The attempts.", body = V1WebhookAttemptList, content_type = "application/json"),
    )
)]
pub async fn attempts(ep: Endpoint) -> Result<Response, ApiError> {
    let all = ep.state.node().webhook_attempts(&ep.it).await.map_err(problem)?;
    answer(StatusCode::OK, &V1WebhookAttemptList { data: all.iter().map(V1WebhookAttempt::of).collect() })
}

/// `POST /v1/webhooks/{id}/replay`.
#[utoipa::path(
    post,
    path = crate::components::PATH_IN_TABLE,
    params(crate::components::WebhookPath),
    description = "Queues again, in order, every event after `since` that the endpoint matches (those the log \
still keeps); the attempt in flight starts over.",
    request_body(content = V1WebhookReplay, content_type = "application/json"),
    responses(
        (status = 202, description = "Queued.", body = V1WebhookEndpoint, content_type = "application/json"),
        crate::components::WebhookBodyRefused,
    )
)]
pub async fn replay(ep: Endpoint, body: Posted) -> Result<Response, ApiError> {
    let since = body.fields(&["since"])?.required("since", |s| s.parse::<EventId>().map_err(|e| e.to_string()))?;
    let e = ep.state.node().replay_webhook(&ep.it, since).await.map_err(problem)?;
    answer(StatusCode::ACCEPTED, &V1WebhookEndpoint::of(&e))
}
