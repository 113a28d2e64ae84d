//! The one timestamp format of the wire: RFC 3339, UTC, written `+00:00`.

use chrono::{DateTime, Datelike, SecondsFormat, Timelike, Utc};
use serde::{Deserialize, Deserializer, Serializer};

/// Formats an instant as `2026-11-01T00:00:00+00:00` (fractional seconds only
/// when the instant has them).
pub fn format_utc(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::AutoSi, false)
}

/// Appends [`format_utc`]'s text of `t` to `out`, the same bytes without
/// the formatting machinery or a `String` (a made news page writes two
/// instants a row); years outside 0000–9999 and leap seconds go through
/// [`format_utc`] itself.
pub fn write_utc(t: &DateTime<Utc>, out: &mut Vec<u8>) {
    let (date, time) = (t.date_naive(), t.time());
    let nanos = time.nanosecond();
    let Ok(year) = u32::try_from(date.year()) else {
        out.extend_from_slice(format_utc(t).as_bytes());
        return;
    };
    if year > 9_999 || nanos >= 1_000_000_000 {
        out.extend_from_slice(format_utc(t).as_bytes());
        return;
    }
    let two = |n: u32| [b'0' + (n / 10) as u8, b'0' + (n % 10) as u8];
    let [y0, y1] = two(year / 100);
    let [y2, y3] = two(year % 100);
    let [mo0, mo1] = two(date.month());
    let [d0, d1] = two(date.day());
    let [h0, h1] = two(time.hour());
    let [mi0, mi1] = two(time.minute());
    let [s0, s1] = two(time.second());
    out.extend_from_slice(&[y0, y1, y2, y3, b'-', mo0, mo1, b'-', d0, d1, b'T', h0, h1, b':', mi0, mi1, b':', s0, s1]);
    // `SecondsFormat::AutoSi`: none, or 3, 6 or 9 digits, the fewest that
    // hold the instant.
    let digits = match nanos {
        0 => 0,
        n if n % 1_000_000 == 0 => 3,
        n if n % 1_000 == 0 => 6,
        _ => 9,
    };
    if digits > 0 {
        out.push(b'.');
        let mut frac = [0u8; 9];
        let mut n = nanos;
        for d in frac.iter_mut().rev() {
            *d = b'0' + (n % 10) as u8;
            n /= 10;
        }
        out.extend_from_slice(&frac[..digits]);
    }
    out.extend_from_slice(b"+00:00");
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
    use proptest::prelude::*;

    #[test]
    fn writes_utc_with_explicit_offset() {
        let t = parse_rfc3339("2026-11-01T05:30:00+05:30").unwrap();
        assert_eq!(format_utc(&t), "2026-11-01T00:00:00+00:00");
        let t = parse_rfc3339("2026-11-20T09:15:30.250Z").unwrap();
        assert_eq!(format_utc(&t), "2026-11-20T09:15:30.250+00:00");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2_000, failure_persistence: None, ..Default::default() })]

        /// `write_utc` writes `format_utc`'s bytes for any instant chrono
        /// holds: every precision of the fraction, years before 1 and
        /// after 9999 (through the fallback), leap seconds.
        #[test]
        fn write_utc_is_format_utc(
            secs in -300_000_000_000i64..300_000_000_000,
            nanos in prop_oneof![
                Just(0u32),
                (0u32..1_000).prop_map(|n| n * 1_000_000),
                (0u32..1_000_000).prop_map(|n| n * 1_000),
                0u32..2_000_000_000,
            ],
        ) {
            if let Some(t) = DateTime::from_timestamp(secs, nanos) {
                let mut out = b"x".to_vec();
                write_utc(&t, &mut out);
                let want = format!("x{}", format_utc(&t));
                prop_assert_eq!(String::from_utf8(out).unwrap(), want);
            }
        }
    }
}
