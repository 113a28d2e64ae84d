//! The JSON of the identity lookups (`V1CompanyHistory`,
//! `V1SymbolHistory`, contract 10.2), written straight from the catalog's
//! bytes: byte for byte what `serde_json` writes for the domain's records
//! ([`mds_domain::CompanyHistory`], [`mds_domain::SymbolHistory`]), with no
//! record, owned string or formatter in between, since a lookup is made on
//! every request. The typed forms ([`Catalog::history`],
//! [`Catalog::symbol_history`]) are read back from these bytes, so the two
//! cannot differ; the JSON helpers here serve the detail's tail too.

use chrono::{Datelike, NaiveDate};
use mds_domain::Exchange;

use crate::catalog::Catalog;
use crate::history::{ChangeRef, EventRef, PeriodRef};

impl Catalog {
    /// The `V1CompanyHistory` JSON of the company with `isin`, if the
    /// catalog has it (a company without events has none).
    pub fn history_json(&self, isin: &str) -> Option<Vec<u8>> {
        let i = self.find_isin(isin)?;
        let events = self.event_refs(i).unwrap_or_default();
        let mut out = Vec::with_capacity(32 + 160 * events.len());
        out.extend_from_slice(b"{\"isin\":");
        str_json(&mut out, isin);
        out.extend_from_slice(b",\"events\":[");
        for (k, e) in events.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            event_json(&mut out, e);
        }
        out.extend_from_slice(b"]}");
        Some(out)
    }

    /// The `V1SymbolHistory` JSON of `symbol` on `exchange`, if some
    /// company carried it.
    pub fn symbol_history_json(&self, exchange: Exchange, symbol: &str) -> Option<Vec<u8>> {
        let mut periods = self.periods_of(exchange, symbol).peekable();
        periods.peek()?;
        let mut out = Vec::with_capacity(256);
        out.extend_from_slice(b"{\"symbol\":");
        str_json(&mut out, symbol);
        out.extend_from_slice(b",\"exchange\":");
        str_json(&mut out, exchange.as_str());
        out.extend_from_slice(b",\"periods\":[");
        for (k, p) in periods.enumerate() {
            if k > 0 {
                out.push(b',');
            }
            period_json(&mut out, &p);
        }
        out.extend_from_slice(b"]}");
        Some(out)
    }
}

/// Appends one `V1IdentityEvent`: `date`, `exact`, then `type` and the
/// change's fields in their declared order (the record's `flatten`).
fn event_json(out: &mut Vec<u8>, e: &EventRef<'_>) {
    out.extend_from_slice(b"{\"date\":");
    date_json(out, Some(e.date));
    out.extend_from_slice(if e.exact { b",\"exact\":true" } else { b",\"exact\":false" });
    match e.observed_from {
        Some(first) => {
            out.extend_from_slice(b",\"observed_between\":[");
            date_json(out, Some(first));
            out.push(b',');
            date_json(out, Some(e.date));
            out.push(b']');
        }
        None => out.extend_from_slice(b",\"observed_between\":null"),
    }
    out.extend_from_slice(b",\"type\":");
    let exchange = |out: &mut Vec<u8>, x: Exchange| {
        out.extend_from_slice(b",\"exchange\":");
        str_json(out, x.as_str());
    };
    let field = |out: &mut Vec<u8>, name: &[u8], s: &str| {
        out.extend_from_slice(name);
        str_json(out, s);
    };
    match e.change {
        ChangeRef::Listed { exchange: x, symbol } | ChangeRef::Delisted { exchange: x, symbol } => {
            out.extend_from_slice(if matches!(e.change, ChangeRef::Listed { .. }) {
                b"\"listed\""
            } else {
                b"\"delisted\""
            });
            exchange(out, x);
            field(out, b",\"symbol\":", symbol);
        }
        ChangeRef::SymbolChanged { exchange: x, from, to } => {
            out.extend_from_slice(b"\"symbol_changed\"");
            exchange(out, x);
            field(out, b",\"from\":", from);
            field(out, b",\"to\":", to);
        }
        ChangeRef::NameChanged { from, to } => {
            out.extend_from_slice(b"\"name_changed\"");
            field(out, b",\"from\":", from);
            field(out, b",\"to\":", to);
        }
        ChangeRef::IsinChanged { from, to, face_value_from, face_value_to } => {
            out.extend_from_slice(b"\"isin_changed\"");
            field(out, b",\"from\":", from);
            field(out, b",\"to\":", to);
            out.extend_from_slice(b",\"face_value_from\":");
            value_json(out, &face_value_from);
            out.extend_from_slice(b",\"face_value_to\":");
            value_json(out, &face_value_to);
        }
    }
    out.push(b'}');
}

/// Appends one `V1SymbolPeriod`.
fn period_json(out: &mut Vec<u8>, p: &PeriodRef<'_>) {
    out.extend_from_slice(b"{\"isin\":");
    str_json(out, p.isin);
    out.extend_from_slice(b",\"name\":");
    str_json(out, p.name);
    out.extend_from_slice(b",\"from\":");
    date_json(out, Some(p.from));
    out.extend_from_slice(b",\"to\":");
    date_json(out, p.to);
    out.push(b'}');
}

/// Appends `s` as a JSON string, as `serde_json` writes it: as it is when
/// nothing in it needs escaping (the common case, checked here), else by
/// `serde_json`.
pub(crate) fn str_json(out: &mut Vec<u8>, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        plain_json(out, s.as_bytes());
    } else {
        value_json(out, s);
    }
}

/// Appends `s`, which holds nothing JSON escapes, between quotes.
pub(crate) fn plain_json(out: &mut Vec<u8>, s: &[u8]) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    out.extend_from_slice(s);
    out.push(b'"');
}

/// Whether JSON escapes one of `s`'s bytes (as `serde_json` does: the
/// control characters, `"` and `\\`).
pub(crate) fn needs_escape(s: &[u8]) -> bool {
    s.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// Appends a date as `"YYYY-MM-DD"` (as chrono's `serde` writes one), or
/// `null` when there is none.
pub(crate) fn date_json(out: &mut Vec<u8>, d: Option<NaiveDate>) {
    let Some(d) = d else { return out.extend_from_slice(b"null") };
    match u32::try_from(d.year()) {
        Ok(y) if y <= 9999 => {
            let two = |n: u32| [b'0' + (n / 10) as u8, b'0' + (n % 10) as u8];
            let (m, day) = (two(d.month()), two(d.day()));
            let (hi, lo) = (two(y / 100), two(y % 100));
            out.extend_from_slice(&[b'"', hi[0], hi[1], lo[0], lo[1], b'-', m[0], m[1], b'-', day[0], day[1], b'"']);
        }
        // Years chrono writes with a sign: as it writes them.
        _ => value_json(out, &d),
    }
}

/// Appends `v` as `serde_json` writes a value.
pub(crate) fn value_json(out: &mut Vec<u8>, v: &(impl serde::Serialize + ?Sized)) {
    serde_json::to_writer(&mut *out, v).expect("a value serialises");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_dates_are_written_as_serde_writes_them() {
        for s in ["", "Tata Motors Limited", "A \"quoted\" \\ name", "tab\there", "Ünïcödé ₹", "\u{7f}\u{1f}"] {
            let mut out = Vec::new();
            str_json(&mut out, s);
            assert_eq!(out, serde_json::to_vec(s).unwrap(), "{s:?}");
        }
        let days = [(1, 1, 1), (999, 12, 31), (1990, 1, 1), (2026, 5, 17), (9999, 12, 31), (10000, 1, 1), (-5, 3, 4)];
        for (y, m, d) in days {
            let day = NaiveDate::from_ymd_opt(y, m, d).unwrap();
            let mut out = Vec::new();
            date_json(&mut out, Some(day));
            assert_eq!(out, serde_json::to_vec(&day).unwrap(), "{day}");
        }
        let mut out = Vec::new();
        date_json(&mut out, None);
        assert_eq!(out, b"null");
    }
}
