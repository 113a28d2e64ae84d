//! [`Spill`]: an append-only local file of the counts a node has not yet
//! flushed, so that a node killed (SIGKILL) and restarted on the same spill
//! directory loses no count.
//!
//! Every settled request (counted or a `304`) is appended as one line, with
//! one `write` under the key's lock, before its response leaves: the line
//! is in the kernel's page cache, which outlives the process, so a SIGKILL
//! loses nothing. A background task ([`Spill::sync`], every
//! [`SYNC_INTERVAL`]) fsyncs what was appended, so a machine crash loses at
//! most that interval. No store write is on the request path.
//!
//! When the meter cuts a batch (under the spill's write lock, so no request
//! is between its pending entry and its line), the file is rewritten to the
//! node's id and that batch's deltas (`b` lines), through a temporary file
//! renamed over it; once the store has the batch, a `done` line follows.
//! On start, [`recover`] reads the file: a batch not marked done is given
//! back under its own id (the store's `apply_usage` dedups a batch it has),
//! the lines appended after it under `<node id>:spill`, a fixed id, so a
//! recovery that is itself interrupted and run again counts nothing twice.
//! A torn last line (killed mid-write) is ignored with a log line.
//!
//! One node per directory: [`lock`] takes an exclusive lock (`flock`) on
//! `DIR/lock` before the spill is read, held for the node's life (the
//! kernel lets it go when the process dies, however it dies), so a second
//! node started on the same directory refuses to start rather than read
//! and rewrite the first one's file.
//!
//! Lines, tab-separated: `node ID`, `mirror ID` (with `--redis`: the id of
//! the node's usage mirror, [`crate::mirror`]), `+ KEY DAY ROUTE REQUESTS
//! NOT_MODIFIED`, `b BATCH KEY DAY ROUTE REQUESTS NOT_MODIFIED`, `done BATCH`.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use chrono::NaiveDate;
use mds_domain::KeyPrefix;
use mds_store::{UsageBatch, UsageDelta};

/// How often appended counts are fsynced: what a machine crash can lose.
pub const SYNC_INTERVAL: Duration = Duration::from_millis(50);

/// The spill file's name in its directory.
const FILE: &str = "usage.spill";

/// The lock file's name in the spill directory.
const LOCK: &str = "lock";

/// The exclusive lock on a spill directory ([`lock`]), held while it lives.
#[derive(Debug)]
pub struct SpillLock {
    _file: File,
}

/// Takes the exclusive lock of the spill directory `dir` (made if
/// missing), without waiting: an error of kind `WouldBlock`, saying so,
/// when another process holds it.
pub fn lock(dir: &Path) -> io::Result<SpillLock> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(LOCK);
    let file = OpenOptions::new().create(true).truncate(false).write(true).open(&path)?;
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(SpillLock { _file: file }),
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => Err(io::Error::new(
            io::ErrorKind::WouldBlock,
            format!("another process holds {} (one node per spill directory)", path.display()),
        )),
        Err(e) => Err(e.into()),
    }
}

/// The spill file of one node.
#[derive(Debug)]
pub struct Spill {
    dir: PathBuf,
    node: String,
    /// Read (shared) to append a request's line, written to cut a batch.
    file: RwLock<File>,
    /// Whether lines were appended since the last fsync.
    dirty: AtomicBool,
    /// The id of the node's usage mirror, once it mirrors.
    mirror: Mutex<Option<String>>,
    /// The directory's lock, held while the spill lives.
    _lock: SpillLock,
}

/// One delta as a line's fields.
fn fields(key: &KeyPrefix, day: NaiveDate, route: &str, requests: u64, not_modified: u64) -> String {
    format!("{key}\t{day}\t{route}\t{requests}\t{not_modified}")
}

impl Spill {
    /// Starts an empty spill in `dir` for the node `node`, holding the
    /// directory's `lock`, replacing what the file held: take the lock and
    /// [`recover`] first.
    pub fn create(dir: &Path, node: &str, lock: SpillLock) -> io::Result<Self> {
        let spill = Spill {
            dir: dir.to_owned(),
            node: node.to_owned(),
            file: RwLock::new(Self::rewrite(dir, node, None, &[])?),
            dirty: AtomicBool::new(false),
            mirror: Mutex::new(None),
            _lock: lock,
        };
        Ok(spill)
    }

    /// Records the id of the node's usage mirror (and rewrites the file to
    /// say it; call it before any request is spilled, or after a cut).
    pub fn set_mirror(&self, id: &str) -> io::Result<()> {
        let mut file = self.exclusive();
        *self.mirror.lock().unwrap_or_else(PoisonError::into_inner) = Some(id.to_owned());
        *file = Self::rewrite(&self.dir, &self.node, Some(id), &[])?;
        Ok(())
    }

    /// Writes the file anew (the node's id, its mirror's, and `batches`'
    /// deltas), fsynced, and opens it for appending.
    fn rewrite(dir: &Path, node: &str, mirror: Option<&str>, batches: &[&UsageBatch]) -> io::Result<File> {
        let tmp = dir.join(format!("{FILE}.tmp"));
        let mut text = format!("node\t{node}\n");
        if let Some(m) = mirror {
            text += &format!("mirror\t{m}\n");
        }
        for b in batches {
            for d in &b.deltas {
                text += &format!("b\t{}\t{}\n", b.id, fields(&d.key, d.day, &d.route, d.requests, d.not_modified));
            }
        }
        let mut f = File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_data()?;
        drop(f);
        std::fs::rename(&tmp, dir.join(FILE))?;
        File::open(dir)?.sync_all()?;
        OpenOptions::new().append(true).open(dir.join(FILE))
    }

    /// Held while a request's count goes into its key's pending entry and
    /// its line into the file, so a cut never falls between the two.
    pub(crate) fn share(&self) -> RwLockReadGuard<'_, File> {
        self.file.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Held while a batch is cut (no request is then being spilled).
    pub(crate) fn exclusive(&self) -> RwLockWriteGuard<'_, File> {
        self.file.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends one line to `file` (a guard of [`Spill::share`] or
    /// [`Spill::exclusive`]); a failure is logged, the count still goes to
    /// the store with the next flush.
    fn append(&self, mut file: &File, line: &str) {
        if let Err(e) = file.write_all(line.as_bytes()) {
            tracing::error!(error = %e, "cannot append to the usage spill; a crash now loses these counts");
        }
        self.dirty.store(true, Ordering::Release);
    }

    /// Appends a settled request of `key` (under [`Spill::share`]).
    pub(crate) fn request(&self, file: &File, key: &KeyPrefix, day: NaiveDate, route: &str, not_modified: bool) {
        let (r, n) = if not_modified { (0, 1) } else { (1, 0) };
        self.entry(file, key, day, route, r, n);
    }

    /// Appends counts of `key` not in a batch yet.
    pub(crate) fn entry(&self, file: &File, key: &KeyPrefix, day: NaiveDate, route: &str, r: u64, n: u64) {
        self.append(file, &format!("+\t{}\n", fields(key, day, route, r, n)));
    }

    /// Notes a new mirror id (under [`Spill::exclusive`]; the next cut
    /// writes it).
    pub(crate) fn note_mirror(&self, id: &str) {
        *self.mirror.lock().unwrap_or_else(PoisonError::into_inner) = Some(id.to_owned());
    }

    /// The mirror's id, once set.
    fn mirror(&self) -> Option<String> {
        self.mirror.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Rewrites the file to hold `batches` alone (under
    /// [`Spill::exclusive`]): every request spilled so far is in them.
    pub(crate) fn cut(&self, file: &mut File, batches: &[&UsageBatch]) {
        match Self::rewrite(&self.dir, &self.node, self.mirror().as_deref(), batches) {
            Ok(f) => *file = f,
            Err(e) => {
                tracing::error!(error = %e, "cannot rewrite the usage spill; a crash now may count twice what it held")
            }
        }
    }

    /// Records that the store has batch `id`.
    pub(crate) fn done(&self, id: &str) {
        self.append(&self.share(), &format!("done\t{id}\n"));
    }

    /// Empties the file (to the node's id) when `drained` says, under the
    /// write lock, that the store has every count (no request is then
    /// being spilled).
    pub(crate) fn clear_if(&self, drained: impl FnOnce() -> bool) {
        let mut file = self.exclusive();
        if drained() {
            match Self::rewrite(&self.dir, &self.node, self.mirror().as_deref(), &[]) {
                Ok(f) => *file = f,
                Err(e) => tracing::error!(error = %e, "cannot empty the usage spill"),
            }
        }
    }

    /// Fsyncs what was appended since the last call.
    pub fn sync(&self) -> io::Result<()> {
        if self.dirty.swap(false, Ordering::AcqRel) {
            // On its own descriptor: no cut waits for the fsync, and so no
            // request waits behind such a cut.
            let file = self.share().try_clone()?;
            file.sync_data()?;
        }
        Ok(())
    }
}

/// A key, day and route, as a spill line names them.
type Entry = (String, NaiveDate, String);
/// Counted requests and `304`s.
type Counts = (u64, u64);
/// A batch's deltas, as read from a spill.
type Deltas = BTreeMap<Entry, Counts>;

/// What a spill left by an earlier run holds that the store may lack, as
/// batches to give the store (`apply_usage` dedups those it has). Nothing
/// when there is no spill file.
pub fn recover(dir: &Path) -> io::Result<Vec<UsageBatch>> {
    Ok(recover_all(dir)?.batches)
}

/// What [`recover_all`] reads of a spill.
#[derive(Debug, Default)]
pub struct Recovered {
    /// Batches the store may lack: those cut and not marked done, under
    /// their ids, then what was appended after the last cut under
    /// `<node>:spill` (the tail, last).
    pub batches: Vec<UsageBatch>,
    /// The id of the node's usage mirror, when it mirrored.
    pub mirror: Option<String>,
    /// The sequence number of the last batch cut (done or not).
    pub last_cut: Option<u64>,
}

/// The sequence number of a batch id `<node>:<seq>`.
pub fn seq_of(id: &str) -> Option<u64> {
    id.rsplit_once(':')?.1.parse().ok()
}

/// [`recover`], with the spill's mirror id and its last cut.
pub fn recover_all(dir: &Path) -> io::Result<Recovered> {
    let text = match std::fs::read(dir.join(FILE)) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Recovered::default()),
        Err(e) => return Err(e),
    };
    let text = String::from_utf8_lossy(&text);
    let complete = match text.rfind('\n') {
        Some(end) => &text[..=end],
        None => "",
    };
    if complete.len() < text.len() {
        tracing::warn!(bytes = text.len() - complete.len(), "usage spill ends with a torn line; ignored");
    }
    let mut node = None;
    let mut mirror = None;
    let mut last_cut: Option<u64> = None;
    let mut batches: Vec<(String, Deltas)> = Vec::new();
    let mut tail = Deltas::new();
    for (n, line) in complete.lines().enumerate() {
        let f: Vec<&str> = line.split('\t').collect();
        let delta = |f: &[&str]| -> Option<(Entry, Counts)> {
            let [key, day, route, r, m] = f else { return None };
            KeyPrefix::parse(key).ok()?;
            Some(((key.to_string(), day.parse().ok()?, route.to_string()), (r.parse().ok()?, m.parse().ok()?)))
        };
        let add = |to: &mut Deltas, (k, (r, m)): (Entry, Counts)| {
            let e = to.entry(k).or_default();
            e.0 += r;
            e.1 += m;
        };
        let ok = match f.as_slice() {
            ["node", id] => node.replace(id.to_string()).is_none(),
            ["mirror", id] => {
                mirror = Some(id.to_string());
                true
            }
            ["+", rest @ ..] => delta(rest).map(|d| add(&mut tail, d)).is_some(),
            ["b", id, rest @ ..] => match delta(rest) {
                Some(d) => {
                    last_cut = last_cut.max(seq_of(id));
                    let i = batches.iter().position(|(b, _)| b == id).unwrap_or_else(|| {
                        batches.push((id.to_string(), Deltas::new()));
                        batches.len() - 1
                    });
                    add(&mut batches[i].1, d);
                    true
                }
                None => false,
            },
            ["done", id] => {
                batches.retain(|(b, _)| b != id);
                true
            }
            _ => false,
        };
        if !ok {
            tracing::warn!(line = n + 1, "usage spill line not understood; ignored");
        }
    }
    if !tail.is_empty() {
        let Some(node) = &node else {
            tracing::warn!("usage spill without its node id; its counts are not recovered");
            return Ok(Recovered::default());
        };
        batches.push((format!("{node}:spill"), tail));
    }
    let batches = batches
        .into_iter()
        .map(|(id, deltas)| UsageBatch {
            id,
            deltas: deltas
                .into_iter()
                .map(|((key, day, route), (requests, not_modified))| UsageDelta {
                    key: KeyPrefix::parse(&key).expect("checked when read"),
                    day,
                    route: Cow::Owned(route),
                    requests,
                    not_modified,
                })
                .collect(),
        })
        .collect();
    Ok(Recovered { batches, mirror, last_cut })
}
