//! What the corporate-actions role ([`crate::ActionStore`], contract
//! section 13) is given and answers besides the actions themselves: the
//! file rows an import keeps (defined in [`mds_domain::action_rows`]), a
//! row's move, an import's counts, and the filter of a read.

use chrono::NaiveDate;
use mds_domain::actions::{ActionType, Source};
use mds_domain::{Isin, Ticker};

pub use mds_domain::action_rows::{KeptUnresolved, ResolvedRow, UnresolvedAction};

/// A stored row resolved again to another ISIN: its actions (those of its
/// exchange, ex-date and ISIN) move there ([`crate::ActionStore::move_actions`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionMove {
    /// The row as stored (`isin`: where its actions are).
    pub row: ResolvedRow,
    /// The ISIN it resolves to now.
    pub to: Isin,
    /// The symbol it carried on the ex-date.
    pub symbol: Ticker,
    /// The ISIN that took over on the ex-date, when the ISIN changed that
    /// day (a split's `new_isin`).
    pub successor: Option<Isin>,
}

/// What [`crate::ActionStore::move_actions`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ActionsMoved {
    /// Rows whose ISIN was rewritten.
    pub rows: u64,
    /// Stored actions that left their ISIN (removed, or an exchange's
    /// source taken from them).
    pub moved: u64,
    /// Of those, the ones stored at their new ISIN as new actions…
    pub new: u64,
    /// … and the ones that joined an action there (stored before, or
    /// moved with them): `moved = new + joined`.
    pub joined: u64,
    /// Whether splits moved (or stored from rows kept unresolved) changed
    /// the identity history (then the `companies` generation moved).
    pub identity_changed: bool,
    /// The actions of rows kept unresolved that resolve now, stored as an
    /// import stores them (`unresolved_resolved`: the rows moved from the
    /// unresolved to the resolved rows kept).
    pub resolved: ActionImport,
}

/// What [`crate::ActionStore::import_actions`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ActionImport {
    /// Actions not stored before.
    pub new: u64,
    /// Actions stored before that this import changed (a source added, a
    /// kind or record date learnt).
    pub changed: u64,
    /// Actions stored before exactly as they now are.
    pub unchanged: u64,
    /// Unresolved rows not stored before.
    pub unresolved_new: u64,
    /// Unresolved rows stored before that this import resolved (removed).
    pub unresolved_resolved: u64,
    /// Whether its splits and consolidations changed the identity history
    /// (an `isin_changed` dated or linked, contract 10.3): then the
    /// `companies` generation moved, and the catalog is to be rebuilt.
    pub identity_changed: bool,
}

/// Which actions a read returns (AND of what is set); both bounds are
/// ex-dates, inclusive.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ActionFilter {
    /// Only this type.
    pub action_type: Option<ActionType>,
    /// Ex-dates on or after.
    pub from: Option<NaiveDate>,
    /// Ex-dates on or before.
    pub to: Option<NaiveDate>,
    /// Only actions this exchange published.
    pub source: Option<Source>,
}
