//! Bars as JSON, written directly: the bytes `serde_json` writes for a
//! [`Bar`], a [`CompanyPrices`] and a [`MarketDay`], made without it.
//!
//! A made series is mostly bars, and through `serde_json` half of its time
//! went to writing them: each price as a double in its shortest form, each
//! string through the escaper, each key as a map entry. Here a decimal is
//! written from its fixed-point integer ([`write_decimal`]), and the
//! strings of a bar (a date, an ISIN, a series, `isin_source`) need no
//! escaping, so they are copied. The serde forms stay the definition of
//! the wire (the clients read with them, the OpenAPI document derives from
//! them); this module's tests check it writes their bytes, byte for byte.

use chrono::{Datelike, NaiveDate};
use serde::Serialize;

use crate::Isin;
use crate::price_query::{Adjust, Adjustment, CompanyPrices, MarketDay};
use crate::prices::{Bar, Factors};

/// About the bytes of one bar on the wire, to size a body ahead.
const BAR_BYTES: usize = 300;

/// The largest count of units written without a double: below 2^52 units
/// a double's gap is under one unit, so the double nearest `units /
/// 10^places` reads back as that decimal and as no shorter one, and its
/// shortest form is the decimal's digits. A price of 4.5e11 rupees, a
/// turnover of 4.5e13: none comes near.
const EXACT_UNITS: u64 = 1 << 52;

/// Appends `value` through `serde_json`: the definition this module
/// follows, for what it does not write itself.
fn write_serde<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    serde_json::to_writer(&mut *out, value).expect("writing JSON to a Vec");
}

/// Appends `units / 10^places` as `serde_json` writes the double nearest
/// it ([`f64`]'s shortest form): the whole part, a point and the decimals
/// without trailing zeros, `.0` when there are none (`480.6`, `2500.0`,
/// `0.0005`, `-3.25`). The units' digits are written once and the point
/// put among them, so no division by the scale is made.
pub(crate) fn write_decimal(out: &mut Vec<u8>, units: i64, places: u32) {
    let abs = units.unsigned_abs();
    if abs >= EXACT_UNITS {
        return write_serde(out, &(units as f64 / 10u64.pow(places) as f64));
    }
    if units < 0 {
        out.push(b'-');
    }
    let mut digits = itoa::Buffer::new();
    let text = digits.format(abs).as_bytes();
    let places = places as usize;
    // The whole part's digits and the decimals' (those the units have:
    // the rest of `places` are leading zeros).
    let (whole, decimals) = text.split_at(text.len().saturating_sub(places));
    out.extend_from_slice(if whole.is_empty() { b"0." } else { whole });
    if !whole.is_empty() {
        out.push(b'.');
    }
    let Some(last) = decimals.iter().rposition(|&d| d != b'0') else {
        out.push(b'0');
        return;
    };
    out.extend(std::iter::repeat_n(b'0', places - decimals.len()));
    out.extend_from_slice(&decimals[..=last]);
}

/// Appends `n` as a JSON number.
fn write_u64(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// Appends `text`, quoted; `text` holds nothing JSON escapes (an ISIN, a
/// series, a wire enum's value).
fn write_plain(out: &mut Vec<u8>, text: &str) {
    debug_assert!(text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\'), "{text:?} needs escaping");
    out.push(b'"');
    out.extend_from_slice(text.as_bytes());
    out.push(b'"');
}

/// Appends `date`, quoted, as chrono writes it (`"2025-06-16"`).
fn write_date(out: &mut Vec<u8>, date: NaiveDate) {
    let year = date.year();
    if !(0..=9999).contains(&year) {
        return write_serde(out, &date);
    }
    let two = |n: u32| [b'0' + (n / 10) as u8, b'0' + (n % 10) as u8];
    let y = year as u32;
    out.push(b'"');
    out.extend_from_slice(&two(y / 100));
    out.extend_from_slice(&two(y % 100));
    out.push(b'-');
    out.extend_from_slice(&two(date.month()));
    out.push(b'-');
    out.extend_from_slice(&two(date.day()));
    out.push(b'"');
}

impl Bar {
    /// Appends the bar as JSON, adjusted by `f` ([`Bar::adjust`]): the
    /// bytes `serde_json` writes for the adjusted bar.
    pub fn write_json(&self, f: Factors, out: &mut Vec<u8>) {
        let price = |out: &mut Vec<u8>, key: &[u8], p| {
            out.extend_from_slice(key);
            let p: crate::prices::Price = f.scale(p, f.price);
            write_decimal(out, p.units(), crate::prices::Price::PLACES);
        };
        out.extend_from_slice(b"{\"date\":");
        write_date(out, self.date);
        out.extend_from_slice(b",\"isin\":");
        write_plain(out, self.isin.as_str());
        out.extend_from_slice(b",\"series\":");
        write_plain(out, self.series.as_str());
        price(out, b",\"open\":", self.open);
        price(out, b",\"high\":", self.high);
        price(out, b",\"low\":", self.low);
        price(out, b",\"close\":", self.close);
        match self.last {
            Some(last) => price(out, b",\"last\":", last),
            None => out.extend_from_slice(b",\"last\":null"),
        }
        out.extend_from_slice(b",\"prev_close\":");
        let prev = f.scale(self.prev_close, f.prev_close);
        write_decimal(out, prev.units(), crate::prices::Price::PLACES);
        out.extend_from_slice(b",\"volume\":");
        write_u64(out, f.count(self.volume));
        out.extend_from_slice(b",\"turnover\":");
        write_decimal(out, self.turnover.units(), crate::prices::Paise::PLACES);
        out.extend_from_slice(b",\"trades\":");
        write_u64(out, self.trades);
        out.extend_from_slice(b",\"delivery_qty\":");
        match self.delivery_qty {
            Some(n) => write_u64(out, f.count(n)),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"delivery_pct\":");
        match self.delivery_pct {
            Some(p) => write_decimal(out, p.units(), crate::prices::Percent::PLACES),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"isin_source\":");
        write_plain(out, self.isin_source.as_str());
        out.push(b'}');
    }
}

/// Appends `bars` as a JSON array, each adjusted by its factors of
/// `factors` (the same length).
fn write_bars(out: &mut Vec<u8>, bars: &[Bar], factors: impl IntoIterator<Item = Factors>) {
    out.push(b'[');
    for (i, (bar, f)) in bars.iter().zip(factors).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        bar.write_json(f, out);
    }
    out.push(b']');
}

/// The JSON of a [`CompanyPrices`] of the company `isin`, adjusted as
/// `adjust` says, whose bars are `bars` each adjusted by its factors of
/// `factors` (the same length), with the `adjustments` applied: the bytes
/// `serde_json` writes for it, made without adjusting a copy of the bars.
pub fn company_prices_json(
    isin: &Isin,
    adjust: Adjust,
    bars: &[Bar],
    factors: &[Factors],
    adjustments: &[Adjustment],
) -> Vec<u8> {
    assert_eq!(bars.len(), factors.len(), "a factor a bar");
    let mut out = Vec::with_capacity(64 + bars.len() * BAR_BYTES + adjustments.len() * 160);
    out.extend_from_slice(b"{\"isin\":");
    write_plain(&mut out, isin.as_str());
    out.extend_from_slice(b",\"adjust\":");
    write_plain(&mut out, adjust.as_str());
    out.extend_from_slice(b",\"bars\":");
    write_bars(&mut out, bars, factors.iter().copied());
    out.extend_from_slice(b",\"adjustments\":");
    write_serde(&mut out, adjustments);
    out.push(b'}');
    out
}

impl CompanyPrices {
    /// Its JSON: the bytes `serde_json` writes for it
    /// ([`company_prices_json`] with its bars as they are).
    pub fn to_json(&self) -> Vec<u8> {
        let none = vec![Factors::NONE; self.bars.len()];
        company_prices_json(&self.isin, self.adjust, &self.bars, &none, &self.adjustments)
    }
}

impl MarketDay {
    /// Its JSON: the bytes `serde_json` writes for it.
    pub fn to_json(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(96 + self.data.len() * BAR_BYTES);
        out.extend_from_slice(b"{\"date\":");
        write_date(&mut out, self.date);
        out.extend_from_slice(b",\"data\":");
        write_bars(&mut out, &self.data, std::iter::repeat(Factors::NONE));
        out.extend_from_slice(match self.has_more {
            true => b",\"has_more\":true,\"next_cursor\":",
            false => b",\"has_more\":false,\"next_cursor\":",
        });
        write_serde(&mut out, &self.next_cursor);
        out.push(b'}');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::{Action, ActionId, ActionType, FaceValueChange};
    use crate::prices::{Figures, IsinSource, Paise, Percent, Price, Series};
    use proptest::prelude::*;

    /// What `serde_json` writes for `units / 10^places`: the serde form of
    /// the type of those places.
    fn serde_of(units: i64, places: u32) -> String {
        match places {
            2 => serde_json::to_string(&Paise::from_units(units)).unwrap(),
            4 => serde_json::to_string(&Price::from_units(units)).unwrap(),
            _ => unreachable!(),
        }
    }

    fn direct(units: i64, places: u32) -> String {
        let mut out = Vec::new();
        write_decimal(&mut out, units, places);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn decimals_are_serde_jsons_bytes_at_the_edges() {
        let mut edges: Vec<i64> = Vec::new();
        // Every value of the first hundred thousand units (0 to 10 rupees
        // of a price, to 1,000 of paise), and around every power of ten
        // and of two.
        edges.extend(0..100_000);
        for k in 0..19 {
            let p = 10i64.pow(k);
            edges.extend((p.saturating_sub(3)..=p.saturating_add(3)).filter(|v| *v >= 0));
        }
        for k in 0..63 {
            let p = 1i64 << k;
            edges.extend(p.saturating_sub(3)..=p.saturating_add(3));
        }
        // Whole rupees and round fractions of large ones, near 2^53 / 10^4
        // and 2^53 / 10^2 (where a double's gap nears a unit) and beyond.
        for big in [1i64 << 52, 1 << 53, (1 << 53) / 10_000, (1 << 53) / 100, 10i64.pow(15), i64::MAX / 2] {
            for d in [-20_000, -10_000, -101, -100, -50, -10, -1, 0, 1, 10, 50, 100, 101, 10_000, 20_000] {
                edges.push(big.saturating_add(d));
            }
        }
        edges.extend([i64::MAX, i64::MAX - 1, i64::MAX - 9_999]);
        let negatives: Vec<i64> = edges.iter().map(|v| -v).collect();
        edges.extend(negatives);
        edges.push(i64::MIN);
        for places in [2, 4] {
            for &units in &edges {
                assert_eq!(direct(units, places), serde_of(units, places), "{units} at {places} places");
            }
        }
        assert_eq!(direct(248_060, 2), "2480.6");
        assert_eq!(direct(250_000, 2), "2500.0");
        assert_eq!(direct(5, 4), "0.0005");
        assert_eq!(direct(-325, 2), "-3.25");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 20_000, failure_persistence: None, ..Default::default() })]

        /// Any count of units, at the places of a price or of paise, is
        /// written as `serde_json` writes it.
        #[test]
        fn decimals_are_serde_jsons_bytes(units in any::<i64>(), small in -100_000_000_000i64..100_000_000_000, four in any::<bool>()) {
            let places = if four { 4 } else { 2 };
            prop_assert_eq!(direct(units, places), serde_of(units, places));
            prop_assert_eq!(direct(small, places), serde_of(small, places));
            // A whole number, and a round fraction of one.
            let whole = small / 10_000 * 10_000;
            prop_assert_eq!(direct(whole, places), serde_of(whole, places));
            prop_assert_eq!(direct(whole + 5_000, places), serde_of(whole + 5_000, places));
        }
    }

    fn figures(units: [i64; 6], counts: [u64; 3], last: bool, delivery: bool) -> Figures {
        let p = Paise::from_units;
        Figures {
            open: p(units[0]),
            high: p(units[1]),
            low: p(units[2]),
            close: p(units[3]),
            last: last.then(|| p(units[4])),
            prev_close: p(units[5]),
            volume: counts[0],
            turnover: p(units[5].wrapping_mul(7)),
            trades: counts[1],
            delivery_qty: delivery.then_some(counts[2]),
            delivery_pct: delivery.then(|| Percent::from_units(units[4] % 10_001)),
        }
    }

    fn isin(i: usize) -> Isin {
        Isin::parse(["INE002A01018", "INE296A01032", "INE592B01016", "INE144J01027"][i % 4]).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2_000, failure_persistence: None, ..Default::default() })]

        /// A bar, adjusted by any factors, is written as `serde_json`
        /// writes the bar adjusted.
        #[test]
        fn bars_are_serde_jsons_bytes(
            units in proptest::array::uniform6(0i64..10_000_000_000),
            counts in proptest::array::uniform3(any::<u64>()),
            flags in proptest::array::uniform4(any::<bool>()),
            factor in prop_oneof![Just(1.0f64), 0.001f64..10.0],
            days in 0i64..4_000_000,
            which in 0usize..4,
        ) {
            let date = NaiveDate::from_ymd_opt(-9_999, 1, 1).unwrap() + chrono::Days::new(days as u64);
            let series = Series::parse(["EQ", "BE", "A", "1Z"][which]).unwrap();
            let source = if flags[2] { IsinSource::File } else { IsinSource::Symbol };
            let bar = Bar::published(date, isin(which), series, source, &figures(units, counts, flags[0], flags[1]));
            let f = if flags[3] { Factors::NONE } else { Factors { price: factor, prev_close: factor * 0.97, shares: factor } };
            let mut direct = Vec::new();
            bar.write_json(f, &mut direct);
            let mut adjusted = bar.clone();
            adjusted.adjust(f);
            prop_assert_eq!(String::from_utf8(direct).unwrap(), serde_json::to_string(&adjusted).unwrap());
        }
    }

    fn bars(n: usize) -> Vec<Bar> {
        (0..n)
            .map(|i| {
                let date = NaiveDate::from_ymd_opt(2025, 1, 1).unwrap() + chrono::Days::new(i as u64);
                let u = 10_000 + i as i64 * 37;
                let f = figures([u, u + 55, u - 40, u + 5, u + 6, u - 3], [i as u64 * 11, 7, 3], i % 3 > 0, i % 2 > 0);
                Bar::published(date, isin(i / 3), Series::EQ, IsinSource::File, &f)
            })
            .collect()
    }

    #[test]
    fn answers_are_serde_jsons_bytes() {
        let isin = isin(0);
        let action = Action::Split {
            split: FaceValueChange { face_value_from: Some(10.0), face_value_to: Some(1.0), new_isin: None },
        };
        let ex = NaiveDate::from_ymd_opt(2025, 1, 3).unwrap();
        let adjustments = vec![Adjustment {
            action_id: ActionId::of(&isin, ex, &action),
            ex_date: ex,
            action_type: ActionType::Split,
            factor: 0.1,
        }];
        for n in [0, 1, 5] {
            for adjust in [Adjust::Unadjusted, Adjust::Split, Adjust::Total] {
                let mut prices = CompanyPrices { isin: isin.clone(), adjust, bars: bars(n), adjustments: Vec::new() };
                assert_eq!(prices.to_json(), serde_json::to_vec(&prices).unwrap());
                prices.adjustments = adjustments.clone();
                let factors = crate::price_query::factors_of(&prices.bars, &adjustments);
                let direct = company_prices_json(&isin, adjust, &prices.bars, &factors, &adjustments);
                crate::price_query::adjust_bars(&mut prices.bars, &adjustments);
                assert_eq!(String::from_utf8(direct).unwrap(), serde_json::to_string(&prices).unwrap());
            }
            for (has_more, next_cursor) in [(false, None), (true, Some("abc_-12".to_owned()))] {
                let date = NaiveDate::from_ymd_opt(2025, 2, 12).unwrap();
                let day = MarketDay { date, data: bars(n), has_more, next_cursor };
                assert_eq!(String::from_utf8(day.to_json()).unwrap(), serde_json::to_string(&day).unwrap());
            }
        }
    }
}
