//! The process's log: `MDS_LOG` filters it, `--log-format` (env
//! `MDS_LOG_FORMAT`) makes its lines text or JSON, and it is written to
//! stderr by a buffered writer on its own thread, fed by a bounded channel
//! of formatted lines ([`Writer`]).
//!
//! The access log's lines (target `mds::access`, one a request) do not go
//! through `tracing`: [`access`] formats them in the same format and hands
//! them to the same channel, and `MDS_LOG` decides at start-up whether
//! they are written, and at which level ([`install_access`]).
//!
//! A request never waits for the log: when the channel is full (stderr
//! slower than the traffic), an access-log line is dropped and counted in
//! `mds_log_lines_dropped_total`; any other line (startup, errors, rare by
//! nature) waits for room, so none is lost.

mod access;

use std::io::{self, BufWriter, Write};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError};
use std::time::Duration;

use mds_node::access_log::{self, Level, TARGET};
use tracing::Dispatch;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::util::SubscriberInitExt;

use self::access::{AccessLines, Style};
use super::{Cli, Command};

/// Lines the channel holds for the commands that do not serve.
const DEFAULT_BUFFER_LINES: usize = 8192;

/// How long the writer sleeps after a pass that wrote lines, gathering
/// the next ones: at most this much later than its event, a line is
/// written.
const BATCH: Duration = Duration::from_millis(5);

/// How long the end of the process waits for the writer to write what it
/// was given.
const FLUSH_WAIT: Duration = Duration::from_secs(2);

/// The format of log lines.
#[derive(Debug, Clone, Copy, Default, clap::ValueEnum)]
pub(crate) enum LogFormat {
    /// One human-readable line per event.
    #[default]
    Text,
    /// One JSON object per line: `timestamp`, `level`, `target`, `message`
    /// and the event's fields (a request's method, path, status, ...).
    Json,
}

/// What the writer thread is sent.
enum Msg {
    /// A formatted line (or lines) to write.
    Line(Vec<u8>),
    /// Write out everything sent before, then answer.
    Flush(SyncSender<()>),
}

/// Makes the per-event writers of the log; all feed one writer thread.
#[derive(Clone)]
struct Writer {
    tx: SyncSender<Msg>,
}

/// One event's writer: sends what it is given to the writer thread,
/// waiting for room (the access lines, which may be dropped, do not come
/// this way: [`AccessLines`]).
struct Line {
    tx: SyncSender<Msg>,
}

impl Write for Line {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let _ = self.tx.send(Msg::Line(buf.to_vec()));
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Writer {
    type Writer = Line;

    fn make_writer(&'a self) -> Line {
        Line { tx: self.tx.clone() }
    }
}

/// Keeps the log until the end of `main`: dropped, it waits (a little)
/// for the writer to write out every line it was given.
pub(crate) struct Guard {
    tx: SyncSender<Msg>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        let (ack, done) = mpsc::sync_channel(1);
        if self.tx.send(Msg::Flush(ack)).is_ok() {
            let _ = done.recv_timeout(FLUSH_WAIT);
        }
    }
}

/// Writes the lines it receives to stderr through a buffer, in batches.
///
/// While lines come, it writes what the channel holds, then sleeps for
/// [`BATCH`]: requests hand it their lines without waking it, and one
/// `write` carries the lines of many requests. When a pass finds nothing,
/// it blocks until the next line (whose sender wakes it), so a quiet log
/// is written at once and an idle node does not poll.
fn write_out(rx: Receiver<Msg>) {
    let mut out = BufWriter::with_capacity(64 * 1024, io::stderr());
    let write = |msg: Msg, out: &mut BufWriter<io::Stderr>| match msg {
        Msg::Line(line) => {
            let _ = out.write_all(&line);
        }
        Msg::Flush(ack) => {
            let _ = out.flush();
            let _ = ack.send(());
        }
    };
    loop {
        let mut wrote = false;
        loop {
            match rx.try_recv() {
                Ok(msg) => {
                    write(msg, &mut out);
                    wrote = true;
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    let _ = out.flush();
                    return;
                }
            }
        }
        let _ = out.flush();
        if wrote {
            std::thread::sleep(BATCH);
        } else {
            match rx.recv() {
                Ok(msg) => write(msg, &mut out),
                Err(_) => return,
            }
        }
    }
}

/// Starts the log: filtered by `MDS_LOG` (by default `info` for the
/// commands that serve and `warn` for the others, whose output is the
/// result), in the format `serve` or `demo` were given.
pub(crate) fn init(cli: &Cli) -> Guard {
    let (default, format, lines) = match &cli.command {
        Command::Serve(a) | Command::Demo(a) => ("info", a.log_format, a.log_buffer_lines),
        _ => ("warn", LogFormat::Text, DEFAULT_BUFFER_LINES),
    };
    let filter = EnvFilter::try_from_env("MDS_LOG").unwrap_or_else(|_| EnvFilter::new(default));
    let (tx, rx) = mpsc::sync_channel(lines);
    let spawned = std::thread::Builder::new().name("mds-log".into()).spawn(move || write_out(rx));
    if let Err(e) = spawned {
        eprintln!("warning: cannot start the log writer thread: {e}");
    }
    let style = match format {
        LogFormat::Text => Style::Text { ansi: std::io::IsTerminal::is_terminal(&std::io::stderr()) },
        LogFormat::Json => Style::Json,
    };
    subscriber(filter, Writer { tx: tx.clone() }, SystemTime, style).init();
    install_access(AccessLines { tx: tx.clone(), style });
    Guard { tx }
}

/// The log's `tracing` subscriber: `fmt` in `style`, its lines filtered by
/// `filter`, timed by `timer` and written to `writer` (also what the tests
/// of [`access`] hold its lines to).
fn subscriber<T, W>(filter: EnvFilter, writer: W, timer: T, style: Style) -> Dispatch
where
    T: FormatTime + Send + Sync + 'static,
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(writer).with_timer(timer);
    match style {
        Style::Text { ansi } => builder.with_ansi(ansi).with_target(false).finish().into(),
        Style::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .with_target(true)
            .finish()
            .into(),
    }
}

/// Installs `lines` as the access log's sink, with the lowest level the
/// filter (just installed) lets through for the access log's target:
/// asked once, here, so that a request's check is a load. (A filter on a
/// span or on field values, `MDS_LOG=[span]=debug`, does not apply to
/// the access log: its lines are not events.)
fn install_access(lines: AccessLines) {
    let lowest = if tracing::enabled!(target: TARGET, tracing::Level::DEBUG) {
        Some(Level::Debug)
    } else if tracing::enabled!(target: TARGET, tracing::Level::INFO) {
        Some(Level::Info)
    } else {
        None
    };
    access_log::install(Box::new(lines), lowest);
}
