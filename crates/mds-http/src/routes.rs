//! The route table: every route of the public listener with its
//! properties, the one place they are stated and the one place a path
//! template is written. The router mounts the rows ([`crate::router()`]),
//! the envelope finds a request's row by path ([`route_of`]: the router's
//! own matcher) and reads from it whether the route needs a key and what it
//! takes from the quota, and how its answers may be cached; metrics label
//! requests by its templates ([`labels`]); the daily usage report lists its
//! counted routes ([`data_routes`]); the OpenAPI document puts each row's
//! operation at its path, with the same caching and counting
//! ([`document_json`]). What a row holds: [`crate::route`].
//!
//! Adding an endpoint is a row here (its path, charge, caching, and its
//! operation's name, tag, summary and `#[utoipa::path]`) plus its
//! controller and the node operation it calls (ARCHITECTURE.md, "How to
//! add an endpoint").

use std::sync::{LazyLock, OnceLock};

use axum::response::Response;
use axum::routing::{get, post};
use mds_limits::Charge;

use crate::controllers::{
    actions, article, changes, companies, company, company_history, events, health, industries, mcp, news_facets,
    news_list, prices, symbol, usage, usage_daily, webhooks,
};
use crate::route::{
    Access, Caching, Matcher, Route, Verb, counted, delegated, free, free_ops, on, op, open, probe, spec,
};
use crate::{docs, openapi};

/// Every route. Order does not matter to matching. One row a line, kept
/// as a table by hand (`rustfmt::skip`).
#[rustfmt::skip]
pub static ROUTES: &[Route] = &[
    counted("/v1/companies", Caching::Private, op("listCompanies", "companies", "List companies", spec::<companies::__path_list>), || get(companies::list)),
    counted("/v1/companies/{isin}", Caching::Private, op("getCompany", "companies", "Get a company", spec::<company::__path_show>), || get(company::show)),
    counted("/v1/companies/changes", Caching::Private, op("listCompanyChanges", "companies", "Sync the company master", spec::<changes::__path_list>), || get(changes::list)),
    counted("/v1/companies/{isin}/history", Caching::Private, op("getCompanyHistory", "companies", "Get a company's identity history", spec::<company_history::__path_show>), || get(company_history::show)),
    counted("/v1/companies/{isin}/actions", Caching::Private, op("listCompanyActions", "actions", "List a company's corporate actions", spec::<actions::__path_company>), || get(actions::company)),
    counted("/v1/actions", Caching::Private, op("listActions", "actions", "The corporate-action calendar", spec::<actions::__path_calendar>), || get(actions::calendar)),
    counted("/v1/companies/{isin}/prices", Caching::Private, op("listCompanyPrices", "prices", "A company's end-of-day prices", spec::<prices::__path_company>), || get(prices::company)),
    counted("/v1/prices", Caching::Private, op("listMarketPrices", "prices", "The market on one day", spec::<prices::__path_market>), || get(prices::market)),
    counted("/v1/symbols/{symbol}", Caching::Private, op("getSymbol", "companies", "Who carried a symbol", spec::<symbol::__path_show>), || get(symbol::show)),
    counted("/v1/industries", Caching::Private, op("listIndustries", "companies", "The industry classification", spec::<industries::__path_show>), || get(industries::show)),
    counted("/v1/news/facets", Caching::Private, op("getNewsFacets", "news", "News categories and tags", spec::<news_facets::__path_show>), || get(news_facets::show)),
    counted("/v1/news", Caching::Private, op("listNews", "news", "List news articles", spec::<news_list::__path_list>), || get(news_list::list)),
    counted("/v1/news/{slug}", Caching::Private, op("getArticle", "news", "Get an article", spec::<article::__path_show>), || get(article::show)),
    counted("/v1/events", Caching::Revalidate, op("listEvents", "events", "Read the event log", spec::<events::__path_list>), || get(events::list)),
    counted("/v1/events/stream", Caching::NoStore, op("streamEvents", "events", "Follow the event log live", spec::<events::__path_stream>), || get(events::stream)),
    free("/v1/usage", Caching::NoStore, op("getUsage", "usage", "Usage of the calling key", spec::<usage::__path_show>), || get(usage::show)),
    free("/v1/usage/daily", Caching::NoStore, op("getUsageDaily", "usage", "Daily usage of the calling key", spec::<usage_daily::__path_show>), || get(usage_daily::show)),
    delegated("/mcp", || post(mcp::post)),
    free_ops("/v1/webhooks", Caching::NoStore, &[op("listWebhooks", "webhooks", "List webhook endpoints", spec::<webhooks::__path_list>), on(Verb::Post, op("createWebhook", "webhooks", "Create a webhook endpoint", spec::<webhooks::__path_create>))], || get(webhooks::list).post(webhooks::create)),
    free_ops("/v1/webhooks/{id}", Caching::NoStore, &[op("getWebhook", "webhooks", "Get a webhook endpoint", spec::<webhooks::__path_show>), on(Verb::Patch, op("updateWebhook", "webhooks", "Update a webhook endpoint", spec::<webhooks::__path_update>)), on(Verb::Delete, op("deleteWebhook", "webhooks", "Delete a webhook endpoint", spec::<webhooks::__path_delete>))], || get(webhooks::show).patch(webhooks::update).delete(webhooks::delete)),
    free_ops("/v1/webhooks/{id}/rotate-secret", Caching::NoStore, &[on(Verb::Post, op("rotateWebhookSecret", "webhooks", "Rotate a webhook endpoint's secret", spec::<webhooks::__path_rotate>))], || post(webhooks::rotate)),
    free_ops("/v1/webhooks/{id}/test", Caching::NoStore, &[on(Verb::Post, op("testWebhook", "webhooks", "Send a ping to a webhook endpoint", spec::<webhooks::__path_test>))], || post(webhooks::test)),
    free("/v1/webhooks/{id}/attempts", Caching::NoStore, op("listWebhookAttempts", "webhooks", "A webhook endpoint's delivery attempts", spec::<webhooks::__path_attempts>), || get(webhooks::attempts)),
    free_ops("/v1/webhooks/{id}/replay", Caching::NoStore, &[on(Verb::Post, op("replayWebhook", "webhooks", "Deliver a webhook endpoint's events again", spec::<webhooks::__path_replay>))], || post(webhooks::replay)),
    probe("/healthz", || get(health::healthz)),
    probe("/readyz", || get(health::readyz)),
    probe("/metrics", || get(health::metrics)),
    open("/v1/openapi.json", Caching::Public("public, max-age=300"), || get(document)),
    open("/docs", Caching::Public("public, max-age=300"), || get(docs::page)),
    // The vendored assets change only with the binary.
    open("/docs/{asset}", Caching::Public("public, max-age=86400"), || get(docs::asset)),
];

/// The OpenAPI document of [`ROUTES`] as pretty JSON with a trailing
/// newline (the form committed at `docs/openapi.json`), made once.
pub fn document_json() -> &'static str {
    static DOC: OnceLock<String> = OnceLock::new();
    DOC.get_or_init(|| openapi::document_json(ROUTES))
}

/// `GET /v1/openapi.json` (no key needed): [`document_json`].
async fn document() -> Response {
    openapi::serve(document_json())
}

/// The path templates of the routes whose requests count against the
/// quota, so a data route added to the table is in every day's `by_route`
/// of the daily usage report with no other edit.
pub fn data_routes() -> &'static [&'static str] {
    static DATA: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
        ROUTES.iter().filter_map(|r| matches!(r.access, Access::Keyed(Charge::Counted(_))).then_some(r.path)).collect()
    });
    &DATA
}

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
    static MATCHER: LazyLock<Matcher> = LazyLock::new(|| Matcher::new(ROUTES));
    MATCHER.index(path)
}

/// The row at `index` (from [`route_of`]), if a route matched.
pub fn route(index: usize) -> Option<&'static Route> {
    ROUTES.get(index)
}

/// The template of the row with the operation `id` (an `operationId`), for
/// what names a route without writing its template (the MCP tools).
///
/// # Panics
/// When no row has it (a test asks for every tool's).
pub fn path_of(id: &str) -> &'static str {
    ROUTES
        .iter()
        .find(|r| r.operations().any(|o| o.id == id))
        .map(|r| r.path)
        .unwrap_or_else(|| panic!("no route has the operation {id}"))
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
        assert_eq!(label("/v1/news/facets"), "/v1/news/facets");
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
