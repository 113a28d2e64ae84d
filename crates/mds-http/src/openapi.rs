//! The OpenAPI 3.1 document of the API, generated from the code with utoipa:
//! the route table's rows (each documented row's operation at its path,
//! with its `operationId`, tag and summary, its caching and what it takes
//! from the quota), the handlers' `#[utoipa::path]` attributes (their
//! parameters, responses and description), the wire types and query
//! parameters of `mds-domain` (feature `openapi`), the shared parts of
//! [`crate::components`], and here what every operation shares: the
//! problem responses after admission carry the rate-limit headers, the
//! response headers, the bearer scheme and the introduction (`openapi.md`,
//! what a consumer needs to know before the operations).
//!
//! Written for generated clients: one `Problem` schema that every error
//! response refers to (`components/responses`, by `$ref`), one schema per
//! enumeration (`Exchange`, `MarketCapBand`) referred to wherever it is used,
//! and `operationId`s that read as method names (`listCompanies`,
//! `listNews`, `getArticle`, `getUsage`). `scripts/generated-client.sh`
//! generates a Python client from the served document and runs it against
//! a server.
//!
//! Served unauthenticated at `GET /v1/openapi.json` (the document of the
//! route table, [`crate::routes::document_json`]); a snapshot is committed
//! at `docs/openapi.json` and checked by `tests/suite/openapi.rs`.

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use mds_domain::daily::{V1UsageDaily, V1UsageDay};
use mds_domain::usage::{V1Usage, V1UsageWindow};
use mds_domain::{Article, ArticleSummary, Company, ErrorCode, Exchange, MarketCapBand, Problem};
use mds_domain::{Classification, CompanyDetail, Listing, ListingStatus, MarketCap};
use mds_domain::{CompanyHistory, CompanyStatus, IdentityChange, IdentityEvent, SymbolHistory, SymbolPeriod};
use mds_domain::{Isin, Slug, Ticker};
use mds_limits::Charge;
use utoipa::openapi::schema::{ArrayItems, Schema, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::tag::TagBuilder;
use utoipa::openapi::{Ref, RefOr, ResponseBuilder};
use utoipa::{Modify, OpenApi};

use mds_domain::action_query::CompanyActions;
use mds_domain::actions::{ActionType, CorporateAction};

use crate::components::{ActionPage, ActionsBadRequest, CompanyActionsBadRequest};
use crate::components::{
    AsOfBadRequest, BadRequest, ChangesBadRequest, CompaniesBadRequest, CompanyPage, EventPage, EventsBadRequest,
    EventsExpired, Internal, MethodNotAllowed, NewsBadRequest, NewsPage, NotFound, PayloadTooLarge,
    RequestHeaderFieldsTooLarge, StreamTooManyRequests, SymbolBadRequest, SyncTokenExpired, TooManyRequests,
    Unauthorized, Unavailable, UnsupportedMediaType, UriTooLong, WebhookBadRequest, header,
};
use crate::components::{CompanyPricesBadRequest, MarketPricesBadRequest};
use crate::controllers::webhooks::{
    EndpointStatus, SubscribableType, V1WebhookAttempt, V1WebhookAttemptList, V1WebhookCreate, V1WebhookEndpoint,
    V1WebhookEndpointList, V1WebhookEndpointWithSecret, V1WebhookPing, V1WebhookReplay, V1WebhookRotate,
    V1WebhookUpdate,
};
use crate::route::{Access, Caching, Route, Verb};
use mds_domain::facets::{BasicIndustry, Facet, Hint, Industries, Industry, MacroSector, NewsFacets, Sector};
use mds_domain::price_query::{Adjust, Adjustment, CompanyPrices, MarketDay};
use mds_domain::prices::Bar;

/// The schemas of request bodies, whose absent fields mean something
/// (left out of the rule that every property is required).
pub const REQUEST_BODIES: [&str; 4] = ["V1WebhookCreate", "V1WebhookUpdate", "V1WebhookRotate", "V1WebhookReplay"];

/// The schema of a company list's rows, whose `match` is optional.
const LIST_ITEM: &str = "V1CompanyListItem";

/// The document (see the module docs).
#[derive(OpenApi)]
#[openapi(
    info(
        title = "mds market-data API",
        description = include_str!("openapi.md"),
        license(name = "MIT OR Apache-2.0", identifier = "MIT OR Apache-2.0"),
    ),
    components(
        schemas(
            CompanyPage, Company, NewsPage, ArticleSummary, Article, V1Usage, V1UsageWindow, Problem, MarketCapBand,
            Exchange, Isin, Ticker, Slug, mds_domain::ChangesPage, CompanyDetail, Listing, ListingStatus, Classification, MarketCap,
            V1UsageDaily, V1UsageDay, CompanyStatus, CompanyHistory, IdentityEvent, IdentityChange, SymbolHistory,
            SymbolPeriod, EventPage, mds_domain::Event, mds_domain::CompanyChanged, V1WebhookEndpoint,
            V1WebhookEndpointWithSecret, V1WebhookEndpointList, V1WebhookAttempt, V1WebhookAttemptList, V1WebhookPing,
            V1WebhookCreate, V1WebhookUpdate, V1WebhookRotate, V1WebhookReplay, SubscribableType, EndpointStatus,
            ActionPage, CorporateAction, CompanyActions, ActionType, CompanyPrices, MarketDay, Bar, Adjustment,
            Adjust,
            Industries, MacroSector, Sector, Industry, BasicIndustry, NewsFacets, Facet, Hint
        ),
        responses(
            CompaniesBadRequest,
            AsOfBadRequest,
            SymbolBadRequest,
            CompanyActionsBadRequest,
            ActionsBadRequest,
            CompanyPricesBadRequest,
            MarketPricesBadRequest,
            ChangesBadRequest,
            SyncTokenExpired,
            NewsBadRequest,
            EventsBadRequest,
            EventsExpired,
            BadRequest,
            Unauthorized,
            NotFound,
            MethodNotAllowed,
            TooManyRequests,
            StreamTooManyRequests,
            Internal,
            Unavailable,
            WebhookBadRequest,
            PayloadTooLarge,
            UnsupportedMediaType,
            UriTooLong,
            RequestHeaderFieldsTooLarge
        ),
    ),
    security(("bearer" = []))
)]
pub struct ApiDoc;

/// The document of `routes` (see the module docs) as pretty JSON with a
/// trailing newline (the form committed at `docs/openapi.json`).
pub fn document_json(routes: &[Route]) -> String {
    let mut doc = ApiDoc::openapi();
    for route in routes {
        for op in route.operations() {
            doc.paths.add_path_operation(route.path, vec![op.verb.openapi()], (op.spec)());
        }
    }
    Common { routes }.modify(&mut doc);
    let mut s = doc.to_pretty_json().expect("the document serialises");
    s.push('\n');
    s
}

/// The answer to `GET /v1/openapi.json`: `document`.
pub fn serve(document: &'static str) -> Response {
    let mut resp = document.into_response();
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

/// Adds the bearer security scheme `name` (described by `description`) to
/// `doc`'s components, which it returns.
pub(crate) fn add_bearer<'d>(
    doc: &'d mut utoipa::openapi::OpenApi,
    name: &str,
    description: &str,
) -> &'d mut utoipa::openapi::Components {
    let components = doc.components.get_or_insert_with(Default::default);
    let scheme = HttpBuilder::new().scheme(HttpAuthScheme::Bearer).description(Some(description)).build();
    components.add_security_scheme(name, SecurityScheme::Http(scheme));
    components
}

/// Sets `doc`'s tags: each `(name, description)`, in this order.
pub(crate) fn set_tags(doc: &mut utoipa::openapi::OpenApi, tags: &[(&str, &str)]) {
    let tag =
        |(name, description): &(&str, &str)| TagBuilder::new().name(*name).description(Some(*description)).build();
    doc.tags = Some(tags.iter().map(tag).collect());
}

/// Adds what every operation shares: the tags, the bearer scheme, `X-Request-Id` on
/// every response, the rate-limit headers on the responses of admitted
/// requests, `ETag` and `Cache-Control` on `200`/`304`.
struct Common<'r> {
    /// The route table the document is of.
    routes: &'r [Route],
}

impl Modify for Common<'_> {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        set_tags(
            doc,
            &[
                ("companies", "Listed companies and securities."),
                ("news", "News articles."),
                (
                    "actions",
                    "Corporate actions (splits, bonuses, dividends, rights, ...) by ISIN, merged across NSE and BSE.",
                ),
                (
                    "prices",
                    "End-of-day prices by ISIN, continuous through splits and ISIN changes, every adjustment shown.",
                ),
                ("usage", "The calling key's consumption and limits."),
                (
                    "webhooks",
                    "The caller's account's webhook endpoints: events pushed to its URLs, signed (Standard Webhooks).",
                ),
            ],
        );
        let components = add_bearer(doc, "bearer", "An API key: `Authorization: Bearer mds_live_…` (or `mds_test_…`).");
        flatten_tagged_unions(components);
        for (name, schema) in components.schemas.iter_mut() {
            // Request bodies keep their optional fields optional.
            if name != "Problem" && !REQUEST_BODIES.contains(&name.as_str()) {
                require_every_property(schema);
            }
            // Only a search's results carry `match` (contract section 15).
            if let (LIST_ITEM, RefOr::T(Schema::Object(o))) = (name.as_str(), &mut *schema) {
                o.required.retain(|p| p != "match");
            }
            // Only an empty page of an unknown exact-match value carries `hint`.
            if let ("V1CompanyPage" | "V1NewsPage", RefOr::T(Schema::Object(o))) = (name.as_str(), schema) {
                o.required.retain(|p| p != "hint");
            }
        }
        let request_id = header(
            "Echo of the caller's `X-Request-Id` when sane (1-128 of `[A-Za-z0-9._:-]`), else a new ULID.",
            Type::String,
        );
        let limits = [
            ("RateLimit-Policy", "The policies: `\"minute\";q=<limit>;w=60, \"month\";q=<quota>`.", Type::String),
            ("RateLimit", "Where the caller stands: `\"<policy>\";r=<remaining>;t=<seconds to reset>`.", Type::String),
            ("X-RateLimit-Limit", "Requests allowed per minute.", Type::Integer),
            ("X-RateLimit-Remaining", "Requests left in the current minute.", Type::Integer),
            ("X-RateLimit-Reset", "Seconds until the per-minute limit resets.", Type::Integer),
        ];
        for resp in components.responses.values_mut() {
            if let RefOr::T(r) = resp {
                r.headers.insert("X-Request-Id".into(), request_id.clone());
                if r.content.get("application/problem+json").is_some_and(|c| is_post_auth(c.examples.keys())) {
                    for (n, d, t) in &limits {
                        r.headers.insert((*n).into(), header(d, t.clone()));
                    }
                }
            }
        }
        for (path, item) in doc.paths.paths.iter_mut() {
            // What the route table says of the route: its operation's name,
            // tag and summary, its caching and billing.
            let route = self.routes.iter().find(|r| r.path == path).expect("every documented path is routed");
            let cache = match route.caching {
                Caching::Private => "`private, max-age=N` (N = 60 by default).",
                Caching::Revalidate => "`private, no-cache` (revalidate with `If-None-Match`; a `304` is free).",
                Caching::NoStore => "`no-store`.",
                Caching::Public(_) => "`public`.",
            };
            for o in route.operations() {
                let get = o.verb == Verb::Get;
                let slot = match o.verb {
                    Verb::Get => &mut item.get,
                    Verb::Post => &mut item.post,
                    Verb::Patch => &mut item.patch,
                    Verb::Delete => &mut item.delete,
                    Verb::Put => &mut item.put,
                };
                let Some(op) = slot.as_mut() else { continue };
                op.operation_id = Some(o.id.into());
                op.tags = Some(vec![o.tag.into()]);
                op.summary = Some(o.summary.into());
                // What every keyed route can answer, stated here once rather
                // than in each handler's annotation.
                if let Access::Keyed(charge) = route.access {
                    let not_counted = if matches!(charge, Charge::Counted(_)) { ", not counted" } else { "" };
                    let not_modified = ResponseBuilder::new()
                        .description(format!("Not modified: `If-None-Match` matched the `ETag`; no body{not_counted}."))
                        .build();
                    if get {
                        op.responses.responses.entry("304".into()).or_insert(RefOr::T(not_modified));
                    }
                    for (status, name) in [
                        ("401", "Unauthorized"),
                        ("405", "MethodNotAllowed"),
                        ("414", "UriTooLong"),
                        ("429", "TooManyRequests"),
                        ("431", "RequestHeaderFieldsTooLarge"),
                        ("500", "Internal"),
                        ("503", "Unavailable"),
                    ] {
                        op.responses
                            .responses
                            .entry(status.into())
                            .or_insert(RefOr::Ref(Ref::from_response_name(name)));
                    }
                    // Every keyed route refuses a query parameter it does not
                    // define (a route with its own parameters documents its
                    // own `400`), and a `GET …/{id}` answers `404` for an id
                    // that names nothing.
                    let by_path = path.contains('{').then_some(("404", "NotFound"));
                    for (status, name) in [Some(("400", "BadRequest")), by_path].into_iter().flatten() {
                        op.responses
                            .responses
                            .entry(status.into())
                            .or_insert(RefOr::Ref(Ref::from_response_name(name)));
                    }
                }
                let billing = match route.access {
                    Access::Keyed(Charge::Counted(_)) => {
                        "Counts against the monthly quota, whatever the outcome, except a `304` or a `5xx`."
                    }
                    Access::Keyed(Charge::Free) => {
                        "Not counted against the monthly quota (it takes from the per-minute limit), so it stays \
                     possible when the quota is spent."
                    }
                    Access::Open => "Needs no key; not rate limited.",
                    Access::Delegated => "Each request it makes counts as its route.",
                    Access::AdminToken => "Needs an admin token, on the admin listener.",
                };
                op.description = Some(match op.description.take() {
                    Some(d) => format!("{d} {billing}"),
                    None => billing.to_owned(),
                });
                for (status, resp) in op.responses.responses.iter_mut() {
                    let RefOr::T(r) = resp else { continue };
                    r.headers.insert("X-Request-Id".into(), request_id.clone());
                    for (n, d, t) in &limits {
                        r.headers.insert((*n).into(), header(d, t.clone()));
                    }
                    if get {
                        r.headers.insert(
                            "ETag".into(),
                            header(
                                "Strong validator of the representation; send it back in `If-None-Match`.",
                                Type::String,
                            ),
                        );
                    }
                    if status == "200" {
                        r.headers.insert("Cache-Control".into(), header(cache, Type::String));
                    }
                }
            }
        }
    }
}

/// Whether a problem response can follow admission (so it carries the
/// rate-limit headers): not for `400 api_key_in_query` alone, `401`, `405`.
/// Writes each record that is a tagged union with fields of its own (serde's
/// `flatten` of an internally tagged enum, which utoipa renders as `allOf`
/// of the union's `$ref` and an object) as one `oneOf` of whole objects:
/// each variant with the record's own fields. It is the same JSON, in the
/// form client generators read (openapi-python-client cannot take `allOf`
/// of a `oneOf`). The union's own schema, named by nothing then, goes.
fn flatten_tagged_unions(components: &mut utoipa::openapi::Components) {
    let variants_of = |components: &utoipa::openapi::Components, r: &Ref| {
        let name = r.ref_location.rsplit('/').next().unwrap_or_default();
        match components.schemas.get(name) {
            Some(RefOr::T(Schema::OneOf(one))) => Some(one.clone()),
            _ => None,
        }
    };
    let mut flattened = Vec::new();
    for (name, schema) in &components.schemas {
        let RefOr::T(Schema::AllOf(all)) = schema else { continue };
        let [RefOr::Ref(union), RefOr::T(Schema::Object(own))] = all.items.as_slice() else { continue };
        let Some(mut one) = variants_of(components, union) else { continue };
        for variant in &mut one.items {
            if let RefOr::T(Schema::Object(v)) = variant {
                for (field, property) in &own.properties {
                    v.properties.insert(field.clone(), property.clone());
                }
                v.required.extend(own.required.iter().cloned());
            }
        }
        one.description = all.description.clone();
        flattened.push((name.clone(), one, union.ref_location.rsplit('/').next().unwrap_or_default().to_owned()));
    }
    // The union itself is then named by nothing: it goes.
    for (name, one, union) in flattened {
        components.schemas.insert(name, RefOr::T(Schema::OneOf(one)));
        components.schemas.remove(&union);
    }
}

/// Marks every property of `schema` (and of the objects inside it)
/// required: a wire record of this API carries every field, `null` when it
/// has no value (contract section 1), so the one exception, `Problem`,
/// whose extension members are left out when they do not apply, is not
/// passed here. The properties the type already requires keep their order
/// (the fields'); the others follow by name.
fn require_every_property(schema: &mut RefOr<Schema>) {
    let RefOr::T(schema) = schema else { return };
    match schema {
        Schema::Object(o) => {
            for (name, property) in o.properties.iter_mut() {
                if !o.required.contains(name) {
                    o.required.push(name.clone());
                }
                require_every_property(property);
            }
        }
        Schema::Array(a) => {
            if let ArrayItems::RefOrSchema(items) = &mut a.items {
                require_every_property(items);
            }
        }
        Schema::AllOf(a) => a.items.iter_mut().for_each(require_every_property),
        Schema::OneOf(o) => o.items.iter_mut().for_each(require_every_property),
        _ => {}
    }
}

fn is_post_auth<'a>(mut codes: impl Iterator<Item = &'a String>) -> bool {
    codes.any(|c| {
        matches!(
            ErrorCode::parse(c),
            Some(
                ErrorCode::InvalidParameter
                    | ErrorCode::UnknownParameter
                    | ErrorCode::InvalidCursor
                    | ErrorCode::NotFound
                    | ErrorCode::RateLimited
                    | ErrorCode::QuotaExceeded
            )
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routes::{ROUTES, document_json};

    #[test]
    fn document_has_every_keyed_operation_and_every_code() {
        let v: serde_json::Value = serde_json::from_str(document_json()).unwrap();
        assert_eq!(v["openapi"], "3.1.0");
        let paths: Vec<_> = v["paths"].as_object().unwrap().keys().cloned().collect();
        let mut keyed: Vec<&str> =
            ROUTES.iter().filter(|r| matches!(r.access, Access::Keyed(_))).map(|r| r.path).collect();
        keyed.sort_unstable();
        assert_eq!(paths, keyed);
        for c in ErrorCode::ALL.iter().filter(|c| !c.admin_only()) {
            assert!(document_json().contains(&format!("\"{}\"", c.as_str())), "{c:?} missing");
        }
    }

    /// What a generated client needs: every error body is the one `Problem`
    /// schema by `$ref`, every operation's errors are shared responses by
    /// `$ref`, enumerations are named schemas, and the operation ids read as
    /// method names.
    #[test]
    fn document_suits_generated_clients() {
        let v: serde_json::Value = serde_json::from_str(document_json()).unwrap();
        for (name, r) in v["components"]["responses"].as_object().unwrap() {
            let schema = &r["content"]["application/problem+json"]["schema"];
            assert_eq!(schema, &serde_json::json!({"$ref": "#/components/schemas/Problem"}), "{name}");
        }
        let mut ids = Vec::new();
        for (path, item) in v["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap().iter().filter(|(k, _)| *k != "parameters") {
                let id = op["operationId"].as_str().unwrap();
                let row = ROUTES.iter().find(|r| r.path == path).unwrap();
                let row = row.operations().find(|o| format!("{:?}", o.verb).to_lowercase() == *method).unwrap();
                assert_eq!(id, row.id, "{path}: the operation of its row");
                // A method name: a lower-case verb, then camel case.
                assert!(id.starts_with(|c: char| c.is_ascii_lowercase()), "{id}");
                assert!(id.chars().all(|c| c.is_ascii_alphabetic()), "{id}");
                ids.push(id.to_owned());
                for (status, r) in op["responses"].as_object().unwrap() {
                    if status.starts_with('4') || status.starts_with('5') {
                        assert!(
                            r["$ref"].as_str().is_some_and(|s| s.starts_with("#/components/responses/")),
                            "{status}"
                        );
                    }
                }
                for p in op["parameters"].as_array().into_iter().flatten() {
                    assert!(p["schema"].get("enum").is_none(), "inline enum in {}", p["name"]);
                }
            }
        }
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n, "operation ids are distinct");
        // A consumer cannot open the repository's files.
        assert!(!document_json().contains("docs/"), "the document points at a repository file");
    }
}
