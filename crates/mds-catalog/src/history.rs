//! Identity over time in the catalog (contract 10.2): each company's
//! identity events, kept compactly, and what is made of them when the
//! catalog is built ([`crate::replay`] applied once per event date), so
//! that nothing replays events on the request path:
//!
//! - a *span* per row (two `u16` days since 1990-01-01, `[from, to)`,
//!   `0xFFFF` = open): the days on which the row was listed with today's
//!   ticker and name (the company list `as_of` a day inside it shows the
//!   row as it is; a row without events: always when `active`, never
//!   otherwise);
//! - *versions*: the other spans during which a row was listed, with the
//!   ticker and name it had then (16 bytes each, sorted by `(ticker, ISIN,
//!   from)`, the list's order), and the same versions by row (for the
//!   detail `as_of`);
//! - *periods*: the spans during which a row carried a symbol on an
//!   exchange, sorted by `(exchange, symbol, to desc (open first), from
//!   desc, ISIN)` for `GET /v1/symbols/{symbol}`;
//! - each row's events, encoded (`u32` offsets per row into a byte
//!   section), for `GET /v1/companies/{isin}/history`, `superseded_by` and
//!   `supersedes`.
//!
//! Symbols and names are interned once in a string arena, but for the
//! row's own ticker and name, which every record names by a reserved id
//! ([`OWN_TICKER`], [`OWN_NAME`]) and reads from the row: most companies'
//! history is their listing under today's symbol and name, and it then
//! costs no string. An event is a kind byte (`kind | exact << 3 | bse << 4
//! | has face_from << 5 | has face_to << 6`), the day (varint, days from
//! 0001-01-01), then: `listed`, `delisted`: the symbol's string id;
//! `symbol_changed`, `name_changed`: `from` and `to` string ids (in an
//! event, a string id is a varint: 0 the row's ticker, 1 its name, else
//! 2 + the interned id); `isin_changed`: the two ISINs (12 bytes each) and
//! the face values given (`f64` each).

use chrono::{Datelike, NaiveDate};
use mds_domain::{CompanyHistory, Exchange, IdentityChange, IdentityEvent, Isin, SymbolHistory, Ticker};

use crate::catalog::Catalog;
use crate::events::{BSE_BIT, FACE_FROM, FACE_TO, KIND_SHIFT_EXACT, OBSERVED, PackedEvents, encode_with};
use crate::layout::Section;
use crate::postings::u32_at;
use crate::replay::{Histories, ON_BSE, ON_NSE};
use crate::tail::{Dictionaries, Reader, put_varint};

/// The open end of a span.
pub(crate) const OPEN: u16 = u16::MAX;

/// The first day a `u16` day counts from.
const EPOCH: NaiveDate = mds_domain::identity::AS_OF_MIN;

/// `d` in days since 1990-01-01, clamped to `0..OPEN` (`as_of` is never
/// before 1990, so a clamped start answers the same).
pub(crate) fn day16(d: NaiveDate) -> u16 {
    (d - EPOCH).num_days().clamp(0, i64::from(OPEN) - 1) as u16
}

/// A period of a symbol as [`Catalog::symbol_periods`] gives it: the ISIN,
/// its first day and the first day it no longer carried the symbol
/// (`None`: still).
pub type PeriodSpan = (Isin, NaiveDate, Option<NaiveDate>);

/// Bytes of a version record.
pub(crate) const VERSION: usize = 16;
/// Bytes of a period record.
pub(crate) const PERIOD: usize = 20;
/// The bit of a period's symbol id that says BSE.
const PERIOD_BSE: u32 = 1 << 31;
/// The string id that means the row's own ticker.
const OWN_TICKER: u32 = PERIOD_BSE - 1;
/// The string id that means the row's own name.
const OWN_NAME: u32 = PERIOD_BSE - 2;

/// Interns the history's strings (ids below [`OWN_NAME`]).
struct Interner(Dictionaries);

impl Interner {
    /// The id of `s` in the records of row `row`: the reserved id when it
    /// is the row's ticker or name, else its interned id.
    fn id(&mut self, row: &RowFacts<'_>, s: &str) -> u32 {
        if s == row.ticker {
            return OWN_TICKER;
        }
        if s == row.name {
            return OWN_NAME;
        }
        let id = self.0.string(s);
        assert!(id < OWN_NAME, "fewer than 2^31 - 2 strings");
        id
    }

    /// Appends the id of `s` in an event of row `row` (see the module's
    /// comment).
    fn put(&mut self, row: &RowFacts<'_>, s: &str, out: &mut Vec<u8>) {
        let v = match self.id(row, s) {
            OWN_TICKER => 0,
            OWN_NAME => 1,
            id => u64::from(id) + 2,
        };
        put_varint(out, v);
    }
}

/// Whether `id` is one of the reserved ids of a row's own ticker and name.
pub(crate) fn is_own(id: u32) -> bool {
    id == OWN_TICKER || id == OWN_NAME
}

/// The string id an event's varint names (see [`Interner::put`]).
fn event_string_id(v: u64) -> Option<u32> {
    match v {
        0 => Some(OWN_TICKER),
        1 => Some(OWN_NAME),
        v => u32::try_from(v - 2).ok().filter(|&id| id < OWN_NAME),
    }
}

/// What the builder knows of a row: ISIN, ticker, name, and whether its
/// status is `active`.
pub(crate) struct RowFacts<'r> {
    pub(crate) isin: &'r str,
    pub(crate) ticker: &'r str,
    pub(crate) name: &'r str,
    pub(crate) active: bool,
    /// The exchanges its listings are on (`replay::ON_*` bits; 0: none
    /// known): it has symbol periods only there (contract 10.3).
    pub(crate) listings: u8,
}

/// The history sections of a catalog, as built.
#[derive(Default)]
pub(crate) struct HistorySections {
    pub(crate) spans: Vec<u8>,
    pub(crate) event_off: Vec<u8>,
    pub(crate) events: Vec<u8>,
    pub(crate) string_off: Vec<u8>,
    pub(crate) strings: Vec<u8>,
    pub(crate) versions: Vec<u8>,
    pub(crate) versions_by_row: Vec<u8>,
    /// The period records, each as its five `u32` words: laid out by
    /// [`HistorySections::period_bytes`] straight into the catalog's
    /// buffer (they are most of the history: one or more per listed row).
    pub(crate) periods: Vec<Period>,
}

/// A period record as its words: symbol id (top bit: BSE), row, name id,
/// from and to (days from 0001-01-01, `to` 0 when open).
pub(crate) type Period = [u32; 5];

impl HistorySections {
    /// Each section but the periods with its bytes, and the periods.
    pub(crate) fn into_sections(self) -> ([(Section, Vec<u8>); 7], Vec<Period>) {
        let sections = [
            (Section::Spans, self.spans),
            (Section::EventOff, self.event_off),
            (Section::Events, self.events),
            (Section::IdStringOff, self.string_off),
            (Section::IdStrings, self.strings),
            (Section::Versions, self.versions),
            (Section::VersionsByRow, self.versions_by_row),
        ];
        (sections, self.periods)
    }

    /// The bytes of the period records, little-endian words.
    pub(crate) fn period_bytes(periods: &[Period]) -> impl Iterator<Item = u8> + '_ {
        periods.iter().flatten().flat_map(|w| w.to_le_bytes())
    }
}

fn ce(d: NaiveDate) -> u64 {
    d.num_days_from_ce().max(0) as u64
}

fn encode_event(e: &IdentityEvent, row: &RowFacts<'_>, strings: &mut Interner, out: &mut Vec<u8>) {
    encode_with(e, ce(e.date), out, |out, s| strings.put(row, s, out));
}

/// One span of a row's identity: `[from, to)`, and what it was then.
struct Segment<'a> {
    from: NaiveDate,
    to: Option<NaiveDate>,
    value: Option<(&'a str, &'a str)>,
}

/// Consecutive spans of equal value, merged; `at(d)` is the value from
/// event date `d` until the next.
fn segments<V: PartialEq>(
    dates: &[NaiveDate],
    mut at: impl FnMut(NaiveDate) -> V,
) -> Vec<(NaiveDate, Option<NaiveDate>, V)> {
    let mut out: Vec<(NaiveDate, Option<NaiveDate>, V)> = Vec::new();
    for (k, &d) in dates.iter().enumerate() {
        let v = at(d);
        let to = dates.get(k + 1).copied();
        match out.last_mut() {
            Some(last) if last.2 == v => last.1 = to,
            _ => out.push((d, to, v)),
        }
    }
    out
}

/// A `u16` span of `[from, to)`; `None` when empty after clamping.
fn span16(from: NaiveDate, to: Option<NaiveDate>) -> Option<(u16, u16)> {
    let (a, b) = (day16(from), to.map_or(OPEN, day16));
    (a < b).then_some((a, b))
}

/// Builds the history sections for the `n` rows (`row_of(i)` is row `i`, in catalog order) from
/// `events` (each ISIN's oldest first). Events of ISINs the catalog does
/// not hold are not kept (their `isin_changed` still carries a
/// successor's standing). A row's events are made whole one row at a
/// time, with those of the ISINs it succeeded
/// ([`PackedEvents::lineage`]): all that replaying them reads.
pub(crate) fn build<'r>(n: usize, row_of: impl Fn(usize) -> RowFacts<'r>, events: &PackedEvents) -> HistorySections {
    let order = events.order();
    let mut strings = Interner(Dictionaries::default());
    let mut s = HistorySections::default();
    s.spans.reserve(4 * n);
    s.event_off.reserve(4 * (n + 1));
    s.event_off.extend_from_slice(&0u32.to_le_bytes());
    // (row, ticker id, name id, from, to)
    let mut versions: Vec<(u32, u32, u32, u16, u16)> = Vec::new();
    // (symbol id | exchange bit, row, name id, from, to)
    // (symbol id | exchange bit, row, name id, from, to) as `u32` words:
    // days from 0001-01-01, `to` 0 when open.
    let mut periods: Vec<Period> = Vec::new();
    for r in 0..n {
        let row = row_of(r);
        let lineage = events.lineage(&order, row.isin);
        let hist = Histories::new(&lineage);
        let evs = hist.of(row.isin);
        let (from, to) = if evs.is_empty() {
            if row.active { (0, OPEN) } else { (OPEN, OPEN) }
        } else {
            for e in evs {
                encode_event(e, &row, &mut strings, &mut s.events);
            }
            let mut dates: Vec<NaiveDate> = evs.iter().map(|e| e.date).collect();
            dates.dedup();
            dates.sort_unstable();
            dates.dedup();
            let today = (row.ticker, row.name);
            let segs: Vec<Segment<'_>> = segments(&dates, |d| hist.identity_on(row.isin, d, today))
                .into_iter()
                .map(|(from, to, value)| Segment { from, to, value })
                .collect();
            let current = segs.iter().rposition(|g| g.value == Some(today));
            let mut main = (OPEN, OPEN);
            for (k, g) in segs.iter().enumerate() {
                let (Some((t, n)), Some((a, b))) = (g.value, span16(g.from, g.to)) else { continue };
                if Some(k) == current {
                    main = (a, b);
                } else {
                    versions.push((r as u32, strings.id(&row, t), strings.id(&row, n), a, b));
                }
            }
            for (bit, exchange) in [(0, Exchange::Nse), (PERIOD_BSE, Exchange::Bse)] {
                // A symbol period only where a snapshot listed the row: a
                // successor takes over its predecessor's standing, not a
                // listing its exchange never showed (contract 10.3).
                let on = if exchange == Exchange::Nse { ON_NSE } else { ON_BSE };
                if row.listings != 0 && row.listings & on == 0 {
                    continue;
                }
                let carried = segments(&dates, |d| hist.symbol_on(row.isin, d, exchange));
                for (from, to, symbol) in carried {
                    let Some(symbol) = symbol else { continue };
                    let name = match to {
                        None => row.name,
                        Some(end) => {
                            let last = dates.iter().rev().find(|&&d| d < end).copied().unwrap_or(from);
                            hist.identity_on(row.isin, last, today).map_or(row.name, |(_, n)| n)
                        }
                    };
                    let day = |d: NaiveDate| ce(d) as u32;
                    periods.push([
                        strings.id(&row, symbol) | bit,
                        r as u32,
                        strings.id(&row, name),
                        day(from),
                        to.map_or(0, day),
                    ]);
                }
            }
            main
        };
        s.spans.extend_from_slice(&from.to_le_bytes());
        s.spans.extend_from_slice(&to.to_le_bytes());
        s.event_off.extend_from_slice(&u32::try_from(s.events.len()).expect("events fit 4 GiB").to_le_bytes());
    }
    let (order, _) = strings.0.finish();
    let text = |r: u32, id: u32| match id & !PERIOD_BSE {
        OWN_TICKER => row_of(r as usize).ticker.as_bytes(),
        OWN_NAME => row_of(r as usize).name.as_bytes(),
        id => order[id as usize].as_bytes(),
    };
    let isin = |r: u32| row_of(r as usize).isin.as_bytes();
    versions.sort_unstable_by(|a, b| (text(a.0, a.1), isin(a.0), a.3).cmp(&(text(b.0, b.1), isin(b.0), b.3)));
    for &(r, t, n, a, b) in &versions {
        for w in [r, t, n] {
            s.versions.extend_from_slice(&w.to_le_bytes());
        }
        s.versions.extend_from_slice(&a.to_le_bytes());
        s.versions.extend_from_slice(&b.to_le_bytes());
    }
    let mut by_row: Vec<u32> = (0..versions.len() as u32).collect();
    by_row.sort_unstable_by_key(|&k| (versions[k as usize].0, versions[k as usize].3));
    s.versions_by_row = by_row.iter().flat_map(|k| k.to_le_bytes()).collect();
    // `to` descending with the open one first, then `from` descending.
    let end = |to: u32| std::cmp::Reverse(if to == 0 { u32::MAX } else { to });
    periods.sort_unstable_by(|a, b| {
        (a[0] & PERIOD_BSE, text(a[1], a[0]), end(a[4]), std::cmp::Reverse(a[3]), isin(a[1])).cmp(&(
            b[0] & PERIOD_BSE,
            text(b[1], b[0]),
            end(b[4]),
            std::cmp::Reverse(b[3]),
            isin(b[1]),
        ))
    });
    s.periods = periods;
    s.string_off.extend_from_slice(&0u32.to_le_bytes());
    for t in &order {
        s.strings.extend_from_slice(t.as_bytes());
        s.string_off.extend_from_slice(&u32::try_from(s.strings.len()).expect("strings fit 4 GiB").to_le_bytes());
    }
    s
}

impl<'a> Reader<'a> {
    fn isin_str(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.bytes(12)?).ok()
    }

    fn f64(&mut self) -> Option<f64> {
        Some(f64::from_le_bytes(self.bytes(8)?.try_into().ok()?))
    }
}

/// A day from its count since 0001-01-01.
fn from_ce(days: u64) -> Option<NaiveDate> {
    NaiveDate::from_num_days_from_ce_opt(i32::try_from(days).ok()?)
}

/// A version of a row: when it was listed with another ticker or name.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Version<'a> {
    pub(crate) row: usize,
    pub(crate) ticker: &'a [u8],
    pub(crate) name: &'a [u8],
    pub(crate) from: u16,
    pub(crate) to: u16,
}

impl Version<'_> {
    /// Whether it holds on `day` (a `u16` day).
    pub(crate) fn holds(&self, day: u16) -> bool {
        self.from <= day && day < self.to
    }
}

impl Catalog {
    /// String `id` of row `row`'s history records: the row's ticker or
    /// name for the reserved ids, else the interned string.
    pub(crate) fn id_string(&self, row: usize, id: u32) -> &[u8] {
        match id {
            OWN_TICKER => return self.ticker_bytes(row),
            OWN_NAME => return self.bytes(Section::NameOff, Section::Names, row),
            _ => {}
        }
        let n = self.sec(Section::IdStringOff).len() / 4;
        if (id as usize) + 1 >= n {
            return &[];
        }
        self.bytes(Section::IdStringOff, Section::IdStrings, id as usize)
    }

    /// The string an event of row `row` names by varint `v`.
    fn event_str(&self, row: usize, v: u64) -> Option<&str> {
        std::str::from_utf8(self.id_string(row, event_string_id(v)?)).ok()
    }

    /// Row `i`'s span: the `u16` days `[from, to)` on which it was listed
    /// as it is today.
    pub(crate) fn span(&self, i: usize) -> (u16, u16) {
        let s = &self.sec(Section::Spans)[4 * i..4 * i + 4];
        (u16::from_le_bytes([s[0], s[1]]), u16::from_le_bytes([s[2], s[3]]))
    }

    /// Whether row `i` was listed as it is today on `day`.
    pub(crate) fn current_on(&self, i: usize, day: u16) -> bool {
        let (a, b) = self.span(i);
        a <= day && day < b
    }

    /// How many versions there are.
    pub(crate) fn version_count(&self) -> usize {
        self.sec(Section::Versions).len() / VERSION
    }

    /// Version `k` in list order.
    pub(crate) fn version(&self, k: usize) -> Version<'_> {
        let v = &self.sec(Section::Versions)[VERSION * k..VERSION * (k + 1)];
        let row = u32_at(v, 0) as usize;
        Version {
            row,
            ticker: self.id_string(row, u32_at(v, 4)),
            name: self.id_string(row, u32_at(v, 8)),
            from: u16::from_le_bytes([v[12], v[13]]),
            to: u16::from_le_bytes([v[14], v[15]]),
        }
    }

    /// The ticker and name row `i` had on `day` (`None`: not listed then).
    pub(crate) fn identity_on(&self, i: usize, day: NaiveDate) -> Option<(&[u8], &[u8])> {
        let d = day16(day);
        if self.current_on(i, d) {
            return Some((self.ticker_bytes(i), self.bytes(Section::NameOff, Section::Names, i)));
        }
        let by_row = self.sec(Section::VersionsByRow);
        let count = by_row.len() / 4;
        let at = |k: usize| self.version(u32_at(by_row, 4 * k) as usize);
        let (mut lo, mut hi) = (0, count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if at(mid).row < i { lo = mid + 1 } else { hi = mid }
        }
        (lo..count).map(at).take_while(|v| v.row == i).find(|v| v.holds(d)).map(|v| (v.ticker, v.name))
    }

    /// Row `i`'s events, oldest first, their strings borrowed from the
    /// catalog (`None` for damaged bytes: the snapshot's checksum makes
    /// that a bug, not a state).
    pub(crate) fn event_refs(&self, i: usize) -> Option<Vec<EventRef<'_>>> {
        let mut r = Reader(self.bytes(Section::EventOff, Section::Events, i));
        let mut out = Vec::new();
        while !r.0.is_empty() {
            let head = r.byte()?;
            let date = from_ce(r.varint()?)?;
            let exact = head & (1 << KIND_SHIFT_EXACT) != 0;
            let observed_from =
                if head & OBSERVED != 0 { Some(date.checked_sub_days(chrono::Days::new(r.varint()?))?) } else { None };
            let exchange = if head & BSE_BIT != 0 { Exchange::Bse } else { Exchange::Nse };
            let mut string = || self.event_str(i, r.varint()?);
            let change = match head & 7 {
                0 => ChangeRef::Listed { exchange, symbol: string()? },
                4 => ChangeRef::Delisted { exchange, symbol: string()? },
                1 => ChangeRef::SymbolChanged { exchange, from: string()?, to: string()? },
                2 => ChangeRef::NameChanged { from: string()?, to: string()? },
                3 => ChangeRef::IsinChanged {
                    from: r.isin_str()?,
                    to: r.isin_str()?,
                    face_value_from: if head & FACE_FROM != 0 { Some(r.f64()?) } else { None },
                    face_value_to: if head & FACE_TO != 0 { Some(r.f64()?) } else { None },
                },
                _ => return None,
            };
            out.push(EventRef { date, exact, observed_from, change });
        }
        Some(out)
    }

    /// Row `i`'s events, oldest first, as records (`None` for damaged
    /// bytes, as [`Catalog::event_refs`]).
    pub(crate) fn events(&self, i: usize) -> Option<Vec<IdentityEvent>> {
        self.event_refs(i)?.into_iter().map(EventRef::to_event).collect()
    }

    /// `GET /v1/companies/{isin}/history`: the events of the company with
    /// `isin`, if the catalog has it (a company without events has none),
    /// read back from the JSON the route serves
    /// ([`Catalog::history_json`]).
    pub fn history(&self, isin: &Isin) -> Option<CompanyHistory> {
        serde_json::from_slice(&self.history_json(isin.as_str())?).ok()
    }

    /// Row `i`'s successor and predecessors by its `isin_changed` events
    /// dated up to `day` (all of them without one): `superseded_by` (the
    /// latest replacement) and `supersedes` (oldest first, each once).
    pub(crate) fn links(&self, i: usize, day: Option<NaiveDate>) -> (Option<Isin>, Vec<Isin>) {
        let events = self.events(i).unwrap_or_default();
        match Isin::parse(self.isin(i)) {
            Ok(own) => mds_domain::identity::links(&own, events.iter().filter(|e| day.is_none_or(|d| e.date <= d))),
            Err(_) => (None, Vec::new()),
        }
    }

    /// `GET /v1/symbols/{symbol}`: every company that has carried `symbol`
    /// on `exchange`, by its events (`None`: none has), read back from the
    /// JSON the route serves ([`Catalog::symbol_history_json`]).
    pub fn symbol_history(&self, exchange: Exchange, symbol: &Ticker) -> Option<SymbolHistory> {
        serde_json::from_slice(&self.symbol_history_json(exchange, symbol.as_str())?).ok()
    }

    /// Every symbol that has periods on `exchange`, each with its periods
    /// as `(ISIN, from, to)` in the order [`Catalog::symbol_history`] gives
    /// them, by symbol: what a price import compares before and after a
    /// change of the history, to resolve again only the symbols whose
    /// periods moved (contract 10.3).
    pub fn symbol_periods(&self, exchange: Exchange) -> Vec<(String, Vec<PeriodSpan>)> {
        let p = self.sec(Section::Periods);
        let count = p.len() / PERIOD;
        let bse = u32::from(exchange == Exchange::Bse);
        let mut out: Vec<(String, Vec<PeriodSpan>)> = Vec::new();
        for k in 0..count {
            let at = |w: usize| u32_at(p, PERIOD * k + 4 * w);
            let id = at(0);
            if u32::from(id & PERIOD_BSE != 0) != bse {
                continue;
            }
            let row = at(1) as usize;
            let Ok(symbol) = std::str::from_utf8(self.id_string(row, id & !PERIOD_BSE)) else { continue };
            let (Some(from), Ok(isin)) = (from_ce(u64::from(at(3))), Isin::parse(self.isin(row))) else { continue };
            let to = match at(4) {
                0 => None,
                d => from_ce(u64::from(d)),
            };
            match out.last_mut() {
                Some((s, ps)) if s == symbol => ps.push((isin, from, to)),
                _ => out.push((symbol.to_owned(), vec![(isin, from, to)])),
            }
        }
        out
    }

    /// The periods of `symbol` on `exchange`, in the order
    /// [`Catalog::symbol_history`] gives them, borrowed (none: no company
    /// carried it).
    pub(crate) fn periods_of(&self, exchange: Exchange, symbol: &str) -> impl Iterator<Item = PeriodRef<'_>> {
        let p = self.sec(Section::Periods);
        let count = p.len() / PERIOD;
        let want = (u32::from(exchange == Exchange::Bse), symbol.as_bytes());
        let key = move |k: usize| {
            let id = u32_at(p, PERIOD * k);
            (u32::from(id & PERIOD_BSE != 0), self.id_string(u32_at(p, PERIOD * k + 4) as usize, id & !PERIOD_BSE))
        };
        let (mut lo, mut hi) = (0, count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if key(mid) < want { lo = mid + 1 } else { hi = mid }
        }
        (lo..count).take_while(move |&k| key(k) == want).filter_map(move |k| {
            let at = |w: usize| u32_at(p, PERIOD * k + 4 * w);
            let row = at(1) as usize;
            Some(PeriodRef {
                isin: self.isin(row),
                name: std::str::from_utf8(self.id_string(row, at(2))).ok()?,
                from: from_ce(u64::from(at(3)))?,
                to: match at(4) {
                    0 => None,
                    d => Some(from_ce(u64::from(d))?),
                },
            })
        })
    }
}

/// One event of a row as the catalog holds it, its strings borrowed: what
/// [`Catalog::events`] makes records of and the history route writes
/// ([`crate::wire`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct EventRef<'a> {
    pub(crate) date: NaiveDate,
    pub(crate) exact: bool,
    /// The first day of its `observed_between` (the second is `date`).
    pub(crate) observed_from: Option<NaiveDate>,
    pub(crate) change: ChangeRef<'a>,
}

/// What an [`EventRef`] changed: [`IdentityChange`], borrowed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ChangeRef<'a> {
    Listed { exchange: Exchange, symbol: &'a str },
    SymbolChanged { exchange: Exchange, from: &'a str, to: &'a str },
    NameChanged { from: &'a str, to: &'a str },
    IsinChanged { from: &'a str, to: &'a str, face_value_from: Option<f64>, face_value_to: Option<f64> },
    Delisted { exchange: Exchange, symbol: &'a str },
}

impl EventRef<'_> {
    /// The event as a record (`None` when a symbol or ISIN does not parse).
    fn to_event(self) -> Option<IdentityEvent> {
        let ticker = |s: &str| Ticker::parse(s).ok();
        let isin = |s: &str| Isin::parse(s).ok();
        let change = match self.change {
            ChangeRef::Listed { exchange, symbol } => IdentityChange::Listed { exchange, symbol: ticker(symbol)? },
            ChangeRef::Delisted { exchange, symbol } => IdentityChange::Delisted { exchange, symbol: ticker(symbol)? },
            ChangeRef::SymbolChanged { exchange, from, to } => {
                IdentityChange::SymbolChanged { exchange, from: ticker(from)?, to: ticker(to)? }
            }
            ChangeRef::NameChanged { from, to } => IdentityChange::NameChanged { from: from.into(), to: to.into() },
            ChangeRef::IsinChanged { from, to, face_value_from, face_value_to } => {
                IdentityChange::IsinChanged { from: isin(from)?, to: isin(to)?, face_value_from, face_value_to }
            }
        };
        let observed_between = self.observed_from.map(|f| [f, self.date]);
        Some(IdentityEvent { date: self.date, exact: self.exact, observed_between, change })
    }
}

/// A span during which a row carried a symbol, borrowed:
/// [`mds_domain::SymbolPeriod`], as the catalog holds it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PeriodRef<'a> {
    pub(crate) isin: &'a str,
    pub(crate) name: &'a str,
    pub(crate) from: NaiveDate,
    pub(crate) to: Option<NaiveDate>,
}
