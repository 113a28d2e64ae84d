//! `mds get changes`: the change feed walked to its end, for scripts that
//! keep a copy of the company master (a nightly sync). Companies go to
//! stdout; the new sync token to `--token-file` (replaced only once every
//! page was written) or to the last line of stderr. A token the service no
//! longer holds the history for exits with [`EXIT_TOKEN_EXPIRED`], so a
//! script can tell "sync from scratch" from any other failure.

use std::fmt;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, ValueEnum};
use mds_client::{Client, CompanyDetail, ErrorCode};

use super::render::{json_end, json_row};

/// The exit status of a run refused `410 sync_token_expired`.
pub(crate) const EXIT_TOKEN_EXPIRED: u8 = 3;

/// The page size used unless `--limit` says otherwise: the largest the API
/// allows, so a walk takes the fewest requests.
const DEFAULT_LIMIT: u16 = 200;

/// What `mds get changes --help` says after the options.
pub(crate) const AFTER_HELP: &str = "\
Companies go to stdout in change order (json: one array; jsonl: one company per line). The new sync token goes to \
--token-file, or, without it, to the last line of stderr as `sync_token: TOKEN`.

A nightly sync:

    mds get changes --token-file /var/lib/mds-sync/token --format jsonl > changes.jsonl

reads the token from the file (a missing or empty file means: every company) and replaces the file with the new \
token only after every page was written. A run that fails leaves the token as it was: run it again (the rows it \
repeats are upserts of the same records).

Exit status: 0 done; 3 the token is older than the history the service keeps (sync_token_expired): delete the token \
file (or drop --since) and run again to get every company, and replace your copy with them instead of merging; 1 any \
other error (one line on stderr).";

/// Options of `mds get changes`.
#[derive(Debug, Args)]
pub(crate) struct ChangesArgs {
    /// Only companies created or changed since this sync token (the one an earlier run printed).
    #[arg(long, conflicts_with = "token_file")]
    since: Option<String>,
    /// Read the token to start from in this file (missing or empty: every company), and replace it with the new
    /// token once every page was written.
    #[arg(long, value_name = "PATH")]
    token_file: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// Companies per request, 1-200.
    #[arg(long, default_value_t = DEFAULT_LIMIT)]
    limit: u16,
}

/// Output formats of `mds get changes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// A JSON array of companies (V1CompanyDetail).
    Json,
    /// One JSON company per line.
    Jsonl,
}

/// The service refused the token with `410 sync_token_expired`; the run
/// exits with [`EXIT_TOKEN_EXPIRED`].
#[derive(Debug)]
pub(crate) struct TokenExpired {
    error: mds_client::Error,
    /// What to do instead, for where the token came from.
    remedy: String,
}

impl fmt::Display for TokenExpired {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; {}, and replace your copy with them (do not merge)", self.error, self.remedy)
    }
}

impl std::error::Error for TokenExpired {}

/// Runs `mds get changes`.
pub(crate) async fn run(client: &Client, a: ChangesArgs) -> anyhow::Result<()> {
    let since = match &a.token_file {
        Some(path) => read_token(path)?,
        None => a.since.clone(),
    };
    let mut pages = client.changes(since.as_deref()).limit(a.limit).pages();
    let mut out = Output { sink: BufWriter::new(io::stdout().lock()), format: a.format, count: 0 };
    let progress = io::stderr().is_terminal();
    loop {
        let page = match pages.next_page().await {
            Ok(Some(page)) => page,
            Ok(None) => break,
            Err(e) if e.code() == Some(ErrorCode::SyncTokenExpired) => {
                let remedy = match &a.token_file {
                    Some(p) => format!("delete {} and run again to get every company", p.display()),
                    None => "run again without --since to get every company".to_owned(),
                };
                return Err(TokenExpired { error: e, remedy }.into());
            }
            Err(e) => return Err(e.into()),
        };
        out.rows(&page.data)?;
        if progress {
            eprint!("\r{} companies…", out.count);
        }
    }
    out.finish()?;
    let token = pages.sync_token().context("the change feed ended without a sync_token")?;
    let what = if since.is_some() { "changed since the token" } else { "(every company)" };
    eprintln!("{}{} companies {what}", if progress { "\r" } else { "" }, out.count);
    match &a.token_file {
        Some(path) => {
            write_token(path, token)?;
            eprintln!("sync token written to {}", path.display());
        }
        None => eprintln!("sync_token: {token}"),
    }
    Ok(())
}

/// The token in `path`: `None` when the file does not exist or is blank.
/// Refuses, before any request, a path whose directory does not exist (the
/// new token could not be saved after the walk).
fn read_token(path: &Path) -> anyhow::Result<Option<String>> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    anyhow::ensure!(dir.is_dir(), "token file {}: no directory {}", path.display(), dir.display());
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let token = text.trim();
            anyhow::ensure!(
                !token.contains(char::is_whitespace),
                "token file {} holds more than one token",
                path.display()
            );
            Ok((!token.is_empty()).then(|| token.to_owned()))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read token file {}", path.display())),
    }
}

/// Replaces `path` with `token` (and a newline) atomically: written beside
/// it, flushed to disk, then renamed over it.
fn write_token(path: &Path, token: &str) -> anyhow::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let write = || -> io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(format!("{token}\n").as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().with_context(|| format!("cannot write token file {}", path.display()))
}

/// Writes companies in one format as pages arrive.
struct Output<W: Write> {
    sink: W,
    format: Format,
    count: usize,
}

impl<W: Write> Output<W> {
    fn rows(&mut self, rows: &[CompanyDetail]) -> io::Result<()> {
        for c in rows {
            json_row(&mut self.sink, self.format == Format::Jsonl, self.count, c)?;
            self.count += 1;
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        json_end(&mut self.sink, self.format == Format::Jsonl, self.count)?;
        self.sink.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_files_are_read_and_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        assert_eq!(read_token(&path).unwrap(), None, "missing: every company");
        std::fs::write(&path, "  \n").unwrap();
        assert_eq!(read_token(&path).unwrap(), None, "blank: every company");
        write_token(&path, "abc.def").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "abc.def\n");
        assert_eq!(read_token(&path).unwrap().as_deref(), Some("abc.def"));
        write_token(&path, "ghi").unwrap();
        assert_eq!(read_token(&path).unwrap().as_deref(), Some("ghi"));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file left");
        std::fs::write(&path, "a b\n").unwrap();
        assert!(read_token(&path).unwrap_err().to_string().contains("more than one token"));
        let nowhere = dir.path().join("no-such-dir").join("token");
        assert!(read_token(&nowhere).unwrap_err().to_string().contains("no directory"));
    }

    #[test]
    fn json_is_one_array_and_jsonl_one_line_each() {
        let mut out = Output { sink: Vec::new(), format: Format::Json, count: 0 };
        out.finish().unwrap();
        assert_eq!(out.sink, b"[]\n");
        let mut company = detail();
        let mut out = Output { sink: Vec::new(), format: Format::Jsonl, count: 0 };
        out.rows(std::slice::from_ref(&company)).unwrap();
        company.company.name = "Other".into();
        out.rows(std::slice::from_ref(&company)).unwrap();
        out.finish().unwrap();
        let text = String::from_utf8(out.sink).unwrap();
        assert_eq!(text.lines().count(), 2);
        let mut out = Output { sink: Vec::new(), format: Format::Json, count: 0 };
        out.rows(&[company.clone(), company.clone()]).unwrap();
        out.finish().unwrap();
        let back: Vec<CompanyDetail> = serde_json::from_slice(&out.sink).unwrap();
        assert_eq!(back, vec![company.clone(), company]);
    }

    /// A detail record built from the wire (the binary has no test fixtures).
    fn detail() -> CompanyDetail {
        serde_json::from_str(
            r#"{"isin":"INE117A01022","ticker":"ABB","name":"ABB India Limited","industry":null,"sector":null,
            "is_bse":true,"is_nse":true,"market_cap_band":null,"logo_url":null,"listings":[],
            "classification":{"macro_sector":null,"sector":null,"industry":null,"basic_industry":null},
            "market_cap":null,"updated_at":"2026-11-01T00:00:00+00:00"}"#,
        )
        .unwrap()
    }
}
