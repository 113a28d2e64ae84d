//! The access log's lines, formatted here straight into bytes and handed
//! to the log's writer ([`AccessLines`], the process's
//! [`mds_node::access_log::Sink`]), not through `tracing`: the field
//! visitor, the filter's per-event check, `fmt`'s timestamp and the
//! per-event writer were most of what the log cost a kept page
//! (BENCHMARKS.md, "The access line formatted by us").
//!
//! The lines read as tracing-subscriber's `fmt` layer writes the other
//! lines of the log (the tests below hold them to it, byte for byte):
//!
//! - text: `2026-11-29T07:16:54.994717Z  INFO request method=GET
//!   path=/v1/companies status=200 latency_us=429 request_id="01M8..."
//!   key_prefix="mds_live_abc"`: the timestamp (RFC 3339, UTC,
//!   microseconds), the level right-aligned in five columns, the message,
//!   then `name=value`, a string field quoted and escaped as Rust's
//!   `Debug` does, a `%` field (method, path) and a number as they are;
//!   with ANSI styles when stderr is a terminal, as `fmt` styles them;
//! - JSON: `{"timestamp":…,"level":"INFO","message":"request",` the
//!   fields in order, `"target":"mds::access"}`.

use std::io::Write;
use std::sync::mpsc::{SyncSender, TrySendError};
use std::time::{SystemTime, UNIX_EPOCH};

use mds_node::access_log::{Level, Line, Sink, TARGET, Value};

use super::Msg;

/// How the access lines are written: as the log's other lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Style {
    /// Human-readable, with ANSI styles or not.
    Text {
        /// Whether to style (stderr is a terminal).
        ansi: bool,
    },
    /// One JSON object per line.
    Json,
}

/// The process's access-line sink: formats each line and sends it to the
/// writer thread, dropping it (counted) when the channel is full.
pub(super) struct AccessLines {
    /// The writer thread's channel.
    pub(super) tx: SyncSender<Msg>,
    /// The log's format.
    pub(super) style: Style,
}

impl Sink for AccessLines {
    fn write(&self, line: &Line<'_>) {
        let mut out = Vec::with_capacity(256);
        format(&mut out, self.style, SystemTime::now(), line);
        match self.tx.try_send(Msg::Line(out)) {
            Ok(()) | Err(TrySendError::Disconnected(_)) => {}
            Err(TrySendError::Full(_)) => mds_node::metrics::log_line_dropped(),
        }
    }
}

/// ANSI styles, as tracing-subscriber (nu-ansi-term) writes them.
mod ansi {
    /// Dimmed (the timestamp, a field's `=`).
    pub(super) const DIMMED: &[u8] = b"\x1b[2m";
    /// Italic (a field's name).
    pub(super) const ITALIC: &[u8] = b"\x1b[3m";
    /// Back to plain.
    pub(super) const RESET: &[u8] = b"\x1b[0m";
    /// `INFO`'s colour: green.
    pub(super) const GREEN: &[u8] = b"\x1b[32m";
    /// `DEBUG`'s colour: blue.
    pub(super) const BLUE: &[u8] = b"\x1b[34m";
}

/// Appends `line`, logged at `now`, to `out` in `style`, with its newline.
pub(super) fn format(out: &mut Vec<u8>, style: Style, now: SystemTime, line: &Line<'_>) {
    match style {
        Style::Text { ansi } => text(out, ansi, now, line),
        Style::Json => json(out, now, line),
    }
}

/// The text line: as `fmt`'s default ("full") format without the target.
fn text(out: &mut Vec<u8>, ansi: bool, now: SystemTime, line: &Line<'_>) {
    let styled = |out: &mut Vec<u8>, style: &[u8], s: &[u8]| {
        if ansi {
            out.extend_from_slice(style);
            out.extend_from_slice(s);
            out.extend_from_slice(ansi::RESET);
        } else {
            out.extend_from_slice(s);
        }
    };
    if ansi {
        out.extend_from_slice(ansi::DIMMED);
    }
    timestamp(out, now);
    if ansi {
        out.extend_from_slice(ansi::RESET);
    }
    out.push(b' ');
    let (word, colour) = match line.level {
        Level::Info => (b" INFO", ansi::GREEN),
        Level::Debug => (b"DEBUG", ansi::BLUE),
    };
    styled(out, colour, word);
    out.push(b' ');
    out.extend_from_slice(line.message.as_bytes());
    for &(name, value) in line.fields {
        out.push(b' ');
        styled(out, ansi::ITALIC, name.as_bytes());
        styled(out, ansi::DIMMED, b"=");
        match value {
            Value::Str(s) => quoted(out, s),
            Value::Display(s) => out.extend_from_slice(s.as_bytes()),
            Value::U64(n) => out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
        }
    }
    out.push(b'\n');
}

/// `s` quoted as `{:?}` quotes a `&str` (what `fmt` writes for a string
/// field): at once when nothing in it needs escaping.
fn quoted(out: &mut Vec<u8>, s: &str) {
    if s.bytes().all(|b| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\') {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        let _ = write!(out, "{s:?}");
    }
}

/// The JSON line: as `fmt`'s JSON format with the event's fields at the
/// top level, then the target.
fn json(out: &mut Vec<u8>, now: SystemTime, line: &Line<'_>) {
    out.extend_from_slice(b"{\"timestamp\":\"");
    timestamp(out, now);
    out.extend_from_slice(b"\",\"level\":");
    out.extend_from_slice(match line.level {
        Level::Info => b"\"INFO\"",
        Level::Debug => b"\"DEBUG\"",
    });
    out.extend_from_slice(b",\"message\":");
    json_str(out, line.message);
    for &(name, value) in line.fields {
        out.push(b',');
        json_str(out, name);
        out.push(b':');
        match value {
            Value::Str(s) | Value::Display(s) => json_str(out, s),
            Value::U64(n) => out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
        }
    }
    out.extend_from_slice(b",\"target\":");
    json_str(out, TARGET);
    out.extend_from_slice(b"}\n");
}

/// `s` as a JSON string, escaped as serde_json escapes it (as `fmt`'s JSON
/// format does, through serde_json): at once when nothing in it needs
/// escaping (serde_json escapes only `"`, `\` and control characters).
fn json_str(out: &mut Vec<u8>, s: &str) {
    if s.bytes().all(|b| b >= b' ' && b != b'"' && b != b'\\') {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        let _ = serde_json::to_writer(out, s);
    }
}

/// `now` as tracing-subscriber's default timer writes it: RFC 3339 in UTC
/// with microseconds, `2026-11-29T07:16:54.994717Z`.
fn timestamp(out: &mut Vec<u8>, now: SystemTime) {
    let (secs, micros) = match now.duration_since(UNIX_EPOCH) {
        Ok(d) => (d.as_secs() as i64, d.subsec_micros()),
        // Before 1970: whole seconds down, microseconds up from there.
        Err(e) => {
            let d = e.duration();
            let (s, us) = (d.as_secs() as i64, d.subsec_micros());
            if us == 0 { (-s, 0) } else { (-s - 1, 1_000_000 - us) }
        }
    };
    let (days, second_of_day) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = civil(days);
    if !(0..=9999).contains(&year) {
        // Beyond four digits: as `fmt` writes such a year, the rest alike.
        let year = if year > 9999 { format!("+{year}") } else { format!("{year:05}") };
        let _ = write!(out, "{year}");
    } else {
        digits(out, year as u32, 4);
    }
    out.push(b'-');
    digits(out, month, 2);
    out.push(b'-');
    digits(out, day, 2);
    out.push(b'T');
    let s = second_of_day as u32;
    digits(out, s / 3600, 2);
    out.push(b':');
    digits(out, s / 60 % 60, 2);
    out.push(b':');
    digits(out, s % 60, 2);
    out.push(b'.');
    digits(out, micros, 6);
    out.push(b'Z');
}

/// `n`'s last `width` decimal digits, zero-padded.
fn digits(out: &mut Vec<u8>, mut n: u32, width: usize) {
    let mut buf = [b'0'; 6];
    for b in buf[..width].iter_mut().rev() {
        *b = b'0' + (n % 10) as u8;
        n /= 10;
    }
    out.extend_from_slice(&buf[..width]);
}

/// The proleptic Gregorian date (year, month, day) `days` after
/// 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::{Duration, UNIX_EPOCH};

    use mds_node::access_log::{Level, Line, Value};
    use tracing_subscriber::EnvFilter;
    use tracing_subscriber::fmt::format::Writer as FmtWriter;
    use tracing_subscriber::fmt::time::FormatTime;

    use super::super::{Msg, Writer};
    use super::{Style, format, timestamp};

    /// A timer stopped at [`AT`], as `fmt`'s default timer writes it.
    struct At;

    impl FormatTime for At {
        fn format_time(&self, w: &mut FmtWriter<'_>) -> std::fmt::Result {
            w.write_str("2025-11-29T07:16:54.994717Z")
        }
    }

    /// The instant of the lines compared.
    const AT: Duration = Duration::from_micros(1_764_400_614_994_717);

    /// What tracing-subscriber writes, configured as `logging::init`
    /// configures it, to the log's writer, for the access line of a keyed
    /// request as the HTTP layer wrote it before it had a sink of its own.
    fn by_tracing(style: Style, level: Level, path: &str, request_id: &str) -> String {
        let (tx, rx) = mpsc::sync_channel(16);
        let dispatch = super::super::subscriber(EnvFilter::new("debug"), Writer { tx }, At, style);
        let method = "GET";
        tracing::dispatcher::with_default(&dispatch, || {
            macro_rules! line {
                ($level:ident) => {
                    tracing::$level!(
                        target: "mds::access",
                        %method,
                        %path,
                        status = 200u16,
                        latency_us = 429u64,
                        request_id,
                        key_prefix = "mds_live_abcdefgh",
                        "request"
                    )
                };
            }
            match level {
                Level::Info => line!(info),
                Level::Debug => line!(debug),
            }
        });
        let lines: Vec<u8> = rx.try_iter().flat_map(|m| if let Msg::Line(l) = m { l } else { Vec::new() }).collect();
        String::from_utf8(lines).unwrap()
    }

    /// What we write for the same line.
    fn by_us(style: Style, level: Level, path: &str, request_id: &str) -> String {
        let fields = [
            ("method", Value::Display("GET")),
            ("path", Value::Display(path)),
            ("status", Value::U64(200)),
            ("latency_us", Value::U64(429)),
            ("request_id", Value::Str(request_id)),
            ("key_prefix", Value::Str("mds_live_abcdefgh")),
        ];
        let mut out = Vec::new();
        format(&mut out, style, UNIX_EPOCH + AT, &Line { level, message: "request", fields: &fields });
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn lines_are_as_tracing_writes_them_in_every_style_and_level() {
        let cases = [
            ("/v1/companies", "01M8K2KYJJNC1SYVYA8ZPHBAS2"),
            ("/v1/news/mds_live_[redacted]", "a \"quoted\" id\\with\ttabs"),
            ("/v1/companies/%C3%A9", "ünïcode\u{7f}\u{1b}[31m"),
            ("/v1/news/é", "ünïcode\u{7f}"),
        ];
        for style in [Style::Text { ansi: false }, Style::Text { ansi: true }, Style::Json] {
            for level in [Level::Info, Level::Debug] {
                for (path, id) in cases {
                    let ours = by_us(style, level, path, id);
                    assert_eq!(ours, by_tracing(style, level, path, id), "{style:?} {level:?}");
                    if style == Style::Json {
                        let v: serde_json::Value = serde_json::from_str(&ours).unwrap();
                        assert_eq!(v["request_id"], id);
                    }
                }
            }
        }
        assert_eq!(
            by_us(Style::Text { ansi: false }, Level::Info, "/v1/companies", "r1"),
            "2025-11-29T07:16:54.994717Z  INFO request method=GET path=/v1/companies status=200 latency_us=429 \
             request_id=\"r1\" key_prefix=\"mds_live_abcdefgh\"\n"
        );
    }

    #[test]
    fn timestamps_are_rfc_3339_utc_with_microseconds() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut instants = vec![0, 1, 951_782_400_000_001, 4_102_444_799_999_999, 253_402_300_799_999_999];
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            instants.push(x % 253_402_300_800_000_000);
        }
        for us in instants {
            let at = UNIX_EPOCH + Duration::from_micros(us);
            let mut out = Vec::new();
            timestamp(&mut out, at);
            let expected = chrono::DateTime::<chrono::Utc>::from(at).format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string();
            assert_eq!(String::from_utf8(out).unwrap(), expected, "{us} µs");
        }
        let mut before = Vec::new();
        timestamp(&mut before, UNIX_EPOCH - Duration::from_micros(1));
        assert_eq!(before, b"1969-12-31T23:59:59.999999Z");
    }
}
