//! The handlers of the admin API (their routes are rows of
//! [`super::routes`]): each reads its path, query and body, runs the
//! operation of [`mds_node::admin`] as the calling token ([`Actor`]) at the
//! node's clock's now, and answers JSON (`GET`s with an `ETag`). Each
//! one's `#[utoipa::path]` states its parameters, body and answers; its
//! doc comment is the operation's description.
//!
//! A route about one item reads its path parameter and query with
//! [`Item`]: path parameters that are malformed are `400
//! invalid_parameter` naming them (`name`, `prefix`); well-formed ones
//! naming nothing are `404`. The lists take [`PageQuery`] (the keys' adds
//! `account`) and answer a page with `listed`.

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{FromRequestParts, Path, RawQuery, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use mds_domain::admin::{AccountUsage, KeyView};
use mds_domain::daily::{DailyPeriod, DailyUsageQueryParams};
use mds_domain::params::QueryParams;
use mds_domain::time::parse_rfc3339;
use mds_domain::{
    Account, AccountName, Actor, AuditEntry, Environment, KeyPrefix, Limit, ParamError, Problem, Tier, TierName,
};
use mds_node::admin::{self as ops, AdminError, AdminResult, Audited, PageAsk};
use mds_node::{Node, Tagged};
use serde::Serialize;

use super::body::Body;
use super::problems::from_admin;
use crate::components::PATH_IN_TABLE;
use crate::controllers::{json as json_response, tagged};
use crate::error::ApiError;
use crate::params::{Params, Query, parse_query};
use crate::state::AppState;

/// A page of an admin list in the list shape of the public API: `{"data",
/// "has_more", "next_cursor"}` (`next_cursor` a string while `has_more`,
/// else `null`).
#[derive(Serialize, utoipa::ToSchema)]
pub struct List<T> {
    /// The items.
    pub data: Vec<T>,
    /// Whether more follow (a next page).
    pub has_more: bool,
    /// The cursor of the next page, `null` on the last.
    pub next_cursor: Option<String>,
}

/// A key as issued: its record and the key itself, shown only in this
/// answer.
#[derive(Serialize, utoipa::ToSchema)]
pub struct IssuedKey {
    /// The record.
    #[serde(flatten)]
    pub record: KeyView,
    /// The key (`mds_live_…`): store it now, it is never shown again.
    pub key: String,
}

/// A key as rolled: the new key's record and the key itself, shown only in
/// this answer, and the rolled key's record with its expiry.
#[derive(Serialize, utoipa::ToSchema)]
pub struct RolledKeyView {
    /// The new key's record.
    #[serde(flatten)]
    pub record: KeyView,
    /// The new key (`mds_live_…`): store it now, it is never shown again.
    pub key: String,
    /// The rolled key, working until its `expires_at`.
    pub rolled: KeyView,
}

/// The context of an audited change made by a request: the node's store
/// and clock, and the request's actor.
fn audit<'a>(state: &'a AppState, actor: &'a Actor) -> Audited<'a> {
    state.node().operator().audited(actor)
}

/// A page of an admin list as the answer (tagged), or its error: a list's
/// wrong input is a query parameter (`400 invalid_parameter`).
fn listed<T: Serialize>(page: AdminResult<mds_domain::Page<T>>) -> Result<Response, ApiError> {
    let page = page.map_err(|e| match e {
        AdminError::Invalid { param, detail } => ApiError::invalid_parameter(param, detail),
        e => from_admin(e),
    })?;
    one(&List { data: page.data, has_more: page.has_more, next_cursor: page.next_cursor })
}

/// The query every admin list takes (the keys' adds `account`): where the
/// page starts and how many items, parsed ([`QueryParams`]) and documented
/// (`IntoParams`, the field comments) from this one type.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// From `next_cursor`
    pub cursor: Option<String>,
    /// 1 to 200, default 50
    #[param(value_type = Option<u32>)]
    pub limit: Limit,
}

impl PageQuery {
    /// The page it asks of a list whose cursors `node` seals.
    fn of<'a>(&'a self, node: &'a Node) -> PageAsk<'a> {
        PageAsk { cursors: node.cursors(), cursor: self.cursor.as_deref(), limit: self.limit }
    }
}

/// `limit`: 1 to 200, 50 by default; anything else is `400
/// invalid_parameter` naming it, never clamped (as the public lists).
impl QueryParams for PageQuery {
    const NAMES: &'static [&'static str] = &["cursor", "limit"];

    fn parse<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Result<Self, ParamError> {
        let limit = get("limit").map(Limit::parse).transpose();
        let limit = limit.map_err(|detail| ParamError { param: "limit", detail })?.unwrap_or_default();
        Ok(PageQuery { cursor: get("cursor").map(str::to_owned), limit })
    }
}

/// `item` as a JSON body.
fn json<T: Serialize>(item: &T) -> Result<Vec<u8>, ApiError> {
    serde_json::to_vec(item).map_err(|e| ApiError::internal(&e))
}

fn one<T: Serialize>(item: &T) -> Result<Response, ApiError> {
    Ok(tagged(Tagged::hashed(json(item)?)))
}

fn with_status<T: Serialize>(status: StatusCode, item: &T) -> Result<Response, ApiError> {
    let mut resp = json_response(json(item)?);
    *resp.status_mut() = status;
    Ok(resp)
}

fn path_name<T>(param: &str, value: &str, parse: impl Fn(&str) -> Result<T, String>) -> Result<T, ApiError> {
    parse(value).map_err(|e| ApiError::invalid_parameter(param, e))
}

/// What an admin route's one path parameter names: the parameter's name
/// and how its value parses.
pub trait PathParam: Sized {
    /// The parameter's name in the route (`name`, `prefix`).
    const NAME: &'static str;
    /// The value, or a sentence saying what it must be.
    fn parse(value: &str) -> Result<Self, String>;
}

/// `{name}` of `/tiers/{name}`.
impl PathParam for TierName {
    const NAME: &'static str = "name";

    fn parse(value: &str) -> Result<Self, String> {
        TierName::parse(value)
    }
}

/// `{name}` of `/accounts/{name}`.
impl PathParam for AccountName {
    const NAME: &'static str = "name";

    fn parse(value: &str) -> Result<Self, String> {
        AccountName::parse(value)
    }
}

/// `{prefix}` of `/keys/{prefix}`.
impl PathParam for KeyPrefix {
    const NAME: &'static str = "prefix";

    fn parse(value: &str) -> Result<Self, String> {
        KeyPrefix::parse(value)
    }
}

/// The request of a route about one item, as an extractor: the path
/// parameter (`T`) and the query (`Q`, none by default), read in that
/// order: an unknown query parameter is refused before a malformed path
/// parameter (`400 invalid_parameter` naming it).
pub struct Item<T, Q = ()> {
    /// The path parameter.
    pub id: T,
    /// The query.
    pub query: Q,
}

impl<T: PathParam, Q: QueryParams, S: Send + Sync> FromRequestParts<S> for Item<T, Q> {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        let Path(value) =
            Path::<String>::from_request_parts(parts, state).await.map_err(IntoResponse::into_response)?;
        let query = parse_query::<Q>(parts.uri.query()).map_err(IntoResponse::into_response)?;
        let id = path_name(T::NAME, &value, T::parse).map_err(IntoResponse::into_response)?;
        Ok(Item { id, query })
    }
}

/// The tiers, by name, a page at a time.
#[utoipa::path(get, path = PATH_IN_TABLE,
    params(PageQuery),
    responses(
        (status = 200, description = "The tiers, by name.", body = List<Tier>),
        (status = 400, description = "`invalid_cursor`, `invalid_parameter` (`limit`), `unknown_parameter`.", body = Problem),
    ))]
pub async fn list_tiers(State(state): State<AppState>, Query(q): Query<PageQuery>) -> Result<Response, ApiError> {
    listed(state.node().operator().tiers_page(q.of(state.node())).await)
}

/// The fields of [`put_tier`].
const TIER_FIELDS: &[&str] = &["rate_limit_per_minute", "monthly_quota"];

/// Creates the tier (`201`) or replaces its limits (`200`); both fields
/// required.
#[utoipa::path(put, path = PATH_IN_TABLE,
    params(("name" = String, Path, description = "Tier name")),
    request_body(content = inline(super::bodies::TierLimitsBody), content_type = "application/json", description = "`{\"rate_limit_per_minute\": N, \"monthly_quota\": N}`, both required"),
    responses(
        (status = 200, description = "Changed.", body = Tier),
        (status = 201, description = "Created.", body = Tier),
        (status = 400, description = "`unknown_field`, `invalid_field`, `invalid_parameter`.", body = Problem),
    ))]
pub async fn put_tier(
    State(state): State<AppState>,
    Extension(actor): Extension<Actor>,
    Item { id: name, .. }: Item<TierName>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let body = Body::parse(&body, TIER_FIELDS)?;
    let rate = body.required_int("rate_limit_per_minute", 1, u64::from(u32::MAX))?;
    let quota = body.required_int("monthly_quota", 1, i64::MAX as u64)?;
    let rate = u32::try_from(rate).map_err(|_| super::problems::invalid_field("rate_limit_per_minute", "too large"))?;
    let (tier, created) = audit(&state, &actor).set_tier(name, Some(rate), Some(quota)).await.map_err(from_admin)?;
    with_status(if created { StatusCode::CREATED } else { StatusCode::OK }, &tier)
}

/// The accounts, by name, a page at a time.
#[utoipa::path(get, path = PATH_IN_TABLE,
    params(PageQuery),
    responses(
        (status = 200, description = "The accounts, by name.", body = List<Account>),
        (status = 400, description = "`invalid_cursor`, `invalid_parameter` (`limit`), `unknown_parameter`.", body = Problem),
    ))]
pub async fn list_accounts(State(state): State<AppState>, Query(q): Query<PageQuery>) -> Result<Response, ApiError> {
    listed(state.node().operator().accounts_page(q.of(state.node())).await)
}

/// Creates an account (`{"name"}`, entitled; `{"name", "entitled": false}`
/// creates it lapsed). `409 conflict` if the name is taken.
#[utoipa::path(post, path = PATH_IN_TABLE,
    request_body(content = inline(super::bodies::AccountCreateBody), content_type = "application/json", description = "`{\"name\": \"acme\", \"entitled\": true}` (`entitled` optional, default true)"),
    responses(
        (status = 201, description = "Created.", body = Account),
        (status = 400, description = "`unknown_field`, `invalid_field`.", body = Problem),
        (status = 409, description = "`conflict`: the name is taken.", body = Problem),
    ))]
pub async fn create_account(
    State(state): State<AppState>,
    Extension(actor): Extension<Actor>,
    _: Query<()>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let body = Body::parse(&body, &["name", "entitled"])?;
    let name = body.required("name", AccountName::parse)?;
    let entitled = if body.has("entitled") { body.required_bool("entitled")? } else { true };
    let audit = audit(&state, &actor);
    let mut account = audit.create_account(&name).await.map_err(from_admin)?;
    if !entitled {
        account = audit.set_entitled(&name, false).await.map_err(from_admin)?;
    }
    with_status(StatusCode::CREATED, &account)
}

/// One account.
#[utoipa::path(get, path = PATH_IN_TABLE,
    params(("name" = String, Path, description = "Account name")),
    responses(
        (status = 200, description = "The account.", body = Account),
        (status = 404, description = "No such account.", body = Problem),
    ))]
pub async fn get_account(
    State(state): State<AppState>,
    Item { id: name, .. }: Item<AccountName>,
) -> Result<Response, ApiError> {
    one(&state.node().operator().account(&name).await.map_err(from_admin)?)
}

/// Lapses (`{"entitled": false}`) or restores the account.
#[utoipa::path(patch, path = PATH_IN_TABLE,
    params(("name" = String, Path, description = "Account name")),
    request_body(content = inline(super::bodies::AccountEntitlementBody), content_type = "application/json", description = "`{\"entitled\": false}`: lapse (its keys are held to the evaluation tier) or restore"),
    responses(
        (status = 200, description = "The account as changed.", body = Account),
        (status = 400, description = "`unknown_field`, `invalid_field`.", body = Problem),
        (status = 404, description = "No such account.", body = Problem),
    ))]
pub async fn update_account(
    State(state): State<AppState>,
    Extension(actor): Extension<Actor>,
    Item { id: name, .. }: Item<AccountName>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let body = Body::parse(&body, &["entitled"])?;
    let entitled = body.required_bool("entitled")?;
    let account = audit(&state, &actor).set_entitled(&name, entitled).await.map_err(from_admin)?;
    one(&account)
}

/// Keys, revoked ones included, by creation, a page at a time; of one
/// account with `account` (a cursor is bound to it).
#[utoipa::path(get, path = PATH_IN_TABLE,
    params(
        ("account" = Option<String>, Query, description = "Only this account's keys"),
        ("cursor" = Option<String>, Query, description = "From `next_cursor`, with the same `account`"),
        ("limit" = Option<u32>, Query, description = "1 to 200, default 50"),
    ),
    responses(
        (status = 200, description = "The keys (never the keys themselves: their records), by creation.", body = List<KeyView>),
        (status = 400, description = "`invalid_parameter` (an unknown `account`, `limit`), `invalid_cursor`, `unknown_parameter`.", body = Problem),
    ))]
pub async fn list_keys(State(state): State<AppState>, RawQuery(raw): RawQuery) -> Result<Response, ApiError> {
    let p = Params::parse(raw.as_deref(), &["account", "cursor", "limit"])?;
    let account = p.get("account").map(|a| path_name("account", a, AccountName::parse)).transpose()?;
    let q = PageQuery::parse(|name| p.get(name))?;
    let page = state.node().operator().keys_page(account.as_ref(), q.of(state.node())).await;
    listed(page.map(|page| page.map(|k| k.view())))
}

/// The fields of [`issue_key`].
const KEY_FIELDS: &[&str] = &["account", "tier", "environment", "expires_at"];

/// Issues a key (`201`, the key shown only here).
#[utoipa::path(post, path = PATH_IN_TABLE,
    request_body(content = inline(super::bodies::KeyIssueBody), content_type = "application/json", description = "`{\"account\": \"acme\", \"tier\": \"pro\", \"environment\": \"live\", \"expires_at\": \"2027-01-01T00:00:00Z\"}` (`expires_at` optional: when the key stops working)"),
    responses(
        (status = 201, description = "Issued: the record and the key, shown only now.", body = IssuedKey),
        (status = 400, description = "`unknown_field`, `invalid_field` (an unknown account or tier names its field).", body = Problem),
    ))]
pub async fn issue_key(
    State(state): State<AppState>,
    Extension(actor): Extension<Actor>,
    _: Query<()>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let body = Body::parse(&body, KEY_FIELDS)?;
    let account = body.required("account", AccountName::parse)?;
    let tier = body.required("tier", TierName::parse)?;
    let environment = body.required("environment", Environment::parse)?;
    let expires_at = body.optional("expires_at", |s| {
        parse_rfc3339(s).map_err(|_| "expires_at must be an RFC 3339 instant (2027-01-01T00:00:00Z)".to_owned())
    })?;
    let (key, record) =
        audit(&state, &actor).issue_key(&account, &tier, environment, expires_at).await.map_err(from_admin)?;
    with_status(StatusCode::CREATED, &IssuedKey { record: record.view(), key: key.expose_secret().to_owned() })
}

/// The fields of [`roll_key`].
const ROLL_FIELDS: &[&str] = &["expires_in"];

/// A new key on the same account and tier (`201`, the key shown only here),
/// the old one working for `expires_in` seconds more (default 86,400; 0: it
/// stops at once).
#[utoipa::path(post, path = PATH_IN_TABLE,
    params(("prefix" = String, Path, description = "The key's prefix")),
    request_body(content = inline(super::bodies::KeyRollBody), content_type = "application/json", description = "`{\"expires_in\": 3600}` (optional; default 86400)"),
    responses(
        (status = 201, description = "Rolled: the new key's record and the key, shown only now; the old key's record with its expiry.", body = RolledKeyView),
        (status = 400, description = "`unknown_field`, `invalid_field` (`expires_in`), `invalid_parameter` (not a key prefix).", body = Problem),
        (status = 404, description = "No such key.", body = Problem),
        (status = 409, description = "`conflict`: the key is revoked or expired.", body = Problem),
    ))]
pub async fn roll_key(
    State(state): State<AppState>,
    Extension(actor): Extension<Actor>,
    Item { id: prefix, .. }: Item<KeyPrefix>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let body = if body.is_empty() { Bytes::from_static(b"{}") } else { body };
    let body = Body::parse(&body, ROLL_FIELDS)?;
    let expires_in = if body.has("expires_in") { body.required_int("expires_in", 0, 31_536_000)? } else { 86_400 };
    let overlap = chrono::Duration::seconds(i64::try_from(expires_in).unwrap_or(i64::MAX));
    let (key, rolled) = audit(&state, &actor).roll_key(&prefix, overlap).await.map_err(from_admin)?;
    let view =
        RolledKeyView { record: rolled.new.view(), key: key.expose_secret().to_owned(), rolled: rolled.old.view() };
    with_status(StatusCode::CREATED, &view)
}

/// One key.
#[utoipa::path(get, path = PATH_IN_TABLE,
    params(("prefix" = String, Path, description = "The key's prefix (`mds_live_a1B2c3D4`)")),
    responses(
        (status = 200, description = "The key's record.", body = KeyView),
        (status = 400, description = "`invalid_parameter`: not a key prefix.", body = Problem),
        (status = 404, description = "No such key.", body = Problem),
    ))]
pub async fn get_key(
    State(state): State<AppState>,
    Item { id: prefix, .. }: Item<KeyPrefix>,
) -> Result<Response, ApiError> {
    one(&state.node().operator().key(&prefix).await.map_err(from_admin)?.view())
}

/// Revokes the key (refused on every node within a second); a revoked key
/// is answered as it is.
#[utoipa::path(delete, path = PATH_IN_TABLE,
    params(("prefix" = String, Path, description = "The key's prefix")),
    responses(
        (status = 200, description = "The key, revoked.", body = KeyView),
        (status = 400, description = "`invalid_parameter`: not a key prefix.", body = Problem),
        (status = 404, description = "No such key.", body = Problem),
    ))]
pub async fn revoke_key(
    State(state): State<AppState>,
    Extension(actor): Extension<Actor>,
    Item { id: prefix, .. }: Item<KeyPrefix>,
) -> Result<Response, ApiError> {
    let (key, _) = audit(&state, &actor).revoke_key(&prefix).await.map_err(from_admin)?;
    with_status(StatusCode::OK, &key.view())
}

/// The audit log, newest first.
#[utoipa::path(get, path = PATH_IN_TABLE,
    params(PageQuery),
    responses(
        (status = 200, description = "Every change made through the admin API or the CLI, newest first.", body = List<AuditEntry>),
        (status = 400, description = "`invalid_cursor`, `invalid_parameter`, `unknown_parameter`.", body = Problem),
    ))]
pub async fn list_audit(State(state): State<AppState>, Query(q): Query<PageQuery>) -> Result<Response, ApiError> {
    listed(state.node().operator().audit_page(q.of(state.node())).await)
}

/// The account's keys' usage in the month (`month=YYYY-MM`: the current one
/// by default, or any of the twelve before it): what billing reads.
#[utoipa::path(get, path = PATH_IN_TABLE,
    params(
        ("name" = String, Path, description = "Account name"),
        ("month" = Option<String>, Query, description = "`YYYY-MM`: the current month (default) or one of the 12 before it"),
    ),
    responses(
        (status = 200, description = "Per key: requests, not_modified, by_route, the quota in force.", body = AccountUsage),
        (status = 400, description = "`invalid_parameter` (`month`, `name`), `unknown_parameter`.", body = Problem),
        (status = 404, description = "No such account.", body = Problem),
    ))]
pub async fn account_usage(
    State(state): State<AppState>,
    Item { id: name, query }: Item<AccountName, DailyUsageQueryParams>,
) -> Result<Response, ApiError> {
    let period = DailyPeriod::at(query.month, state.node().config().clock.now())?;
    let routes = crate::routes::data_routes();
    one(&ops::account_usage(state.shared_node(), &name, &period, routes).await.map_err(from_admin)?)
}
