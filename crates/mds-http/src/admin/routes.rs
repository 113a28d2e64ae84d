//! The admin route table: every route of the admin listener with its
//! properties, the one place they are stated, in rows of the public
//! table's kind ([`crate::route::Route`]; the public table is
//! [`crate::routes`]). The admin router mounts the rows
//! ([`super::router`]); the envelope finds a request's row and operation
//! ([`find`]: the router's own matcher) and reads from them whether the
//! route needs an admin token ([`Access::AdminToken`]), takes a JSON body
//! and honours `Idempotency-Key`; the OpenAPI document
//! ([`super::openapi`]) is made from the rows: each operation at its row's
//! path, with what the row says of the token, the body, the idempotency
//! header and the audit log.
//!
//! Adding an admin route is a row (or an operation of a row) here plus its
//! handler in [`super::controllers`], whose `#[utoipa::path]` says its
//! parameters, body and answers (its `path` there is
//! [`crate::components::PATH_IN_TABLE`]: the path is the row's).

use std::sync::LazyLock;

use axum::http::Method;
use axum::routing::{MethodRouter, get, post, put};

use super::{controllers as c, openapi, webhooks as w};
use crate::controllers::health;
use crate::route::{Access, Audit, Caching, Input, Matcher, Operation, Route, Verb, op, probe, spec, with_operations};
use crate::state::AppState;

/// An admin operation: `id`, `tag`, `summary`, and the rest from the
/// annotation of its handler (`P`: the struct `#[utoipa::path]` made for
/// it), whose method the row's is held to.
const fn doc<P: utoipa::Path>(id: &'static str, tag: &'static str, summary: &'static str) -> Operation {
    Operation { methods: P::methods, ..op(id, tag, summary, spec::<P>) }
}

/// `operation` on `verb`, a change recorded as `actions` taking `input`; a
/// `POST` honours `Idempotency-Key`.
const fn change(verb: Verb, input: Input, actions: &'static [&'static str], operation: Operation) -> Operation {
    let idempotent = matches!(verb, Verb::Post);
    Operation { verb, input, idempotent, audit: Audit::Records(actions), ..operation }
}

/// A route with an admin token, its answers kept per caller and
/// revalidated (`private, no-cache`), with an operation per method (the
/// first `operations[0]`; none: outside the document).
const fn admin(path: &'static str, operations: &'static [Operation], handler: fn() -> MethodRouter<AppState>) -> Route {
    with_operations(path, Access::AdminToken, Caching::Revalidate, operations, handler)
}

/// Every admin route. Order does not matter to matching. One row a line,
/// kept as a table by hand (`rustfmt::skip`).
#[rustfmt::skip]
pub static ROUTES: &[Route] = &[
    // Tokenless, as on the public listener (which then does not serve it).
    probe("/metrics", || get(health::metrics)),
    admin("/admin/v1/openapi.json", &[], || get(openapi::serve)),
    admin("/admin/v1/tiers", &[doc::<c::__path_list_tiers>("listTiers", "tiers", "List tiers")], || get(c::list_tiers)),
    admin("/admin/v1/tiers/{name}", &[change(Verb::Put, Input::Json, &["tier.create", "tier.update"], doc::<c::__path_put_tier>("putTier", "tiers", "Create or change a tier"))], || put(c::put_tier)),
    admin("/admin/v1/accounts", &[doc::<c::__path_list_accounts>("listAccounts", "accounts", "List accounts"), change(Verb::Post, Input::Json, &["account.create", "account.update"], doc::<c::__path_create_account>("createAccount", "accounts", "Create an account"))], || get(c::list_accounts).post(c::create_account)),
    admin("/admin/v1/accounts/{name}", &[doc::<c::__path_get_account>("getAccount", "accounts", "Get an account"), change(Verb::Patch, Input::Json, &["account.update"], doc::<c::__path_update_account>("updateAccount", "accounts", "Lapse or restore an account"))], || get(c::get_account).patch(c::update_account)),
    admin("/admin/v1/accounts/{name}/usage", &[doc::<c::__path_account_usage>("getAccountUsage", "accounts", "An account's usage in a month")], || get(c::account_usage)),
    admin("/admin/v1/keys", &[doc::<c::__path_list_keys>("listKeys", "keys", "List keys"), change(Verb::Post, Input::Json, &["key.create"], doc::<c::__path_issue_key>("issueKey", "keys", "Issue a key"))], || get(c::list_keys).post(c::issue_key)),
    admin("/admin/v1/keys/{prefix}", &[doc::<c::__path_get_key>("getKey", "keys", "Get a key"), change(Verb::Delete, Input::Nothing, &["key.revoke"], doc::<c::__path_revoke_key>("revokeKey", "keys", "Revoke a key"))], || get(c::get_key).delete(c::revoke_key)),
    admin("/admin/v1/keys/{prefix}/roll", &[change(Verb::Post, Input::Json, &["key.roll"], doc::<c::__path_roll_key>("rollKey", "keys", "Roll a key"))], || post(c::roll_key)),
    admin("/admin/v1/audit", &[doc::<c::__path_list_audit>("listAudit", "audit", "Read the audit log")], || get(c::list_audit)),
    admin("/admin/v1/webhooks", &[doc::<w::__path_list_webhooks>("listWebhooks", "webhooks", "List webhook endpoints")], || get(w::list_webhooks)),
    admin("/admin/v1/webhooks/{id}/disable", &[change(Verb::Post, Input::Json, &["webhook.disable"], doc::<w::__path_disable_webhook>("disableWebhook", "webhooks", "Disable a webhook endpoint"))], || post(w::disable_webhook)),
];

/// What a request's path and method find in the table.
#[derive(Clone, Copy)]
pub struct Found {
    /// The row of the path, if there is one (else the router answers
    /// `404`).
    pub route: Option<&'static Route>,
    /// Its operation on the method, if it has one (else the router answers
    /// `405`, or the row is outside the document).
    pub operation: Option<&'static Operation>,
}

impl Found {
    /// Who may call the path: its row's, or for a path no row has, an
    /// admin token (so a caller without one learns nothing of the routes,
    /// not even which exist).
    pub fn access(&self) -> Access {
        self.route.map_or(Access::AdminToken, |r| r.access)
    }
}

/// The index in [`ROUTES`] of the row the router gives `path` to, or
/// `ROUTES.len()` for none.
pub fn route_of(path: &str) -> usize {
    static MATCHER: LazyLock<Matcher> = LazyLock::new(|| Matcher::new(ROUTES));
    MATCHER.index(path)
}

/// The row of `path` and its operation on `method`.
pub fn find(path: &str, method: &Method) -> Found {
    let route = ROUTES.get(route_of(path));
    Found { route, operation: route.and_then(|r| r.operation_on(method)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_agree_with_their_handlers() {
        for r in ROUTES {
            for o in r.operations() {
                // The method the handler's annotation states is the row's.
                assert!((o.methods)() == [o.verb.openapi()], "{} {:?}", r.path, o.verb);
                // A route that takes a body changes something, which is audited.
                if o.input == Input::Json {
                    assert!(matches!(o.audit, Audit::Records(a) if !a.is_empty()), "{}", r.path);
                }
            }
        }
    }

    #[test]
    fn paths_find_their_rows() {
        let found = |p: &str, m: Method| {
            let f = find(p, &m);
            f.operation.map(|o| (f.route.unwrap().path, o.verb))
        };
        assert_eq!(
            found("/admin/v1/keys/mds_live_a1B2c3D4", Method::DELETE),
            Some(("/admin/v1/keys/{prefix}", Verb::Delete))
        );
        assert_eq!(found("/admin/v1/keys/x/roll", Method::POST), Some(("/admin/v1/keys/{prefix}/roll", Verb::Post)));
        assert_eq!(found("/admin/v1/accounts", Method::POST), Some(("/admin/v1/accounts", Verb::Post)));
        assert_eq!(found("/admin/v1/tiers", Method::POST), None);
        assert_eq!(find("/admin/v1/tiers", &Method::POST).access(), Access::AdminToken);
        assert_eq!(find("/metrics", &Method::GET).access(), Access::Open);
        assert_eq!(find("/metrics", &Method::POST).access(), Access::Open);
        assert_eq!(find("/nope", &Method::GET).access(), Access::AdminToken);
        assert_eq!(found("/admin/v1/tiers/", Method::GET), None);
    }
}
