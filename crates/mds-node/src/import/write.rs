//! The writes of an import, one per kind of data
//! ([`mds_import::format::Input`]): each one store transaction, with the
//! events the store appends in it, and the summary of what it did.

use std::borrow::Cow;
use std::io::BufRead;
use std::sync::Arc;

use chrono::NaiveDate;
use mds_domain::actions::ActionType;
use mds_domain::snapshot::{NameChange, SymbolChange};
use mds_domain::{Exchange, IdentityChange, Isin, SymbolPeriod, Ticker};
use mds_import::actions::Identity;
use mds_import::actions::batch::{self, ReadFiles};
use mds_import::exchange::ExchangeSnapshots;
use mds_import::format::{Input, Refusal, Source};
use mds_store::{ActionMove, ActionsMoved, IdentityImport, KeptUnresolved, Store, StoreError, UpsertSummary};

use super::{Counts, ImportFailure, Summary};

/// Rows (companies, articles) handed to the store at a time: the rows of a
/// large file are never all in memory.
const CHUNK: usize = 5_000;

/// Writes `input` in one transaction.
pub(super) async fn write(store: &Arc<dyn Store>, input: Input) -> Result<Summary, ImportFailure> {
    match input {
        Input::Companies { file, bytes } => companies(store, &file, bytes).await,
        Input::Articles { file, reader } => articles(store, &file, reader).await,
        Input::Snapshots { snapshots, files } => exchange_lists(store, snapshots, &files).await,
        Input::Changes { symbols, names } => change_rows(store, symbols, names).await,
        Input::Actions { files, count, list_unresolved } => actions(store, files, count, list_unresolved).await,
        Input::Prices { files, verbose } => super::prices::write(store, files, verbose).await,
    }
}

/// A companies file (checked whole when read), upserted a chunk at a time.
async fn companies(store: &Arc<dyn Store>, file: &Source, bytes: Cow<'static, [u8]>) -> Result<Summary, ImportFailure> {
    let mut chunks = mds_import::companies_in_chunks(&bytes, CHUNK);
    let s = store.upsert_company_chunks(&mut chunks).await?;
    Ok(upserted("companies", file, s))
}

/// A news file, read a line at a time and upserted a chunk at a time: the
/// file is never all in memory. A bad line found half-way rolls back what
/// was handed before.
async fn articles(
    store: &Arc<dyn Store>,
    file: &Source,
    reader: Box<dyn BufRead + Send>,
) -> Result<Summary, ImportFailure> {
    let mut refused = None;
    let mut chunks = mds_import::articles_in_chunks(reader, CHUNK)
        .map(|chunk| chunk.map_err(|e| StoreError::Invalid(refused.insert(e).summary())));
    let upserted_ = store.upsert_article_chunks(&mut chunks).await;
    drop(chunks);
    if let Some(e) = refused {
        return Err(Refusal::of(file, e).into());
    }
    Ok(upserted("articles", file, upserted_?))
}

/// The summary of an upsert of `what` from `file`.
fn upserted(what: &str, file: &Source, s: UpsertSummary) -> Summary {
    let read = s.inserted + s.updated + s.unchanged;
    Summary {
        lines: vec![format!(
            "imported {read} {what} from {} ({} new, {} updated, {} unchanged)",
            file.name(),
            s.inserted,
            s.updated,
            s.unchanged
        )],
        counts: Counts { read, new: s.inserted, changed: s.updated, unchanged: s.unchanged, set_aside: 0 },
        ..Summary::default()
    }
}

/// The exchange lists as snapshots, and the identity derived again.
async fn exchange_lists(
    store: &Arc<dyn Store>,
    snapshots: ExchangeSnapshots,
    files: &[String],
) -> Result<Summary, ImportFailure> {
    let s = store.import_snapshots(&snapshots.import).await?;
    let listed = snapshots.import.companies.len() as u64;
    // The store counts the lists' companies (each new, updated or
    // unchanged) and, as updated, the other stored companies whose status
    // the lists moved: those are told apart, so the lists' add up.
    let of_lists_updated = listed.saturating_sub(s.companies.inserted + s.companies.unchanged);
    let others = s.companies.updated.saturating_sub(of_lists_updated);
    let lines = vec![
        format!(
            "imported {listed} companies from {} as of {} ({} new, {of_lists_updated} updated, {} unchanged; {} rows \
             without an ISIN skipped; {others} companies not in these lists changed status or listings)",
            files.join(", "),
            snapshots.import.as_of,
            s.companies.inserted,
            s.companies.unchanged,
            snapshots.skipped_without_isin,
        ),
        identity_line(&s),
    ];
    let counts = Counts {
        read: listed,
        new: s.companies.inserted,
        changed: of_lists_updated,
        unchanged: s.companies.unchanged,
        set_aside: 0,
    };
    Ok(Summary { lines, counts, ..Summary::default() })
}

/// NSE's change-file rows (those stored before are not added again), and
/// the identity derived again.
async fn change_rows(
    store: &Arc<dyn Store>,
    symbols: Vec<SymbolChange>,
    names: Vec<NameChange>,
) -> Result<Summary, ImportFailure> {
    let s = store.import_nse_changes(&symbols, &names).await?;
    let read = (symbols.len() + names.len()) as u64;
    let lines = vec![
        format!(
            "imported {} symbol changes and {} name changes ({} new to the store)",
            symbols.len(),
            names.len(),
            s.change_rows
        ),
        identity_line(&s),
    ];
    let counts =
        Counts { read, new: s.change_rows, unchanged: read.saturating_sub(s.change_rows), ..Counts::default() };
    Ok(Summary { lines, counts, ..Summary::default() })
}

/// The line of an identity import's report saying what it did to the
/// snapshots, the events and the companies' stamps.
fn identity_line(s: &IdentityImport) -> String {
    format!(
        "identity: {} snapshots added ({} rows new or changed, {} gone or changed), {} events stored, {} ISINs whose \
         events changed; {}",
        s.snapshots,
        s.runs_opened,
        s.runs_closed,
        s.events,
        s.isins_changed,
        match s.generation {
            Some(g) => format!("companies generation {g}"),
            None => "no company changed".to_owned(),
        }
    )
}

/// The identity history resolution reads: the catalog's symbol periods,
/// and BSE's security codes ([`BseCodes`]).
struct Periods<F> {
    periods: F,
    codes: BseCodes,
}

impl<F: Fn(Exchange, &Ticker) -> Vec<SymbolPeriod>> Identity for Periods<F> {
    fn periods(&self, exchange: Exchange, symbol: &Ticker) -> Vec<SymbolPeriod> {
        (self.periods)(exchange, symbol)
    }

    fn bse_code_isin(&self, code: &str, day: NaiveDate) -> Option<Isin> {
        self.codes.isin_on(code, day)
    }

    fn predecessor(&self, isin: &Isin) -> Option<(Isin, NaiveDate)> {
        self.codes.predecessors.get(isin).cloned()
    }
}

/// BSE's security codes and the ISINs they carried (contract 13.1): each
/// code's ISIN as a BSE list showed it (a stored BSE listing's scrip code),
/// followed through the ISIN changes made before the day (BSE keeps the
/// code when a split changes the ISIN), not after a BSE `delisted`.
#[derive(Default)]
struct BseCodes {
    /// Code → the ISINs whose BSE listing has it.
    codes: std::collections::HashMap<String, Vec<Isin>>,
    /// ISIN → the ISIN that replaced it, and the day.
    successors: std::collections::HashMap<Isin, (Isin, NaiveDate)>,
    /// ISIN → the ISIN it replaced, and the day.
    predecessors: std::collections::HashMap<Isin, (Isin, NaiveDate)>,
    /// ISIN → the day it left BSE's list.
    delisted: std::collections::HashMap<Isin, NaiveDate>,
}

impl BseCodes {
    /// How many ISIN changes are followed at most (a cycle ends here).
    const MAX_CHAIN: usize = 32;

    /// The ISIN `code` carried on `day`, when exactly one does.
    fn isin_on(&self, code: &str, day: NaiveDate) -> Option<Isin> {
        let mut found: Option<&Isin> = None;
        for first in self.codes.get(code)? {
            if self.delisted.get(first).is_some_and(|d| *d <= day) {
                continue;
            }
            let mut isin = first;
            for _ in 0..Self::MAX_CHAIN {
                match self.successors.get(isin) {
                    // On the day of the change the action is the earlier ISIN's.
                    Some((to, d)) if *d < day => isin = to,
                    _ => break,
                }
            }
            if found.is_some_and(|f| f != isin) {
                return None;
            }
            found = Some(isin);
        }
        found.cloned()
    }
}

/// An exchange's action files (contract 13.1): each row resolved to the
/// ISIN of its ex-date through the identity history the store holds (the
/// catalog's symbol periods, NSE's symbol changes among the identity
/// events), merged, and written in one transaction.
///
/// Splits and consolidations date the ISIN changes they make (10.3), which
/// moves the periods the other rows resolve through: the identity history
/// is first derived again with the files' splits
/// ([`mds_store::ActionStore::date_by_splits`], a transaction of its own),
/// and when that changed it, every row is resolved again through the
/// history they made before the actions are written (their import derives
/// it again with the splits as resolved, which leaves it as it is). So an
/// action going ex between a split and the list that first showed its new
/// ISIN is the new ISIN's, whether the files are imported once or again.
async fn actions(
    store: &Arc<dyn Store>,
    files: ReadFiles,
    count: usize,
    list_unresolved: bool,
) -> Result<Summary, ImportFailure> {
    let mut b = resolve_actions(store, files.clone()).await?;
    let splits: Vec<_> = b
        .merged
        .actions
        .iter()
        .filter(|a| matches!(a.action.action_type(), ActionType::Split | ActionType::Consolidation))
        .cloned()
        .collect();
    let dated = !splits.is_empty() && store.date_by_splits(&splits).await?;
    if dated {
        b = resolve_actions(store, files).await?;
    }
    let mut lines = Vec::new();
    if list_unresolved {
        for KeptUnresolved { row: u, .. } in &b.unresolved {
            lines.push(format!("unresolved: {}:{}: {} {} {:?}", u.file, u.line, u.code, u.ex_date, u.purpose));
        }
    }
    let unresolved_rows = b.unresolved.len();
    let s = store.import_actions(&b.merged.actions, &b.unresolved, &b.resolved_rows).await?;
    if dated || s.identity_changed {
        lines.push("identity: the files' splits and consolidations dated or linked ISIN changes".to_owned());
    }
    lines.push(format!(
        "read {} rows from {count} files: {} resolved ({} actions), {unresolved_rows} unresolved",
        b.rows,
        b.rows - unresolved_rows,
        b.resolved,
    ));
    lines.push(format!(
        "actions: {} from the rows = {} distinct + {} repeated + {} merged across exchanges; stored: {} new, {} \
         changed, {} unchanged; unresolved rows: {} new to the store, {} stored before now resolved",
        b.merged.rows,
        b.merged.actions.len(),
        b.merged.repeats,
        b.merged.across_exchanges,
        s.new,
        s.changed,
        s.unchanged,
        s.unresolved_new,
        s.unresolved_resolved
    ));
    let counts = Counts {
        read: (b.merged.rows + unresolved_rows) as u64,
        new: s.new,
        changed: s.changed,
        unchanged: s.unchanged,
        set_aside: (b.merged.repeats + b.merged.across_exchanges + unresolved_rows) as u64,
    };
    Ok(Summary { lines, counts, ..Summary::default() })
}

/// The rows of `files` resolved through the identity history the store
/// holds now ([`identity_now`]), and merged.
async fn resolve_actions(store: &Arc<dyn Store>, files: ReadFiles) -> Result<batch::Batch, ImportFailure> {
    let (identity, changes) = identity_now(store).await?;
    Ok(batch::resolve(files, &identity, &changes))
}

/// What [`actions_again`] did: the store's counts, and how the actions of
/// the rows kept unresolved that resolve now were merged.
#[derive(Debug, Default)]
pub(super) struct Again {
    /// What the store did.
    pub moved: ActionsMoved,
    /// Actions of those rows (`merged.rows` of their batch).
    pub actions: u64,
    /// Of those, repeats and publications merged across exchanges
    /// (`actions = stored new + changed + unchanged + set_aside`).
    pub set_aside: u64,
}

/// The stored rows of earlier action imports resolved again through the
/// identity history the store holds now, and the actions of those that
/// resolve to another ISIN moved there; the rows kept unresolved resolved
/// too, and the actions of those that resolve now stored as an import
/// stores them, the rows kept as resolved ([`batch::resolve_kept`]; one
/// transaction, [`mds_store::ActionStore::move_actions`]): contract 10.3,
/// imports in any order give the same result. A row that no longer
/// resolves keeps its actions.
pub(super) async fn actions_again(store: &Arc<dyn Store>) -> Result<Again, ImportFailure> {
    let rows = store.action_rows().await?;
    let unresolved = store.kept_unresolved().await?;
    if rows.is_empty() && unresolved.is_empty() {
        return Ok(Again::default());
    }
    let (identity, changes) = identity_now(store).await?;
    let b = batch::resolve_kept(unresolved, &identity, &changes);
    let moves: Vec<ActionMove> = rows
        .into_iter()
        .filter_map(|row| {
            let at = batch::resolve_row(&identity, &changes, &row.key, row.security_id.as_deref())?;
            let moved = at.isin != row.isin;
            moved.then_some(ActionMove { row, to: at.isin, symbol: at.symbol, successor: at.successor })
        })
        .collect();
    if moves.is_empty() && b.resolved_rows.is_empty() {
        return Ok(Again::default());
    }
    let moved = store.move_actions(&moves, &b.merged.actions, &b.resolved_rows).await?;
    Ok(Again { moved, actions: b.merged.rows as u64, set_aside: (b.merged.repeats + b.merged.across_exchanges) as u64 })
}

/// The identity history resolution reads, as the store holds it now: its
/// catalog's symbol periods, NSE's symbol changes (returned beside) and
/// BSE's codes.
async fn identity_now(
    store: &Arc<dyn Store>,
) -> Result<(impl Identity + use<>, Vec<mds_domain::snapshot::SymbolChange>), ImportFailure> {
    let generation = store.generations().await?.companies;
    let (catalog, _) = crate::catalog_load::load(store, generation).await?;
    let events = store.identity_events().await?;
    let changes = batch::nse_symbol_changes(events.iter().filter_map(|(_, e)| match &e.change {
        IdentityChange::SymbolChanged { exchange: Exchange::Nse, from, to } => Some((from, to, e.date)),
        _ => None,
    }));
    let mut codes = BseCodes::default();
    for (isin, e) in &events {
        match &e.change {
            IdentityChange::IsinChanged { from, to, .. } if from == isin => {
                codes.successors.insert(from.clone(), (to.clone(), e.date));
                codes.predecessors.insert(to.clone(), (from.clone(), e.date));
            }
            IdentityChange::Delisted { exchange: Exchange::Bse, .. } => {
                codes.delisted.insert(isin.clone(), e.date);
            }
            _ => {}
        }
    }
    drop(events);
    store
        .companies_sorted(&mut |s| {
            let c = s.company;
            let bse = c.details.listings.iter().find(|l| l.exchange == Exchange::Bse);
            if let Some(code) = bse.and_then(|l| l.scrip_code.clone()) {
                codes.codes.entry(code).or_default().push(c.isin);
            }
        })
        .await?;
    let identity = Periods {
        periods: move |exchange: Exchange, symbol: &Ticker| {
            catalog.symbol_history(exchange, symbol).map(|h| h.periods).unwrap_or_default()
        },
        codes,
    };
    Ok((identity, changes))
}
