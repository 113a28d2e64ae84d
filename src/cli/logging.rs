//! The process's log: `MDS_LOG` filters it, `--log-format` (env
//! `MDS_LOG_FORMAT`) makes its lines text or JSON, and it is written to
//! stderr by a buffered writer on its own thread, fed by a bounded channel
//! of formatted lines ([`Writer`]).
//!
//! A request never waits for the log: when the channel is full (stderr
//! slower than the traffic), an access-log line (target `mds::access`) is
//! dropped and counted in `mds_log_lines_dropped_total`; any other line
//! (startup, errors, rare by nature) waits for room, so none is lost.

use std::io::{self, BufWriter, Write};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError, TrySendError};
use std::time::Duration;

use tracing::Metadata;
use tracing_subscriber::fmt::MakeWriter;

use super::{Cli, Command};

/// The target of the access log's lines (`mds_http`'s access log): the
/// only lines the writer may drop.
const ACCESS: &str = "mds::access";

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
/// dropping it when `lossy` and the channel is full.
struct Line {
    tx: SyncSender<Msg>,
    lossy: bool,
}

impl Write for Line {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let msg = Msg::Line(buf.to_vec());
        if self.lossy {
            match self.tx.try_send(msg) {
                Ok(()) | Err(TrySendError::Disconnected(_)) => {}
                Err(TrySendError::Full(_)) => mds_node::metrics::log_line_dropped(),
            }
        } else {
            let _ = self.tx.send(msg);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Writer {
    type Writer = Line;

    fn make_writer(&'a self) -> Line {
        Line { tx: self.tx.clone(), lossy: false }
    }

    fn make_writer_for(&'a self, meta: &Metadata<'_>) -> Line {
        Line { tx: self.tx.clone(), lossy: meta.target() == ACCESS }
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
    let filter = tracing_subscriber::EnvFilter::try_from_env("MDS_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let (tx, rx) = mpsc::sync_channel(lines);
    let spawned = std::thread::Builder::new().name("mds-log".into()).spawn(move || write_out(rx));
    if let Err(e) = spawned {
        eprintln!("warning: cannot start the log writer thread: {e}");
    }
    let writer = Writer { tx: tx.clone() };
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(writer);
    match format {
        LogFormat::Text => {
            builder.with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())).with_target(false).init()
        }
        LogFormat::Json => {
            builder.json().flatten_event(true).with_current_span(false).with_span_list(false).with_target(true).init()
        }
    }
    Guard { tx }
}
