//! An import format as the node runs it and the CLI offers it: its name
//! (`mds import <name>`), its arguments ([`Arg`]), and how the files they
//! name are read into what the node writes ([`Input`]). Parse only: no
//! store, no clock (the node gives `today`).
//!
//! Each format is one [`Format`] value beside its parser
//! ([`crate::companies::FORMAT`], [`crate::news::FORMAT`],
//! [`crate::exchange::FORMAT`], [`crate::changes::FORMAT`],
//! [`crate::actions::NSE_FORMAT`], [`crate::actions::BSE_FORMAT`],
//! [`crate::bhavcopy::FORMAT`]), and
//! `mds_node::import::FORMATS` lists them: the one registration, from which
//! the CLI makes its `mds import` subcommands and the node runs an import
//! (`mds_node::import::run`). A new format of a kind of data the node
//! already writes is its parser, its `Format` and one line there; a new
//! kind of data is also a variant of [`Input`] and its write in the node
//! (ARCHITECTURE.md, "How to add an import format").

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::{BufRead, Read as _};
use std::path::PathBuf;

use chrono::NaiveDate;
use mds_domain::snapshot::{NameChange, SymbolChange};

use crate::actions::batch::ReadFiles;
use crate::bhavcopy::DayFiles;
use crate::error::ImportError;
use crate::exchange::ExchangeSnapshots;

/// A file to import: a path, or bytes the binary carries (the demo's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A file on disk, as named on the command line.
    Path(PathBuf),
    /// Bytes embedded in the binary, under a file name (which may carry a
    /// day, as a path's does).
    Embedded {
        /// Its file name.
        name: &'static str,
        /// Its bytes.
        bytes: &'static [u8],
    },
}

impl Source {
    /// How it is named in messages: the path as given, or the file name.
    pub fn name(&self) -> String {
        match self {
            Source::Path(p) => p.display().to_string(),
            Source::Embedded { name, .. } => (*name).to_owned(),
        }
    }

    /// Its file name (the last part of a path), where a day may be
    /// written.
    pub fn file_name(&self) -> Option<&str> {
        match self {
            Source::Path(p) => p.file_name().and_then(|n| n.to_str()),
            Source::Embedded { name, .. } => Some(name),
        }
    }

    /// Its bytes; a file that cannot be read is refused.
    pub fn bytes(&self) -> Result<Cow<'static, [u8]>, Refusal> {
        match self {
            Source::Path(p) => std::fs::read(p)
                .map(Cow::Owned)
                .map_err(|e| Refusal::message(format!("cannot read {}: {e}", p.display()))),
            Source::Embedded { bytes, .. } => Ok(Cow::Borrowed(bytes)),
        }
    }

    /// Its bytes, decompressed when its name ends in `.zst`.
    pub fn decompressed(&self) -> Result<Vec<u8>, Refusal> {
        let bytes = self.bytes()?;
        if !self.name().ends_with(".zst") {
            return Ok(bytes.into_owned());
        }
        let mut out = Vec::new();
        zstd::Decoder::new(&*bytes)
            .and_then(|mut d| d.read_to_end(&mut out))
            .map_err(|e| Refusal::message(format!("{}: not a zstd file ({e})", self.name())))?;
        Ok(out)
    }

    /// Its bytes read a buffer at a time (a file is never all in memory).
    pub fn reader(&self) -> Result<Box<dyn BufRead + Send>, Refusal> {
        match self {
            Source::Path(p) => std::fs::File::open(p)
                .map(|f| Box::new(std::io::BufReader::new(f)) as Box<dyn BufRead + Send>)
                .map_err(|e| Refusal::message(format!("cannot read {}: {e}", p.display()))),
            Source::Embedded { bytes, .. } => Ok(Box::new(*bytes)),
        }
    }

    /// Parses (or checks) its bytes with `parser`; a refusal names it.
    pub fn parse<T>(&self, parser: impl Fn(&[u8]) -> Result<T, ImportError>) -> Result<T, Refusal> {
        parser(&self.bytes()?).map_err(|e| Refusal::of(self, e))
    }
}

/// What an argument takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    /// One file, positional, required.
    File,
    /// One or more files, positional.
    Files,
    /// `--name FILE`; `required` or not.
    FileOption {
        /// Whether it must be given.
        required: bool,
    },
    /// `--name YYYY-MM-DD`, optional.
    Day,
    /// `--name`, on when given.
    Switch,
}

/// One argument of a format: its name (`--name` for an option, the value's
/// name for a positional one), what it takes and its help line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arg {
    /// Its name, in kebab case (`as-of`).
    pub name: &'static str,
    /// What it takes.
    pub kind: ArgKind,
    /// One line of help.
    pub help: &'static str,
}

/// The argument of a format that reads one file: `FILE`, positional.
pub const ONE_FILE: &[Arg] = &[Arg { name: "file", kind: ArgKind::File, help: "The file." }];

/// The values given for a format's arguments, by argument name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Given {
    files: BTreeMap<&'static str, Vec<Source>>,
    days: BTreeMap<&'static str, NaiveDate>,
    switches: Vec<&'static str>,
}

impl Given {
    /// Adds `source` to the files of `name`.
    pub fn file(mut self, name: &'static str, source: Source) -> Self {
        self.files.entry(name).or_default().push(source);
        self
    }

    /// Sets the day of `name`.
    pub fn day(mut self, name: &'static str, day: NaiveDate) -> Self {
        self.days.insert(name, day);
        self
    }

    /// Turns the switch `name` on.
    pub fn switch(mut self, name: &'static str) -> Self {
        self.switches.push(name);
        self
    }

    /// The file of `name`, if given (the first, for a list).
    pub fn one(&self, name: &str) -> Option<&Source> {
        self.files.get(name).and_then(|f| f.first())
    }

    /// The files of `name`, in the order given.
    pub fn many(&self, name: &str) -> &[Source] {
        self.files.get(name).map(Vec::as_slice).unwrap_or_default()
    }

    /// The one file of a format whose arguments are [`ONE_FILE`].
    pub fn the_file(&self) -> Result<Source, Refusal> {
        self.required(ONE_FILE[0].name).cloned()
    }

    /// The file of `name`, required: refused when not given.
    pub fn required(&self, name: &str) -> Result<&Source, Refusal> {
        self.one(name).ok_or_else(|| Refusal::message(format!("--{name} is required")))
    }

    /// The day of `name`, if given.
    pub fn day_of(&self, name: &str) -> Option<NaiveDate> {
        self.days.get(name).copied()
    }

    /// Whether the switch `name` is on.
    pub fn is_on(&self, name: &str) -> bool {
        self.switches.contains(&name)
    }
}

/// Why an import was refused before anything was written: a file's
/// problems, each with its line, or a sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The file refused, as named, when one was.
    pub file: Option<String>,
    /// What is wrong with it.
    pub error: ImportError,
}

impl Refusal {
    /// `file`'s problems.
    pub fn of(file: &Source, error: ImportError) -> Self {
        Refusal { file: Some(file.name()), error }
    }

    /// A refusal that is one sentence.
    pub fn message(message: impl Into<String>) -> Self {
        Refusal { file: None, error: ImportError::File(message.into()) }
    }

    /// Every line-level problem as `file:line: message`, for stderr.
    pub fn row_lines(&self) -> Vec<String> {
        let file = self.file.as_deref().unwrap_or_default();
        self.error.rows().iter().map(|r| format!("{file}:{}: {}", r.line, r.message)).collect()
    }
}

impl std::fmt::Display for Refusal {
    /// One line: the file and the summary of its problems.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.file {
            Some(file) => write!(f, "{file}: {}", self.error.summary()),
            None => write!(f, "{}", self.error.summary()),
        }
    }
}

impl std::error::Error for Refusal {}

/// What a format's files become: the input of one of the node's writes,
/// one variant per kind of data.
pub enum Input {
    /// A companies file, checked whole (every row good), upserted by ISIN
    /// a chunk at a time (`companies_in_chunks`).
    Companies {
        /// The file.
        file: Source,
        /// Its bytes.
        bytes: Cow<'static, [u8]>,
    },
    /// A news file, read a chunk at a time as it is upserted (a bad line
    /// found half-way refuses it whole).
    Articles {
        /// The file.
        file: Source,
        /// Its bytes, a buffer at a time.
        reader: Box<dyn BufRead + Send>,
    },
    /// The exchanges' lists as snapshots of a day.
    Snapshots {
        /// The snapshots and the companies merged of them.
        snapshots: ExchangeSnapshots,
        /// The lists' files, as named.
        files: Vec<String>,
    },
    /// NSE's change-file rows.
    Changes {
        /// Symbol changes.
        symbols: Vec<SymbolChange>,
        /// Name changes.
        names: Vec<NameChange>,
    },
    /// An exchange's corporate-action files, read; the node resolves them
    /// through the identity history it holds.
    Actions {
        /// The rows read.
        files: ReadFiles,
        /// How many files.
        count: usize,
        /// Whether the rows resolved to no ISIN are listed.
        list_unresolved: bool,
    },
    /// NSE's daily price files, read a file at a time as the node writes
    /// their days; the node resolves symbol-keyed rows through the
    /// identity history it holds.
    Prices {
        /// The files.
        files: DayFiles,
        /// Whether every unresolved row, disagreement and skipped series is
        /// listed.
        verbose: bool,
    },
}

/// What a format read: the input and the notes on it (stderr).
pub struct Read {
    /// What the node writes.
    pub input: Input,
    /// Notes on what was read (rows skipped, a day assumed).
    pub notes: Vec<String>,
}

impl From<Input> for Read {
    fn from(input: Input) -> Self {
        Read { input, notes: Vec::new() }
    }
}

/// One import format (`mds import <name>`).
#[derive(Debug, Clone, Copy)]
pub struct Format {
    /// Its name on the command line.
    pub name: &'static str,
    /// One line of help.
    pub about: &'static str,
    /// Its arguments.
    pub args: &'static [Arg],
    /// Reads the files given into what the node writes (`today` for a
    /// list of no other day); every problem found, nothing half-read.
    pub read: fn(&Given, NaiveDate) -> Result<Read, Refusal>,
}

/// A day written in a file's name (DDMMYYYY or YYYY-MM-DD), as NSE and its
/// mirrors name their files.
pub fn day_in_name(file: &Source) -> Option<NaiveDate> {
    file.file_name().and_then(crate::exchange::mcap_day_from_file_name)
}

/// What an exchange list's file name says of its day (contract section
/// 10.3): a full day, only part of one (`2024-01`), or nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameDay {
    /// A full day, written `YYYY-MM-DD`, `DD-MM-YYYY`, `DDMMYYYY` or
    /// `YYYYMMDD`.
    Full(NaiveDate),
    /// Only a month (`YYYY-MM`, `MM-YYYY`, `YYYYMM`, `MMYYYY`), as written;
    /// or several different full days (a range), as written.
    Partial(String),
    /// No day at all.
    None,
}

/// What `name` (a file name) says of the day of the list it holds: every
/// run of digits and hyphens is read, a full day first; a name with two
/// different full days (a range), or a year and month with no valid day
/// (`2024-02-30`), is [`NameDay::Partial`] too, for the caller cannot tell
/// which day is meant.
pub fn list_day_in_name(name: &str) -> NameDay {
    let year = |s: &str| s.len() == 4 && s.parse::<i32>().is_ok_and(|y| (1990..=2100).contains(&y));
    let month = |s: &str| s.len() == 2 && s.parse::<u32>().is_ok_and(|m| (1..=12).contains(&m));
    let ymd = |y: &str, m: &str, d: &str| -> Option<NaiveDate> {
        if !(year(y) && month(m) && d.len() == 2) {
            return None;
        }
        NaiveDate::from_ymd_opt(y.parse().ok()?, m.parse().ok()?, d.parse().ok()?)
    };
    let mut full: Vec<(NaiveDate, &str)> = Vec::new();
    let mut partial: Option<&str> = None;
    let tokens =
        name.split(|c: char| !(c.is_ascii_digit() || c == '-')).filter(|t| t.bytes().any(|b| b.is_ascii_digit()));
    for token in tokens {
        let token = token.trim_matches('-');
        let groups: Vec<&str> = token.split('-').collect();
        let mut found = false;
        for i in 0..groups.len() {
            let g = &groups[i..];
            let day = match g {
                [y, m, d, ..] if y.len() == 4 => ymd(y, m, d),
                [d, m, y, ..] if y.len() == 4 => ymd(y, m, d),
                [one, ..] if one.len() == 8 => {
                    ymd(&one[..4], &one[4..6], &one[6..]).or_else(|| ymd(&one[4..], &one[2..4], &one[..2]))
                }
                _ => None,
            };
            if let Some(d) = day {
                full.push((d, token));
                found = true;
                break;
            }
        }
        if found || partial.is_some() {
            continue;
        }
        let six = |one: &str| {
            one.len() == 6 && ((year(&one[..4]) && month(&one[4..])) || (month(&one[..2]) && year(&one[2..])))
        };
        let is_month = groups.windows(2).any(|w| (year(w[0]) && month(w[1])) || (month(w[0]) && year(w[1])))
            || groups.iter().any(|g| six(g));
        if is_month {
            partial = Some(token);
        }
    }
    match full.as_slice() {
        [] => partial.map_or(NameDay::None, |p| NameDay::Partial(p.to_owned())),
        [(d, _), rest @ ..] if rest.iter().all(|(e, _)| e == d) => NameDay::Full(*d),
        several => NameDay::Partial(several.iter().map(|(_, t)| *t).collect::<Vec<_>>().join(", ")),
    }
}
