//! The admin API's own OpenAPI document (`GET /admin/v1/openapi.json` on
//! the admin listener, with an admin token), separate from the public one
//! ([`crate::openapi`]), which does not mention the admin API.
//!
//! Made from the route table ([`super::routes`]): each documented row's
//! path and method, its operation's name, tag and summary, and its
//! handler's `#[utoipa::path]` (parameters, body, answers); then what the
//! row says, stated here once for every route: the admin token (`401`),
//! the JSON body (`413`, `415`), `Idempotency-Key` (the header, `409
//! idempotency_conflict`, `Idempotent-Replayed`), the audit actions, and
//! for `GET`s the `304` of `If-None-Match`.

use std::sync::OnceLock;

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use mds_domain::admin::{AccountUsage, KeyUsage, KeyView};
use mds_domain::{Account, AuditEntry, ErrorCode, Problem, Tier};
use utoipa::openapi::path::{Operation, ParameterBuilder, ParameterIn};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{HeaderBuilder, Ref, RefOr, Required, ResponseBuilder};
use utoipa::{Modify, OpenApi};

use super::controllers::{IssuedKey, List, RolledKeyView};
use super::routes::ROUTES;
use crate::components::problem;
use crate::route::{Access, Audit, Input, Operation as Row, Verb};

/// The document.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "mds admin API",
        description = "Tiers, accounts and their entitlement, keys and the audit log of mds, for the systems that \
run the business. Served only on the admin listener (`mds serve --admin-listen`); every request carries \
`Authorization: Bearer <admin token>` (`mds admin-tokens create NAME`). Bodies are JSON objects of at most 1 MiB, \
sent as `Content-Type: application/json` (else `415 unsupported_media_type`; a larger one is `413 \
payload_too_large`), and one that is not a JSON object `400 invalid_body`; a field a route does not define is `400 \
unknown_field`, a bad value `400 invalid_field`, both naming the field in `param`. Errors are problem+json with `code` and `request_id`; every response carries \
`X-Request-Id`; `GET`s carry a strong `ETag` and answer `If-None-Match` with `304`. `POST`s honour \
`Idempotency-Key` (1 to 255 visible ASCII characters, kept 24 h, per admin token): a retry with the same key and \
body gets the first answer again (`Idempotent-Replayed: true`; an issued key is shown again to that retry only) and \
changes nothing; the same key with another request is `409 idempotency_conflict`. Every change is recorded in the \
audit log. Lists are `{\"data\", \"has_more\", \"next_cursor\"}` and page as the public API's: `limit` 1 to 200 \
(default 50), `cursor` from `next_cursor` (a string while `has_more`, else `null`), valid only for the list and \
filters that issued it.",
        license(name = "MIT OR Apache-2.0", identifier = "MIT OR Apache-2.0"),
    ),
    components(schemas(
        Tier, Account, AccountUsage, KeyUsage, KeyView, IssuedKey, RolledKeyView, AuditEntry, Problem, List<Tier>,
        List<Account>, List<KeyView>, List<AuditEntry>, crate::admin::webhooks::AdminWebhook,
        crate::admin::webhooks::AdminWebhookList, crate::controllers::webhooks::V1WebhookEndpoint
    )),
    modifiers(&FromTable),
    security(("admin_token" = []))
)]
pub struct AdminApiDoc;

/// Adds the tags, the bearer scheme of admin tokens, the shared problem
/// responses and the routes of the table.
struct FromTable;

/// The shared problem responses: name, description, codes.
const SHARED: &[(&str, &str, &[ErrorCode])] = &[
    (
        "AdminUnauthorized",
        "No `Authorization: Bearer` header (`missing_admin_token`), or a malformed, unknown or revoked admin token or \
an API key (`invalid_admin_token`, one body for all). Carries `WWW-Authenticate: Bearer realm=\"mds-admin\"`.",
        &[ErrorCode::MissingAdminToken, ErrorCode::InvalidAdminToken],
    ),
    ("AdminMethodNotAllowed", "A method the route does not answer; with `Allow`.", &[ErrorCode::MethodNotAllowed]),
    (
        "PayloadTooLarge",
        "The body is over 1 MiB (`payload_too_large`); nothing was read or done.",
        &[ErrorCode::PayloadTooLarge],
    ),
    (
        "UnsupportedMediaType",
        "A body not sent as `Content-Type: application/json` (`unsupported_media_type`); nothing was done.",
        &[ErrorCode::UnsupportedMediaType],
    ),
    (
        "IdempotencyConflict",
        "`idempotency_conflict`: the `Idempotency-Key` was used in the last 24 hours with another request, or its \
first request still runs.",
        &[ErrorCode::IdempotencyConflict],
    ),
    ("AdminInternal", "A bug; the body holds no internal detail, only the request id.", &[ErrorCode::Internal]),
    (
        "AdminUnavailable",
        "The store is unreachable or the request ran out of time; retry later.",
        &[ErrorCode::Unavailable],
    ),
];

impl Modify for FromTable {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        crate::openapi::set_tags(
            openapi,
            &[
                ("tiers", "Rate limit and monthly quota per tier."),
                ("accounts", "Accounts and their entitlement."),
                ("keys", "API keys: issue, list, show, revoke."),
                ("audit", "Every change, newest first."),
                ("webhooks", "Every account's webhook endpoints; disabling one."),
            ],
        );
        let components =
            crate::openapi::add_bearer(openapi, "admin_token", "An admin token, `mds_admin_…`; API keys are refused.");
        for (name, description, codes) in SHARED {
            components.responses.insert((*name).into(), problem(description, codes, &[]));
        }
        for r in ROUTES {
            for d in r.operations() {
                let mut op = (d.spec)();
                // The handler's doc comment (utoipa's summary and
                // description) describes it; the row names it.
                op.description = match (op.summary.take(), op.description.take()) {
                    (Some(s), Some(d)) => Some(format!("{s}\n\n{d}")),
                    (s, d) => s.or(d),
                };
                op.operation_id = Some(d.id.into());
                op.tags = Some(vec![d.tag.into()]);
                op.summary = Some(d.summary.into());
                state_the_row(r.access, d, &mut op);
                openapi.paths.add_path_operation(r.path, vec![d.verb.openapi()], op);
            }
        }
    }
}

/// Adds to `op` what its row says: the row's `access`, and of its
/// operation `r`.
fn state_the_row(access: Access, r: &Row, op: &mut Operation) {
    let refer = |name: &str| RefOr::Ref(Ref::from_response_name(name));
    let responses = &mut op.responses.responses;
    let mut add = |status: &str, name: &str| {
        responses.entry(status.into()).or_insert_with(|| refer(name));
    };
    if access == Access::AdminToken {
        add("401", "AdminUnauthorized");
    }
    add("405", "AdminMethodNotAllowed");
    if r.input == Input::Json {
        add("413", "PayloadTooLarge");
        add("415", "UnsupportedMediaType");
    }
    add("500", "AdminInternal");
    add("503", "AdminUnavailable");
    if r.verb == Verb::Get {
        let not_modified = ResponseBuilder::new().description("Not modified: `If-None-Match` matched the `ETag`.");
        responses.entry("304".into()).or_insert_with(|| not_modified.build().into());
    }
    if r.idempotent {
        match responses.get_mut("409") {
            Some(RefOr::T(conflict)) => {
                conflict.description.push_str(" Or `idempotency_conflict`: the `Idempotency-Key` was used with another request, or its first request still runs.");
            }
            _ => {
                responses.insert("409".into(), refer("IdempotencyConflict"));
            }
        }
        let replayed = HeaderBuilder::new()
            .schema(ObjectBuilder::new().schema_type(Type::String))
            .description(Some(
                "`true` on the answer to a retry with the same `Idempotency-Key`: the first answer again.",
            ))
            .build();
        for (status, resp) in responses.iter_mut() {
            if let (false, RefOr::T(resp)) = (status.starts_with('5'), resp) {
                resp.headers.insert("Idempotent-Replayed".into(), replayed.clone());
            }
        }
        let key = ParameterBuilder::new()
            .name("Idempotency-Key")
            .parameter_in(ParameterIn::Header)
            .required(Required::False)
            .description(Some(
                "1 to 255 visible ASCII characters (a UUID, say), kept 24 h per admin token: a retry with the same \
key and request gets the first answer and changes nothing.",
            ))
            .schema(Some(ObjectBuilder::new().schema_type(Type::String).max_length(Some(255))))
            .build();
        op.parameters.get_or_insert_with(Vec::new).push(key);
    }
    if let Audit::Records(actions) = r.audit {
        let actions = actions.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(" or ");
        let audited = format!("Each change is recorded in the audit log as {actions}.");
        op.description = Some(match op.description.take() {
            Some(d) => format!("{d}\n\n{audited}"),
            None => audited,
        });
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

    /// Every body a route takes is stated: an object with its fields that
    /// refuses others (as [`super::super::body::Body::parse`] does).
    #[test]
    fn request_bodies_are_typed_and_closed() {
        let v: serde_json::Value = serde_json::from_str(document_json()).unwrap();
        let mut bodies = 0;
        for item in v["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values() {
                if let Some(s) = op.pointer("/requestBody/content/application~1json/schema") {
                    assert_eq!((&s["type"], &s["additionalProperties"]), (&"object".into(), &false.into()), "{s}");
                    assert!(!s["properties"].as_object().unwrap().is_empty(), "{s}");
                    bodies += 1;
                }
            }
        }
        assert_eq!(bodies, 6);
    }

    #[test]
    fn the_document_lists_every_documented_route() {
        let v: serde_json::Value = serde_json::from_str(document_json()).unwrap();
        let paths: Vec<_> = v["paths"].as_object().unwrap().keys().map(String::as_str).collect();
        let mut documented: Vec<_> = ROUTES.iter().filter(|r| r.operation.is_some()).map(|r| r.path).collect();
        documented.sort_unstable();
        assert_eq!(paths, documented);
        assert_eq!(paths.len(), 11);
        assert!(document_json().contains("\"IssuedKey\""));
    }

    /// Each documented row is its operation under its path and method, with
    /// what the row says; every code the admin API answers is in the
    /// document; every `$ref` resolves.
    #[test]
    fn the_document_states_the_rows() {
        let v: serde_json::Value = serde_json::from_str(document_json()).unwrap();
        for (r, d) in ROUTES.iter().flat_map(|r| r.operations().map(move |d| (r, d))) {
            let op = &v["paths"][r.path][d.verb.method().as_str().to_lowercase()];
            assert_eq!(op["operationId"], d.id, "{}", r.path);
            let has = |status: &str| op["responses"].get(status).is_some();
            assert_eq!(has("413") && has("415"), d.input == Input::Json, "{}", d.id);
            let header = op["parameters"].as_array().into_iter().flatten().any(|p| p["name"] == "Idempotency-Key");
            assert_eq!(header, d.idempotent, "{}", d.id);
            if let Audit::Records(actions) = d.audit {
                for a in actions {
                    assert!(op["description"].as_str().unwrap().contains(a), "{}", d.id);
                }
            }
        }
        let doc = document_json();
        for c in ErrorCode::ALL.iter().filter(|c| c.admin_only()) {
            assert!(doc.contains(&format!("{}`", c.as_str())), "{c:?} not described");
        }
        for part in doc.split("\"$ref\": \"#/components/").skip(1) {
            let target = &part[..part.find('"').unwrap()];
            let (kind, name) = target.split_once('/').unwrap();
            assert!(v["components"][kind].get(name).is_some(), "{target} does not resolve");
        }
    }
}
