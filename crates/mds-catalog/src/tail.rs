//! A row's details in a few bytes (its *tail*), and back: what the
//! catalog keeps per company for `GET /v1/companies/{isin}` and the change
//! feed (see `detail.rs`), about 30 bytes for a company listed on both
//! exchanges with every detail, instead of the ~430 of its JSON.
//!
//! What repeats across companies is kept once, in the catalog's detail
//! dictionaries, and a row names it by number: the classification (its
//! four levels as one JSON object), series and groups (`EQ`, `A`), face
//! values. What is the row's own is written in place: a symbol unless it
//! is the ticker, the scrip code as a number, dates as days, the market
//! cap as an `f64`.
//!
//! ```text
//! tail   = flags(1) class(varint: 0 = none, else 1 + dictionary string)
//!          [listing NSE] [listing BSE] [inr_crore f64 LE] [as_of days varint]
//! flags  = 1 NSE listing | 2 BSE listing | 4 market cap | 8 as_of
//!          | 16 NSE last_seen | 32 BSE last_seen
//! listing = lflags(1) [symbol: varint len, bytes] [scrip: varint number, or
//!           varint len, bytes] [series: varint string id] [listed_on: varint days]
//!           [face: varint number id] [last_seen: varint days]
//! lflags = 1 symbol given | 2 scrip | 4 scrip as text | 8 series | 16 listed_on
//!          | 32 face | status << 6
//! ```
//! Days count from 0001-01-01 (`NaiveDate::num_days_from_ce`). An empty
//! tail is a company without details. The company's status is not here:
//! it is in the row's flags (`layout::flag::STATUS_SHIFT`).

use std::collections::HashMap;

use chrono::{Datelike, NaiveDate};
use mds_domain::{Classification, CompanyDetails, Exchange, Listing, ListingStatus, MarketCap};

use crate::wire::{date_json, value_json};

const NSE: u8 = 1;
const BSE: u8 = 2;
const MCAP: u8 = 4;
const AS_OF: u8 = 8;
/// A listing's `last_seen`, by exchange (NSE, BSE): its listing flags are
/// full.
const LAST_SEEN: [u8; 2] = [16, 32];

const SYMBOL: u8 = 1;
const SCRIP: u8 = 2;
const SCRIP_TEXT: u8 = 4;
const SERIES: u8 = 8;
const LISTED: u8 = 16;
const FACE: u8 = 32;
const STATUS_SHIFT: u8 = 6;

const STATUSES: [ListingStatus; 3] = [ListingStatus::Active, ListingStatus::Suspended, ListingStatus::Delisted];

/// Appends `v` as a LEB128 varint.
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads tail (and history) bytes; every read of damaged bytes ends it
/// (`None`), never panics.
pub(crate) struct Reader<'a>(pub(crate) &'a [u8]);

impl<'a> Reader<'a> {
    pub(crate) fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }

    pub(crate) fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    fn text(&mut self) -> Option<&'a str> {
        let n = usize::try_from(self.varint()?).ok()?;
        std::str::from_utf8(self.bytes(n)?).ok()
    }

    fn date(&mut self) -> Option<NaiveDate> {
        NaiveDate::from_num_days_from_ce_opt(i32::try_from(self.varint()?).ok()?)
    }
}

/// The detail dictionaries of a catalog being built: strings (series,
/// groups, classification objects) and face values, each numbered as first
/// seen.
#[derive(Default)]
pub(crate) struct Dictionaries {
    strings: HashMap<String, u32>,
    string_order: Vec<String>,
    numbers: HashMap<u64, u32>,
    number_order: Vec<f64>,
}

impl Dictionaries {
    /// The id of string `s`, numbered as first seen.
    pub(crate) fn string(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.strings.get(s) {
            return id;
        }
        let id = self.string_order.len() as u32;
        self.strings.insert(s.to_owned(), id);
        self.string_order.push(s.to_owned());
        id
    }

    fn number(&mut self, v: f64) -> u32 {
        if let Some(&id) = self.numbers.get(&v.to_bits()) {
            return id;
        }
        let id = self.number_order.len() as u32;
        self.numbers.insert(v.to_bits(), id);
        self.number_order.push(v);
        id
    }

    /// The strings in id order, and the numbers' bytes (`f64` LE each).
    pub(crate) fn finish(self) -> (Vec<String>, Vec<u8>) {
        (self.string_order, self.number_order.iter().flat_map(|v| v.to_le_bytes()).collect())
    }
}

/// Appends the tail of `d` (nothing when it is empty); `ticker` is the
/// row's ticker (a symbol equal to it is not written).
pub(crate) fn encode(d: &CompanyDetails, ticker: &str, dict: &mut Dictionaries, out: &mut Vec<u8>) {
    // The status is kept in the row's flags, not here.
    if d.listings.is_empty() && d.classification == Classification::default() && d.market_cap.is_none() {
        return;
    }
    let listing = |e: Exchange| d.listings.iter().find(|l| l.exchange == e);
    let (nse, bse) = (listing(Exchange::Nse), listing(Exchange::Bse));
    let mcap = d.market_cap.as_ref();
    out.push(
        if nse.is_some() { NSE } else { 0 }
            | if bse.is_some() { BSE } else { 0 }
            | if mcap.is_some() { MCAP } else { 0 }
            | if mcap.is_some_and(|m| m.as_of.is_some()) { AS_OF } else { 0 }
            | if nse.is_some_and(|l| l.last_seen.is_some()) { LAST_SEEN[0] } else { 0 }
            | if bse.is_some_and(|l| l.last_seen.is_some()) { LAST_SEEN[1] } else { 0 },
    );
    let class = if d.classification == Classification::default() {
        0
    } else {
        let json = serde_json::to_string(&d.classification).expect("a classification serialises");
        1 + u64::from(dict.string(&json))
    };
    put_varint(out, class);
    for l in [nse, bse].into_iter().flatten() {
        let status = STATUSES.iter().position(|s| *s == l.status).unwrap_or(0) as u8;
        let scrip_number = l
            .scrip_code
            .as_deref()
            .filter(|c| !c.is_empty() && c.len() <= 18 && !c.starts_with('0') && c.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|c| c.parse::<u64>().ok());
        let flags = if l.symbol != ticker { SYMBOL } else { 0 }
            | if l.scrip_code.is_some() { SCRIP } else { 0 }
            | if l.scrip_code.is_some() && scrip_number.is_none() { SCRIP_TEXT } else { 0 }
            | if l.series.is_some() { SERIES } else { 0 }
            | if l.listed_on.is_some() { LISTED } else { 0 }
            | if l.face_value.is_some() { FACE } else { 0 }
            | status << STATUS_SHIFT;
        out.push(flags);
        if flags & SYMBOL != 0 {
            put_varint(out, l.symbol.len() as u64);
            out.extend_from_slice(l.symbol.as_bytes());
        }
        match (scrip_number, &l.scrip_code) {
            (Some(n), _) => put_varint(out, n),
            (None, Some(text)) => {
                put_varint(out, text.len() as u64);
                out.extend_from_slice(text.as_bytes());
            }
            (None, None) => {}
        }
        if let Some(s) = &l.series {
            put_varint(out, u64::from(dict.string(s)));
        }
        if let Some(d) = l.listed_on {
            put_varint(out, d.num_days_from_ce().max(0) as u64);
        }
        if let Some(v) = l.face_value {
            put_varint(out, u64::from(dict.number(v)));
        }
        if let Some(d) = l.last_seen {
            put_varint(out, d.num_days_from_ce().max(0) as u64);
        }
    }
    if let Some(m) = mcap {
        out.extend_from_slice(&m.inr_crore.to_le_bytes());
        if let Some(d) = m.as_of {
            put_varint(out, d.num_days_from_ce().max(0) as u64);
        }
    }
}

/// The exchanges a tail has a listing on (whatever its status), as
/// `replay::ON_NSE` and `replay::ON_BSE` bits; 0 when it has none.
pub(crate) fn listing_exchanges(tail: &[u8]) -> u8 {
    let f = tail.first().copied().unwrap_or(0);
    (if f & NSE != 0 { crate::replay::ON_NSE } else { 0 }) | (if f & BSE != 0 { crate::replay::ON_BSE } else { 0 })
}

/// Looks up what a tail names in the catalog's dictionaries.
pub(crate) trait Lookup {
    /// Dictionary string `id`.
    fn string(&self, id: u64) -> Option<&str>;
    /// Dictionary number `id`.
    fn number(&self, id: u64) -> Option<f64>;
}

/// A listing as a tail holds it, borrowed from the catalog.
pub(crate) struct ListingParts<'a> {
    pub(crate) exchange: Exchange,
    /// `None`: the row's ticker.
    pub(crate) symbol: Option<&'a str>,
    pub(crate) scrip: Scrip<'a>,
    pub(crate) series: Option<&'a str>,
    pub(crate) listed_on: Option<NaiveDate>,
    pub(crate) face_value: Option<f64>,
    pub(crate) status: ListingStatus,
    pub(crate) last_seen: Option<NaiveDate>,
}

/// A scrip code as a tail holds it.
pub(crate) enum Scrip<'a> {
    None,
    Number(u64),
    Text(&'a str),
}

/// A tail read, nothing copied: what [`decode`] and [`write_json`] are made of.
pub(crate) struct Parts<'a> {
    pub(crate) listings: [Option<ListingParts<'a>>; 2],
    /// The classification object's JSON, when there is one.
    pub(crate) classification: Option<&'a str>,
    pub(crate) market_cap: Option<MarketCap>,
}

impl<'a> ListingParts<'a> {
    /// A listing of which only the exchange is known (the symbol is the ticker).
    pub(crate) fn bare(exchange: Exchange) -> Self {
        ListingParts {
            exchange,
            symbol: None,
            scrip: Scrip::None,
            series: None,
            listed_on: None,
            face_value: None,
            status: ListingStatus::Active,
            last_seen: None,
        }
    }
}

/// Reads a non-empty tail. `None` for a damaged one.
pub(crate) fn parts<'a>(tail: &'a [u8], dict: &'a impl Lookup) -> Option<Parts<'a>> {
    let mut r = Reader(tail);
    let flags = r.byte()?;
    let classification = match r.varint()? {
        0 => None,
        id => Some(dict.string(id - 1)?),
    };
    let mut listings = [None, None];
    for (k, (bit, exchange)) in [(NSE, Exchange::Nse), (BSE, Exchange::Bse)].into_iter().enumerate() {
        if flags & bit == 0 {
            continue;
        }
        let lf = r.byte()?;
        let symbol = if lf & SYMBOL != 0 { Some(r.text()?) } else { None };
        let scrip = match (lf & SCRIP != 0, lf & SCRIP_TEXT != 0) {
            (false, _) => Scrip::None,
            (true, false) => Scrip::Number(r.varint()?),
            (true, true) => Scrip::Text(r.text()?),
        };
        let series = if lf & SERIES != 0 { Some(dict.string(r.varint()?)?) } else { None };
        let listed_on = if lf & LISTED != 0 { Some(r.date()?) } else { None };
        let face_value = if lf & FACE != 0 { Some(dict.number(r.varint()?)?) } else { None };
        let last_seen = if flags & LAST_SEEN[k] != 0 { Some(r.date()?) } else { None };
        let status = *STATUSES.get(usize::from(lf >> STATUS_SHIFT))?;
        listings[k] = Some(ListingParts { exchange, symbol, scrip, series, listed_on, face_value, status, last_seen });
    }
    let market_cap = if flags & MCAP != 0 {
        let inr_crore = f64::from_le_bytes(r.bytes(8)?.try_into().ok()?);
        let as_of = if flags & AS_OF != 0 { Some(r.date()?) } else { None };
        Some(MarketCap { inr_crore, as_of })
    } else {
        None
    };
    Some(Parts { listings, classification, market_cap })
}

/// Decodes a tail back into the details it was made from (listings the
/// flags imply are not made up here: none given reads as none). `None` for
/// a damaged tail.
pub(crate) fn decode(tail: &[u8], ticker: &str, dict: &impl Lookup) -> Option<CompanyDetails> {
    if tail.is_empty() {
        return Some(CompanyDetails::default());
    }
    let p = parts(tail, dict)?;
    let classification = match p.classification {
        None => Classification::default(),
        Some(json) => serde_json::from_str(json).ok()?,
    };
    let listings = p
        .listings
        .into_iter()
        .flatten()
        .map(|l| Listing {
            exchange: l.exchange,
            symbol: l.symbol.unwrap_or(ticker).to_owned(),
            scrip_code: match l.scrip {
                Scrip::None => None,
                Scrip::Number(n) => Some(n.to_string()),
                Scrip::Text(t) => Some(t.to_owned()),
            },
            series: l.series.map(str::to_owned),
            listed_on: l.listed_on,
            face_value: l.face_value,
            status: l.status,
            last_seen: l.last_seen,
        })
        .collect();
    Some(CompanyDetails { listings, classification, market_cap: p.market_cap, ..CompanyDetails::default() })
}

/// The classification of a company without one, as `serde_json` writes it.
const NO_CLASSIFICATION: &[u8] = b"{\"macro_sector\":null,\"sector\":null,\"industry\":null,\"basic_industry\":null}";

/// Appends `,"listings":[…],"classification":{…},"market_cap":…`, byte for
/// byte what `serde_json` writes for those fields of the details `p` holds
/// (a listing's symbol, when not given, is `ticker`).
pub(crate) fn write_json(out: &mut Vec<u8>, p: &Parts<'_>, ticker: &str) {
    out.extend_from_slice(b",\"listings\":[");
    for (k, l) in p.listings.iter().flatten().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        out.extend_from_slice(match l.exchange {
            Exchange::Nse => b"{\"exchange\":\"nse\",\"symbol\":",
            Exchange::Bse => b"{\"exchange\":\"bse\",\"symbol\":",
        });
        value_json(out, l.symbol.unwrap_or(ticker));
        out.extend_from_slice(b",\"scrip_code\":");
        match l.scrip {
            Scrip::None => out.extend_from_slice(b"null"),
            Scrip::Number(n) => {
                out.push(b'"');
                out.extend_from_slice(n.to_string().as_bytes());
                out.push(b'"');
            }
            Scrip::Text(t) => value_json(out, t),
        }
        out.extend_from_slice(b",\"series\":");
        value_json(out, &l.series);
        out.extend_from_slice(b",\"listed_on\":");
        date_json(out, l.listed_on);
        out.extend_from_slice(b",\"face_value\":");
        value_json(out, &l.face_value);
        out.extend_from_slice(b",\"status\":\"");
        out.extend_from_slice(l.status.as_str().as_bytes());
        out.extend_from_slice(b"\",\"last_seen\":");
        date_json(out, l.last_seen);
        out.push(b'}');
    }
    out.extend_from_slice(b"],\"classification\":");
    out.extend_from_slice(p.classification.map_or(NO_CLASSIFICATION, str::as_bytes));
    out.extend_from_slice(b",\"market_cap\":");
    match &p.market_cap {
        None => out.extend_from_slice(b"null"),
        Some(m) => {
            out.extend_from_slice(b"{\"inr_crore\":");
            value_json(out, &m.inr_crore);
            out.extend_from_slice(b",\"as_of\":");
            date_json(out, m.as_of);
            out.push(b'}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Dict(Vec<String>, Vec<f64>);

    impl Lookup for Dict {
        fn string(&self, id: u64) -> Option<&str> {
            self.0.get(id as usize).map(String::as_str)
        }
        fn number(&self, id: u64) -> Option<f64> {
            self.1.get(id as usize).copied()
        }
    }

    fn listing(exchange: Exchange, symbol: &str, scrip: Option<&str>) -> Listing {
        Listing {
            exchange,
            symbol: symbol.into(),
            scrip_code: scrip.map(Into::into),
            series: Some("EQ".into()),
            listed_on: NaiveDate::from_ymd_opt(2008, 10, 6),
            face_value: Some(5.0),
            status: ListingStatus::Delisted,
            last_seen: NaiveDate::from_ymd_opt(2024, 1, 30).filter(|_| exchange == Exchange::Nse),
        }
    }

    /// Every shape round-trips; a full two-exchange row is a few dozen bytes.
    #[test]
    fn tails_round_trip_and_are_small() {
        let full = CompanyDetails {
            listings: vec![listing(Exchange::Nse, "ABB", None), listing(Exchange::Bse, "ABB", Some("500002"))],
            classification: Classification {
                macro_sector: Some("Industrials".into()),
                sector: None,
                industry: Some("Electrical Equipment".into()),
                basic_industry: Some("Heavy \"Electrical\" Equipment".into()),
            },
            market_cap: Some(MarketCap { inr_crore: 155_221.75, as_of: NaiveDate::from_ymd_opt(2024, 3, 28) }),
            ..CompanyDetails::default()
        };
        let odd = CompanyDetails {
            listings: vec![listing(Exchange::Bse, "JK AGRI", Some("0536493")), listing(Exchange::Nse, "ÄX", Some("x"))],
            classification: Classification::default(),
            market_cap: Some(MarketCap { inr_crore: 0.1, as_of: None }),
            ..CompanyDetails::default()
        };
        let mut dict = Dictionaries::default();
        for (d, ticker, max) in [(&full, "ABB", 44), (&odd, "536493", 60), (&CompanyDetails::default(), "X", 0)] {
            let mut tail = Vec::new();
            encode(d, ticker, &mut dict, &mut tail);
            assert!(tail.len() <= max, "{} bytes", tail.len());
            let (strings, numbers) = std::mem::take(&mut dict).finish();
            let numbers = numbers.chunks(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect();
            let back = decode(&tail, ticker, &Dict(strings.clone(), numbers)).unwrap();
            let mut want = d.clone();
            want.listings.sort_by_key(|l| l.exchange != Exchange::Nse);
            assert_eq!(back, want);
            // A damaged tail ends, it does not panic.
            for cut in 0..tail.len() {
                let _ = decode(&tail[..cut], ticker, &Dict(strings.clone(), vec![]));
            }
        }
    }
}
