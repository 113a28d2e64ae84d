//! Identity over time (contract section 10): the events that change what a
//! security is called or which ISIN it trades under, the status they leave
//! a company in, and the records of `GET /v1/companies/{isin}/history` and
//! `GET /v1/symbols/{symbol}`.
//!
//! These are the seam between the importer (which derives events from
//! exchange snapshots and NSE's change files), the store (which keeps them)
//! and the catalog (which rebuilds the master as of a day from them).

use std::str::FromStr;

use chrono::NaiveDate;
use serde::{Deserialize, Deserializer, Serialize};

use crate::company::{Exchange, Ticker};
use crate::isin::Isin;

/// One change to a security's identity, as `GET /v1/companies/{isin}/history`
/// shows it: `{"type", "date", "exact", ...the type's fields}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1IdentityEvent))]
pub struct IdentityEvent {
    /// The day of the change (`YYYY-MM-DD`).
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub date: NaiveDate,
    /// `true` when an exchange file dates the change; `false` when it was
    /// first seen in a snapshot as of `date`.
    pub exact: bool,
    /// For a change seen only between two snapshots (`exact: false`):
    /// `[last day seen unchanged, first day seen changed]`, the second
    /// being `date`. `null` when the change is exact, or when no earlier
    /// snapshot of the series bounds it (contract 10.3).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required, value_type = Option<Vec<String>>, min_items = 2, max_items = 2))]
    pub observed_between: Option<[NaiveDate; 2]>,
    /// What changed.
    #[serde(flatten)]
    pub change: IdentityChange,
}

/// What an [`IdentityEvent`] changed; `type` on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1IdentityChange))]
pub enum IdentityChange {
    /// Listed on an exchange under a symbol.
    Listed {
        /// The exchange.
        exchange: Exchange,
        /// NSE symbol or BSE security id.
        #[cfg_attr(feature = "openapi", schema(value_type = String))]
        symbol: Ticker,
    },
    /// The exchange symbol changed.
    SymbolChanged {
        /// The exchange.
        exchange: Exchange,
        /// The old symbol.
        #[cfg_attr(feature = "openapi", schema(value_type = String))]
        from: Ticker,
        /// The new symbol.
        #[cfg_attr(feature = "openapi", schema(value_type = String))]
        to: Ticker,
    },
    /// The company name changed.
    NameChanged {
        /// The old name.
        from: String,
        /// The new name.
        to: String,
    },
    /// The security moved to a new ISIN of the same issuer (a split or
    /// similar). Recorded on both ISINs.
    IsinChanged {
        /// The old ISIN.
        #[cfg_attr(feature = "openapi", schema(value_type = String))]
        from: Isin,
        /// The new ISIN.
        #[cfg_attr(feature = "openapi", schema(value_type = String))]
        to: Isin,
        /// Face value per share under the old ISIN, INR; `null` when unknown.
        #[cfg_attr(feature = "openapi", schema(required))]
        face_value_from: Option<f64>,
        /// Face value per share under the new ISIN, INR; `null` when unknown.
        #[cfg_attr(feature = "openapi", schema(required))]
        face_value_to: Option<f64>,
    },
    /// Gone from a later snapshot of that exchange with no successor.
    Delisted {
        /// The exchange.
        exchange: Exchange,
        /// The symbol it was last listed under.
        #[cfg_attr(feature = "openapi", schema(value_type = String))]
        symbol: Ticker,
    },
}

impl IdentityEvent {
    /// An event an exchange file dates (`exact: true`).
    pub fn exact(date: NaiveDate, change: IdentityChange) -> Self {
        IdentityEvent { date, exact: true, observed_between: None, change }
    }

    /// An event first seen in a snapshot of `date` (`exact: false`), with
    /// `seen_unchanged` the last day an earlier snapshot showed it as it
    /// was (its `observed_between`), when there is one.
    pub fn observed(date: NaiveDate, seen_unchanged: Option<NaiveDate>, change: IdentityChange) -> Self {
        let observed_between = seen_unchanged.filter(|d| *d < date).map(|d| [d, date]);
        IdentityEvent { date, exact: false, observed_between, change }
    }
}

impl IdentityChange {
    /// The wire value of `type`.
    pub fn kind(&self) -> &'static str {
        match self {
            IdentityChange::Listed { .. } => "listed",
            IdentityChange::SymbolChanged { .. } => "symbol_changed",
            IdentityChange::NameChanged { .. } => "name_changed",
            IdentityChange::IsinChanged { .. } => "isin_changed",
            IdentityChange::Delisted { .. } => "delisted",
        }
    }
}

/// The successor and predecessors of `own` by its `isin_changed` events
/// (in order): `superseded_by` (the latest replacement) and `supersedes`
/// (oldest first, each once). The one rule of both fields, wherever a
/// detail is made (the catalog, a `company.changed` event).
pub fn links<'a>(own: &Isin, events: impl IntoIterator<Item = &'a IdentityEvent>) -> (Option<Isin>, Vec<Isin>) {
    let (mut by, mut from) = (None, Vec::<Isin>::new());
    for e in events {
        if let IdentityChange::IsinChanged { from: f, to: t, .. } = &e.change {
            if f == own && t != own {
                by = Some(t.clone());
            } else if t == own && f != own && !from.contains(f) {
                from.push(f.clone());
            }
        }
    }
    (by, from)
}

/// `GET /v1/companies/{isin}/history`: that ISIN's events, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1CompanyHistory))]
pub struct CompanyHistory {
    /// The ISIN asked for.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub isin: Isin,
    /// Its identity events, oldest first.
    pub events: Vec<IdentityEvent>,
}

/// One span during which an ISIN carried a symbol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1SymbolPeriod))]
pub struct SymbolPeriod {
    /// The ISIN that carried the symbol.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub isin: Isin,
    /// The company's name at the end of the period (today's while current).
    pub name: String,
    /// First day it carried the symbol.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub from: NaiveDate,
    /// First day it no longer did (half-open); `null` while current.
    #[cfg_attr(feature = "openapi", schema(required, value_type = Option<String>, format = Date))]
    pub to: Option<NaiveDate>,
}

/// `GET /v1/symbols/{symbol}`: every ISIN that has carried the symbol on
/// the exchange, ordered by `to` descending (`null` first), then `from`
/// descending.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1SymbolHistory))]
pub struct SymbolHistory {
    /// The symbol asked for, upper case.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub symbol: Ticker,
    /// The exchange asked for.
    pub exchange: Exchange,
    /// The periods, current first.
    pub periods: Vec<SymbolPeriod>,
}

/// A company's standing: `superseded` when its ISIN was replaced, else
/// `active` when some exchange's latest snapshot lists it, else `delisted`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CompanyStatus {
    /// Listed in some exchange's latest snapshot (or loaded without one).
    #[default]
    Active,
    /// Its ISIN was replaced by another (`superseded_by`).
    Superseded,
    /// Gone from every exchange with no successor.
    Delisted,
}

/// The `status` filter of `GET /v1/companies` (default `active`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StatusFilter {
    /// Only companies of that status.
    Only(CompanyStatus),
    /// Every company (`any`).
    Any,
}

impl Default for StatusFilter {
    fn default() -> Self {
        StatusFilter::DEFAULT
    }
}

impl CompanyStatus {
    /// The rule of the type's doc: `superseded` when the ISIN was
    /// replaced, else `active` when it is `shown` (some run of it is open),
    /// else `delisted`.
    pub fn of(superseded: bool, shown: bool) -> Self {
        match (superseded, shown) {
            (true, _) => CompanyStatus::Superseded,
            (false, true) => CompanyStatus::Active,
            (false, false) => CompanyStatus::Delisted,
        }
    }

    /// Whether it is `active` (the default, left out of stored details).
    pub fn is_active(&self) -> bool {
        *self == CompanyStatus::Active
    }

    /// Every status, in wire order.
    pub const ALL: [CompanyStatus; 3] = [CompanyStatus::Active, CompanyStatus::Superseded, CompanyStatus::Delisted];

    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            CompanyStatus::Active => "active",
            CompanyStatus::Superseded => "superseded",
            CompanyStatus::Delisted => "delisted",
        }
    }
}

impl StatusFilter {
    /// The list's default: active companies only.
    pub const DEFAULT: StatusFilter = StatusFilter::Only(CompanyStatus::Active);

    /// Whether a company of `status` passes.
    pub fn admits(self, status: CompanyStatus) -> bool {
        match self {
            StatusFilter::Only(s) => s == status,
            StatusFilter::Any => true,
        }
    }

    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            StatusFilter::Only(s) => s.as_str(),
            StatusFilter::Any => "any",
        }
    }
}

impl FromStr for CompanyStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        CompanyStatus::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| format!("status must be one of active, superseded, delisted (got {s:?})"))
    }
}

impl FromStr for StatusFilter {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "any" {
            return Ok(StatusFilter::Any);
        }
        s.parse::<CompanyStatus>()
            .map(StatusFilter::Only)
            .map_err(|_| format!("status must be one of active, superseded, delisted, any (got {s:?})"))
    }
}

wire_text!(CompanyStatus);

impl<'de> Deserialize<'de> for CompanyStatus {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for CompanyStatus {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .enum_values(Some(["active", "superseded", "delisted"]))
            .build()
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for CompanyStatus {}

/// The earliest `as_of` accepted.
pub const AS_OF_MIN: NaiveDate = match NaiveDate::from_ymd_opt(1990, 1, 1) {
    Some(d) => d,
    None => panic!("1990-01-01 is a date"),
};

/// Parses `as_of`: `YYYY-MM-DD`, from 1990-01-01 up to `today` (inclusive).
pub fn parse_as_of(s: &str, today: NaiveDate) -> Result<NaiveDate, String> {
    let d = NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .filter(|_| s.len() == 10)
        .ok_or_else(|| format!("as_of must be a date YYYY-MM-DD (got {s:?})"))?;
    if d < AS_OF_MIN {
        return Err(format!("as_of must not be before 1990-01-01 (got {s})"));
    }
    not_after_today(d, today)
}

/// Refuses an `as_of` after `today` (the serving node's day), the check
/// of [`parse_as_of`] that needs a clock.
pub fn not_after_today(d: NaiveDate, today: NaiveDate) -> Result<NaiveDate, String> {
    if d > today {
        return Err(format!("as_of must not be after today, {today} (got {d})"));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::day;

    #[test]
    fn an_event_is_flat_on_the_wire_and_reads_back() {
        let e = IdentityEvent {
            date: day("2024-09-16"),
            exact: false,
            observed_between: None,
            change: IdentityChange::IsinChanged {
                from: Isin::parse("INE296A01024").unwrap(),
                to: Isin::parse("INE296A01032").unwrap(),
                face_value_from: Some(2.0),
                face_value_to: Some(1.0),
            },
        };
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(
            json,
            r#"{"date":"2024-09-16","exact":false,"observed_between":null,"type":"isin_changed","from":"INE296A01024","to":"INE296A01032","face_value_from":2.0,"face_value_to":1.0}"#
        );
        assert_eq!(serde_json::from_str::<IdentityEvent>(&json).unwrap(), e);
        assert_eq!(e.change.kind(), "isin_changed");
        // Seen between two snapshots: the bounds follow `exact`.
        let seen = IdentityEvent::observed(day("2026-05-17"), Some(day("2024-01-30")), e.change.clone());
        let json = serde_json::to_string(&seen).unwrap();
        assert!(json.starts_with(
            r#"{"date":"2026-05-17","exact":false,"observed_between":["2024-01-30","2026-05-17"],"type""#
        ));
        assert_eq!(serde_json::from_str::<IdentityEvent>(&json).unwrap(), seen);
        assert_eq!(IdentityEvent::observed(day("2026-05-17"), None, e.change.clone()).observed_between, None);
        // Read without the field (as stored before it existed): `null`.
        let old = r#"{"date":"2024-09-16","exact":false,"type":"name_changed","from":"A","to":"B"}"#;
        assert_eq!(serde_json::from_str::<IdentityEvent>(old).unwrap().observed_between, None);
    }

    #[test]
    fn status_filter_parses_the_four_values_and_nothing_else() {
        assert_eq!("any".parse::<StatusFilter>().unwrap(), StatusFilter::Any);
        assert_eq!("delisted".parse::<StatusFilter>().unwrap(), StatusFilter::Only(CompanyStatus::Delisted));
        assert!("Active".parse::<StatusFilter>().is_err());
        assert!(StatusFilter::DEFAULT.admits(CompanyStatus::Active));
        assert!(!StatusFilter::DEFAULT.admits(CompanyStatus::Superseded));
    }

    #[test]
    fn as_of_is_a_day_between_1990_and_today() {
        let today = day("2026-11-26");
        assert_eq!(parse_as_of("2024-01-31", today).unwrap(), day("2024-01-31"));
        assert_eq!(parse_as_of("2026-11-26", today).unwrap(), today);
        for bad in ["2026-11-27", "1989-12-31", "2024-1-31", "2024-02-30", "yesterday", ""] {
            assert!(parse_as_of(bad, today).is_err(), "{bad}");
        }
    }
}
