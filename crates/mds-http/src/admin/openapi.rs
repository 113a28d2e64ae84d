//! The admin API's own OpenAPI document (`GET /admin/v1/openapi.json` on
//! the admin listener, with an admin token), generated from the admin
//! handlers' `#[utoipa::path]` as the public one is
//! ([`crate::openapi`]), and separate from it: the public document does not
//! mention the admin API.

use std::sync::OnceLock;

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use mds_domain::admin::{AccountUsage, KeyUsage, KeyView};
use mds_domain::{Account, AuditEntry, Problem, Tier};
use utoipa::{Modify, OpenApi};

use super::controllers::{self, IssuedKey, List, RolledKeyView};

/// The document.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "mds admin API",
        description = "Tiers, accounts and their entitlement, keys and the audit log of mds, for the systems that \
run the business. Served only on the admin listener (`mds serve --admin-listen`); every request carries \
`Authorization: Bearer <admin token>` (`mds admin-tokens create NAME`). Bodies are JSON objects; a field a route \
does not define is `400 unknown_field`, a bad value `400 invalid_field`, both naming the field in `param`. Errors \
are problem+json with `code` and `request_id`; every response carries `X-Request-Id`; `GET`s carry a strong \
`ETag` and answer `If-None-Match` with `304`. `POST`s honour `Idempotency-Key` (1 to 255 visible ASCII \
characters, kept 24 h, per admin token): a retry with the same key and body gets the first answer again \
(`Idempotent-Replayed: true`; an issued key is shown again to that retry only) and changes nothing; the same key \
with another request is `409 idempotency_conflict`. Every change is recorded in the audit log. Lists are \
`{\"data\", \"has_more\", \"next_cursor\"}` and page as the public API's: `limit` 1 to 200 (default 50), `cursor` \
from `next_cursor` (a string while `has_more`, else `null`), valid only for the list and filters that issued it.",
        license(name = "MIT OR Apache-2.0", identifier = "MIT OR Apache-2.0"),
    ),
    paths(
        controllers::list_tiers, controllers::put_tier, controllers::list_accounts, controllers::create_account,
        controllers::get_account, controllers::update_account, controllers::account_usage, controllers::list_keys,
        controllers::issue_key, controllers::roll_key, controllers::get_key, controllers::revoke_key, controllers::list_audit
    ),
    components(schemas(
        Tier, Account, AccountUsage, KeyUsage, KeyView, IssuedKey, RolledKeyView, AuditEntry, Problem, List<Tier>,
        List<Account>, List<KeyView>, List<AuditEntry>
    )),
    modifiers(&Bearer),
    security(("admin_token" = []))
)]
pub struct AdminApiDoc;

/// Adds the tags and the bearer scheme of admin tokens.
struct Bearer;

impl Modify for Bearer {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        crate::openapi::set_tags(
            openapi,
            &[
                ("tiers", "Rate limit and monthly quota per tier."),
                ("accounts", "Accounts and their entitlement."),
                ("keys", "API keys: issue, list, show, revoke."),
                ("audit", "Every change, newest first."),
            ],
        );
        crate::openapi::add_bearer(openapi, "admin_token", "An admin token, `mds_admin_…`; API keys are refused.");
    }
}

/// The document as JSON, made once.
pub fn document_json() -> &'static str {
    static DOC: OnceLock<String> = OnceLock::new();
    DOC.get_or_init(|| AdminApiDoc::openapi().to_pretty_json().expect("the document serialises"))
}

/// `GET /admin/v1/openapi.json`.
pub async fn serve() -> Response {
    let tagged = mds_node::Tagged::hashed(document_json().as_bytes().to_vec());
    let mut resp = crate::controllers::tagged(tagged).into_response();
    resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_lists_every_admin_route() {
        let v: serde_json::Value = serde_json::from_str(document_json()).unwrap();
        let paths: Vec<_> = v["paths"].as_object().unwrap().keys().cloned().collect();
        assert_eq!(
            paths,
            [
                "/admin/v1/accounts",
                "/admin/v1/accounts/{name}",
                "/admin/v1/accounts/{name}/usage",
                "/admin/v1/audit",
                "/admin/v1/keys",
                "/admin/v1/keys/{prefix}",
                "/admin/v1/keys/{prefix}/roll",
                "/admin/v1/tiers",
                "/admin/v1/tiers/{name}"
            ]
        );
        assert!(document_json().contains("\"IssuedKey\""));
    }
}
