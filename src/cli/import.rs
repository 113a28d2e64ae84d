//! `mds import <format>`: a thin caller of the node's import operation
//! (`mds_node::import::run`). Its subcommands are made from the formats
//! registered in `mds_node::import::FORMATS`, each with the arguments its
//! `Format` declares; this file names no format. On a refusal, every bad
//! row is reported with its line (on stderr), then one line says why
//! nothing was imported; else the summary is printed (notes and warnings
//! on stderr, the report on stdout). `mds demo` runs its imports through
//! [`import_all`].

use std::path::PathBuf;
use std::sync::Arc;

use chrono::NaiveDate;
use clap::{ArgAction, ArgMatches, value_parser};
use mds_node::import::{ArgKind, FORMATS, Format, Given, ImportFailure, Source, Summary};
use mds_store::Store;

/// `mds import …`: one registered format and the files given for it.
#[derive(Debug)]
pub(crate) struct ImportCommand {
    /// A format of `mds_node::import::FORMATS`.
    format: &'static Format,
    /// Its arguments.
    given: Given,
}

impl clap::FromArgMatches for ImportCommand {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let (name, m) = matches.subcommand().ok_or_else(|| {
            clap::Error::raw(clap::error::ErrorKind::MissingSubcommand, "an import format is required")
        })?;
        let format = mds_node::import::format(name).ok_or_else(|| {
            clap::Error::raw(clap::error::ErrorKind::InvalidSubcommand, format!("no import format {name:?}"))
        })?;
        Ok(ImportCommand { format, given: given(format, m) })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Subcommand for ImportCommand {
    fn augment_subcommands(cmd: clap::Command) -> clap::Command {
        FORMATS.iter().fold(cmd, |cmd, f| cmd.subcommand(command(f)))
    }

    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_subcommands(cmd)
    }

    fn has_subcommand(name: &str) -> bool {
        mds_node::import::format(name).is_some()
    }
}

/// The subcommand of `format`: an argument per declared argument.
fn command(format: &Format) -> clap::Command {
    let args = format.args.iter().map(|a| {
        let arg = clap::Arg::new(a.name).help(a.help);
        match a.kind {
            ArgKind::File => arg.required(true).value_name("FILE").value_parser(value_parser!(PathBuf)),
            ArgKind::Files => arg.required(true).num_args(1..).value_name("FILES").value_parser(value_parser!(PathBuf)),
            ArgKind::FileOption { required } => {
                arg.long(a.name).required(required).value_name("FILE").value_parser(value_parser!(PathBuf))
            }
            ArgKind::Day => arg.long(a.name).value_name("YYYY-MM-DD").value_parser(parse_day),
            ArgKind::Switch => arg.long(a.name).action(ArgAction::SetTrue),
        }
    });
    clap::Command::new(format.name).about(format.about).args(args)
}

/// A `YYYY-MM-DD` argument.
fn parse_day(s: &str) -> Result<NaiveDate, String> {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").map_err(|_| format!("not a day such as 2024-01-30: {s:?}"))
}

/// What was given for `format`'s arguments.
fn given(format: &Format, m: &ArgMatches) -> Given {
    format.args.iter().fold(Given::default(), |g, a| match a.kind {
        ArgKind::File | ArgKind::Files | ArgKind::FileOption { .. } => {
            m.get_many::<PathBuf>(a.name).into_iter().flatten().fold(g, |g, p| g.file(a.name, Source::Path(p.clone())))
        }
        ArgKind::Day => match m.get_one::<NaiveDate>(a.name) {
            Some(d) => g.day(a.name, *d),
            None => g,
        },
        ArgKind::Switch if m.get_flag(a.name) => g.switch(a.name),
        ArgKind::Switch => g,
    })
}

/// Runs an import command.
pub(crate) async fn run(store: &Arc<dyn Store>, cmd: ImportCommand) -> anyhow::Result<()> {
    let ImportCommand { format, given } = cmd;
    let summary = mds_node::import::run(store, &mds_limits::SystemClock, format, &given).await.map_err(failure)?;
    for note in &summary.notes {
        eprintln!("note: {note}");
    }
    for line in &summary.lines {
        outln!("{line}")?;
    }
    warn(&summary);
    Ok(())
}

/// Prints the warnings of an import that succeeded (on stderr).
pub(super) fn warn(summary: &Summary) {
    for warning in &summary.warnings {
        eprintln!("warning: {warning}");
    }
}

/// Runs `imports` in order through the node (`mds demo`), the snapshots
/// made once after the last.
pub(super) async fn import_all(
    store: &Arc<dyn Store>,
    imports: &[(&'static Format, Given)],
) -> anyhow::Result<Vec<Summary>> {
    mds_node::import::run_all(store, &mds_limits::SystemClock, imports).await.map_err(failure)
}

/// The one-line error of a failed import; a refusal first prints every bad
/// row (on stderr).
fn failure(e: ImportFailure) -> anyhow::Error {
    match e {
        ImportFailure::Refused(r) => {
            for line in r.row_lines() {
                eprintln!("{line}");
            }
            anyhow::anyhow!("{r}; nothing was imported")
        }
        ImportFailure::Store(e) => anyhow::Error::new(e).context("nothing was imported"),
    }
}
