//! Rows resolved to an ISIN made [`CorporateAction`]s (contract 13.1):
//! rows from any file, NSE or BSE, are one action when ISIN, type, ex-date
//! and figures agree (the `FACE VALUE` column and a dividend's `kind` are
//! not compared). The first row's `purpose` and record date are kept, the
//! most specific `kind`, the first `new_isin`, and the union of sources.
//!
//! A row that gives none of its type's figures (BSE's "Right Issue of
//! Equity Shares" beside NSE's "Rights 1:4 @ Premium Rs 282/-") disagrees
//! with no figures: it joins the action of its ISIN, type and ex-date that
//! has figures when there is exactly one, else it is an action of its own.
//!
//! Pure: no store; the same rows give the same actions and ids, ordered by
//! ex-date, then id.

use std::collections::HashMap;

use chrono::NaiveDate;
use mds_domain::actions::{Action, ActionId, ActionType, CorporateAction, Source, sort_sources};
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
    /// The actions, by ex-date, then id.
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
    let mut by_id: HashMap<ActionId, usize> = HashMap::new();
    // The actions with figures of each ISIN, type and ex-date.
    let mut by_day: HashMap<(Isin, ActionType, NaiveDate), Vec<usize>> = HashMap::new();
    let (figured, bare): (Vec<ResolvedAction>, Vec<ResolvedAction>) =
        rows.into_iter().partition(|r| !r.action.lacks_figures());
    for row in figured {
        let day = (row.isin.clone(), row.action.action_type(), row.ex_date);
        if let Some(i) = add(&mut out, &mut by_id, row) {
            by_day.entry(day).or_default().push(i);
        }
    }
    for row in bare {
        let day = (row.isin.clone(), row.action.action_type(), row.ex_date);
        match by_day.get(&day).map(Vec::as_slice) {
            Some(&[i]) => join(&mut out, i, &row),
            _ => {
                add(&mut out, &mut by_id, row);
            }
        }
    }
    out.actions.sort_by(|a, b| (a.ex_date, &a.id).cmp(&(b.ex_date, &b.id)));
    out
}

/// Adds `row` to the action of its id, or makes it one; `Some(index)` of
/// an action made.
fn add(out: &mut Merged, by_id: &mut HashMap<ActionId, usize>, row: ResolvedAction) -> Option<usize> {
    let id = ActionId::of(&row.isin, row.ex_date, &row.action);
    if let Some(&i) = by_id.get(&id) {
        join(out, i, &row);
        return None;
    }
    out.rows += 1;
    let i = out.actions.len();
    by_id.insert(id.clone(), i);
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
    Some(i)
}

/// Counts `row` as a publication of action `i`.
fn join(out: &mut Merged, i: usize, row: &ResolvedAction) {
    out.rows += 1;
    let action = &mut out.actions[i];
    if action.sources.contains(&row.source) {
        out.repeats += 1;
    } else {
        out.across_exchanges += 1;
        action.sources.push(row.source);
        sort_sources(&mut action.sources);
    }
    action.record_date = action.record_date.or(row.record_date);
    action.action.take_unsaid(&row.action);
}

#[cfg(test)]
mod tests {
    use mds_domain::Exchange;
    use mds_domain::actions::{Dividend, DividendKind, Rights};

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
        let a = m.actions.iter().find(|a| a.factor.is_none() && a.purpose.contains("44")).unwrap();
        assert_eq!(a.sources, vec![Exchange::Nse, Exchange::Bse]);
        assert_eq!(a.purpose, "Final Dividend - Rs. - 44.0000");
        assert_eq!(
            a.action,
            Action::Dividend { dividend: Dividend { amount: Some(44.0), kind: Some(DividendKind::Final) } }
        );
        assert_ne!(m.actions[0].id, m.actions[1].id);
        assert!(m.actions[0].id < m.actions[1].id, "ordered by ex-date, then id");
    }

    #[test]
    fn a_row_without_figures_joins_the_one_action_with_them() {
        let rights = |source, ratio: Option<(u32, u32)>, purpose: &str| ResolvedAction {
            action: Action::Rights {
                rights: Rights {
                    ratio_new: ratio.map(|r| r.0),
                    ratio_held: ratio.map(|r| r.1),
                    price: ratio.map(|_| 292.0),
                },
            },
            ..row(source, 0.0, None, purpose)
        };
        let bse = rights(Exchange::Bse, None, "Right Issue of Equity Shares");
        let nse = rights(Exchange::Nse, Some((1, 4)), "Rights 1:4 @ Premium Rs 282/-");
        let m = merge([bse.clone(), nse.clone()]);
        assert_eq!((m.rows, m.across_exchanges, m.actions.len()), (2, 1, 1));
        assert_eq!(m.actions[0].sources, vec![Exchange::Nse, Exchange::Bse]);
        assert_eq!(m.actions[0].purpose, "Rights 1:4 @ Premium Rs 282/-");
        // Two NSE issues on the day: the BSE row cannot say which; its own.
        let other = rights(Exchange::Nse, Some((1, 5)), "Rights 1:5 @ Premium Rs 282/-");
        assert_eq!(merge([bse.clone(), nse.clone(), other]).actions.len(), 3);
        // Alone, it is an action.
        assert_eq!(merge([bse]).actions.len(), 1);
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
