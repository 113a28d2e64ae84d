//! The rule that rebuilds a security's identity on a day from its identity
//! events (contract 10.2; the choices it leaves open are in
//! docs/API-DESIGN.md, "Identity over time"). The catalog applies it once
//! per event date when it is built ([`crate::history`]); nothing replays
//! events on the request path.
//!
//! Replaying an ISIN's events dated up to the day, in order:
//! - `listed {exchange, symbol}`: listed on that exchange, under `symbol`;
//! - `symbol_changed {exchange, to}`: its symbol there is `to`;
//! - `name_changed {to}`: its name is `to`;
//! - `delisted {exchange}`: no longer listed there;
//! - `isin_changed` from this ISIN: no longer listed anywhere;
//! - `isin_changed` to this ISIN: it takes over the old ISIN's standing
//!   just before the change (exchanges, symbols, name) and keeps its own
//!   listings (a list may date them before the change), or, when neither
//!   was listed anywhere the history knows, is listed on an exchange
//!   unnamed (which any `delisted` ends).
//!
//! The ISIN is on the list that day when it is listed somewhere. Its
//! ticker is its NSE symbol when listed on NSE, else its BSE one; a symbol
//! or name not set by the events up to the day is the `from` of its first
//! later change, else today's.

use std::collections::HashMap;

use chrono::NaiveDate;
use mds_domain::{Exchange, IdentityChange, IdentityEvent, Isin};

/// Listed on NSE.
pub(crate) const ON_NSE: u8 = 1;
/// Listed on BSE.
pub(crate) const ON_BSE: u8 = 2;
/// Listed on an exchange the history does not name (a successor of an ISIN
/// that was listed nowhere it knows).
pub(crate) const ON_UNNAMED: u8 = 4;

/// How deep a chain of `isin_changed` is followed back (a cycle ends here).
const MAX_CHAIN: u8 = 32;

fn bit(e: Exchange) -> u8 {
    match e {
        Exchange::Nse => ON_NSE,
        Exchange::Bse => ON_BSE,
    }
}

fn slot(e: Exchange) -> usize {
    match e {
        Exchange::Nse => 0,
        Exchange::Bse => 1,
    }
}

/// Where an ISIN stood after some of its events: the exchanges it was
/// listed on, its symbol on each (NSE, BSE), its name; `None`: not set by
/// those events.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Standing<'a> {
    /// `ON_*` bits.
    pub(crate) listed: u8,
    /// The symbol on NSE and on BSE.
    pub(crate) symbols: [Option<&'a str>; 2],
    /// The name.
    pub(crate) name: Option<&'a str>,
}

/// Every ISIN's events, for replaying them.
pub(crate) struct Histories<'a> {
    by_isin: HashMap<&'a str, Vec<&'a IdentityEvent>>,
}

impl<'a> Histories<'a> {
    /// The events of `events`, by ISIN (each ISIN's in the order given).
    pub(crate) fn new(events: &'a [(Isin, IdentityEvent)]) -> Self {
        let mut by_isin: HashMap<&'a str, Vec<&'a IdentityEvent>> = HashMap::new();
        for (isin, e) in events {
            by_isin.entry(isin.as_str()).or_default().push(e);
        }
        Histories { by_isin }
    }

    /// The events of `isin`, oldest first (none when it has none).
    pub(crate) fn of(&self, isin: &str) -> &[&'a IdentityEvent] {
        self.by_isin.get(isin).map(Vec::as_slice).unwrap_or_default()
    }

    /// Where `isin` stood at the end of `day`, after its events up to that
    /// day among its first `upto`.
    pub(crate) fn standing(&self, isin: &str, day: NaiveDate, upto: usize, depth: u8) -> Standing<'a> {
        let events = self.of(isin);
        let mut s = Standing::default();
        for &e in events[..upto.min(events.len())].iter().filter(|e| e.date <= day) {
            match &e.change {
                IdentityChange::Listed { exchange, symbol } => {
                    s.listed |= bit(*exchange);
                    s.symbols[slot(*exchange)] = Some(symbol.as_str());
                }
                IdentityChange::SymbolChanged { exchange, to, .. } => s.symbols[slot(*exchange)] = Some(to.as_str()),
                IdentityChange::NameChanged { to, .. } => s.name = Some(to.as_str()),
                IdentityChange::Delisted { exchange, .. } => s.listed &= !(bit(*exchange) | ON_UNNAMED),
                IdentityChange::IsinChanged { from, to, .. } if from.as_str() == isin && to.as_str() != isin => {
                    s.listed = 0;
                }
                IdentityChange::IsinChanged { from, to, .. } if to.as_str() == isin && from.as_str() != isin => {
                    let old = if depth >= MAX_CHAIN {
                        Standing::default()
                    } else {
                        let at = self.of(from.as_str()).iter().position(|&x| x == e).unwrap_or(usize::MAX);
                        self.standing(from.as_str(), e.date, at, depth + 1)
                    };
                    // Its own listings stay: a list may date the
                    // successor's listing before the change (NSE gives the
                    // company's listing day: FISCHER's INE771F01041 is
                    // "listed" 2025-07-10, its split 2025-09-12).
                    s.listed |= if old.listed == 0 && s.listed == 0 { ON_UNNAMED } else { old.listed };
                    for k in 0..2 {
                        s.symbols[k] = old.symbols[k].or(s.symbols[k]);
                    }
                    s.name = old.name.or(s.name);
                }
                IdentityChange::IsinChanged { .. } => {}
            }
        }
        s
    }

    /// `isin`'s ticker and name at the end of `day`, or `None` when it was
    /// not listed then; `today` is its ticker and name in the catalog.
    pub(crate) fn identity_on(
        &self,
        isin: &str,
        day: NaiveDate,
        today: (&'a str, &'a str),
    ) -> Option<(&'a str, &'a str)> {
        let s = self.standing(isin, day, usize::MAX, 0);
        if s.listed == 0 {
            return None;
        }
        let exchange = if s.listed & ON_NSE != 0 {
            Some(Exchange::Nse)
        } else if s.listed & ON_BSE != 0 {
            Some(Exchange::Bse)
        } else {
            None
        };
        let later = self.of(isin).iter().filter(|e| e.date > day);
        let ticker = match exchange {
            Some(x) => s.symbols[slot(x)],
            None => s.symbols[0].or(s.symbols[1]),
        }
        .or_else(|| {
            later.clone().find_map(|e| match &e.change {
                IdentityChange::SymbolChanged { exchange: x, from, .. } if exchange.is_none_or(|w| w == *x) => {
                    Some(from.as_str())
                }
                _ => None,
            })
        })
        .unwrap_or(today.0);
        let name = s
            .name
            .or_else(|| {
                later.clone().find_map(|e| match &e.change {
                    IdentityChange::NameChanged { from, .. } => Some(from.as_str()),
                    _ => None,
                })
            })
            .unwrap_or(today.1);
        Some((ticker, name))
    }

    /// The symbol `isin` carried on `exchange` at the end of `day`, if it
    /// was listed there.
    pub(crate) fn symbol_on(&self, isin: &str, day: NaiveDate, exchange: Exchange) -> Option<&'a str> {
        let s = self.standing(isin, day, usize::MAX, 0);
        (s.listed & bit(exchange) != 0).then_some(s.symbols[slot(exchange)]).flatten()
    }
}
