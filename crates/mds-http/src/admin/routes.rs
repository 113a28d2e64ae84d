//! The admin route table: every route of the admin listener with its
//! properties, the one place they are stated (as [`crate::routes`] is for
//! the public listener). The admin router mounts the rows
//! ([`super::router`]); the envelope finds a request's row ([`find`]: the
//! router's own matcher) and reads from it whether the route needs an
//! admin token, takes a JSON body and honours `Idempotency-Key`; the
//! OpenAPI document ([`super::openapi`]) is made from the rows: each
//! documented row's path, method and operation, with what the row says of
//! the token, the body, the idempotency header and the audit log.
//!
//! Adding an admin route is a row here plus its handler in
//! [`super::controllers`], whose `#[utoipa::path]` says its parameters,
//! body and answers (its `path` there is [`IN_TABLE`]: the path is the
//! row's).

use std::sync::LazyLock;

use axum::http::Method;
use axum::routing::{MethodFilter, MethodRouter, on};
use utoipa::openapi::path::HttpMethod;

use super::{controllers as c, openapi, webhooks as w};
use crate::controllers::health;
use crate::route::{Operation, op, spec};
use crate::state::AppState;

/// What every admin handler's `#[utoipa::path]` gives as its `path` (utoipa
/// requires one): the route's path is its row's, and the document takes
/// it from there, so this string is in no document.
pub const IN_TABLE: &str = "(the row's path in mds_http::admin::routes::ROUTES)";

pub use crate::route::Verb;

/// Who may call a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// A caller with an admin token (`Authorization: Bearer mds_admin_…`).
    AdminToken,
    /// Anyone (`/metrics`, tokenless as on the public listener).
    Open,
}

/// What a route's request body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// It takes none (one sent is not read).
    Nothing,
    /// A JSON object of at most [`MAX_BODY`] bytes: the envelope answers a
    /// larger one `413 payload_too_large`, and one not sent as
    /// `Content-Type: application/json` `415 unsupported_media_type`.
    Json,
}

/// The largest body a route takes, in bytes.
pub const MAX_BODY: usize = 1 << 20;

/// Whether a route records its changes in the audit log, and as which
/// actions (the store writes them, in the transaction of the change).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audit {
    /// It changes nothing.
    Nothing,
    /// Each change it makes is an entry with one of these actions.
    Records(&'static [&'static str]),
}

/// How the OpenAPI document shows a route: its operation, as a public
/// route's ([`Operation`]), and the methods its handler's
/// `#[utoipa::path]` names (held to the row's verb by a test).
#[derive(Debug, Clone, Copy)]
pub struct Documented {
    /// Its `operationId`, tag, summary, and the rest from its handler.
    pub operation: Operation,
    /// The methods its handler's annotation names.
    pub methods: fn() -> Vec<HttpMethod>,
}

/// One admin route.
pub struct AdminRoute {
    /// Its method.
    pub verb: Verb,
    /// The path template, as the router matches it.
    pub path: &'static str,
    /// Who may call it.
    pub auth: Auth,
    /// Its request body.
    pub input: Input,
    /// Whether it honours `Idempotency-Key` (a retry gets the first answer).
    pub idempotent: bool,
    /// What it records in the audit log.
    pub audit: Audit,
    /// Its operation in the OpenAPI document (`None`: not documented there).
    pub doc: Option<Documented>,
    /// Its handler, mounted for `verb`.
    pub handler: fn(MethodFilter) -> MethodRouter<AppState>,
}

/// The documentation of a route: `id`, `tag`, `summary`, and the rest
/// from the annotation of its handler (`P`: the struct `#[utoipa::path]`
/// made for it).
const fn doc<P: utoipa::Path>(id: &'static str, tag: &'static str, summary: &'static str) -> Option<Documented> {
    Some(Documented { operation: op(id, tag, summary, spec::<P>), methods: P::methods })
}

/// A route that reads (with an admin token, no body, nothing audited).
const fn read(
    path: &'static str,
    doc: Option<Documented>,
    handler: fn(MethodFilter) -> MethodRouter<AppState>,
) -> AdminRoute {
    AdminRoute {
        verb: Verb::Get,
        path,
        auth: Auth::AdminToken,
        input: Input::Nothing,
        idempotent: false,
        audit: Audit::Nothing,
        doc,
        handler,
    }
}

/// A route that changes something (with an admin token), recorded as
/// `actions`; a `POST` honours `Idempotency-Key`.
const fn change(
    verb: Verb,
    path: &'static str,
    input: Input,
    actions: &'static [&'static str],
    doc: Option<Documented>,
    handler: fn(MethodFilter) -> MethodRouter<AppState>,
) -> AdminRoute {
    let idempotent = matches!(verb, Verb::Post);
    AdminRoute { verb, path, auth: Auth::AdminToken, input, idempotent, audit: Audit::Records(actions), doc, handler }
}

/// Every admin route. Order does not matter to matching; rows of one path
/// are mounted together. One row a line, kept as a table by hand
/// (`rustfmt::skip`).
#[rustfmt::skip]
pub static ROUTES: &[AdminRoute] = &[
    AdminRoute { verb: Verb::Get, path: "/metrics", auth: Auth::Open, input: Input::Nothing, idempotent: false, audit: Audit::Nothing, doc: None, handler: |m| on(m, health::metrics) },
    read("/admin/v1/openapi.json", None, |m| on(m, openapi::serve)),
    read("/admin/v1/tiers", doc::<c::__path_list_tiers>("listTiers", "tiers", "List tiers"), |m| on(m, c::list_tiers)),
    change(Verb::Put, "/admin/v1/tiers/{name}", Input::Json, &["tier.create", "tier.update"], doc::<c::__path_put_tier>("putTier", "tiers", "Create or change a tier"), |m| on(m, c::put_tier)),
    read("/admin/v1/accounts", doc::<c::__path_list_accounts>("listAccounts", "accounts", "List accounts"), |m| on(m, c::list_accounts)),
    change(Verb::Post, "/admin/v1/accounts", Input::Json, &["account.create", "account.update"], doc::<c::__path_create_account>("createAccount", "accounts", "Create an account"), |m| on(m, c::create_account)),
    read("/admin/v1/accounts/{name}", doc::<c::__path_get_account>("getAccount", "accounts", "Get an account"), |m| on(m, c::get_account)),
    change(Verb::Patch, "/admin/v1/accounts/{name}", Input::Json, &["account.update"], doc::<c::__path_update_account>("updateAccount", "accounts", "Lapse or restore an account"), |m| on(m, c::update_account)),
    read("/admin/v1/accounts/{name}/usage", doc::<c::__path_account_usage>("getAccountUsage", "accounts", "An account's usage in a month"), |m| on(m, c::account_usage)),
    read("/admin/v1/keys", doc::<c::__path_list_keys>("listKeys", "keys", "List keys"), |m| on(m, c::list_keys)),
    change(Verb::Post, "/admin/v1/keys", Input::Json, &["key.create"], doc::<c::__path_issue_key>("issueKey", "keys", "Issue a key"), |m| on(m, c::issue_key)),
    read("/admin/v1/keys/{prefix}", doc::<c::__path_get_key>("getKey", "keys", "Get a key"), |m| on(m, c::get_key)),
    change(Verb::Delete, "/admin/v1/keys/{prefix}", Input::Nothing, &["key.revoke"], doc::<c::__path_revoke_key>("revokeKey", "keys", "Revoke a key"), |m| on(m, c::revoke_key)),
    change(Verb::Post, "/admin/v1/keys/{prefix}/roll", Input::Json, &["key.roll"], doc::<c::__path_roll_key>("rollKey", "keys", "Roll a key"), |m| on(m, c::roll_key)),
    read("/admin/v1/audit", doc::<c::__path_list_audit>("listAudit", "audit", "Read the audit log"), |m| on(m, c::list_audit)),
    read("/admin/v1/webhooks", doc::<w::__path_list_webhooks>("listWebhooks", "webhooks", "List webhook endpoints"), |m| on(m, w::list_webhooks)),
    change(Verb::Post, "/admin/v1/webhooks/{id}/disable", Input::Json, &["webhook.disable"], doc::<w::__path_disable_webhook>("disableWebhook", "webhooks", "Disable a webhook endpoint"), |m| on(m, w::disable_webhook)),
];

/// What a request's path and method find in the table.
#[derive(Clone, Copy)]
pub struct Found {
    /// Who may call the path: its rows' (they agree), or for a path no row
    /// has, an admin token (so a caller without one learns nothing of the
    /// routes, not even which exist).
    pub auth: Auth,
    /// The row of the path and method, if there is one (else the router
    /// answers `404` or `405`).
    pub route: Option<&'static AdminRoute>,
}

/// The rows of `path` and `method`, matched by the same matcher
/// (`matchit`) and templates as the router's, so the two cannot disagree.
pub fn find(path: &str, method: &Method) -> Found {
    static MATCHER: LazyLock<matchit::Router<Vec<&'static AdminRoute>>> = LazyLock::new(|| {
        let mut by_path: Vec<(&str, Vec<&AdminRoute>)> = Vec::new();
        for r in ROUTES {
            match by_path.iter_mut().find(|(p, _)| *p == r.path) {
                Some((_, rows)) => rows.push(r),
                None => by_path.push((r.path, vec![r])),
            }
        }
        let mut m = matchit::Router::new();
        for (path, rows) in by_path {
            m.insert(path, rows).expect("admin route templates are valid and do not overlap");
        }
        m
    });
    let Ok(matched) = MATCHER.at(path) else { return Found { auth: Auth::AdminToken, route: None } };
    let rows = matched.value;
    let route = rows.iter().copied().find(|r| r.verb.method() == method);
    Found { auth: route.unwrap_or(rows[0]).auth, route }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_distinct_and_agree_with_their_handlers() {
        for (i, r) in ROUTES.iter().enumerate() {
            for other in &ROUTES[i + 1..] {
                assert!(r.path != other.path || r.verb != other.verb, "{} twice", r.path);
                if r.path == other.path {
                    assert_eq!(r.auth, other.auth, "one path, one auth: {}", r.path);
                }
            }
            // The method the handler's annotation states is the row's.
            if let Some(d) = r.doc {
                assert!((d.methods)() == [r.verb.openapi()], "{}", r.path);
            }
            // A route that takes a body changes something, which is audited.
            if r.input == Input::Json {
                assert!(matches!(r.audit, Audit::Records(a) if !a.is_empty()), "{}", r.path);
            }
        }
    }

    #[test]
    fn paths_find_their_rows() {
        let found = |p: &str, m: Method| find(p, &m).route.map(|r| (r.path, r.verb));
        assert_eq!(
            found("/admin/v1/keys/mds_live_a1B2c3D4", Method::DELETE),
            Some(("/admin/v1/keys/{prefix}", Verb::Delete))
        );
        assert_eq!(found("/admin/v1/keys/x/roll", Method::POST), Some(("/admin/v1/keys/{prefix}/roll", Verb::Post)));
        assert_eq!(found("/admin/v1/accounts", Method::POST), Some(("/admin/v1/accounts", Verb::Post)));
        assert_eq!(found("/admin/v1/tiers", Method::POST), None);
        assert_eq!(find("/admin/v1/tiers", &Method::POST).auth, Auth::AdminToken);
        assert_eq!(find("/metrics", &Method::GET).auth, Auth::Open);
        assert_eq!(find("/metrics", &Method::POST).auth, Auth::Open);
        assert_eq!(find("/nope", &Method::GET).auth, Auth::AdminToken);
        assert_eq!(found("/admin/v1/tiers/", Method::GET), None);
    }
}
