//! Paging a list: the first page (from `--cursor`), or every page with
//! `--all`, each page's rows handed to a [`Rows`] as it arrives, then where
//! the rows went and how to go on.

use std::io;
use std::path::Path;

use mds_client::ListRequest;
use serde::de::DeserializeOwned;

use super::args::PagingArgs;
use crate::cli::thousands;

/// Where a list's rows go, page by page.
pub(super) trait Rows<T> {
    /// Writes `rows`; returns how many rows were written so far.
    fn rows(&mut self, rows: &[T]) -> io::Result<usize>;
    /// Ends the output (a JSON array's bracket, a table) and flushes it.
    fn finish(&mut self) -> io::Result<()>;
}

/// What [`list`] fetched.
struct Listed {
    /// Rows written.
    count: usize,
    /// The cursor to go on from, when more rows follow and not all were asked for.
    more: Option<String>,
}

/// Fetches the first page of a list (from `--cursor` if given, `--limit`
/// rows a page), or every page with `--all`, writing each page's rows to
/// `out` as it arrives; with a file `--output`, progress on stderr; then
/// says where the rows went and how to go on.
pub(super) async fn list<T: DeserializeOwned + Send + 'static>(
    request: ListRequest<T>,
    paging: PagingArgs,
    noun: &str,
    mut out: impl Rows<T>,
) -> anyhow::Result<()> {
    let PagingArgs { limit, cursor, all, output } = paging;
    let output = output.as_deref();
    let request = match limit {
        Some(l) => request.limit(l),
        None => request,
    };
    let mut pages = match cursor {
        Some(c) => request.cursor(c),
        None => request,
    }
    .pages();
    let mut listed = Listed { count: 0, more: None };
    while let Some(page) = pages.next_page().await? {
        listed.count = out.rows(&page.data)?;
        if let Some(hint) = &page.hint {
            let near = if hint.nearest.is_empty() { "none near".to_owned() } else { hint.nearest.join(", ") };
            eprintln!("no {noun} have that {}; nearest existing values: {near}", hint.param);
        }
        if output.is_some() {
            eprint!("\r{} {noun}…", thousands(listed.count as u64));
        }
        if !all || !page.has_more {
            listed.more = page.next_cursor.filter(|_| page.has_more && !all);
            break;
        }
    }
    out.finish()?;
    listed.report(output, noun);
    Ok(())
}

impl Listed {
    /// Says on stderr where the rows went (for a file) and how to go on
    /// (when more follow).
    fn report(&self, output: Option<&Path>, noun: &str) {
        if let Some(p) = output {
            eprintln!("\r{} {noun} written to {}", thousands(self.count as u64), p.display());
        }
        if let Some(c) = &self.more {
            eprintln!("more {noun} follow: add --all, or --cursor {c}");
        }
    }
}
