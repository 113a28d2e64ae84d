//! The parts of the public OpenAPI document that the handlers'
//! `#[utoipa::path]` attributes refer to and that no type expresses: the
//! page schemas, the path parameters, and the shared problem responses per
//! status with their `code` values and headers. [`crate::openapi`] puts
//! them in the document's components.
//!
//! A handler's `#[utoipa::path]` names no path of its own (it says
//! [`PATH_IN_TABLE`]): the document puts its operation at its row's path
//! in the route table ([`crate::routes`]), where the template is written
//! once.

use std::collections::BTreeMap;

use mds_domain::{ArticleSummary, Company, ErrorCode, Page, Problem};
use mds_domain::{Isin, Slug, Ticker};
use utoipa::ToResponse;
use utoipa::openapi::example::ExampleBuilder;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{ContentBuilder, Header, HeaderBuilder, Ref, RefOr, ResponseBuilder};

/// What a handler's `#[utoipa::path(path = …)]` says: nothing; its
/// operation is put at its route table row's path.
pub const PATH_IN_TABLE: &str = "";

/// One page of `GET /v1/companies` ([`Page`] of [`Company`], schema
/// `V1CompanyPage`). An alias, so the macros take it as one named schema.
pub type CompanyPage = Page<Company>;

/// One page of `GET /v1/news` ([`Page`] of [`ArticleSummary`], schema
/// `V1NewsPage`).
pub type NewsPage = Page<ArticleSummary>;

/// One page of `GET /v1/events` ([`Page`] of [`mds_domain::Event`],
/// schema `V1EventPage`).
pub type EventPage = Page<mds_domain::Event>;

/// One page of `GET /v1/actions` ([`Page`] of
/// [`mds_domain::actions::CorporateAction`], schema `V1ActionPage`).
pub type ActionPage = Page<mds_domain::actions::CorporateAction>;

/// The path parameter of `GET /v1/companies/{isin}`.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub struct IsinPath {
    /// The company's ISIN, matched case-insensitively. A malformed or unknown ISIN is `404`.
    #[param(example = "INE117A01022")]
    pub isin: Isin,
}

/// The path parameter of `GET /v1/symbols/{symbol}`.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub struct SymbolPath {
    /// An NSE symbol or BSE security id, case-insensitive. One never seen is `404`.
    #[param(example = "TATAMOTORS")]
    pub symbol: Ticker,
}

/// The path parameter of `GET /v1/news/{slug}`.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub struct SlugPath {
    /// The article's slug: 1 to 200 characters of `a-z`, `0-9`, `-`.
    #[param(example = "tcs-reports-higher-deal-wins-in-a-cautious-demand-environment-2026-01-08")]
    pub slug: Slug,
}

/// The path parameter of the `/v1/webhooks/{id}` routes.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub struct WebhookPath {
    /// The endpoint's id. One of another account, or none, is `404`.
    #[param(example = "we_3f9a0c1d2b4e5f6a7b8c9d0e", pattern = "^we_[0-9a-f]{1,64}$")]
    pub id: String,
}

/// Builds a problem+json response: the one `Problem` schema (by `$ref`, so
/// a generated client has one error type; the description names the codes
/// it can carry), one example per code in `codes`.
pub(crate) fn problem(
    description: &str,
    codes: &[ErrorCode],
    extra: &[(&str, Header)],
) -> RefOr<utoipa::openapi::Response> {
    let schema = RefOr::Ref(Ref::from_schema_name("Problem"));
    let examples = codes.iter().map(|&c| {
        let mut p = Problem::new(c, example_detail(c));
        p.request_id = Some("01JD8X5QK2M3N4P5R6S7T8V9W0".into());
        match c {
            ErrorCode::InvalidParameter => p.param = Some("limit".into()),
            ErrorCode::UnknownParameter => p.param = Some("industy".into()),
            ErrorCode::InvalidCursor => p.param = Some("cursor".into()),
            ErrorCode::SyncTokenExpired => p.param = Some("since".into()),
            ErrorCode::UnknownField => p.param = Some("entitld".into()),
            ErrorCode::InvalidField => p.param = Some("tier".into()),
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

/// The `detail` of the example problem of `c`.
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
        ErrorCode::EventsExpired => {
            "the events after this position are past retention; read the log again without `since`"
        }
        ErrorCode::RateLimited => "rate limit of 600 requests per minute reached; retry after 1 s",
        ErrorCode::TooManyStreams => "this key has 2 event streams open already; close one first",
        ErrorCode::QuotaExceeded => "monthly quota used up; it renews on the 1st (UTC)",
        ErrorCode::Unavailable => "the store is unreachable",
        ErrorCode::Internal => "an internal error occurred",
        ErrorCode::MissingAdminToken => "send an admin token: Authorization: Bearer <admin token>",
        ErrorCode::InvalidAdminToken => "the admin token is not valid (API keys are not admin tokens)",
        ErrorCode::UnknownField => "the body has a field this route does not define: \"entitld\"",
        ErrorCode::InvalidField => "no tier named \"gold\"",
        ErrorCode::InvalidBody => "the body must be a JSON object",
        ErrorCode::Conflict => "an account named \"acme\" exists already",
        ErrorCode::IdempotencyConflict => "this Idempotency-Key was used with another request in the last 24 hours",
        ErrorCode::PayloadTooLarge => "the body is over 1 MiB",
        ErrorCode::UnsupportedMediaType => "send the body as JSON, with Content-Type: application/json",
        ErrorCode::UriTooLong => crate::server::refusal::URI_TOO_LONG,
        ErrorCode::RequestHeaderFieldsTooLarge => crate::server::refusal::HEAD_TOO_LARGE,
    }
}

/// A response header of `schema`, described.
pub(crate) fn header(description: &str, schema: Type) -> Header {
    HeaderBuilder::new().schema(ObjectBuilder::new().schema_type(schema)).description(Some(description)).build()
}

/// A `Retry-After` header, described.
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
    /// `400` of `/v1/companies/{isin}`.
    AsOfBadRequest,
    "A bad query: an `as_of` that is not a day `YYYY-MM-DD`, before 1990-01-01 or after today \
(`invalid_parameter`, `param`: `as_of`), an undefined or repeated parameter (`unknown_parameter`), or a \
key-like value in the query string (`api_key_in_query`).",
    [InvalidParameter, UnknownParameter, ApiKeyInQuery],
    []
);
problem_response!(
    /// `400` of `/v1/companies/{isin}/actions`.
    CompanyActionsBadRequest,
    "A bad query: a bad value (`invalid_parameter`, naming `param`: an unknown `type`, a `from` or `to` that is \
not a day `YYYY-MM-DD`, a `to` before `from`, a `lineage` other than `true` or `false`), an undefined or repeated \
parameter (`unknown_parameter`), or a key-like value in the query string (`api_key_in_query`).",
    [InvalidParameter, UnknownParameter, ApiKeyInQuery],
    []
);
problem_response!(
    /// `400` of `/v1/actions`.
    ActionsBadRequest,
    "A bad query: a bad value (`invalid_parameter`, naming `param`: an unknown `type` or `exchange`, an \
`ex_date_from` or `ex_date_to` that is not a day `YYYY-MM-DD`, an `ex_date_to` before `ex_date_from`, a bad \
`limit`), an undefined or repeated parameter (`unknown_parameter`), a cursor not issued for these filters \
(`invalid_cursor`), or a key-like value in the query string (`api_key_in_query`).",
    [InvalidParameter, UnknownParameter, InvalidCursor, ApiKeyInQuery],
    []
);
problem_response!(
    /// `400` of `/v1/companies/{isin}/prices`.
    CompanyPricesBadRequest,
    "A bad query: a bad value (`invalid_parameter`, naming `param`: an `adjust` other than `none`, `split` or \
`total`, a `from` or `to` that is not a day `YYYY-MM-DD`, a `to` before `from`, a `from` more than 10 years before \
`to` (the last day loaded when `to` is not given) or after the last day loaded, a `lineage` other than `true` or \
`false`), an undefined or repeated parameter (`unknown_parameter`), or a key-like value in the query string \
(`api_key_in_query`).",
    [InvalidParameter, UnknownParameter, ApiKeyInQuery],
    []
);
problem_response!(
    /// `400` of `/v1/prices`.
    MarketPricesBadRequest,
    "A bad query: a bad value (`invalid_parameter`, naming `param`: a missing `date` or one that is not a day \
`YYYY-MM-DD`, a `series` that is not one or two letters or digits, a bad `limit`), an undefined or repeated \
parameter (`unknown_parameter`), a cursor not issued for this `date` and `series` (`invalid_cursor`), or a key-like \
value in the query string (`api_key_in_query`).",
    [InvalidParameter, UnknownParameter, InvalidCursor, ApiKeyInQuery],
    []
);
problem_response!(
    /// `400` of `/v1/symbols/{symbol}`.
    SymbolBadRequest,
    "A bad query: an `exchange` other than `nse` or `bse` (`invalid_parameter`), an undefined or repeated \
parameter (`unknown_parameter`), or a key-like value in the query string (`api_key_in_query`).",
    [InvalidParameter, UnknownParameter, ApiKeyInQuery],
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
    /// `400` of `/v1/events` and `/v1/events/stream`.
    EventsBadRequest,
    "A bad query: a bad value (`invalid_parameter`, naming `param`: an unknown event type, an invalid ISIN, ...), an \
undefined or repeated parameter (`unknown_parameter`), a `since` (or `Last-Event-ID`) or cursor not issued by this \
service, or a cursor of other filters (`invalid_cursor`), or a key-like value in the query string \
(`api_key_in_query`).",
    [InvalidParameter, UnknownParameter, InvalidCursor, ApiKeyInQuery],
    []
);
problem_response!(
    /// `410` of `/v1/events` and `/v1/events/stream`.
    EventsExpired,
    "The position (`since`, `Last-Event-ID` or the cursor) is older than the events the log keeps (30 days by \
default; `events_expired`): read the log again without `since`.",
    [EventsExpired],
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
    "No article with this slug, no company with this ISIN (or none listed on the `as_of` day), no security that \
carried this symbol (or a slug, ISIN or symbol that cannot exist).",
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
    /// `429` of `/v1/events/stream`.
    StreamTooManyRequests,
    "The per-minute rate limit is reached (`rate_limited`), the monthly quota is used up (`quota_exceeded`), or \
the key holds 2 open streams already, across all nodes (`too_many_streams`, `violated_policies: [\"streams\"]`; \
`Retry-After` is the longest a stream of a node that died stays counted). Not counted against the quota.",
    [RateLimited, QuotaExceeded, TooManyStreams],
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
problem_response!(
    /// `400` of the webhook routes that take a body.
    WebhookBadRequest,
    "A bad body: not a JSON object (`invalid_body`), a field the route does not define (`unknown_field`), or a \
field of the wrong type or value (`invalid_field`, naming it in `param`: a URL that is not `https` or points to a \
private, loopback or link-local address, an unknown event type, more than 1,000 values in a filter, an 11th \
endpoint (`param`: `url`), a `since` that is not an event id); or a query parameter (`unknown_parameter`).",
    [InvalidBody, UnknownField, InvalidField, UnknownParameter, ApiKeyInQuery],
    []
);
problem_response!(
    /// `413`.
    PayloadTooLarge,
    "The body is over the size cap (`payload_too_large`).",
    [PayloadTooLarge],
    []
);
problem_response!(
    /// `414`.
    UriTooLong,
    "The request target (path and query) is over 64 KiB (`uri_too_long`); answered before the request is read \
further, so without rate-limit headers, and the connection is closed.",
    [UriTooLong],
    []
);
problem_response!(
    /// `431`.
    RequestHeaderFieldsTooLarge,
    "The request head is over 400 KiB (`request_header_fields_too_large`); answered before the request is read \
further, so without rate-limit headers, and the connection is closed.",
    [RequestHeaderFieldsTooLarge],
    []
);
problem_response!(
    /// `415`.
    UnsupportedMediaType,
    "A body not sent as JSON (`unsupported_media_type`).",
    [UnsupportedMediaType],
    []
);

/// The answers of a webhook route to a body it refuses, as its
/// `#[utoipa::path]` lists them beside its own: `400`
/// ([`WebhookBadRequest`]), `413` ([`PayloadTooLarge`]) and `415`
/// ([`UnsupportedMediaType`]), each a reference to the shared response.
pub struct WebhookBodyRefused;

impl utoipa::IntoResponses for WebhookBodyRefused {
    fn responses() -> BTreeMap<String, RefOr<utoipa::openapi::Response>> {
        let refer = |status: &str, (name, _): (&str, RefOr<utoipa::openapi::Response>)| {
            (status.to_owned(), RefOr::Ref(Ref::from_response_name(name)))
        };
        BTreeMap::from([
            refer("400", WebhookBadRequest::response()),
            refer("413", PayloadTooLarge::response()),
            refer("415", UnsupportedMediaType::response()),
        ])
    }
}
