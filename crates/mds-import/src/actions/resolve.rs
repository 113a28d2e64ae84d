//! Rows of the exchanges' files resolved to the ISIN they concern on their
//! ex-date (contract 13.1), given the identity history the store holds
//! (section 10), through [`Identity`]. Pure: the caller supplies the
//! history (a node's catalog); unresolved rows are `None`, never guessed.
//!
//! - An NSE row: the ISIN whose NSE period of the row's symbol holds the
//!   ex-date. NSE names every row by the symbol current when the file was
//!   made, so when no period of the symbol holds the ex-date, the symbol is
//!   followed backwards through NSE's symbol-change rows (the old symbol of
//!   a change made after the ex-date) and looked up again.
//! - A BSE row: the ISIN its security code carried on the ex-date
//!   ([`Identity::bse_code_isin`]), else the BSE period of its security id.
//! - On the day an ISIN changed, both the old ISIN's period (ending that
//!   day, periods are half-open) and the new one's (starting that day)
//!   touch the ex-date: the action belongs to the earlier ISIN, and the
//!   later is its successor ([`Resolved::successor`], a split's
//!   `new_isin`).

use chrono::NaiveDate;
use mds_domain::snapshot::SymbolChange;
use mds_domain::{Exchange, Isin, SymbolPeriod, Ticker};

/// The identity history resolution reads.
pub trait Identity {
    /// Every period of `symbol` on `exchange` (none: no ISIN carried it).
    fn periods(&self, exchange: Exchange, symbol: &Ticker) -> Vec<SymbolPeriod>;

    /// The ISIN BSE's security `code` carried on `day`, when BSE's
    /// snapshots tell (`None` otherwise).
    fn bse_code_isin(&self, code: &str, day: NaiveDate) -> Option<Isin>;

    /// The ISIN `isin` replaced and the day it did (the `from` and date of
    /// an `isin_changed` to it), when it replaced one.
    fn predecessor(&self, isin: &Isin) -> Option<(Isin, NaiveDate)> {
        let _ = isin;
        None
    }
}

/// `r` moved back to the ISIN the security carried on `day` when `r`'s
/// ISIN replaced another on or after it (contract 10.3: an exchange's list
/// may show a successor with its symbol's older date of listing, so its
/// period reaches back before the split that made it): before the change
/// the action is the predecessor's, and on its day too, with the successor
/// named (13.1).
pub fn carried_on(identity: &impl Identity, mut r: Resolved, day: NaiveDate) -> Resolved {
    for _ in 0..MAX_HOPS {
        match identity.predecessor(&r.isin) {
            Some((p, changed)) if day <= changed && p != r.isin => {
                r.successor = (day == changed).then(|| r.isin.clone());
                r.isin = p;
            }
            _ => break,
        }
    }
    r
}

/// Where a row was resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The ISIN the action concerns.
    pub isin: Isin,
    /// The symbol it carried on the exchange on the ex-date.
    pub symbol: Ticker,
    /// The ISIN that took over the symbol on the ex-date, when the ISIN
    /// changed that day.
    pub successor: Option<Isin>,
}

/// How many symbol changes are followed back at most (a loop in the
/// change rows ends here).
const MAX_HOPS: usize = 16;

/// The ISIN that carried `symbol` on `exchange` on `day`, with its successor
/// that day, if any.
fn on_day(identity: &impl Identity, exchange: Exchange, symbol: &Ticker, day: NaiveDate) -> Option<Resolved> {
    let periods = identity.periods(exchange, symbol);
    let holds = |p: &&SymbolPeriod| p.from <= day && p.to.is_none_or(|to| day < to);
    let ended = periods.iter().find(|p| p.to == Some(day) && p.from < day);
    let started = periods.iter().find(|p| p.from == day);
    match (ended, started) {
        (Some(old), Some(new)) if old.isin != new.isin => {
            Some(Resolved { isin: old.isin.clone(), symbol: symbol.clone(), successor: Some(new.isin.clone()) })
        }
        // A period ending on the day with none starting: the ISIN that
        // carried the symbol until that day's change is the action's.
        (Some(old), None) if !periods.iter().any(|p| holds(&p)) => {
            Some(Resolved { isin: old.isin.clone(), symbol: symbol.clone(), successor: None })
        }
        _ => periods.iter().find(holds).map(|p| Resolved {
            isin: p.isin.clone(),
            symbol: symbol.clone(),
            successor: None,
        }),
    }
}

/// An NSE row of `symbol` going ex on `ex_date`, following the symbol back
/// through `changes` (NSE's symbol-change rows) when it was not carried
/// then.
pub fn resolve_nse(
    identity: &impl Identity,
    changes: &[SymbolChange],
    symbol: &Ticker,
    ex_date: NaiveDate,
) -> Option<Resolved> {
    let mut s = symbol.clone();
    for _ in 0..MAX_HOPS {
        if let Some(r) = on_day(identity, Exchange::Nse, &s, ex_date) {
            return Some(r);
        }
        // The latest change to `s` made after the ex-date: `s` was its old
        // symbol before it.
        let back = changes.iter().filter(|c| c.to == s && c.date > ex_date).min_by_key(|c| c.date)?;
        s = back.from.clone();
    }
    None
}

/// A BSE row of security `code` and id `security_id` going ex on `ex_date`.
pub fn resolve_bse(identity: &impl Identity, code: &str, security_id: &str, ex_date: NaiveDate) -> Option<Resolved> {
    let id = Ticker::parse(security_id).ok();
    if let Some(isin) = identity.bse_code_isin(code, ex_date) {
        let symbol = id.clone().or_else(|| Ticker::parse(code).ok())?;
        let successor = id.as_ref().and_then(|t| on_day(identity, Exchange::Bse, t, ex_date)).and_then(|r| r.successor);
        return Some(Resolved { isin, symbol, successor });
    }
    on_day(identity, Exchange::Bse, &id?, ex_date)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// Periods by exchange and symbol, BSE codes by code.
    #[derive(Default)]
    struct History {
        periods: HashMap<(Exchange, String), Vec<SymbolPeriod>>,
        codes: HashMap<String, (Isin, NaiveDate)>,
    }

    impl History {
        fn carried(mut self, exchange: Exchange, symbol: &str, isin: &str, from: &str, to: Option<&str>) -> Self {
            self.periods.entry((exchange, symbol.into())).or_default().push(SymbolPeriod {
                isin: Isin::parse(isin).unwrap(),
                name: symbol.into(),
                from: from.parse().unwrap(),
                to: to.map(|t| t.parse().unwrap()),
            });
            self
        }
    }

    impl Identity for History {
        fn periods(&self, exchange: Exchange, symbol: &Ticker) -> Vec<SymbolPeriod> {
            self.periods.get(&(exchange, symbol.as_str().to_owned())).cloned().unwrap_or_default()
        }
        fn bse_code_isin(&self, code: &str, day: NaiveDate) -> Option<Isin> {
            self.codes.get(code).filter(|(_, since)| *since <= day).map(|(i, _)| i.clone())
        }
    }

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    fn t(s: &str) -> Ticker {
        Ticker::parse(s).unwrap()
    }

    const OLD: &str = "INE476A01014";
    const NEW: &str = "INE476A01022";

    #[test]
    fn an_action_on_the_day_the_isin_changed_belongs_to_the_earlier() {
        let h = History::default().carried(Exchange::Nse, "CANBK", OLD, "2000-01-01", Some("2024-05-15")).carried(
            Exchange::Nse,
            "CANBK",
            NEW,
            "2024-05-15",
            None,
        );
        let r = resolve_nse(&h, &[], &t("CANBK"), d("2024-05-15")).unwrap();
        assert_eq!((r.isin.as_str(), r.successor.as_ref().map(Isin::as_str)), (OLD, Some(NEW)));
        let r = resolve_nse(&h, &[], &t("CANBK"), d("2024-05-16")).unwrap();
        assert_eq!((r.isin.as_str(), r.successor), (NEW, None));
        let r = resolve_nse(&h, &[], &t("CANBK"), d("2024-05-14")).unwrap();
        assert_eq!(r.isin.as_str(), OLD);
        assert_eq!(resolve_nse(&h, &[], &t("CANBK"), d("1999-12-31")), None, "before any period: unresolved");
    }

    #[test]
    fn a_symbol_is_followed_back_through_its_changes() {
        // ACUTAAS was AMIORG until 2025-06-01; a 2022 row names it ACUTAAS.
        let h = History::default().carried(Exchange::Nse, "AMIORG", OLD, "2020-01-01", Some("2025-06-01")).carried(
            Exchange::Nse,
            "ACUTAAS",
            OLD,
            "2025-06-01",
            None,
        );
        let change = SymbolChange { from: t("AMIORG"), to: t("ACUTAAS"), date: d("2025-06-01"), company: "x".into() };
        let r = resolve_nse(&h, std::slice::from_ref(&change), &t("ACUTAAS"), d("2022-08-01")).unwrap();
        assert_eq!((r.isin.as_str(), r.symbol.as_str()), (OLD, "AMIORG"));
        assert_eq!(resolve_nse(&h, &[], &t("ACUTAAS"), d("2022-08-01")), None, "without the change: unresolved");
        // A loop in the change rows ends.
        let back = SymbolChange { from: t("ACUTAAS"), to: t("AMIORG"), date: d("2025-07-01"), company: "x".into() };
        assert_eq!(resolve_nse(&History::default(), &[change, back], &t("ACUTAAS"), d("2022-08-01")), None);
    }

    #[test]
    fn a_bse_row_by_its_code_else_its_security_id() {
        let mut h = History::default().carried(Exchange::Bse, "CANBK", OLD, "2000-01-01", None);
        assert_eq!(resolve_bse(&h, "532483", "CANBK", d("2024-01-01")).unwrap().isin.as_str(), OLD);
        h.codes.insert("532483".into(), (Isin::parse(NEW).unwrap(), d("2020-01-01")));
        assert_eq!(resolve_bse(&h, "532483", "CANBK", d("2024-01-01")).unwrap().isin.as_str(), NEW);
        assert_eq!(resolve_bse(&h, "999999", "NOSUCH", d("2024-01-01")), None);
    }
}
