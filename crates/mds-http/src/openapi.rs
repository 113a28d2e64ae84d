//! The OpenAPI 3.1 document of the API, generated from the code with utoipa:
//! the wire types and query parameters of `mds-domain` (feature `openapi`),
//! the `#[utoipa::path]` attributes on the controllers, each operation's name,
//! tag and summary from the route table ([`crate::routes`]), and here the
//! parts no type expresses: the shared problem responses per status with their `code`
//! values, the response headers, the bearer scheme and the introduction
//! (`openapi.md`, what a consumer needs to know before the operations).
//!
//! Written for generated clients: one `Problem` schema that every error
//! response refers to (`components/responses`, by `$ref`), one schema per
//! enumeration (`Exchange`, `MarketCapBand`) referred to wherever it is used,
//! and `operationId`s that read as method names (`listCompanies`,
//! `listNews`, `getArticle`, `getUsage`). `scripts/generated-client.sh`
//! generates a Python client from the served document and runs it against
//! a server.
//!
//! Served unauthenticated at `GET /v1/openapi.json`; a snapshot is committed
//! at `docs/openapi.json` and checked by `tests/openapi.rs`.

use std::sync::OnceLock;

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use mds_domain::usage::{V1Usage, V1UsageWindow};
use mds_domain::{Article, ArticleSummary, Company, ErrorCode, Exchange, MarketCapBand, Page, Problem};
use mds_domain::{Classification, CompanyDetail, Listing, ListingStatus, MarketCap};
use mds_domain::{Isin, Slug, Ticker};
use utoipa::openapi::example::ExampleBuilder;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::tag::TagBuilder;
use utoipa::openapi::{ContentBuilder, Header, HeaderBuilder, Ref, RefOr, ResponseBuilder};
use utoipa::{Modify, OpenApi, ToResponse};

use crate::controllers::{article, changes, companies, company, news_list, usage, usage_daily};
use crate::routes::{Access, Billing, Caching};

/// One page of `GET /v1/companies` ([`Page`] of [`Company`], schema
/// `V1CompanyPage`). An alias, so the macros take it as one named schema.
pub type CompanyPage = Page<Company>;

/// One page of `GET /v1/companies/changes` (schema `V1ChangesPage`).
pub type ChangesPage = mds_domain::ChangesPage;

/// One page of `GET /v1/news` ([`Page`] of [`ArticleSummary`], schema
/// `V1NewsPage`).
pub type NewsPage = Page<ArticleSummary>;

/// The path parameter of `GET /v1/companies/{isin}`.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub struct IsinPath {
    /// The company's ISIN, matched case-insensitively. A malformed or unknown ISIN is `404`.
    #[param(example = "INE117A01022")]
    pub isin: Isin,
}

/// The path parameter of `GET /v1/news/{slug}`.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub struct SlugPath {
    /// The article's slug: 1 to 200 characters of `a-z`, `0-9`, `-`.
    #[param(example = "tcs-reports-higher-deal-wins-in-a-cautious-demand-environment-2026-01-08")]
    pub slug: Slug,
}

/// The document (see the module docs).
#[derive(OpenApi)]
#[openapi(
    info(
        title = "mds market-data API",
        description = include_str!("openapi.md"),
        license(name = "MIT OR Apache-2.0", identifier = "MIT OR Apache-2.0"),
    ),
    paths(companies::list, company::show, changes::list, news_list::list, article::show, usage::show, usage_daily::show),
    components(
        schemas(
            CompanyPage, Company, NewsPage, ArticleSummary, Article, V1Usage, V1UsageWindow, Problem, MarketCapBand,
            Exchange, Isin, Ticker, Slug, ChangesPage, CompanyDetail, Listing, ListingStatus, Classification, MarketCap
        ),
        responses(
            CompaniesBadRequest,
            ChangesBadRequest,
            SyncTokenExpired,
            NewsBadRequest,
            BadRequest,
            Unauthorized,
            NotFound,
            MethodNotAllowed,
            TooManyRequests,
            Internal,
            Unavailable
        ),
    ),
    modifiers(&Common),
    security(("bearer" = []))
)]
pub struct ApiDoc;

/// The generated document as pretty JSON with a trailing newline (the form
/// committed at `docs/openapi.json`).
pub fn document_json() -> &'static str {
    static DOC: OnceLock<String> = OnceLock::new();
    DOC.get_or_init(|| {
        let mut s = ApiDoc::openapi().to_pretty_json().expect("the document serialises");
        s.push('\n');
        s
    })
}

/// `GET /v1/openapi.json` (no key needed).
pub async fn serve() -> Response {
    let mut resp = document_json().into_response();
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

/// Builds a problem+json response: the one `Problem` schema (by `$ref`, so
/// a generated client has one error type; the description names the codes
/// it can carry), one example per code in `codes`.
fn problem(description: &str, codes: &[ErrorCode], extra: &[(&str, Header)]) -> RefOr<utoipa::openapi::Response> {
    let schema = RefOr::Ref(Ref::from_schema_name("Problem"));
    let examples = codes.iter().map(|&c| {
        let mut p = Problem::new(c, example_detail(c));
        p.request_id = Some("01JD8X5QK2M3N4P5R6S7T8V9W0".into());
        match c {
            ErrorCode::InvalidParameter => p.param = Some("limit".into()),
            ErrorCode::UnknownParameter => p.param = Some("industy".into()),
            ErrorCode::InvalidCursor => p.param = Some("cursor".into()),
            ErrorCode::SyncTokenExpired => p.param = Some("since".into()),
            ErrorCode::RateLimited => p.violated_policies = Some(vec!["minute".into()]),
            ErrorCode::QuotaExceeded => p.violated_policies = Some(vec!["month".into()]),
            _ => {}
        }
        let value = serde_json::to_value(&p).expect("a problem serialises");
        (c.as_str(), ExampleBuilder::new().summary(c.title()).value(Some(value)).build())
    });
    let mut b = ResponseBuilder::new().description(description).content(
        "application/problem+json",
        ContentBuilder::new().schema(Some(schema)).examples_from_iter(examples).build(),
    );
    for (name, h) in extra {
        b = b.header(*name, h.clone());
    }
    b.build().into()
}

fn example_detail(c: ErrorCode) -> &'static str {
    match c {
        ErrorCode::InvalidParameter => "limit must be an integer from 1 to 200",
        ErrorCode::UnknownParameter => "unknown parameter industy; did you mean industry?",
        ErrorCode::InvalidCursor => "the cursor was not issued for these filters",
        ErrorCode::ApiKeyInQuery => "send the API key in the Authorization header, never in the query string",
        ErrorCode::MissingApiKey => "send Authorization: Bearer <key>",
        ErrorCode::InvalidApiKey => "the API key is not valid",
        ErrorCode::NotFound => "no article with this slug",
        ErrorCode::MethodNotAllowed => "this route answers GET and HEAD",
        ErrorCode::SyncTokenExpired => {
            "the store no longer holds the history this sync token needs; sync again without `since`"
        }
        ErrorCode::RateLimited => "rate limit of 600 requests per minute reached; retry after 1 s",
        ErrorCode::QuotaExceeded => "monthly quota used up; it renews on the 1st (UTC)",
        ErrorCode::Unavailable => "the store is unreachable",
        ErrorCode::Internal => "an internal error occurred",
    }
}

fn header(description: &str, schema: Type) -> Header {
    HeaderBuilder::new().schema(ObjectBuilder::new().schema_type(schema)).description(Some(description)).build()
}

fn retry_after(description: &str) -> (&'static str, Header) {
    ("Retry-After", header(description, Type::Integer))
}

macro_rules! problem_response {
    ($(#[$m:meta])* $name:ident, $desc:expr, [$($code:ident),+], [$($extra:expr),*]) => {
        $(#[$m])*
        pub struct $name;

        impl<'r> ToResponse<'r> for $name {
            fn response() -> (&'r str, RefOr<utoipa::openapi::Response>) {
                (stringify!($name), problem($desc, &[$(ErrorCode::$code),+], &[$($extra),*]))
            }
        }
    };
}

problem_response!(
    /// `400` of `/v1/companies`.
    CompaniesBadRequest,
    "A bad query: a bad value (`invalid_parameter`, naming `param`), an undefined or repeated parameter \
(`unknown_parameter`), a cursor not issued for these filters (`invalid_cursor`), or a key-like value in the \
query string (`api_key_in_query`, refused even with a valid header and not counted).",
    [InvalidParameter, UnknownParameter, InvalidCursor, ApiKeyInQuery],
    []
);
problem_response!(
    /// `400` of `/v1/companies/changes`.
    ChangesBadRequest,
    "A bad query: a bad `limit` (`invalid_parameter`), an undefined or repeated parameter \
(`unknown_parameter`), a sync token (`param`: `since`) or cursor not issued by this service, or a cursor of \
another `since` (`invalid_cursor`), or a key-like value in the query string (`api_key_in_query`).",
    [InvalidParameter, UnknownParameter, InvalidCursor, ApiKeyInQuery],
    []
);
problem_response!(
    /// `400` of `/v1/news`.
    NewsBadRequest,
    "A bad query: a bad value (`invalid_parameter`, naming `param`: an invalid ISIN, a date-time without an offset, \
a `published_before` not later than `published_after`, ...), an undefined or repeated parameter (`unknown_parameter`), \
a cursor not issued for these filters (`invalid_cursor`), or a key-like value in the query string (`api_key_in_query`, \
refused even with a valid header and not counted).",
    [InvalidParameter, UnknownParameter, InvalidCursor, ApiKeyInQuery],
    []
);
problem_response!(
    /// `410` of `/v1/companies/changes`.
    SyncTokenExpired,
    "The sync token is older than the change history the store keeps (`sync_token_expired`): sync again \
without `since`.",
    [SyncTokenExpired],
    []
);
problem_response!(
    /// `400` of the endpoints without query parameters.
    BadRequest,
    "Any query parameter (`unknown_parameter`), or a key-like value in the query string (`api_key_in_query`).",
    [UnknownParameter, ApiKeyInQuery],
    []
);
problem_response!(
    /// `401`.
    Unauthorized,
    "No `Authorization: Bearer` header (`missing_api_key`), or a malformed, unknown or revoked key \
(`invalid_api_key`, one identical body for all three). Carries `WWW-Authenticate: Bearer realm=\"mds\"`.",
    [MissingApiKey, InvalidApiKey],
    [("WWW-Authenticate", header("`Bearer realm=\"mds\"` (with `error=\"invalid_token\"` for `invalid_api_key`).", Type::String))]
);
problem_response!(
    /// `404`.
    NotFound,
    "No article with this slug, or no company with this ISIN (or a slug or ISIN that cannot exist).",
    [NotFound],
    []
);
problem_response!(
    /// `405`.
    MethodNotAllowed,
    "A method other than `GET`/`HEAD`; checked before authentication.",
    [MethodNotAllowed],
    [("Allow", header("`GET,HEAD`", Type::String))]
);
problem_response!(
    /// `429`.
    TooManyRequests,
    "The per-minute rate limit is reached (`rate_limited`) or the monthly quota is used up (`quota_exceeded`, \
until the next billing month); `violated_policies` names `minute` or `month`. Not counted against the quota.",
    [RateLimited, QuotaExceeded],
    [retry_after("Seconds until a retry can succeed.")]
);
problem_response!(
    /// `500`.
    Internal,
    "A bug; the body holds no internal detail, only the request id.",
    [Internal],
    []
);
problem_response!(
    /// `503`.
    Unavailable,
    "The store is unreachable or the request ran out of time; retry later.",
    [Unavailable],
    [retry_after("Seconds to wait before retrying.")]
);

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
struct Common;

impl Modify for Common {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        set_tags(
            doc,
            &[
                ("companies", "Listed companies and securities."),
                ("news", "News articles."),
                ("usage", "The calling key's consumption and limits."),
            ],
        );
        let components = add_bearer(doc, "bearer", "An API key: `Authorization: Bearer mds_live_…` (or `mds_test_…`).");
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
            let route = crate::routes::ROUTES.iter().find(|r| r.path == path).expect("every documented path is routed");
            let cache = match route.caching {
                Caching::Private => "`private, max-age=N` (N = 60 by default).",
                Caching::NoStore => "`no-store`.",
                Caching::Public(_) => "`public`.",
            };
            let Some(op) = item.get.as_mut() else { continue };
            if let Some(o) = route.operation {
                op.operation_id = Some(o.id.into());
                op.tags = Some(vec![o.tag.into()]);
                op.summary = Some(o.summary.into());
            }
            // What every keyed route can answer, stated here once rather
            // than in each handler's annotation.
            if let Access::Keyed(billing) = route.access {
                let not_counted = if billing == Billing::Counted { ", not counted" } else { "" };
                let not_modified = ResponseBuilder::new()
                    .description(format!("Not modified: `If-None-Match` matched the `ETag`; no body{not_counted}."))
                    .build();
                op.responses.responses.entry("304".into()).or_insert(RefOr::T(not_modified));
                for (status, name) in [
                    ("401", "Unauthorized"),
                    ("405", "MethodNotAllowed"),
                    ("429", "TooManyRequests"),
                    ("500", "Internal"),
                    ("503", "Unavailable"),
                ] {
                    op.responses.responses.entry(status.into()).or_insert(RefOr::Ref(Ref::from_response_name(name)));
                }
                // Every keyed route refuses a query parameter it does not
                // define (a route with its own parameters documents its
                // own `400`), and a `GET …/{id}` answers `404` for an id
                // that names nothing.
                let by_path = path.contains('{').then_some(("404", "NotFound"));
                for (status, name) in [Some(("400", "BadRequest")), by_path].into_iter().flatten() {
                    op.responses.responses.entry(status.into()).or_insert(RefOr::Ref(Ref::from_response_name(name)));
                }
            }
            let billing = match route.access {
                Access::Keyed(Billing::Counted) => {
                    "Counts against the monthly quota, whatever the outcome, except a `304` or a `5xx`."
                }
                Access::Keyed(Billing::Free) => {
                    "Not counted against the monthly quota (it takes from the per-minute limit), so it stays \
                     possible when the quota is spent."
                }
                Access::Open => "Needs no key; not rate limited.",
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
                r.headers.insert(
                    "ETag".into(),
                    header("Strong validator of the representation; send it back in `If-None-Match`.", Type::String),
                );
                if status == "200" {
                    r.headers.insert("Cache-Control".into(), header(cache, Type::String));
                }
            }
        }
    }
}

/// Whether a problem response can follow admission (so it carries the
/// rate-limit headers): not for `400 api_key_in_query` alone, `401`, `405`.
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

    #[test]
    fn document_has_every_keyed_operation_and_every_code() {
        let v: serde_json::Value = serde_json::from_str(document_json()).unwrap();
        assert_eq!(v["openapi"], "3.1.0");
        let paths: Vec<_> = v["paths"].as_object().unwrap().keys().cloned().collect();
        let mut keyed: Vec<&str> = crate::routes::ROUTES
            .iter()
            .filter(|r| matches!(r.access, crate::routes::Access::Keyed(_)))
            .map(|r| r.path)
            .collect();
        keyed.sort_unstable();
        assert_eq!(paths, keyed);
        for c in ErrorCode::ALL {
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
        for item in v["paths"].as_object().unwrap().values() {
            let op = &item["get"];
            ids.push(op["operationId"].as_str().unwrap().to_owned());
            for (status, r) in op["responses"].as_object().unwrap() {
                if status.starts_with('4') || status.starts_with('5') {
                    assert!(r["$ref"].as_str().is_some_and(|s| s.starts_with("#/components/responses/")), "{status}");
                }
            }
            for p in op["parameters"].as_array().into_iter().flatten() {
                assert!(p["schema"].get("enum").is_none(), "inline enum in {}", p["name"]);
            }
        }
        assert_eq!(
            ids,
            [
                "listCompanies",
                "listCompanyChanges",
                "getCompany",
                "listNews",
                "getArticle",
                "getUsage",
                "getUsageDaily"
            ]
        );
        // A consumer cannot open the repository's files.
        assert!(!document_json().contains("docs/"), "the document points at a repository file");
    }
}
