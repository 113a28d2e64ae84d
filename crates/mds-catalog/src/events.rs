//! The identity events a catalog is built with, packed ([`PackedEvents`]):
//! an event in about 16 bytes (a kind byte, the day, its strings inline)
//! instead of the 150 of an [`IdentityEvent`] with its ISIN and strings, so
//! a builder can take a million ISINs' events as the store streams them.
//! The builder makes each row's events whole again, with those of the
//! ISINs it succeeded ([`PackedEvents::lineage`]), when it replays them.

use chrono::{Datelike, NaiveDate};
use mds_domain::{Exchange, IdentityChange, IdentityEvent, Isin, Ticker};

use crate::tail::{Reader, put_varint};

/// The shift of a kind byte's `exact` bit (the catalog's history section
/// lays its events out the same way).
pub(crate) const KIND_SHIFT_EXACT: u8 = 3;
/// The kind byte's bit that says BSE.
pub(crate) const BSE_BIT: u8 = 16;
/// The kind byte's bit that says an `isin_changed` has `face_value_from`.
pub(crate) const FACE_FROM: u8 = 32;
/// The kind byte's bit that says an `isin_changed` has `face_value_to`.
pub(crate) const FACE_TO: u8 = 64;
/// The event carries `observed_between`: its first day follows the day,
/// as a varint of the days before it.
pub(crate) const OBSERVED: u8 = 128;

/// Identity events grouped by ISIN, each ISIN's in the order given.
#[derive(Default)]
pub struct PackedEvents {
    /// Each group's ISIN, 12 bytes each (a group: consecutive events of
    /// one ISIN as pushed).
    isins: Vec<u8>,
    /// Where each group's events end in `bytes`.
    ends: Vec<u32>,
    /// The events, encoded.
    bytes: Vec<u8>,
    /// How many events.
    count: usize,
}

impl PackedEvents {
    /// Adds `e`, an event of `isin`, after those given before (an ISIN's
    /// events in order; normally grouped by ISIN, as the store hands them).
    pub fn push(&mut self, isin: &Isin, e: &IdentityEvent) {
        let same = self.ends.last().is_some() && self.isin(self.ends.len() - 1) == isin.as_str();
        if !same {
            self.isins.extend_from_slice(isin.as_str().as_bytes());
            self.ends.push(self.end());
        }
        encode(e, &mut self.bytes);
        *self.ends.last_mut().expect("a group") = self.end();
        self.count += 1;
    }

    /// How many events there are.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The bytes held (for measuring).
    pub fn heap_bytes(&self) -> usize {
        self.isins.capacity() + 4 * self.ends.capacity() + self.bytes.capacity()
    }

    fn end(&self) -> u32 {
        u32::try_from(self.bytes.len()).expect("packed events fit 4 GiB")
    }

    fn isin(&self, g: usize) -> &str {
        std::str::from_utf8(&self.isins[12 * g..12 * g + 12]).expect("ISINs are ASCII")
    }

    /// The groups in ISIN order (a group's place among those of its ISIN
    /// as pushed): what [`PackedEvents::lineage`] searches.
    pub(crate) fn order(&self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..self.ends.len() as u32).collect();
        order.sort_by(|&a, &b| self.isin(a as usize).cmp(self.isin(b as usize)));
        order
    }

    /// The events of `isin`, in the order given (`order`:
    /// [`PackedEvents::order`]).
    fn of(&self, order: &[u32], isin: &str) -> Vec<IdentityEvent> {
        let first = order.partition_point(|&g| self.isin(g as usize) < isin);
        let mut out = Vec::new();
        for &g in order[first..].iter().take_while(|&&g| self.isin(g as usize) == isin) {
            let g = g as usize;
            let start = if g == 0 { 0 } else { self.ends[g - 1] as usize };
            let mut r = Reader(&self.bytes[start..self.ends[g] as usize]);
            while !r.0.is_empty() {
                out.push(decode(&mut r).expect("packed by `push`"));
            }
        }
        out
    }

    /// The events of `isin` and of every ISIN it succeeded (the `from` of
    /// an `isin_changed` to it, and theirs, and so on), grouped by ISIN:
    /// all that replaying `isin`'s events reads (`crate::replay`).
    pub(crate) fn lineage(&self, order: &[u32], isin: &str) -> Vec<(Isin, IdentityEvent)> {
        let mut out = Vec::new();
        let mut seen: Vec<String> = vec![isin.to_owned()];
        let mut k = 0;
        while k < seen.len() {
            let events = self.of(order, &seen[k]);
            if !events.is_empty() {
                let id = Isin::parse(&seen[k]).expect("pushed as an ISIN");
                for e in &events {
                    if let IdentityChange::IsinChanged { from, to, .. } = &e.change {
                        if to.as_str() == seen[k] && from != to && !seen.iter().any(|s| s == from.as_str()) {
                            seen.push(from.as_str().to_owned());
                        }
                    }
                }
                out.extend(events.into_iter().map(|e| (id.clone(), e)));
            }
            k += 1;
        }
        out
    }
}

impl FromIterator<(Isin, IdentityEvent)> for PackedEvents {
    fn from_iter<I: IntoIterator<Item = (Isin, IdentityEvent)>>(events: I) -> Self {
        let mut p = PackedEvents::default();
        for (isin, e) in events {
            p.push(&isin, &e);
        }
        p
    }
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// An event: a kind byte (`kind | exact << 3 | bse << 4 | has face_from
/// << 5 | has face_to << 6`; kinds as the catalog's history section), the
/// day (varint, days from 0001-01-01, shifted to stay positive), then the
/// strings (length, bytes) or the ISINs and face values.
fn encode(e: &IdentityEvent, out: &mut Vec<u8>) {
    let day = (i64::from(e.date.num_days_from_ce()) + DAY_SHIFT) as u64;
    encode_with(e, day, out, put_str);
}

/// An event laid out as [`encode`] and the catalog's history section lay it
/// out: the kind byte, `day` (a varint), the days `observed_between` spans
/// (a varint), then its symbols and names each written by `text`, or its
/// ISINs and face values.
pub(crate) fn encode_with(e: &IdentityEvent, day: u64, out: &mut Vec<u8>, mut text: impl FnMut(&mut Vec<u8>, &str)) {
    // The `observed_between` flag rides with `exact`: every kind byte has it.
    let exact = (u8::from(e.exact) << KIND_SHIFT_EXACT) | if e.observed_between.is_some() { OBSERVED } else { 0 };
    let first = e.observed_between.map(|[first, _]| (e.date - first).num_days().max(0) as u64);
    let bse = |x: &Exchange| if *x == Exchange::Bse { BSE_BIT } else { 0 };
    let head = |out: &mut Vec<u8>, kind: u8| {
        out.push(kind);
        put_varint(out, day);
        if let Some(g) = first {
            put_varint(out, g);
        }
    };
    match &e.change {
        IdentityChange::Listed { exchange, symbol } | IdentityChange::Delisted { exchange, symbol } => {
            let kind = if matches!(e.change, IdentityChange::Listed { .. }) { 0 } else { 4 };
            head(out, kind | exact | bse(exchange));
            text(out, symbol.as_str());
        }
        IdentityChange::SymbolChanged { exchange, from, to } => {
            head(out, 1 | exact | bse(exchange));
            text(out, from.as_str());
            text(out, to.as_str());
        }
        IdentityChange::NameChanged { from, to } => {
            head(out, 2 | exact);
            text(out, from);
            text(out, to);
        }
        IdentityChange::IsinChanged { from, to, face_value_from, face_value_to } => {
            let faces = if face_value_from.is_some() { FACE_FROM } else { 0 }
                | if face_value_to.is_some() { FACE_TO } else { 0 };
            head(out, 3 | exact | faces);
            out.extend_from_slice(from.as_str().as_bytes());
            out.extend_from_slice(to.as_str().as_bytes());
            for v in [face_value_from, face_value_to].into_iter().flatten() {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
}

/// Added to a day's count from 0001-01-01 so that days before it encode
/// as varints too.
const DAY_SHIFT: i64 = 1 << 31;

/// Read back what [`encode`] wrote.
fn decode(r: &mut Reader<'_>) -> Option<IdentityEvent> {
    let head = r.byte()?;
    let days = i64::try_from(r.varint()?).ok()? - DAY_SHIFT;
    let date = NaiveDate::from_num_days_from_ce_opt(i32::try_from(days).ok()?)?;
    let exact = head & (1 << KIND_SHIFT_EXACT) != 0;
    let observed_between =
        if head & OBSERVED != 0 { Some([date.checked_sub_days(chrono::Days::new(r.varint()?))?, date]) } else { None };
    let exchange = if head & BSE_BIT != 0 { Exchange::Bse } else { Exchange::Nse };
    let text = |r: &mut Reader<'_>| -> Option<String> {
        let n = usize::try_from(r.varint()?).ok()?;
        Some(std::str::from_utf8(r.bytes(n)?).ok()?.to_owned())
    };
    let ticker = |s: String| Ticker::parse(&s).ok();
    let isin = |r: &mut Reader<'_>| Isin::parse(std::str::from_utf8(r.bytes(12)?).ok()?).ok();
    let f64_of = |r: &mut Reader<'_>| Some(f64::from_le_bytes(r.bytes(8)?.try_into().ok()?));
    let change = match head & 7 {
        0 => IdentityChange::Listed { exchange, symbol: ticker(text(r)?)? },
        4 => IdentityChange::Delisted { exchange, symbol: ticker(text(r)?)? },
        1 => IdentityChange::SymbolChanged { exchange, from: ticker(text(r)?)?, to: ticker(text(r)?)? },
        2 => IdentityChange::NameChanged { from: text(r)?, to: text(r)? },
        3 => IdentityChange::IsinChanged {
            from: isin(r)?,
            to: isin(r)?,
            face_value_from: if head & FACE_FROM != 0 { Some(f64_of(r)?) } else { None },
            face_value_to: if head & FACE_TO != 0 { Some(f64_of(r)?) } else { None },
        },
        _ => return None,
    };
    Some(IdentityEvent { date, exact, observed_between, change })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn isin(s: &str) -> Isin {
        Isin::parse(s).unwrap()
    }

    fn day(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn events_read_back_with_their_predecessors() {
        let (old, new, other) = (isin("INE296A01024"), isin("INE296A01032"), isin("INE155A01022"));
        let t = |s: &str| Ticker::parse(s).unwrap();
        let events = [
            (
                other.clone(),
                IdentityEvent {
                    date: day("2008-10-06"),
                    exact: true,
                    observed_between: None,
                    change: IdentityChange::Delisted { exchange: Exchange::Bse, symbol: t("TATAMOTORS") },
                },
            ),
            (
                old.clone(),
                IdentityEvent {
                    date: day("2004-01-01"),
                    exact: false,
                    observed_between: None,
                    change: IdentityChange::Listed { exchange: Exchange::Nse, symbol: t("BAJFINANCE") },
                },
            ),
            (
                old.clone(),
                IdentityEvent {
                    date: day("2024-06-01"),
                    exact: true,
                    observed_between: None,
                    change: IdentityChange::NameChanged {
                        from: "Bajaj Finance Ltd".into(),
                        to: "Bajaj Finance Limité".into(),
                    },
                },
            ),
            (
                new.clone(),
                IdentityEvent {
                    date: day("2025-06-16"),
                    exact: true,
                    observed_between: None,
                    change: IdentityChange::IsinChanged {
                        from: old.clone(),
                        to: new.clone(),
                        face_value_from: Some(2.0),
                        face_value_to: None,
                    },
                },
            ),
            (
                new.clone(),
                IdentityEvent {
                    date: day("2025-06-17"),
                    exact: false,
                    observed_between: Some([day("2025-01-30"), day("2025-06-17")]),
                    change: IdentityChange::SymbolChanged {
                        exchange: Exchange::Nse,
                        from: t("BAJFINANCE"),
                        to: t("BAJ"),
                    },
                },
            ),
        ];
        let packed: PackedEvents = events.iter().cloned().collect();
        assert_eq!(packed.len(), 5);
        let order = packed.order();
        assert_eq!(packed.lineage(&order, other.as_str()), events[..1].to_vec());
        let mut want = events[3..].to_vec();
        want.extend(events[1..3].iter().cloned());
        assert_eq!(packed.lineage(&order, new.as_str()), want);
        assert!(packed.lineage(&order, "INE758T01015").is_empty());
    }
}
