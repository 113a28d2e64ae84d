//! What a row of a route table (the public listener's
//! [`crate::routes::ROUTES`], the admin listener's
//! [`crate::admin::routes::ROUTES`]: rows of one kind) says of its route:
//! [`Route`], who may call it ([`Access`], with what a keyed route's
//! request takes from the quota: [`mds_limits::Charge`]), how its answers
//! may be cached ([`Caching`]) and its operations ([`Operation`]: method,
//! OpenAPI operation, and what the envelope does with its request: body
//! ([`Input`]), `Idempotency-Key`, audit log ([`Audit`])); the constructors
//! the public rows are written with ([`counted`], [`free`], [`free_ops`],
//! [`open`], [`delegated`], [`op`], [`on`]; the admin ones are in its
//! table); and [`Matcher`], which finds a path's row by the router's own
//! matcher. A row is one path template; a row whose path answers several
//! methods lists an operation per method ([`free_ops`]).

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
    /// An admin token (`Authorization: Bearer mds_admin_…`), checked by the
    /// admin listener's envelope: the admin API's routes.
    AdminToken,
}

/// What a route's request body is, read by the envelope before the handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// The envelope reads none (the handler reads one it takes itself).
    Nothing,
    /// A JSON object of at most [`MAX_BODY`] bytes: the envelope answers a
    /// larger one `413 payload_too_large`, and one not sent as
    /// `Content-Type: application/json` `415 unsupported_media_type`.
    Json,
}

/// The largest body a route takes, in bytes.
pub const MAX_BODY: usize = 1 << 20;

/// Whether an operation records its changes in the audit log, and as which
/// actions (the store writes them, in the transaction of the change).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audit {
    /// It changes nothing.
    Nothing,
    /// Each change it makes is an entry with one of these actions.
    Records(&'static [&'static str]),
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

/// A route's operation: its method, its `operationId` (read as a method
/// name by generated clients), its tag and its summary, and the rest
/// (description, parameters, responses) from its handler's
/// `#[utoipa::path]` ([`spec`]), which the document puts at the row's path
/// ([`crate::openapi`], [`crate::admin::openapi`]); and what the envelope
/// does with its requests (body, `Idempotency-Key`) and what it audits.
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
    /// The methods its handler's annotation names, when the row states
    /// them (held to [`Self::verb`] by a test; empty: not stated).
    pub methods: fn() -> Vec<HttpMethod>,
    /// The body the envelope reads for it.
    pub input: Input,
    /// Whether the envelope honours `Idempotency-Key` on it (a retry gets
    /// the first answer).
    pub idempotent: bool,
    /// What it records in the audit log.
    pub audit: Audit,
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
        self.operation_on(method).is_some()
    }

    /// Its operation on `method`, if it has one.
    pub fn operation_on(&self, method: &Method) -> Option<&Operation> {
        self.operations().find(|o| o.verb.method() == *method)
    }
}

/// Finds a path's row in a route table by the same matcher (`matchit`) and
/// templates as the router's, so the two cannot disagree.
pub struct Matcher {
    matcher: matchit::Router<usize>,
    rows: usize,
}

impl Matcher {
    /// The matcher of `routes`.
    ///
    /// # Panics
    /// When two rows have one template, or a template is not valid.
    pub fn new(routes: &[Route]) -> Self {
        let mut matcher = matchit::Router::new();
        for (i, r) in routes.iter().enumerate() {
            matcher.insert(r.path, i).expect("route templates are distinct and valid");
        }
        Matcher { matcher, rows: routes.len() }
    }

    /// The index of the row the router gives `path` to, or the table's
    /// length for none.
    pub fn index(&self, path: &str) -> usize {
        self.matcher.at(path).map_or(self.rows, |m| *m.value)
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
    Operation {
        verb: Verb::Get,
        id,
        tag,
        summary,
        spec,
        methods: Vec::new,
        input: Input::Nothing,
        idempotent: false,
        audit: Audit::Nothing,
    }
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
    keyed(path, Charge::Counted(path), caching, operation, handler)
}

/// A keyed route whose requests never count against the quota (only
/// against the per-minute limit), documented as `operation`.
pub const fn free(
    path: &'static str,
    caching: Caching,
    operation: Operation,
    handler: fn() -> MethodRouter<AppState>,
) -> Route {
    keyed(path, Charge::Free, caching, operation, handler)
}

/// A keyed route taking `charge`, documented as `operation`.
const fn keyed(
    path: &'static str,
    charge: Charge,
    caching: Caching,
    operation: Operation,
    handler: fn() -> MethodRouter<AppState>,
) -> Route {
    Route { path, access: Access::Keyed(charge), caching, operation: Some(operation), more: &[], handler, probe: false }
}

/// A keyed route that never counts against the quota, with an operation
/// per method (the first `operations[0]`).
pub const fn free_ops(
    path: &'static str,
    caching: Caching,
    operations: &'static [Operation],
    handler: fn() -> MethodRouter<AppState>,
) -> Route {
    with_operations(path, Access::Keyed(Charge::Free), caching, operations, handler)
}

/// A route of `access` with an operation per method (the first
/// `operations[0]`; none: outside the OpenAPI document).
pub const fn with_operations(
    path: &'static str,
    access: Access,
    caching: Caching,
    operations: &'static [Operation],
    handler: fn() -> MethodRouter<AppState>,
) -> Route {
    let (first, more) = match operations.split_first() {
        Some((first, more)) => (Some(*first), more),
        None => (None, operations),
    };
    Route { path, access, caching, operation: first, more, handler, probe: false }
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
