//! The route table: every route of the public listener with its
//! properties, the one place they are stated. The router mounts the rows
//! ([`crate::router`]), the envelope finds a request's row by path
//! ([`route_of`]: the router's own matcher) and reads from it whether the
//! route needs a key and counts against the quota, and how its answers may
//! be cached; metrics label requests by its templates; the OpenAPI document
//! states the same caching and counting.
//!
//! Adding an endpoint is a row here (with its operation's name, tag and
//! summary) plus its controller (and its `#[utoipa::path]`, with the path,
//! parameters, responses and description, in the OpenAPI document's path
//! list).

use std::sync::LazyLock;

use axum::routing::{MethodRouter, get};

use axum::http::HeaderValue;

use crate::controllers::{article, changes, companies, company, health, news_list, usage, usage_daily};
use crate::state::AppState;
use crate::{docs, openapi};

/// Who may call a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Anyone, without a key: not rate limited, not counted.
    Open,
    /// An API key: authenticated, rate limited, metered, tagged for `304`.
    Keyed(Billing),
}

/// Whether a keyed route's admitted requests count against the monthly
/// quota (contract section 3); every admitted request takes from the
/// per-minute limit either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Billing {
    /// Counted (unless answered `304` or `5xx`).
    Counted,
    /// Never counted (the caller's own usage).
    Free,
}

/// How a route's successful answers may be cached (`Cache-Control`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caching {
    /// `private, max-age=N`, N from the settings (per caller: keyed data).
    Private,
    /// `no-store` (live figures, health).
    NoStore,
    /// Shared caches may keep it, as given (reference material).
    Public(&'static str),
}

impl Caching {
    /// The `Cache-Control` value (`private`'s max-age from `state`'s
    /// settings).
    pub fn header_value(self, state: &AppState) -> HeaderValue {
        match self {
            Caching::Private => state.private_caching().clone(),
            Caching::NoStore => HeaderValue::from_static("no-store"),
            Caching::Public(v) => HeaderValue::from_static(v),
        }
    }
}

/// How the OpenAPI document names and introduces a route's operation: its
/// `operationId` (read as a method name by generated clients), its tag and
/// its summary. The handler's `#[utoipa::path]` says the rest (parameters,
/// responses, description); [`crate::openapi`] applies these.
#[derive(Debug, Clone, Copy)]
pub struct Operation {
    /// The `operationId`.
    pub id: &'static str,
    /// The one tag it is listed under.
    pub tag: &'static str,
    /// The summary.
    pub summary: &'static str,
}

/// One route.
pub struct Route {
    /// The path template, as the router matches it and metrics label it.
    pub path: &'static str,
    /// Who may call it.
    pub access: Access,
    /// How its `200`s (and their `304`s) may be cached.
    pub caching: Caching,
    /// Its operation in the OpenAPI document (`None`: not documented there).
    pub operation: Option<Operation>,
    /// Its handlers, by method.
    pub handler: fn() -> MethodRouter<AppState>,
}

/// An operation named `id`, under `tag`, with `summary`.
const fn op(id: &'static str, tag: &'static str, summary: &'static str) -> Operation {
    Operation { id, tag, summary }
}

/// A route that needs a key, documented in the OpenAPI document as `operation`.
const fn keyed(
    path: &'static str,
    billing: Billing,
    caching: Caching,
    operation: Operation,
    handler: fn() -> MethodRouter<AppState>,
) -> Route {
    Route { path, access: Access::Keyed(billing), caching, operation: Some(operation), handler }
}

/// A route anyone may call, outside the OpenAPI document.
const fn open(path: &'static str, caching: Caching, handler: fn() -> MethodRouter<AppState>) -> Route {
    Route { path, access: Access::Open, caching, operation: None, handler }
}

/// Every route. Order does not matter to matching. One row a line, kept
/// as a table by hand (`rustfmt::skip`).
#[rustfmt::skip]
pub static ROUTES: &[Route] = &[
    keyed("/v1/companies", Billing::Counted, Caching::Private, op("listCompanies", "companies", "List companies"), || get(companies::list)),
    keyed("/v1/companies/{isin}", Billing::Counted, Caching::Private, op("getCompany", "companies", "Get a company"), || get(company::show)),
    keyed("/v1/companies/changes", Billing::Counted, Caching::Private, op("listCompanyChanges", "companies", "Sync the company master"), || get(changes::list)),
    keyed("/v1/news", Billing::Counted, Caching::Private, op("listNews", "news", "List news articles"), || get(news_list::list)),
    keyed("/v1/news/{slug}", Billing::Counted, Caching::Private, op("getArticle", "news", "Get an article"), || get(article::show)),
    keyed("/v1/usage", Billing::Free, Caching::NoStore, op("getUsage", "usage", "Usage of the calling key"), || get(usage::show)),
    keyed("/v1/usage/daily", Billing::Free, Caching::NoStore, op("getUsageDaily", "usage", "Daily usage of the calling key"), || get(usage_daily::show)),
    open("/healthz", Caching::NoStore, || get(health::healthz)),
    open("/readyz", Caching::NoStore, || get(health::readyz)),
    open("/metrics", Caching::NoStore, || get(health::metrics)),
    open("/v1/openapi.json", Caching::Public("public, max-age=300"), || get(openapi::serve)),
    open("/docs", Caching::Public("public, max-age=300"), || get(docs::page)),
    // The vendored assets change only with the binary.
    open("/docs/{asset}", Caching::Public("public, max-age=86400"), || get(docs::asset)),
];

/// The metrics label of a request that matches no route.
pub const UNMATCHED: &str = "other";

/// The route labels of the metrics: each row's template by its index, then
/// [`UNMATCHED`] (at index `ROUTES.len()`).
pub fn labels() -> &'static [&'static str] {
    static LABELS: LazyLock<Vec<&'static str>> =
        LazyLock::new(|| ROUTES.iter().map(|r| r.path).chain([UNMATCHED]).collect());
    &LABELS
}

/// The index in [`ROUTES`] of the route the router gives `path` to, or
/// `ROUTES.len()` for none: matched by the same matcher (`matchit`) and
/// templates as the router's, so the two cannot disagree.
pub fn route_of(path: &str) -> usize {
    static MATCHER: LazyLock<matchit::Router<usize>> = LazyLock::new(|| {
        let mut m = matchit::Router::new();
        for (i, r) in ROUTES.iter().enumerate() {
            m.insert(r.path, i).expect("route templates are distinct and valid");
        }
        m
    });
    MATCHER.at(path).map_or(ROUTES.len(), |m| *m.value)
}

/// The row at `index` (from [`route_of`]), if a route matched.
pub fn route(index: usize) -> Option<&'static Route> {
    ROUTES.get(index)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_map_to_their_templates() {
        let label = |p: &str| labels()[route_of(p)];
        assert_eq!(label("/v1/news/some-slug"), "/v1/news/{slug}");
        assert_eq!(label("/v1/news/a/b"), UNMATCHED);
        assert_eq!(label("/v1/news/"), UNMATCHED);
        assert_eq!(label("/v1/news"), "/v1/news");
        assert_eq!(label("/v1/companies"), "/v1/companies");
        assert_eq!(label("/docs/redoc.LICENSE"), "/docs/{asset}");
        assert_eq!(label("/nope"), UNMATCHED);
    }

    /// The envelope guards the keyed routes by [`route_of`], so it must
    /// agree with the router's matching, above all never call a path the
    /// router gives to a keyed route unkeyed.
    #[test]
    fn route_of_agrees_with_the_router() {
        use axum::Router;
        use axum::body::{Body, to_bytes};
        use axum::http::Request;
        use tower::ServiceExt;

        let mut router = Router::new();
        for (i, r) in ROUTES.iter().enumerate() {
            router = router.route(r.path, get(move || async move { i.to_string() }));
        }
        let router = router.fallback(|| async { ROUTES.len().to_string() });
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        for path in [
            "/v1/companies",
            "/v1/companies/",
            "/v1/companies/x",
            "//v1/companies",
            "/V1/companies",
            "/v1/usage",
            "/v1/usage/",
            "/v1/news/a-slug",
            "/v1/news/BAD%20slug",
            "/v1/news/a%2Fb",
            "/v1/news/",
            "/v1/news",
            "/v1/news//x",
            "/v1/news/a/b",
            "/v1/newsx/a",
            "/v1/openapi.json",
            "/docs",
            "/docs/",
            "/docs/x/y",
            "/healthz/",
        ] {
            let matched = rt.block_on(async {
                let resp = router.clone().oneshot(Request::get(path).body(Body::empty()).unwrap()).await.unwrap();
                String::from_utf8(to_bytes(resp.into_body(), 64).await.unwrap().to_vec()).unwrap()
            });
            assert_eq!(route_of(path).to_string(), matched, "{path}");
        }
    }
}
