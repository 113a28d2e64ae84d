//! One import command's files read, resolved and merged (contract 13.1):
//! what `mds import nse-actions` and `bse-actions` hand to the store, and
//! the counts of their summary, which add up: every action of every row is
//! resolved (then new, unchanged, a repeat or merged across exchanges,
//! counted by the store and [`merge`]) or unresolved.

use chrono::NaiveDate;
use mds_domain::action_rows::{KeptUnresolved, ResolvedRow, UnresolvedAction};
use mds_domain::snapshot::SymbolChange;
use mds_domain::{Exchange, Ticker};

use super::purpose::ParsedAction;
use super::resolve::{Identity, Resolved, carried_on, resolve_bse, resolve_nse};
use super::{Merged, ResolvedAction, bse, merge, nse, row_actions};
use crate::ImportError;

/// The files of one command, read, resolved and merged.
#[derive(Debug, Default)]
pub struct Batch {
    /// The actions, merged.
    pub merged: Merged,
    /// Rows read (each may hold several actions).
    pub rows: usize,
    /// Actions of rows resolved (`merged.rows`).
    pub resolved: usize,
    /// Rows resolved to no ISIN (each counted once, whatever it holds),
    /// with what resolving and reading them later needs.
    pub unresolved: Vec<KeptUnresolved>,
    /// Rows resolved, with where to: an earlier import may have kept them
    /// unresolved, and a later one may resolve them again.
    pub resolved_rows: Vec<ResolvedRow>,
}

/// What a row is resolved by.
#[derive(Debug, Clone, PartialEq)]
enum By {
    /// NSE's symbol (the key's `code`), followed back through its changes.
    Symbol,
    /// BSE's security code (the key's `code`) and security id.
    Code {
        /// The security id (BSE's `Security Name` column).
        security_id: String,
    },
}

/// One row of an action file, read and its text typed: what resolution
/// and the merge need.
#[derive(Debug, Clone)]
struct Row {
    by: By,
    /// The key it is kept under unresolved (the file, line and text too).
    key: UnresolvedAction,
    record_date: Option<NaiveDate>,
    /// NSE's series and face value, kept with the row if it is unresolved.
    series: Option<String>,
    face_value: Option<f64>,
    actions: Vec<ParsedAction>,
}

/// The files of one command, read (every row parsed and its text typed),
/// not yet resolved: a malformed file is refused before the identity
/// history is needed.
#[derive(Debug, Clone)]
pub struct ReadFiles {
    exchange: Exchange,
    rows: Vec<Row>,
}

impl ReadFiles {
    /// The exchange whose files they are.
    pub fn exchange(&self) -> Exchange {
        self.exchange
    }

    /// Rows read.
    pub fn rows(&self) -> usize {
        self.rows.len()
    }
}

/// Reads `files` (name, bytes) of `exchange`; the first malformed file is
/// the error (with its name), nothing read.
pub fn read_files(exchange: Exchange, files: &[(String, Vec<u8>)]) -> Result<ReadFiles, (String, ImportError)> {
    let mut rows = Vec::new();
    for (name, bytes) in files {
        let key = |code: String, ex_date, purpose, line: usize| UnresolvedAction {
            source: exchange,
            code,
            ex_date,
            purpose,
            file: name.clone(),
            line: line as u64,
        };
        match exchange {
            Exchange::Nse => {
                for r in nse::read(bytes).map_err(|e| (name.clone(), e))? {
                    let actions = super::nse_actions(&r);
                    rows.push(Row {
                        by: By::Symbol,
                        key: key(r.symbol.as_str().to_owned(), r.ex_date, r.purpose, r.line),
                        record_date: r.record_date,
                        series: r.series,
                        face_value: r.face_value,
                        actions,
                    });
                }
            }
            Exchange::Bse => {
                for r in bse::read(bytes).map_err(|e| (name.clone(), e))? {
                    let actions = super::bse_actions(&r);
                    rows.push(Row {
                        by: By::Code { security_id: r.security_name.clone() },
                        key: key(r.security_code, r.ex_date, r.purpose, r.line),
                        record_date: r.record_date,
                        series: None,
                        face_value: None,
                        actions,
                    });
                }
            }
        }
    }
    Ok(ReadFiles { exchange, rows })
}

/// Resolves the rows `read` through `identity` (and, for NSE, its symbol
/// `changes`) and merges the actions of those resolved.
pub fn resolve(read: ReadFiles, identity: &impl Identity, changes: &[SymbolChange]) -> Batch {
    resolve_rows(read.rows, identity, changes)
}

/// Resolves rows kept unresolved by earlier imports ([`Batch::unresolved`],
/// of either exchange) through `identity` and `changes`, their actions read
/// from their text as [`read_files`] reads a file's, and merges the actions
/// of those resolved: what an import that makes their ISIN known stores
/// (contract 10.3). Those still unresolved are in the batch's `unresolved`.
pub fn resolve_kept(kept: Vec<KeptUnresolved>, identity: &impl Identity, changes: &[SymbolChange]) -> Batch {
    let rows = kept
        .into_iter()
        .map(|k| Row {
            by: match k.row.source {
                Exchange::Nse => By::Symbol,
                Exchange::Bse => By::Code { security_id: k.security_id.unwrap_or_default() },
            },
            actions: row_actions(k.series.as_deref(), &k.row.purpose, k.face_value),
            key: k.row,
            record_date: k.record_date,
            series: k.series,
            face_value: k.face_value,
        })
        .collect();
    resolve_rows(rows, identity, changes)
}

/// [`resolve`] of `rows`, each of its key's exchange.
fn resolve_rows(rows: Vec<Row>, identity: &impl Identity, changes: &[SymbolChange]) -> Batch {
    let mut batch = Batch { rows: rows.len(), ..Batch::default() };
    let mut resolved: Vec<ResolvedAction> = Vec::new();
    for Row { by, key, record_date, series, face_value, actions } in rows {
        let security_id = match by {
            By::Symbol => None,
            By::Code { security_id } => Some(security_id),
        };
        let Some(at) = resolve_row(identity, changes, &key, security_id.as_deref()) else {
            batch.unresolved.push(KeptUnresolved { row: key, security_id, series, face_value, record_date });
            continue;
        };
        for parsed in actions {
            let mut action = parsed.action;
            if let Some(next) = &at.successor {
                action.set_new_isin(next);
            }
            batch.resolved += 1;
            resolved.push(ResolvedAction {
                isin: at.isin.clone(),
                symbol: at.symbol.clone(),
                source: key.source,
                action,
                ex_date: key.ex_date,
                record_date,
                purpose: key.purpose.clone(),
            });
        }
        batch.resolved_rows.push(ResolvedRow { key, security_id, isin: at.isin });
    }
    batch.merged = merge(resolved);
    batch
}

/// Where the row of `key` (and, for BSE, `security_id`) resolves through
/// `identity` (and, for NSE, its symbol `changes`): the one resolution of
/// a row, whether read from a file or kept from an earlier import and
/// resolved again (contract 10.3). `None`: unresolved.
pub fn resolve_row(
    identity: &impl Identity,
    changes: &[SymbolChange],
    key: &UnresolvedAction,
    security_id: Option<&str>,
) -> Option<Resolved> {
    let at = match (key.source, security_id) {
        (Exchange::Bse, Some(id)) => resolve_bse(identity, &key.code, id, key.ex_date),
        (Exchange::Bse, None) => resolve_bse(identity, &key.code, "", key.ex_date),
        (Exchange::Nse, _) => resolve_nse(identity, changes, &Ticker::parse(&key.code).ok()?, key.ex_date),
    }?;
    Some(carried_on(identity, at, key.ex_date))
}

/// Reads, resolves and merges `files` (name, bytes) of `exchange`
/// ([`read_files`], then [`resolve`]); the first malformed file is the
/// error (with its name), nothing read.
pub fn read(
    exchange: Exchange,
    files: &[(String, Vec<u8>)],
    identity: &impl Identity,
    changes: &[SymbolChange],
) -> Result<Batch, (String, ImportError)> {
    Ok(resolve(read_files(exchange, files)?, identity, changes))
}

/// NSE's symbol changes among identity events (what following a symbol
/// back reads), from `(from, to, date)` of each `symbol_changed` on NSE.
pub fn nse_symbol_changes<'a>(
    changes: impl IntoIterator<Item = (&'a Ticker, &'a Ticker, NaiveDate)>,
) -> Vec<SymbolChange> {
    let mut out: Vec<SymbolChange> = changes
        .into_iter()
        .map(|(from, to, date)| SymbolChange { from: from.clone(), to: to.clone(), date, company: String::new() })
        .collect();
    out.sort_by(|a, b| (a.date, &a.from, &a.to).cmp(&(b.date, &b.from, &b.to)));
    out.dedup_by(|a, b| (a.date, &a.from, &a.to) == (b.date, &b.from, &b.to));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every NSE symbol carried by one ISIN forever; no BSE code known.
    struct Everything;

    impl Identity for Everything {
        fn periods(&self, _: Exchange, symbol: &Ticker) -> Vec<mds_domain::SymbolPeriod> {
            let isin = mds_domain::Isin::parse("INE476A01014").unwrap();
            if symbol.as_str() == "NOSUCH" {
                return Vec::new();
            }
            vec![mds_domain::SymbolPeriod { isin, name: "x".into(), from: NaiveDate::MIN, to: None }]
        }
        fn bse_code_isin(&self, _: &str, _: NaiveDate) -> Option<mds_domain::Isin> {
            None
        }
    }

    #[test]
    fn the_counts_add_up() {
        let csv = "\"SYMBOL\",\"COMPANY NAME\",\"SERIES\",\"PURPOSE\",\"FACE VALUE\",\"EX-DATE\",\"RECORD DATE\",\"BOOK CLOSURE START DATE\",\"BOOK CLOSURE END DATE\"\n\
\"CANBK\",\"Canara Bank\",\"EQ\",\"Dividend - Rs 6 Per Share & Special Dividend Rs 3 Per Share\",\"10\",\"15-May-2024\",\"15-May-2024\",\"-\",\"-\"\n\
\"CANBK\",\"Canara Bank\",\"EQ\",\"Dividend - Rs 6 Per Share & Special Dividend Rs 3 Per Share\",\"2\",\"15-May-2024\",\"15-May-2024\",\"-\",\"-\"\n\
\"NOSUCH\",\"Gone\",\"EQ\",\"Bonus 1:1\",\"10\",\"15-May-2024\",\"-\",\"-\",\"-\"\n";
        let b = read(Exchange::Nse, &[("f.csv".into(), csv.as_bytes().to_vec())], &Everything, &[]).unwrap();
        assert_eq!((b.rows, b.resolved, b.unresolved.len(), b.resolved_rows.len()), (3, 4, 1, 2));
        assert_eq!((b.merged.rows, b.merged.repeats, b.merged.actions.len()), (4, 2, 2));
        assert_eq!(b.unresolved[0].row.line, 4);
        let bad = "\"SYMBOL\",\"COMPANY NAME\",\"SERIES\",\"PURPOSE\",\"FACE VALUE\",\"EX-DATE\",\"RECORD DATE\",\"BOOK CLOSURE START DATE\",\"BOOK CLOSURE END DATE\"\n\"CANBK\",\"x\",\"EQ\",\"Bonus 1:1\",\"10\",\"2024-05-15\",\"-\",\"-\",\"-\"\n";
        let e = read(Exchange::Nse, &[("bad.csv".into(), bad.as_bytes().to_vec())], &Everything, &[]).unwrap_err();
        assert_eq!(e.0, "bad.csv");
        assert_eq!(e.1.rows()[0].line, 2);
    }
}
