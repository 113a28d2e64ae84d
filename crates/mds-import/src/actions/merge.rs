//! Rows resolved to an ISIN made [`CorporateAction`]s (contract 13.1):
//! rows from any file, NSE or BSE, are one action when ISIN, type, ex-date
//! and figures agree (the `FACE VALUE` column and a dividend's `kind` are
//! not compared). The first row's `purpose` and record date are kept, the
//! most specific `kind`, the first `new_isin`, and the union of sources.
//! Pure: no store, the same input gives the same actions and ids.

use std::collections::HashMap;

use chrono::NaiveDate;
use mds_domain::actions::{Action, ActionId, CorporateAction, Source, sort_sources};
use mds_domain::{Isin, Ticker};

/// One action of one row, with the ISIN the caller resolved it to.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedAction {
    /// The ISIN the row was resolved to.
    pub isin: Isin,
    /// The ISIN's NSE symbol on the ex-date, else its BSE id.
    pub symbol: Ticker,
    /// The file it came from.
    pub source: Source,
    /// The action, as read from the row's text.
    pub action: Action,
    /// The row's ex-date.
    pub ex_date: NaiveDate,
    /// The row's record date.
    pub record_date: Option<NaiveDate>,
    /// The row's text, as published.
    pub purpose: String,
}

/// The actions of [`merge`], and how many rows went into them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Merged {
    /// The actions, in the order their first row came.
    pub actions: Vec<CorporateAction>,
    /// Rows (actions of rows) given.
    pub rows: usize,
    /// Rows that were an action already made by an earlier row of the same
    /// exchange (overlapping files, repeated rows).
    pub repeats: usize,
    /// Rows that were an action already made by a row of the other
    /// exchange.
    pub across_exchanges: usize,
}

/// Makes actions of resolved rows, one per ISIN, type, ex-date and figures.
pub fn merge(rows: impl IntoIterator<Item = ResolvedAction>) -> Merged {
    let mut out = Merged::default();
    let mut index: HashMap<ActionId, usize> = HashMap::new();
    for row in rows {
        out.rows += 1;
        let id = ActionId::of(&row.isin, row.ex_date, &row.action);
        match index.get(&id) {
            Some(&i) => {
                let action = &mut out.actions[i];
                if action.sources.contains(&row.source) {
                    out.repeats += 1;
                } else {
                    out.across_exchanges += 1;
                    action.sources.push(row.source);
                    sort_sources(&mut action.sources);
                }
                action.record_date = action.record_date.or(row.record_date);
                fold_figures(&mut action.action, &row.action);
            }
            None => {
                index.insert(id.clone(), out.actions.len());
                out.actions.push(CorporateAction {
                    id,
                    isin: row.isin,
                    symbol: row.symbol,
                    ex_date: row.ex_date,
                    record_date: row.record_date,
                    purpose: row.purpose,
                    sources: vec![row.source],
                    factor: row.action.factor(),
                    action: row.action,
                });
            }
        }
    }
    out
}

/// Takes from `other` (the same action) what `kept` does not say: a
/// dividend's kind, a split's new ISIN.
fn fold_figures(kept: &mut Action, other: &Action) {
    match (kept, other) {
        (Action::Dividend { dividend: k }, Action::Dividend { dividend: o }) => k.kind = k.kind.or(o.kind),
        (Action::Split { split: k }, Action::Split { split: o })
        | (Action::Consolidation { consolidation: k }, Action::Consolidation { consolidation: o })
            if k.new_isin.is_none() =>
        {
            k.new_isin.clone_from(&o.new_isin);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use mds_domain::Exchange;
    use mds_domain::actions::{Dividend, DividendKind};

    use super::*;

    fn row(source: Source, amount: f64, kind: Option<DividendKind>, purpose: &str) -> ResolvedAction {
        ResolvedAction {
            isin: Isin::parse("INE296A01024").unwrap(),
            symbol: Ticker::parse("BAJFINANCE").unwrap(),
            source,
            action: Action::Dividend { dividend: Dividend { amount: Some(amount), kind } },
            ex_date: NaiveDate::from_ymd_opt(2025, 5, 30).unwrap(),
            record_date: None,
            purpose: purpose.into(),
        }
    }

    #[test]
    fn nse_and_bse_publications_are_one_action() {
        let m = merge([
            row(Exchange::Bse, 44.0, Some(DividendKind::Final), "Final Dividend - Rs. - 44.0000"),
            row(Exchange::Nse, 44.0, None, "Dividend - Rs 44 Per Share"),
            row(Exchange::Nse, 44.0, None, "Dividend - Rs 44 Per Share"),
            row(Exchange::Nse, 4.0, None, "Dividend - Rs 4 Per Share"),
        ]);
        assert_eq!((m.rows, m.repeats, m.across_exchanges, m.actions.len()), (4, 1, 1, 2));
        let a = &m.actions[0];
        assert_eq!(a.sources, vec![Exchange::Nse, Exchange::Bse]);
        assert_eq!(a.purpose, "Final Dividend - Rs. - 44.0000");
        assert_eq!(
            a.action,
            Action::Dividend { dividend: Dividend { amount: Some(44.0), kind: Some(DividendKind::Final) } }
        );
        assert_ne!(m.actions[0].id, m.actions[1].id);
    }

    #[test]
    fn the_most_specific_kind_is_kept_whichever_comes_first() {
        let m = merge([
            row(Exchange::Nse, 44.0, None, "Dividend - Rs 44 Per Share"),
            row(Exchange::Bse, 44.0, Some(DividendKind::Final), "Final Dividend - Rs. - 44.0000"),
        ]);
        assert_eq!(m.actions.len(), 1);
        assert_eq!(m.actions[0].purpose, "Dividend - Rs 44 Per Share");
        assert_eq!(
            m.actions[0].action,
            Action::Dividend { dividend: Dividend { amount: Some(44.0), kind: Some(DividendKind::Final) } }
        );
    }
}
