//! The one timestamp format of the wire: RFC 3339, UTC, written `+00:00`.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Deserializer, Serializer};

/// Formats an instant as `2026-11-01T00:00:00+00:00` (fractional seconds only
/// when the instant has them).
pub fn format_utc(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::AutoSi, false)
}

/// Parses RFC 3339 with any offset (or `Z`) into UTC.
pub fn parse_rfc3339(s: &str) -> Result<DateTime<Utc>, chrono::ParseError> {
    DateTime::parse_from_rfc3339(s.trim()).map(|t| t.with_timezone(&Utc))
}

/// Serde helpers for `DateTime<Utc>` in the wire format.
pub mod rfc3339 {
    use super::*;

    /// Serialises in the wire format.
    pub fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_utc(t))
    }

    /// Deserialises from RFC 3339 with any offset.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        let s = String::deserialize(d)?;
        parse_rfc3339(&s).map_err(|e| serde::de::Error::custom(format!("not an RFC 3339 date-time ({e}): {s:?}")))
    }
}

/// Serde helpers for `Option<DateTime<Utc>>` in the wire format.
pub mod rfc3339_opt {
    use super::*;

    /// Serialises in the wire format, `null` for `None`.
    pub fn serialize<S: Serializer>(t: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => s.serialize_str(&format_utc(t)),
            None => s.serialize_none(),
        }
    }

    /// Deserialises from RFC 3339 with any offset, or `null`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DateTime<Utc>>, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(None),
            Some(s) => parse_rfc3339(&s)
                .map(Some)
                .map_err(|e| serde::de::Error::custom(format!("not an RFC 3339 date-time ({e}): {s:?}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_utc_with_explicit_offset() {
        let t = parse_rfc3339("2026-11-01T05:30:00+05:30").unwrap();
        assert_eq!(format_utc(&t), "2026-11-01T00:00:00+00:00");
        let t = parse_rfc3339("2026-11-20T09:15:30.250Z").unwrap();
        assert_eq!(format_utc(&t), "2026-11-20T09:15:30.250+00:00");
    }
}
