//! What a row of the route table ([`crate::routes::ROUTES`]) says of its
//! route: [`Route`], who may call it ([`Access`], with what a keyed
//! route's request takes from the quota: [`mds_limits::Charge`]), how its
//! answers may be cached ([`Caching`]) and its operation in the OpenAPI
//! document ([`Operation`]); and the constructors the table's rows are
//! written with ([`counted`], [`free`], [`free_ops`], [`open`], [`delegated`],
//! [`op`], [`on`]). A row is one path template; a row whose path answers
//! several methods lists an operation per method ([`free_ops`]).

use axum::http::{HeaderValue, Method};
use axum::routing::{MethodFilter, MethodRouter};
use mds_limits::Charge;
use utoipa::openapi::path::HttpMethod;

use crate::state::AppState;

/// Who may call a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Anyone, without a key: not rate limited, not counted.
    Open,
    /// An API key: authenticated, rate limited, metered, tagged for `304`;
    /// an admitted request takes what its charge says from the monthly
    /// quota (contract section 3): one request, recorded in the daily
    /// ledger under the route's template, for [`Charge::Counted`] (unless
    /// answered `304` or `5xx`), nothing for [`Charge::Free`] (the caller's
    /// own usage). Every admitted request takes from the per-minute limit.
    Keyed(Charge),
    /// An API key, which the handler checks itself; the envelope neither
    /// guards nor counts the request, and hands itself to the handler (a
    /// request extension), which makes its own requests to other routes
    /// through it, each taking what that route takes: `POST /mcp`, whose
    /// every tool call is its route's request (contract section 12).
    Delegated,
}

/// How a route's successful answers may be cached (`Cache-Control`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caching {
    /// `private, max-age=N`, N from the settings (per caller: keyed data).
    Private,
    /// `private, no-cache`: kept per caller but revalidated on every use
    /// (a list whose tail changes every second, the event log; its `304`
    /// is free).
    Revalidate,
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
            Caching::Revalidate => HeaderValue::from_static("private, no-cache"),
            Caching::NoStore => HeaderValue::from_static("no-store"),
            Caching::Public(v) => HeaderValue::from_static(v),
        }
    }
}

/// A route's method (of the public and the admin tables).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// `GET` (and `HEAD`, served as `GET` by the envelope).
    Get,
    /// `PUT`.
    Put,
    /// `POST`.
    Post,
    /// `PATCH`.
    Patch,
    /// `DELETE`.
    Delete,
}

impl Verb {
    /// The router's filter for it.
    pub fn filter(self) -> MethodFilter {
        match self {
            Verb::Get => MethodFilter::GET,
            Verb::Put => MethodFilter::PUT,
            Verb::Post => MethodFilter::POST,
            Verb::Patch => MethodFilter::PATCH,
            Verb::Delete => MethodFilter::DELETE,
        }
    }

    /// The HTTP method.
    pub fn method(self) -> Method {
        match self {
            Verb::Get => Method::GET,
            Verb::Put => Method::PUT,
            Verb::Post => Method::POST,
            Verb::Patch => Method::PATCH,
            Verb::Delete => Method::DELETE,
        }
    }

    /// The OpenAPI method.
    pub fn openapi(self) -> HttpMethod {
        match self {
            Verb::Get => HttpMethod::Get,
            Verb::Put => HttpMethod::Put,
            Verb::Post => HttpMethod::Post,
            Verb::Patch => HttpMethod::Patch,
            Verb::Delete => HttpMethod::Delete,
        }
    }
}

/// A route's operation in the OpenAPI document: its method, its `operationId` (read as
/// a method name by generated clients), its tag and its summary, and the
/// rest (description, parameters, responses) from its handler's
/// `#[utoipa::path]` ([`spec`]). The document puts it at the row's path
/// ([`crate::openapi`]).
#[derive(Debug, Clone, Copy)]
pub struct Operation {
    /// Its method.
    pub verb: Verb,
    /// The `operationId`.
    pub id: &'static str,
    /// The one tag it is listed under.
    pub tag: &'static str,
    /// The summary.
    pub summary: &'static str,
    /// Its description, parameters and responses.
    pub spec: fn() -> utoipa::openapi::path::Operation,
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
    /// Its operations on other methods than the first's (a `POST` beside
    /// a `GET`), documented at the same path.
    pub more: &'static [Operation],
    /// Its handlers, by method.
    pub handler: fn() -> MethodRouter<AppState>,
    /// Whether it is a probe's (health, readiness, metrics): polled every
    /// few seconds, so its access log line is written at `debug` only.
    pub probe: bool,
}

impl Route {
    /// Its documented operations, each with its method.
    pub fn operations(&self) -> impl Iterator<Item = &Operation> {
        self.operation.iter().chain(self.more)
    }

    /// Whether a request of `method` is one of its operations' (a `HEAD`
    /// is a `GET` by then): a keyed route's other methods are refused
    /// (`405`) before the key is read.
    pub fn answers(&self, method: &Method) -> bool {
        self.operations().any(|o| o.verb.method() == *method)
    }
}

/// The operation a handler's `#[utoipa::path]` describes (`P` is the
/// struct utoipa makes for it, `__path_<handler>`), for [`op`].
pub fn spec<P: utoipa::Path>() -> utoipa::openapi::path::Operation {
    P::operation()
}

/// The operation `id`, under `tag`, with `summary`, the rest in `spec`.
pub const fn op(
    id: &'static str,
    tag: &'static str,
    summary: &'static str,
    spec: fn() -> utoipa::openapi::path::Operation,
) -> Operation {
    Operation { verb: Verb::Get, id, tag, summary, spec }
}

/// `operation` on `verb` instead of `GET`.
pub const fn on(verb: Verb, operation: Operation) -> Operation {
    Operation { verb, ..operation }
}

/// A keyed route whose requests count against the monthly quota,
/// documented as `operation`.
pub const fn counted(
    path: &'static str,
    caching: Caching,
    operation: Operation,
    handler: fn() -> MethodRouter<AppState>,
) -> Route {
    Route {
        path,
        access: Access::Keyed(Charge::Counted(path)),
        caching,
        operation: Some(operation),
        more: &[],
        handler,
        probe: false,
    }
}

/// A keyed route whose requests never count against the quota (only
/// against the per-minute limit), documented as `operation`.
pub const fn free(
    path: &'static str,
    caching: Caching,
    operation: Operation,
    handler: fn() -> MethodRouter<AppState>,
) -> Route {
    Route {
        path,
        access: Access::Keyed(Charge::Free),
        caching,
        operation: Some(operation),
        more: &[],
        handler,
        probe: false,
    }
}

/// A keyed route that never counts against the quota, with an operation
/// per method (the first `operations[0]`).
pub const fn free_ops(
    path: &'static str,
    caching: Caching,
    operations: &'static [Operation],
    handler: fn() -> MethodRouter<AppState>,
) -> Route {
    let (first, more) = match operations.split_first() {
        Some((first, more)) => (Some(*first), more),
        None => (None, operations),
    };
    Route { path, access: Access::Keyed(Charge::Free), caching, operation: first, more, handler, probe: false }
}

/// A route anyone may call, outside the OpenAPI document.
pub const fn open(path: &'static str, caching: Caching, handler: fn() -> MethodRouter<AppState>) -> Route {
    Route { path, access: Access::Open, caching, operation: None, more: &[], handler, probe: false }
}

/// A probe's route (health, readiness, metrics): open, never stored by a
/// cache, outside the OpenAPI document, its access log line at `debug`.
pub const fn probe(path: &'static str, handler: fn() -> MethodRouter<AppState>) -> Route {
    Route { path, access: Access::Open, caching: Caching::NoStore, operation: None, more: &[], handler, probe: true }
}

/// A route whose handler checks the key and makes its requests through
/// the envelope ([`Access::Delegated`]), outside the OpenAPI document.
pub const fn delegated(path: &'static str, handler: fn() -> MethodRouter<AppState>) -> Route {
    Route {
        path,
        access: Access::Delegated,
        caching: Caching::NoStore,
        operation: None,
        more: &[],
        handler,
        probe: false,
    }
}
