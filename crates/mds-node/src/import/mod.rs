//! Imports: the one place an import runs, whatever its format (contract
//! 13.1 and 10.3; ARCHITECTURE.md, "How to add an import format").
//!
//! [`run`] takes a [`Format`] of [`FORMATS`] and the files given for it
//! and, in order:
//!
//! 1. **reads** them with the format's own reading (`mds_import`, parse
//!    only): every row checked, every problem reported with its line, and
//!    a refusal ([`ImportFailure::Refused`]) before anything is written;
//! 2. **writes** what they hold in one store transaction (`write.rs`, one
//!    function per kind of data, [`mds_import::format::Input`]): all or
//!    nothing. The events of the change (`company.changed`,
//!    `article.published`/`updated`, `corporate_action.added`/`changed`,
//!    `prices.published`) are appended by the store in that transaction;
//!    NSE's daily price files are read as they are written
//!    ([`prices`]: a file at a time on a thread of their own);
//! 3. **snapshots**: when the write moved the store's `companies`
//!    generation, the catalog of the new generation is built and saved;
//!    when it moved the `news` generation, the news index; so serving nodes load them
//!    instead of each building them. The import has succeeded either way:
//!    a failure here is a warning;
//! 4. returns a [`Summary`] whose [`Counts`] add up.
//!
//! The CLI (`mds import <format>`, its subcommands made from [`FORMATS`])
//! calls [`run`], and `mds demo` (the embedded files,
//! `mds_import::demo::imports`) [`run_all`], the same steps with the
//! snapshots made once after the last import; nothing else writes an
//! import.

pub mod prices;
mod write;

use std::sync::Arc;

use mds_limits::Clock;
use mds_store::{Store, StoreError};

pub use mds_import::format::{Arg, ArgKind, Format, Given, Refusal, Source};

/// Every import format `mds import` offers, in the order its help lists
/// them: the one registration of a format (its parser module carries the
/// [`Format`]; a new one is one line here).
pub const FORMATS: &[&Format] = &[
    &mds_import::companies::FORMAT,
    &mds_import::news::FORMAT,
    &mds_import::exchange::FORMAT,
    &mds_import::changes::FORMAT,
    &mds_import::actions::NSE_FORMAT,
    &mds_import::actions::BSE_FORMAT,
    &mds_import::bhavcopy::FORMAT,
];

/// The format registered under `name`.
pub fn format(name: &str) -> Option<&'static Format> {
    FORMATS.iter().copied().find(|f| f.name == name)
}

/// Why an import wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum ImportFailure {
    /// The files were refused (a bad line, a missing file, an older
    /// snapshot than one stored): nothing was written.
    #[error("{0}")]
    Refused(Refusal),
    /// The store failed: its transaction rolled back, nothing was written.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<Refusal> for ImportFailure {
    fn from(r: Refusal) -> Self {
        ImportFailure::Refused(r)
    }
}

/// The counts every import reports, which add up: each thing read (a
/// company, an article, a change row, an action, a row resolved to no
/// ISIN, a row of a daily price file) is new, changed, unchanged or set
/// aside, so `read = new + changed + unchanged + set_aside`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Things the files gave.
    pub read: u64,
    /// Not stored before.
    pub new: u64,
    /// Stored before, and changed.
    pub changed: u64,
    /// Stored before as given: not written.
    pub unchanged: u64,
    /// Read but not stored as themselves: a row repeated in the files
    /// (stored once), an action merged into another exchange's, a row
    /// resolved to no ISIN.
    pub set_aside: u64,
}

impl Counts {
    /// Whether the parts add up to what was read.
    pub fn adds_up(&self) -> bool {
        self.new + self.changed + self.unchanged + self.set_aside == self.read
    }
}

/// What an import did, for an operator.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Notes on what was read (rows skipped, a day assumed), for stderr.
    pub notes: Vec<String>,
    /// What it read and wrote, a sentence a line, for stdout.
    pub lines: Vec<String>,
    /// What went wrong after the write, which the import survived (a
    /// snapshot not saved), for stderr.
    pub warnings: Vec<String>,
    /// Its counts.
    pub counts: Counts,
}

/// Runs an import of `format` with the files `given` into `store` (read,
/// one transaction, snapshots; see the module's documentation). `clock`
/// gives the day a list of no other day is taken as of.
pub async fn run(
    store: &Arc<dyn Store>,
    clock: &dyn Clock,
    format: &Format,
    given: &Given,
) -> Result<Summary, ImportFailure> {
    let mut summaries = run_all(store, clock, &[(format, given.clone())]).await?;
    Ok(summaries.pop().expect("one import, one summary"))
}

/// Runs `imports` in order, each as [`run`] does, but makes the snapshots
/// once, after the last (`mds demo`: its identity imports then its action
/// imports, which read the catalog of the identity they made). The first
/// that fails ends the run: those before it are written, their snapshots
/// not made (nodes then build them).
pub async fn run_all(
    store: &Arc<dyn Store>,
    clock: &dyn Clock,
    imports: &[(&Format, Given)],
) -> Result<Vec<Summary>, ImportFailure> {
    let before = store.generations().await?;
    let mut summaries = Vec::with_capacity(imports.len());
    for (format, given) in imports {
        let read = (format.read)(given, clock.now().date_naive())?;
        // Bars held: the symbol periods before, to resolve again the
        // symbol-keyed rows of those the import moves (10.3).
        let periods_before = match format.name == mds_import::bhavcopy::FORMAT.name {
            true => None,
            false => periods_before(store).await?,
        };
        let generation = store.generations().await?.companies;
        let mut summary = write::write(store, read.input).await?;
        if let Some((generation, catalog)) = periods_before {
            resolve_again(store, generation, &catalog, &mut summary).await?;
        }
        actions_again(store, generation, &mut summary).await?;
        summary.notes.splice(0..0, read.notes);
        debug_assert!(summary.counts.adds_up(), "{} counts: {:?}", format.name, summary.counts);
        summaries.push(summary);
    }
    // What the writes moved (a failure to tell is the snapshots' warning).
    let mut warnings = Vec::new();
    let after = store.generations().await.ok();
    if after.as_ref().is_none_or(|g| g.companies != before.companies) {
        snapshot_catalog(store, &mut warnings).await;
    }
    if after.as_ref().is_none_or(|g| g.news != before.news) {
        snapshot_news(store, &mut warnings).await;
    }
    if let Some(last) = summaries.last_mut() {
        last.warnings.extend(warnings);
    }
    Ok(summaries)
}

/// Builds the new company catalog and saves its snapshot in the store, so
/// serving nodes load it instead of each building it. A failure is a
/// warning (nodes then build).
/// The `companies` generation and its catalog when the store holds bars
/// (else `None`: nothing to resolve again).
async fn periods_before(store: &Arc<dyn Store>) -> Result<Option<(i64, Arc<mds_catalog::Catalog>)>, ImportFailure> {
    if store.price_days().await?.is_empty() {
        return Ok(None);
    }
    let generation = store.generations().await?.companies;
    let (catalog, _) = crate::catalog_load::load(store, generation).await?;
    Ok(Some((generation, catalog)))
}

/// After an import that moved the `companies` generation from
/// `generation`: the stored symbol-keyed rows of the NSE symbols whose
/// periods moved resolved again (contract 10.3: an import re-resolves a
/// symbol-keyed bar whose ISIN a later list makes known), in a
/// transaction of their own.
async fn resolve_again(
    store: &Arc<dyn Store>,
    generation: i64,
    before: &mds_catalog::Catalog,
    summary: &mut Summary,
) -> Result<(), ImportFailure> {
    let now = store.generations().await?.companies;
    if now == generation {
        return Ok(());
    }
    let after = crate::catalog_load::rebuild(store, now).await?;
    let moved = prices::moved_symbols(before, &after);
    if moved.is_empty() {
        return Ok(());
    }
    let r = store.rebind_symbols(&moved).await?;
    summary.lines.push(format!(
        "prices: the symbol-keyed rows of {} symbols whose periods moved resolved again: {} bars moved, {} kept rows \
         resolved, {} set aside, over {} days",
        moved.len(),
        r.moved,
        r.resolved,
        r.set_aside,
        r.days
    ));
    Ok(())
}

/// After an import that moved the `companies` generation from
/// `generation`: the stored rows of earlier action imports resolved again,
/// and the actions of those that resolve to another ISIN moved there; the
/// rows they left unresolved resolved too, and the actions of those that
/// resolve now stored (contract 10.3: an import re-resolves what earlier
/// imports left unresolved, and an action whose ISIN a later list or daily
/// file makes known; `write::actions_again`), each round a transaction of
/// its own. Moved splits may date ISIN changes again, so
/// rows are resolved again until none moves (at most [`ROUNDS`] times);
/// then the splits that lead to another ISIN now are given it
/// ([`mds_store::ActionStore::follow_successors`]).
async fn actions_again(store: &Arc<dyn Store>, generation: i64, summary: &mut Summary) -> Result<(), ImportFailure> {
    let mut before = generation;
    let mut total = mds_store::ActionsMoved::default();
    let (mut kept_actions, mut kept_set_aside) = (0, 0);
    for _ in 0..ROUNDS {
        let now = store.generations().await?.companies;
        if now == before {
            break;
        }
        before = now;
        let write::Again { moved: m, actions, set_aside } = write::actions_again(store).await?;
        if m.rows == 0 && m.resolved.unresolved_resolved == 0 {
            break;
        }
        total.rows += m.rows;
        total.moved += m.moved;
        total.new += m.new;
        total.joined += m.joined;
        let r = &mut total.resolved;
        r.unresolved_resolved += m.resolved.unresolved_resolved;
        r.new += m.resolved.new;
        r.changed += m.resolved.changed;
        r.unchanged += m.resolved.unchanged;
        (kept_actions, kept_set_aside) = (kept_actions + actions, kept_set_aside + set_aside);
    }
    if total.rows > 0 {
        summary.lines.push(format!(
            "actions: {} stored rows resolved again to another ISIN: {} actions moved = {} new there + {} joined to \
             an action there",
            total.rows, total.moved, total.new, total.joined
        ));
    }
    // A history derived again may have moved a split's successor without
    // moving the split (contract 13: `new_isin` names it).
    if store.generations().await?.companies != generation {
        let followed = store.follow_successors().await?;
        if followed > 0 {
            summary.lines.push(format!(
                "actions: {followed} splits and consolidations lead to another ISIN now (new_isin), announced as \
                 changed"
            ));
        }
    }
    let r = total.resolved;
    debug_assert_eq!(kept_actions, r.new + r.changed + r.unchanged + kept_set_aside, "{r:?}");
    if r.unresolved_resolved > 0 {
        summary.lines.push(format!(
            "actions: {} rows kept unresolved resolved now: {kept_actions} actions = {} new + {} changed + {} \
             unchanged + {kept_set_aside} repeated or merged across exchanges",
            r.unresolved_resolved, r.new, r.changed, r.unchanged
        ));
    }
    Ok(())
}

/// How many times at most an import resolves the stored action rows again
/// (each time moved splits changed the identity history).
const ROUNDS: usize = 4;

async fn snapshot_catalog(store: &Arc<dyn Store>, warnings: &mut Vec<String>) {
    let result = async {
        let generation = store.generations().await?.companies;
        crate::catalog_load::rebuild(store, generation).await
    };
    if let Err(e) = result.await {
        warnings
            .push(format!("the catalog snapshot was not saved ({e}); serving nodes will build the catalog themselves"));
    }
}

/// Builds the news index of the store's news generation and saves its
/// snapshot in the store, so serving nodes load it instead of each reading
/// every article. The import holds nothing else by then (its chunks and
/// file are dropped), and the index is dropped once encoded. A failure is
/// a warning (nodes then build).
async fn snapshot_news(store: &Arc<dyn Store>, warnings: &mut Vec<String>) {
    let result = async {
        let generation = store.generations().await?.news;
        crate::news_load::rebuild(&**store, generation).await
    };
    match result.await {
        Ok(true) => {}
        Ok(false) => warnings.push(
            "the news changed while its index was built, so no news index snapshot was saved; serving nodes \
             will build the news index themselves"
                .to_owned(),
        ),
        Err(e) => warnings.push(format!(
            "the news index snapshot was not saved ({e}); serving nodes will build the news index themselves"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_is_registered_once_with_distinct_arguments() {
        let mut names: Vec<&str> = FORMATS.iter().map(|f| f.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), FORMATS.len(), "a name registered twice");
        for f in FORMATS {
            assert_eq!(format(f.name).map(|g| g.name), Some(f.name));
            let mut args: Vec<&str> = f.args.iter().map(|a| a.name).collect();
            args.sort_unstable();
            args.dedup();
            assert_eq!(args.len(), f.args.len(), "{}: an argument named twice", f.name);
        }
        assert!(format("no-such-format").is_none());
    }

    #[test]
    fn counts_add_up_only_when_every_part_is_counted() {
        let c = Counts { read: 10, new: 4, changed: 3, unchanged: 2, set_aside: 1 };
        assert!(c.adds_up());
        assert!(!Counts { set_aside: 0, ..c }.adds_up());
    }
}
