//! The access log's way out: a request's line goes to the [`Sink`] the
//! binary installs at start-up ([`install`]), which formats it as the
//! process's other log lines are formatted and hands it to the log's
//! writer, without going through `tracing`'s event machinery (its field
//! visitors and per-event formatting cost a kept page several percent of
//! its throughput: BENCHMARKS.md, "The access line formatted by us").
//!
//! The line's content (its message and fields, in order) is the HTTP
//! layer's; how it is written (text or JSON, the timestamp, the level
//! word) is the sink's. Whether a line is written at all is decided once,
//! by the log's filter at start-up (`MDS_LOG` on [`TARGET`]): [`enabled`]
//! is a load. Without a sink (a library user, an in-process test) no line
//! is written.

use std::sync::OnceLock;

/// The access log's target, as `MDS_LOG` filters it
/// (`info,mds::access=off`).
pub const TARGET: &str = "mds::access";

/// The level of an access line: `info` for a request, `debug` for a
/// probe's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// A probe's request (a scrape every few seconds is not news).
    Debug,
    /// Any other request.
    Info,
}

/// A field's value.
#[derive(Debug, Clone, Copy)]
pub enum Value<'a> {
    /// A string, quoted in a text line (as `tracing` writes a `&str`).
    Str(&'a str),
    /// A string written as it is in a text line (as `tracing` writes a
    /// value given with `%`: a method, a path).
    Display(&'a str),
    /// A whole number.
    U64(u64),
}

/// One access line: its level, message and fields, in order.
#[derive(Debug, Clone, Copy)]
pub struct Line<'a> {
    /// Its level.
    pub level: Level,
    /// Its message (`request`, `admin request`).
    pub message: &'static str,
    /// Its fields, by name, in the order they are written.
    pub fields: &'a [(&'static str, Value<'a>)],
}

/// Where access lines go: the process's log.
pub trait Sink: Send + Sync {
    /// Writes `line`, or, when the log is behind, drops it and counts it
    /// in `mds_log_lines_dropped_total` ([`crate::metrics::log_line_dropped`]):
    /// a request never waits for its line.
    fn write(&self, line: &Line<'_>);
}

/// The installed sink and the lowest level the filter lets through.
struct Installed {
    sink: Box<dyn Sink>,
    lowest: Option<Level>,
}

static INSTALLED: OnceLock<Installed> = OnceLock::new();

/// Installs the process's sink, which gets the lines of `lowest` and
/// above (none when `None`: the filter turns the access log off). Once:
/// a second call changes nothing and returns `false`.
pub fn install(sink: Box<dyn Sink>, lowest: Option<Level>) -> bool {
    INSTALLED.set(Installed { sink, lowest }).is_ok()
}

/// Whether a line at `level` would be written.
pub fn enabled(level: Level) -> bool {
    INSTALLED.get().and_then(|i| i.lowest).is_some_and(|lowest| level >= lowest)
}

/// Writes `line` if its level is enabled.
pub fn write(line: &Line<'_>) {
    if let Some(i) = INSTALLED.get().filter(|i| i.lowest.is_some_and(|lowest| line.level >= lowest)) {
        i.sink.write(line);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::{Level, Line, Sink, Value, enabled, install, write};

    /// Keeps the messages of the lines it is given.
    struct Kept(Mutex<Vec<&'static str>>);

    impl Sink for &'static Kept {
        fn write(&self, line: &Line<'_>) {
            self.0.lock().unwrap().push(line.message);
        }
    }

    #[test]
    fn lines_below_the_lowest_level_are_not_written_and_the_sink_is_set_once() {
        assert!(!enabled(Level::Info), "no sink, no line");
        let kept: &'static Kept = Box::leak(Box::new(Kept(Mutex::new(Vec::new()))));
        assert!(install(Box::new(kept), Some(Level::Info)));
        assert!(!install(Box::new(kept), Some(Level::Debug)));
        assert!(enabled(Level::Info) && !enabled(Level::Debug));
        let fields = [("status", Value::U64(200))];
        write(&Line { level: Level::Debug, message: "probe", fields: &fields });
        write(&Line { level: Level::Info, message: "request", fields: &fields });
        assert_eq!(*kept.0.lock().unwrap(), ["request"]);
    }
}
