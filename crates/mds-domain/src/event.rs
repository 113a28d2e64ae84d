//! Events (contract section 11): what the log (`GET /v1/events`), the
//! stream (`GET /v1/events/stream`) and webhooks carry, and which events a
//! filter (the log's query, an endpoint's subscription) admits.
//!
//! An event is written by the store in the transaction of the change that
//! makes it ([`EventDraft`]: its type, what it is about, its data); the
//! store gives it its [`EventId`], increasing in commit order across the
//! service.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::detail::CompanyDetail;
use crate::identity::IdentityEvent;
use crate::isin::Isin;
#[cfg(feature = "openapi")]
use crate::params::param_schema;

/// The type of an event; `type` on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventType {
    /// A new article (a slug the store did not have).
    ArticlePublished,
    /// An imported article that changed.
    ArticleUpdated,
    /// A company's detail changed (or a company new to the store).
    CompanyChanged,
    /// A corporate action new to the store (contract 13.3).
    CorporateActionAdded,
    /// A stored corporate action that an import changed (a source added,
    /// a kind or record date learnt).
    CorporateActionChanged,
    /// A stored corporate action gone from the store: every exchange's
    /// publication of it was resolved again to another ISIN, where it now
    /// belongs to the actions named in `replaced_by`.
    CorporateActionRemoved,
    /// An import changed the bars of a trading day (contract 14.2).
    PricesPublished,
    /// A test delivery to one webhook endpoint; never in the log.
    Ping,
}

/// Why a string is not an event type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown event type {0:?}: one of article.published, article.updated, company.changed, \
     corporate_action.added, corporate_action.changed, corporate_action.removed, prices.published"
)]
pub struct EventTypeError(pub String);

impl EventType {
    /// Every type, in wire order: the [`EventType::SUBSCRIBABLE`] ones, then
    /// `ping`.
    pub const ALL: [EventType; 8] = {
        let mut all = [EventType::Ping; 8];
        let mut i = 0;
        while i < EventType::SUBSCRIBABLE.len() {
            all[i] = EventType::SUBSCRIBABLE[i];
            i += 1;
        }
        all
    };

    /// The types a filter may name (not `ping`, which only the test route
    /// sends).
    pub const SUBSCRIBABLE: [EventType; 7] = [
        EventType::ArticlePublished,
        EventType::ArticleUpdated,
        EventType::CompanyChanged,
        EventType::CorporateActionAdded,
        EventType::CorporateActionChanged,
        EventType::CorporateActionRemoved,
        EventType::PricesPublished,
    ];

    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::ArticlePublished => "article.published",
            EventType::ArticleUpdated => "article.updated",
            EventType::CompanyChanged => "company.changed",
            EventType::CorporateActionAdded => "corporate_action.added",
            EventType::CorporateActionChanged => "corporate_action.changed",
            EventType::CorporateActionRemoved => "corporate_action.removed",
            EventType::PricesPublished => "prices.published",
            EventType::Ping => "ping",
        }
    }

    /// The type of wire value `s`, any type (the store's rows).
    pub fn from_wire(s: &str) -> Option<EventType> {
        EventType::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

impl FromStr for EventType {
    type Err = EventTypeError;

    /// A type a filter may name ([`EventType::SUBSCRIBABLE`]).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        EventType::SUBSCRIBABLE.into_iter().find(|t| t.as_str() == s).ok_or_else(|| EventTypeError(s.to_owned()))
    }
}

wire_text!(EventType);

/// An event type a filter may name, with its OpenAPI schema: a string, one
/// of [`EventType::SUBSCRIBABLE`] (webhook bodies' `types`).
#[cfg(feature = "openapi")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubscribableType(pub EventType);

#[cfg(feature = "openapi")]
impl<'de> Deserialize<'de> for SubscribableType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map(SubscribableType).map_err(serde::de::Error::custom)
    }
}

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for SubscribableType {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .description(Some("An event type an endpoint may subscribe to."))
            .enum_values(Some(EventType::SUBSCRIBABLE.map(EventType::as_str)))
            .build()
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for SubscribableType {}

impl<'de> Deserialize<'de> for EventType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        EventType::from_wire(&s).ok_or_else(|| serde::de::Error::custom(EventTypeError(s)))
    }
}

/// The id of an event: `evt_` and 16 lower-case hex digits of its number in
/// the log, so ids sort as text in the order they were committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct EventId(pub i64);

/// Why a string is not an event id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an event id of this service: {0:?}")]
pub struct EventIdError(pub String);

impl EventId {
    /// The prefix of every event id.
    pub const PREFIX: &'static str = "evt_";

    /// Its number in the log.
    pub fn number(self) -> i64 {
        self.0
    }
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{:016x}", EventId::PREFIX, self.0)
    }
}

impl FromStr for EventId {
    type Err = EventIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || EventIdError(s.chars().take(64).collect());
        let hex = s.strip_prefix(EventId::PREFIX).ok_or_else(bad)?;
        if hex.len() != 16 || !hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            return Err(bad());
        }
        let n = u64::from_str_radix(hex, 16).map_err(|_| bad())?;
        i64::try_from(n).map(EventId).map_err(|_| bad())
    }
}

impl Serialize for EventId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for EventId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// What an event is about, for filters: the company's ISIN and ticker, the
/// article's tags. Kept beside the event's data in the store.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EventSubject {
    /// The ISIN of the company (of the article's company).
    pub isin: Option<Isin>,
    /// The ticker of the company (of the article), upper case.
    pub ticker: Option<String>,
    /// The article's tags; empty for a company.
    pub tags: Vec<String>,
}

/// An event before the store numbers it: made in the transaction of the
/// change.
#[derive(Debug, Clone, PartialEq)]
pub struct EventDraft {
    /// Its type.
    pub kind: EventType,
    /// What it is about.
    pub subject: EventSubject,
    /// Its `data`, as JSON text.
    pub data: String,
}

/// One event of the log: `{"id", "type", "created_at", "data"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1Event))]
pub struct Event {
    /// Its id (`evt_` and 16 hex digits), increasing in commit order across the service.
    #[cfg_attr(feature = "openapi", schema(value_type = String, pattern = "^evt_[0-9a-f]{16}$", example = "evt_0000000000000001"))]
    pub id: EventId,
    /// `article.published`, `article.updated`, `company.changed`, `corporate_action.added`,
    /// `corporate_action.changed`, `corporate_action.removed`, `prices.published`, or `ping`
    /// (webhook test deliveries only).
    #[serde(rename = "type")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "article.published"))]
    pub kind: EventType,
    /// When the change that made it committed.
    #[serde(with = "crate::time::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: DateTime<Utc>,
    /// For `article.*`: the article as the news list shows it (`V1ArticleSummary`, no `body`). For
    /// `company.changed`: a `V1CompanyChanged`. For `corporate_action.added` and `.changed`: the
    /// action (`V1CorporateAction`); for `corporate_action.removed`, the action as it was and the
    /// ids that replaced it (`V1CorporateActionRemoved`). For `prices.published`: the day, its exchange and how many bars it
    /// now holds (`V1PricesPublished`). For `ping`: `{}`.
    #[cfg_attr(feature = "openapi", schema(value_type = EventData))]
    pub data: serde_json::Value,
}

// The document's `oneOf` for `Event::data`, which the service keeps as JSON.
/// The `data` of an event: one shape per type.
#[cfg(feature = "openapi")]
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = V1EventData)]
#[serde(untagged)]
#[allow(dead_code, clippy::large_enum_variant)]
enum EventData {
    /// `article.published`, `article.updated`.
    Article(crate::article::ArticleSummary),
    /// `company.changed`.
    CompanyChanged(CompanyChanged),
    /// `corporate_action.added`, `corporate_action.changed`.
    CorporateAction(crate::actions::CorporateAction),
    /// `corporate_action.removed`.
    CorporateActionRemoved(crate::actions::ActionRemoved),
    /// `prices.published`.
    PricesPublished(crate::prices::PricesPublished),
    /// `ping`.
    Ping(Ping),
}

/// The `data` of a `ping`: an empty object.
#[cfg(feature = "openapi")]
#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[schema(as = V1Ping)]
#[serde(deny_unknown_fields)]
struct Ping {}

/// An event as the store keeps it: the event and what it is about.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEvent {
    /// The event.
    pub event: Event,
    /// What it is about.
    pub subject: EventSubject,
}

/// The `data` of a `company.changed` event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1CompanyChanged))]
pub struct CompanyChanged {
    /// The company as `GET /v1/companies/{isin}` showed it after the change.
    pub company: CompanyDetail,
    /// The top-level fields of `company` that changed (every field for a
    /// company new to the store), in wire order; `updated_at` is not one.
    pub changed: Vec<String>,
    /// The identity events (section 10) the change added, oldest first.
    pub events: Vec<IdentityEvent>,
}

impl CompanyChanged {
    /// The change from `before` (none: the company is new) to `after`,
    /// with the identity events it added.
    pub fn between(before: Option<&CompanyDetail>, after: CompanyDetail, events: Vec<IdentityEvent>) -> Self {
        let fields = |d: &CompanyDetail| match serde_json::to_value(d) {
            Ok(serde_json::Value::Object(m)) => m,
            _ => serde_json::Map::new(),
        };
        let new = fields(&after);
        let old = before.map(fields);
        let changed = new
            .iter()
            .filter(|(k, v)| k.as_str() != "updated_at" && old.as_ref().is_none_or(|o| o.get(k.as_str()) != Some(v)))
            .map(|(k, _)| k.clone())
            .collect();
        CompanyChanged { company: after, changed, events }
    }

    /// The draft of the `company.changed` event.
    pub fn draft(&self) -> EventDraft {
        let c = &self.company.company;
        EventDraft {
            kind: EventType::CompanyChanged,
            subject: EventSubject {
                isin: Some(c.isin.clone()),
                ticker: Some(c.ticker.as_str().to_owned()),
                tags: vec![],
            },
            data: serde_json::to_string(self).expect("a company change always serialises"),
        }
    }
}

/// Which events a reader wants: the log's and the stream's query, or a
/// webhook endpoint's subscription. Each list empty admits every value; a
/// value of each non-empty list must match (types by type; ISINs, tickers
/// by the event's company; tags by any of the article's tags).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EventFilter {
    /// The types admitted.
    pub types: Vec<EventType>,
    /// The ISINs admitted.
    pub isins: Vec<Isin>,
    /// The tickers admitted, upper case.
    pub tickers: Vec<String>,
    /// The tags admitted.
    pub tags: Vec<String>,
}

impl EventFilter {
    /// The most values a list of a filter may hold.
    pub const MAX_VALUES: usize = 1000;

    /// Whether `kind` about `subject` passes.
    pub fn admits(&self, kind: EventType, subject: &EventSubject) -> bool {
        let types = self.types.is_empty() || self.types.contains(&kind);
        let isins = self.isins.is_empty() || subject.isin.as_ref().is_some_and(|i| self.isins.contains(i));
        let tickers = self.tickers.is_empty() || subject.ticker.as_ref().is_some_and(|t| self.tickers.contains(t));
        let tags = self.tags.is_empty() || subject.tags.iter().any(|t| self.tags.contains(t));
        types && isins && tickers && tags
    }

    /// Whether it admits everything.
    pub fn is_empty(&self) -> bool {
        self.types.is_empty() && self.isins.is_empty() && self.tickers.is_empty() && self.tags.is_empty()
    }
}

/// `since`: the event id to read after ([`EventsQuery::since`]).
pub const SINCE: &str = "since";
/// `types`: comma-separated event types ([`EventsQuery::types`]).
pub const TYPES: &str = "types";
/// `isin` ([`EventsQuery::isin`]).
pub const ISIN: &str = "isin";
/// `ticker` ([`EventsQuery::ticker`]).
pub const TICKER: &str = "ticker";
/// `tag` ([`EventsQuery::tag`]).
pub const TAG: &str = "tag";
/// The parameters of the stream (`GET /v1/events/stream`).
pub const STREAM_PARAMETERS: &[&str] = &[SINCE, TYPES, ISIN, TICKER, TAG];
/// The parameters of the log (`GET /v1/events`): the stream's, then
/// pagination.
pub const LOG_PARAMETERS: &[&str] = &[SINCE, TYPES, ISIN, TICKER, TAG, crate::params::CURSOR, crate::params::LIMIT];

/// The query of the event log and the stream: where to start and which
/// events. Each field is the query parameter of the same name (with the
/// feature `openapi` this type also describes them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
pub struct EventsQuery {
    /// Events after this event id (an `id` this service gave), oldest first; without it, from the
    /// oldest event kept (30 days by default). An id older than that is `410 events_expired`; one
    /// not issued by this service is `400 invalid_cursor`.
    #[cfg_attr(feature = "openapi", param(value_type = Option<String>, example = "evt_0000000000000001"))]
    pub since: Option<String>,
    /// Only these types, comma-separated: `article.published`, `article.updated`, `company.changed`,
    /// `corporate_action.added`, `corporate_action.changed`, `corporate_action.removed`,
    /// `prices.published`.
    #[cfg_attr(
        feature = "openapi",
        param(
            value_type = Option<String>,
            pattern = r"^\s*(article\.published|article\.updated|company\.changed|corporate_action\.added|corporate_action\.changed|corporate_action\.removed|prices\.published)\s*(,\s*(article\.published|article\.updated|company\.changed|corporate_action\.added|corporate_action\.changed|corporate_action\.removed|prices\.published)\s*)*$",
            example = "article.published,company.changed"
        )
    )]
    pub types: Vec<EventType>,
    /// Only events about the company with this ISIN (check digit verified).
    #[cfg_attr(feature = "openapi", param(inline, value_type = Option<param_schema::Isin>, example = "INE002A01018"))]
    pub isin: Option<Isin>,
    /// Only events about the company with this ticker (case-insensitive).
    #[cfg_attr(feature = "openapi", param(inline, value_type = Option<param_schema::Ticker>, example = "RELIANCE"))]
    pub ticker: Option<crate::Ticker>,
    /// Only article events carrying this tag (exact, case-sensitive, 1 to 64 characters).
    #[cfg_attr(feature = "openapi", param(value_type = Option<String>, min_length = 1, max_length = 64, example = "results"))]
    pub tag: Option<String>,
}

impl EventsQuery {
    /// The filter it asks for.
    pub fn filter(&self) -> EventFilter {
        EventFilter {
            types: self.types.clone(),
            isins: self.isin.iter().cloned().collect(),
            tickers: self.ticker.iter().map(|t| t.as_str().to_owned()).collect(),
            tags: self.tag.iter().cloned().collect(),
        }
    }

    /// The canonical text of its filters (not `since`), which binds a
    /// cursor to them.
    pub fn canonical(&self) -> String {
        let mut c = crate::params::Canonical::default();
        let types: Vec<&str> = self.types.iter().map(|t| t.as_str()).collect();
        c.put(TYPES, (!types.is_empty()).then(|| types.join(",")).as_deref());
        c.put(ISIN, self.isin.as_ref().map(|i| i.as_str()));
        c.put(TICKER, self.ticker.as_ref().map(|t| t.as_str()));
        c.put(TAG, self.tag.as_deref());
        c.finish()
    }

    /// Parses its parameters from `get`; the first bad value is the error.
    fn parse_from<'a>(get: &impl Fn(&str) -> Option<&'a str>) -> Result<Self, crate::ParamError> {
        use crate::params::one;
        let types = one(get, TYPES, parse_types)?.unwrap_or_default();
        Ok(EventsQuery {
            since: get(SINCE).map(str::to_owned),
            types,
            isin: one(get, ISIN, |s| {
                Isin::parse(s)
                    .map_err(|_| "isin must be a valid ISIN: 12 characters with an ISO 6166 check digit".into())
            })?,
            ticker: one(get, TICKER, |t| crate::Ticker::parse(t).map_err(|e| e.to_string()))?,
            tag: one(get, TAG, |t| match t.chars().count() {
                1..=64 => Ok(t.to_owned()),
                _ => Err("tag must be 1 to 64 characters".to_owned()),
            })?,
        })
    }
}

/// `types`: comma-separated subscribable types, each once at most.
fn parse_types(s: &str) -> Result<Vec<EventType>, String> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let t: EventType = part.trim().parse().map_err(|e: EventTypeError| e.to_string())?;
        if !out.contains(&t) {
            out.push(t);
        }
    }
    Ok(out)
}

/// The stream's query.
impl crate::params::QueryParams for EventsQuery {
    const NAMES: &'static [&'static str] = STREAM_PARAMETERS;

    fn parse<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Result<Self, crate::ParamError> {
        EventsQuery::parse_from(&get)
    }
}

/// The log's own parameters (then `cursor` and `limit`).
impl crate::params::Filter for EventsQuery {
    const ROUTE_PARAMETERS: &'static [&'static str] = LOG_PARAMETERS;

    fn parse<'a>(get: &impl Fn(&str) -> Option<&'a str>) -> Result<Self, crate::ParamError> {
        EventsQuery::parse_from(get)
    }
}

/// The query of `GET /v1/events`.
pub type EventsLogQuery = crate::params::Paged<EventsQuery>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_sort_as_text() {
        for n in [0, 1, 255, 1 << 40, i64::MAX] {
            let id = EventId(n);
            assert_eq!(id.to_string().parse::<EventId>(), Ok(id));
        }
        assert!(EventId(9).to_string() < EventId(10).to_string());
        assert_eq!(EventId(26).to_string(), "evt_000000000000001a");
        for bad in ["", "evt_", "evt_1a", "evt_000000000000001A", "evx_000000000000001a", "evt_ffffffffffffffff"] {
            assert!(bad.parse::<EventId>().is_err(), "{bad}");
        }
    }

    proptest::proptest! {
        /// Every id round-trips, and ids sort as text as they sort as
        /// numbers (so a store or a client may compare either).
        #[test]
        fn ids_sort_as_text_as_numbers(a in 0..=i64::MAX, b in 0..=i64::MAX) {
            let (x, y) = (EventId(a), EventId(b));
            proptest::prop_assert_eq!(x.to_string().parse::<EventId>(), Ok(x));
            proptest::prop_assert_eq!(x.to_string().cmp(&y.to_string()), a.cmp(&b));
        }

        /// A text that parses is the one way of writing its id.
        #[test]
        fn only_the_canonical_text_parses(s in "evt_[0-9a-fA-F]{14,18}|[a-z_]{0,6}[0-9a-f]{0,16}") {
            if let Ok(id) = s.parse::<EventId>() {
                proptest::prop_assert_eq!(id.to_string(), s);
            }
        }
    }

    #[test]
    fn types_parse_only_what_a_filter_may_name() {
        assert_eq!("company.changed".parse::<EventType>(), Ok(EventType::CompanyChanged));
        assert_eq!("corporate_action.added".parse::<EventType>(), Ok(EventType::CorporateActionAdded));
        assert_eq!("corporate_action.changed".parse::<EventType>(), Ok(EventType::CorporateActionChanged));
        assert_eq!("prices.published".parse::<EventType>(), Ok(EventType::PricesPublished));
        for t in EventType::SUBSCRIBABLE {
            assert!(EventTypeError(String::new()).to_string().contains(t.as_str()), "{t} in the refusal");
        }
        assert!("ping".parse::<EventType>().is_err());
        assert_eq!(EventType::from_wire("ping"), Some(EventType::Ping));
    }

    /// The `types` parameter's pattern in the OpenAPI document names every
    /// type a filter may name (written there as a literal, as utoipa
    /// wants).
    #[cfg(feature = "openapi")]
    #[test]
    fn the_types_pattern_names_every_subscribable_type() {
        use utoipa::IntoParams;
        let params = EventsQuery::into_params(|| None);
        let types = params.iter().find(|p| p.name == TYPES).expect("types is a parameter");
        let json = serde_json::to_string(types).unwrap();
        for t in EventType::SUBSCRIBABLE {
            let escaped = t.as_str().replace('.', "\\\\.");
            assert_eq!(json.matches(&escaped).count(), 2, "{t} in {json}");
        }
    }

    #[test]
    fn a_filter_needs_every_list_to_match() {
        let isin = Isin::parse("INE002A01018").unwrap();
        let subject =
            EventSubject { isin: Some(isin.clone()), ticker: Some("RELIANCE".into()), tags: vec!["x".into()] };
        assert!(EventFilter::default().admits(EventType::ArticlePublished, &subject));
        let f = EventFilter { types: vec![EventType::CompanyChanged], ..EventFilter::default() };
        assert!(!f.admits(EventType::ArticlePublished, &subject));
        let f = EventFilter { isins: vec![isin], tags: vec!["y".into()], ..EventFilter::default() };
        assert!(!f.admits(EventType::ArticlePublished, &subject));
        let f = EventFilter { tags: vec!["y".into(), "x".into()], ..EventFilter::default() };
        assert!(f.admits(EventType::ArticlePublished, &subject));
        let f = EventFilter { tickers: vec!["TCS".into()], ..EventFilter::default() };
        assert!(!f.admits(EventType::CompanyChanged, &subject));
    }
}
