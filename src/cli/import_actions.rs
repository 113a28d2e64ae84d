//! `mds import nse-actions` and `bse-actions` (contract 13.1): the files
//! read, each row resolved to the ISIN of its ex-date through the identity
//! history the store holds (the catalog's symbol periods, NSE's symbol
//! changes among the identity events), merged, and written in one
//! transaction; then a summary that adds up.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use chrono::NaiveDate;
use mds_domain::{Exchange, IdentityChange, Isin, SymbolPeriod, Ticker};
use mds_import::actions::{Identity, batch};
use mds_store::{Store, UnresolvedAction};

use super::import::{read, refusal};

/// The identity history, as symbol periods looked up by a function (the
/// catalog's); BSE security codes are not in the history yet.
struct Periods<F>(F);

impl<F: Fn(Exchange, &Ticker) -> Vec<SymbolPeriod>> Identity for Periods<F> {
    fn periods(&self, exchange: Exchange, symbol: &Ticker) -> Vec<SymbolPeriod> {
        (self.0)(exchange, symbol)
    }

    fn bse_code_isin(&self, _code: &str, _day: NaiveDate) -> Option<Isin> {
        None
    }
}

/// A row kept unresolved, as stored.
fn stored(u: batch::Unresolved) -> UnresolvedAction {
    UnresolvedAction {
        source: u.source,
        code: u.code,
        ex_date: u.ex_date,
        purpose: u.purpose,
        file: u.file,
        line: u.line as u64,
    }
}

/// Runs one import of `exchange`'s action files.
pub(crate) async fn run(
    store: &Arc<dyn Store>,
    exchange: Exchange,
    files: &[PathBuf],
    verbose: bool,
) -> anyhow::Result<()> {
    let mut read_files = Vec::with_capacity(files.len());
    for f in files {
        let name = f.display().to_string();
        let bytes = batch::file_bytes(&name, read(f)?).map_err(|e| anyhow::anyhow!("{e}; nothing was imported"))?;
        read_files.push((name, bytes));
    }
    let generation = store.generations().await?.companies;
    let (catalog, _) = mds_node::catalog_load::load(store, generation).await.context("cannot load the catalog")?;
    let events = store.identity_events().await?;
    let changes = batch::nse_symbol_changes(events.iter().filter_map(|(_, e)| match &e.change {
        IdentityChange::SymbolChanged { exchange: Exchange::Nse, from, to } => Some((from, to, e.date)),
        _ => None,
    }));
    let identity = Periods(|exchange: Exchange, symbol: &Ticker| {
        catalog.symbol_history(exchange, symbol).map(|h| h.periods).unwrap_or_default()
    });
    let b = match batch::read(exchange, &read_files, &identity, &changes) {
        Ok(b) => b,
        Err((name, e)) => return Err(refusal(std::path::Path::new(&name), e)),
    };
    drop(read_files);
    let unresolved_rows = b.unresolved.len();
    if verbose {
        for u in &b.unresolved {
            outln!("unresolved: {}:{}: {} {} {:?}", u.file, u.line, u.code, u.ex_date, u.purpose)?;
        }
    }
    let unresolved: Vec<UnresolvedAction> = b.unresolved.into_iter().map(stored).collect();
    let resolved: Vec<UnresolvedAction> = b.resolved_rows.into_iter().map(stored).collect();
    let s = store.import_actions(&b.merged.actions, &unresolved, &resolved).await.context("nothing was imported")?;
    outln!(
        "read {} rows from {} files: {} resolved ({} actions), {} unresolved",
        b.rows,
        files.len(),
        b.rows - unresolved_rows,
        b.resolved,
        unresolved_rows
    )?;
    outln!(
        "actions: {} from the rows = {} distinct + {} repeated + {} merged across exchanges; stored: {} new, {} changed, {} unchanged; unresolved rows: {} new to the store, {} stored before now resolved",
        b.merged.rows,
        b.merged.actions.len(),
        b.merged.repeats,
        b.merged.across_exchanges,
        s.new,
        s.changed,
        s.unchanged,
        s.unresolved_new,
        s.unresolved_resolved
    )?;
    Ok(())
}
