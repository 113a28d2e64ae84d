//! The admin API's webhook routes: any account's endpoints, and disabling
//! one (audited as `webhook.disable`).

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use mds_domain::{AccountName, Actor};
use serde::Serialize;

use super::body::Body;
use super::controllers::{Item, PathParam};
use crate::components::PATH_IN_TABLE;
use crate::controllers::webhooks::{V1WebhookEndpoint, WebhookId};
use crate::controllers::{Identifier, json};
use crate::error::ApiError;
use crate::params::Params;
use crate::state::AppState;

/// An endpoint as an operator sees it: its account, its delivery cursor.
#[derive(Serialize, utoipa::ToSchema)]
pub struct AdminWebhook {
    /// The endpoint, as its owner sees it.
    #[serde(flatten)]
    pub endpoint: V1WebhookEndpoint,
    /// Its account.
    pub account: String,
    /// Every event it matches up to this one is delivered or given up.
    pub delivered_through: String,
    /// Attempts made at the event in flight.
    pub attempt: u32,
    /// When the next attempt is due (RFC 3339), if a retry is scheduled.
    pub next_attempt_at: Option<String>,
}

/// The endpoints.
#[derive(Serialize, utoipa::ToSchema)]
pub struct AdminWebhookList {
    /// Oldest first.
    pub data: Vec<AdminWebhook>,
}

impl AdminWebhook {
    fn of(e: &mds_store::WebhookEndpoint) -> Self {
        AdminWebhook {
            endpoint: V1WebhookEndpoint::of(e),
            account: e.account.as_str().to_owned(),
            delivered_through: e.delivered_through.to_string(),
            attempt: e.attempt,
            next_attempt_at: e.next_attempt_at.as_ref().map(mds_domain::time::format_utc),
        }
    }
}

/// `{id}` of `/webhooks/{id}`.
impl PathParam for WebhookId {
    const NAME: &'static str = "id";

    fn parse(value: &str) -> Result<Self, String> {
        WebhookId::from_segment(value).ok_or_else(|| "not a webhook endpoint id (we_…)".to_owned())
    }
}

fn answer<T: Serialize>(status: StatusCode, v: &T) -> Result<Response, ApiError> {
    let mut resp = json(serde_json::to_vec(v).map_err(|e| ApiError::internal(&e))?);
    *resp.status_mut() = status;
    Ok(resp)
}

/// Every account's webhook endpoints (or one account's), oldest first.
#[utoipa::path(get, path = PATH_IN_TABLE,
    params(("account" = Option<String>, Query, description = "Only this account's endpoints")),
    responses(
        (status = 200, description = "The endpoints (never their secrets).", body = AdminWebhookList),
        (status = 400, description = "`invalid_parameter` (a malformed `account`), `unknown_parameter`.", body = mds_domain::Problem),
    ))]
pub async fn list_webhooks(State(state): State<AppState>, RawQuery(raw): RawQuery) -> Result<Response, ApiError> {
    let p = Params::parse(raw.as_deref(), &["account"])?;
    let account = p
        .get("account")
        .map(|a| AccountName::parse(a).map_err(|e| ApiError::invalid_parameter("account", e)))
        .transpose()?;
    let all = state.node().operator().webhooks(account.as_ref()).await?;
    answer(StatusCode::OK, &AdminWebhookList { data: all.iter().map(AdminWebhook::of).collect() })
}

/// Disables an endpoint (its owner may enable it again), audited.
#[utoipa::path(post, path = PATH_IN_TABLE,
    params(("id" = String, Path, description = "The endpoint's id")),
    request_body(content = inline(super::bodies::WebhookDisableBody), content_type = "application/json", description = "`{\"reason\": \"abuse report 42\"}` (`reason` optional)"),
    responses(
        (status = 200, description = "The endpoint, disabled.", body = AdminWebhook),
        (status = 400, description = "`invalid_parameter`: not an endpoint id; `unknown_field`, `invalid_field`.", body = mds_domain::Problem),
        (status = 404, description = "No such endpoint.", body = mds_domain::Problem),
    ))]
pub async fn disable_webhook(
    State(state): State<AppState>,
    Extension(actor): Extension<Actor>,
    Item { id: WebhookId(id), .. }: Item<WebhookId>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let body = if body.is_empty() {
        Body::parse(&Bytes::from_static(b"{}"), &["reason"])?
    } else {
        Body::parse(&body, &["reason"])?
    };
    let reason = body.optional("reason", |s| match s.chars().count() {
        1..=500 => Ok(s.to_owned()),
        _ => Err("reason has 1 to 500 characters".to_owned()),
    })?;
    let reason = reason.unwrap_or_else(|| format!("disabled by an operator ({})", actor.as_str()));
    let e = state.node().operator().disable_webhook(&id, &reason, &actor).await?;
    let e = e.ok_or_else(|| ApiError::not_found("no webhook endpoint with this id"))?;
    answer(StatusCode::OK, &AdminWebhook::of(&e))
}
