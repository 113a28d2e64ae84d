//! `mds import nse-bhavcopy PATH...` (contract 14.1): NSE's daily price
//! files of either format, from files, directories and archives, made
//! into bars ([`mds_node::prices_import`]), all or nothing; then a summary
//! that adds up. A bad file: each problem with its line on stderr, one
//! line saying why, nothing written.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use mds_node::prices_import::{BhavcopyImport, BhavcopyImportError, import_bhavcopy};
use mds_store::Store;

use super::thousands as n;

/// How many series of skipped rows are named without `--verbose`.
const SERIES_LISTED: usize = 5;

/// How many disagreements are listed without `--verbose`.
const DISAGREEMENTS_LISTED: usize = 20;

/// NSE's daily price files (UDiFF, sec_bhavdata_full) made into bars; each day replaced whole.
///
/// Files, directories, .zip, .zst or .tar.zst archives of UDiFF files (with ISINs) or
/// sec_bhavdata_full files (keyed by symbol): equity series only; symbol-keyed rows resolved
/// to the ISIN that carried the symbol that day (unresolved ones counted, never guessed); each
/// day replaced whole (the same files again change nothing); where both formats give a day,
/// the ISIN-keyed row wins and disagreements are reported. A bad file: its lines, nothing
/// imported.
#[derive(Debug, clap::Args)]
pub(crate) struct NseBhavcopy {
    /// The files, directories or archives.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// List the rows resolved to no ISIN, every disagreement and every series skipped.
    #[arg(long)]
    verbose: bool,
}

/// Runs the import.
pub(crate) async fn run(store: &Arc<dyn Store>, args: NseBhavcopy) -> anyhow::Result<()> {
    let generation = store.generations().await?.companies;
    let (catalog, _) = mds_node::catalog_load::load(store, generation).await.context("cannot load the catalog")?;
    let done = match import_bhavcopy(store, catalog, &args.paths).await {
        Ok(done) => done,
        Err(BhavcopyImportError::Refused { problems, reason }) => {
            for p in problems {
                eprintln!("{p}");
            }
            anyhow::bail!(reason);
        }
        Err(e) => return Err(e.into()),
    };
    report(&done, args.verbose)
}

/// The summary: what was read, resolved, paired and written.
fn report(d: &BhavcopyImport, verbose: bool) -> anyhow::Result<()> {
    if verbose {
        for u in &d.unresolved {
            let why = if u.ambiguous { "another row resolved to the same ISIN and series" } else { "no ISIN that day" };
            outln!("unresolved: {}:{}: {} {} {} ({why})", u.file, u.line, u.date, u.symbol, u.series)?;
        }
    }
    let listed = if verbose { d.disagreements.len() } else { d.disagreements.len().min(DISAGREEMENTS_LISTED) };
    for x in &d.disagreements[..listed] {
        eprintln!(
            "disagreement: {} {} {}: {} is {} in the ISIN-keyed file (kept), {} in the symbol-keyed one",
            x.date, x.symbol, x.series, x.field, x.isin_keyed, x.symbol_keyed
        );
    }
    if listed < d.disagreements.len() {
        eprintln!("({} more disagreements: --verbose lists them)", d.disagreements.len() - listed);
    }
    // The series skipped, most rows first (all with --verbose).
    let mut by_series: Vec<_> = d.skipped.by_series.iter().collect();
    by_series.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let shown = if verbose { by_series.len() } else { by_series.len().min(SERIES_LISTED) };
    let mut skipped: Vec<String> = by_series[..shown].iter().map(|(s, k)| format!("{} {s}", n(**k))).collect();
    if shown < by_series.len() {
        let rest: u64 = by_series[shown..].iter().map(|(_, k)| **k).sum();
        skipped.push(format!("{} of {} other series", n(rest), by_series.len() - shown));
    }
    if d.skipped.funds > 0 {
        skipped.push(format!("{} funds", n(d.skipped.funds)));
    }
    outln!(
        "read {} files ({} UDiFF, {} sec_bhavdata_full) of {} days: {} rows = {} equity + {} skipped{}",
        n(d.udiff_files + d.secbhav_files),
        n(d.udiff_files),
        n(d.secbhav_files),
        n(d.days.len() as u64),
        n(d.rows_read),
        n(d.isin_keyed + d.symbol_keyed),
        n(d.skipped.total()),
        if skipped.is_empty() { String::new() } else { format!(" ({})", skipped.join(", ")) }
    )?;
    let ambiguous = d.unresolved.iter().filter(|u| u.ambiguous).count() as u64;
    outln!(
        "equity rows: {} ISIN-keyed + {} symbol-keyed ({} resolved + {} unresolved, {} of them ambiguous)",
        n(d.isin_keyed),
        n(d.symbol_keyed),
        n(d.resolved),
        n(d.unresolved.len() as u64),
        n(ambiguous)
    )?;
    outln!(
        "the same bar in both formats: {} (the ISIN-keyed row kept); {} figures disagree",
        n(d.same_bar),
        n(d.disagreements.len() as u64)
    )?;
    let (file, symbol) = d.bars_held();
    let s = &d.store;
    outln!(
        "days handed (one a file): {} new + {} replaced + {} unchanged; the {} days hold {} bars = {} ISIN-keyed + {} symbol-keyed",
        n(s.new),
        n(s.replaced),
        n(s.unchanged),
        n(d.days.len() as u64),
        n(file + symbol),
        n(file),
        n(symbol)
    )?;
    Ok(())
}
