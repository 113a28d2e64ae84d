//! End-of-day prices (contract section 14): the daily bar of the wire
//! ([`Bar`], `V1Bar`), the series a bar trades in ([`Series`], and which of
//! them are equity, [`EQUITY_SERIES`]), and the decimals bars carry.
//!
//! # Numbers
//! The exchanges publish prices and turnover with two decimals, so they are
//! held exactly, as whole numbers of hundredths, never as binary floats:
//!
//! - [`Paise`]: rupees as a whole number of paise (`i64`). The published
//!   prices and turnover; what an importer reads ([`Figures`]) and what a
//!   store or an in-memory column keeps (a column of `i64`, or of deltas,
//!   per field: the prices of one security move little from day to day).
//! - [`Price`]: rupees as a whole number of ten-thousandths (`i64`). The
//!   prices of a [`Bar`] on the wire: a published price is a whole number of
//!   paise, an adjusted one is rounded to four decimals (14.2), and the one
//!   type carries both.
//! - [`Percent`]: hundredths of a percent (`delivery_pct`).
//!
//! On the wire each is a JSON number whose shortest form is the decimal
//! itself (`480.6` for 480.60, `123.4567`): the integer divided by its
//! scale is the double nearest that decimal, and JSON writers print the
//! shortest digits that read back as it. Read back, a number is rounded to
//! the type's places. `Display` (the CSV form) writes at least two decimals
//! (`480.60`), and more only when they are not zero.

use std::fmt;
use std::str::FromStr;

use chrono::NaiveDate;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::isin::Isin;

/// Why a decimal cell is not a value of a fixed-point type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DecimalError(String);

/// A non-negative decimal as published: digits, an optional point and at
/// most `places` digits after it; scaled to a whole number of
/// `1/10^places`.
fn parse_scaled(s: &str, places: u32) -> Result<i64, DecimalError> {
    let t = s.trim();
    let (whole, frac) = t.split_once('.').unwrap_or((t, ""));
    let digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && frac.is_empty()) || !digits(whole) || !digits(frac) {
        return Err(DecimalError(format!("must be a number such as 176.25 (got {t:?})")));
    }
    if frac.len() > places as usize {
        return Err(DecimalError(format!("has more than {places} decimals (got {t:?})")));
    }
    let too_large = || DecimalError(format!("is too large (got {t:?})"));
    let mut value: i64 = 0;
    for b in whole.bytes().chain(frac.bytes()).chain(std::iter::repeat_n(b'0', places as usize - frac.len())) {
        value = value.checked_mul(10).and_then(|v| v.checked_add(i64::from(b - b'0'))).ok_or_else(too_large)?;
    }
    Ok(value)
}

/// Writes `units / 10^places` with at least two decimals and no trailing
/// zero beyond them.
fn write_scaled(f: &mut fmt::Formatter<'_>, units: i64, places: u32) -> fmt::Result {
    let scale = 10u64.pow(places);
    let abs = units.unsigned_abs();
    let sign = if units < 0 { "-" } else { "" };
    let mut frac = format!("{:0width$}", abs % scale, width = places as usize);
    while frac.len() > 2 && frac.ends_with('0') {
        frac.pop();
    }
    write!(f, "{sign}{}.{frac}", abs / scale)
}

/// A fixed-point decimal type: an `i64` count of `1/10^places`, parsed
/// exactly from text, a JSON number on the wire.
macro_rules! fixed_decimal {
    ($(#[$m:meta])* $name:ident, $places:literal, $example:literal) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(i64);

        impl $name {
            /// Decimal places held.
            pub const PLACES: u32 = $places;
            /// Units in one (`10^PLACES`).
            pub const SCALE: i64 = 10i64.pow($places);

            /// The value of `units` of `1/SCALE`.
            pub const fn from_units(units: i64) -> Self {
                $name(units)
            }

            /// The value in units of `1/SCALE`.
            pub const fn units(self) -> i64 {
                self.0
            }

            /// A non-negative decimal written with at most [`Self::PLACES`]
            /// decimals (`176.2`, `9331`, `0.05`), read exactly.
            pub fn parse(s: &str) -> Result<Self, DecimalError> {
                parse_scaled(s, $places).map($name)
            }

            /// The nearest value to `v`; `None` when `v` is not finite or
            /// out of range.
            pub fn from_f64(v: f64) -> Option<Self> {
                let scaled = (v * Self::SCALE as f64).round();
                // i64::MAX as f64 rounds up to 2^63, itself out of range.
                (scaled.is_finite() && scaled.abs() < i64::MAX as f64).then(|| $name(scaled as i64))
            }

            /// The value as the nearest double (exact in its shortest
            /// decimal form below 2^53 units).
            pub fn to_f64(self) -> f64 {
                self.0 as f64 / Self::SCALE as f64
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write_scaled(f, self.0, $places)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_f64(self.to_f64())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = f64::deserialize(d)?;
                $name::from_f64(v).ok_or_else(|| serde::de::Error::custom(format!("{v} is out of range")))
            }
        }

        #[cfg(feature = "openapi")]
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::Number)
                    .description(Some(concat!("A decimal with at most ", stringify!($places), " places.")))
                    .examples([serde_json::json!($example)])
                    .build()
                    .into()
            }
        }

        #[cfg(feature = "openapi")]
        impl utoipa::ToSchema for $name {}
    };
}

fixed_decimal!(
    /// Rupees as a whole number of paise (hundredths): a price or a
    /// turnover as the exchange publishes it.
    Paise, 2, 9331.0
);

fixed_decimal!(
    /// Rupees as a whole number of ten-thousandths: a bar's price, published
    /// (a whole number of paise) or adjusted (rounded to four decimals).
    Price, 4, 938.05
);

fixed_decimal!(
    /// A percentage in hundredths of a percent (`38.17`).
    Percent, 2, 38.17
);

impl From<Paise> for Price {
    fn from(p: Paise) -> Price {
        // Paise up to 9.2e16 (rupees 9.2e14): no price comes near.
        Price(p.0.saturating_mul(Price::SCALE / Paise::SCALE))
    }
}

/// Why a text is not a [`Series`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("series must be one or two letters or digits such as EQ (got {0:?})")]
pub struct SeriesError(String);

/// The series a security trades in on an exchange (NSE's `EQ`, `BE`, `SM`,
/// ...): one or two ASCII letters or digits, upper case, held inline.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Series([u8; 2]);

/// The equity series of NSE's daily files, with what each is (NSE's own
/// definitions): the rows a bar is made of. Every other series is skipped:
/// `BL` (block deals: the same security in a separate window), `T0` (the
/// T+0 settlement trial: the same security traded for same-day settlement),
/// `E1`, `X1` (partly paid-up shares, an ISIN of their own until the final
/// call), `P1` (preference shares), `W1` (warrants), `RR`, `IV` (REIT and
/// InvIT units), `MF` (fund units), `GB` (sovereign gold bonds), `GS` and
/// `SG` (government and state loans), `TB` (treasury bills), and the debt
/// series (`N0`..`N9`, `NA`..`NZ`, `Y*`, `Z*`, `A*`, `B*`: bonds and
/// debentures).
pub const EQUITY_SERIES: &[(&str, &str)] = &[
    ("EQ", "equity, rolling settlement"),
    ("BE", "equity, trade for trade (every trade settled by delivery)"),
    ("BZ", "equity, trade for trade, of companies not complying with the listing rules (Z category)"),
    ("SM", "SME platform (NSE Emerge), rolling settlement"),
    ("ST", "SME platform, trade for trade"),
    ("SZ", "SME platform, trade for trade, not complying with the listing rules"),
    ("IT", "Institutional Trading Platform (start-ups' equity)"),
];

impl Series {
    /// The main board's rolling-settlement series.
    pub const EQ: Series = Series(*b"EQ");

    /// Parses one or two ASCII letters or digits, accepting surrounding
    /// white space and lower case.
    pub fn parse(s: &str) -> Result<Self, SeriesError> {
        let t = s.trim().as_bytes();
        if t.is_empty() || t.len() > 2 || !t.iter().all(u8::is_ascii_alphanumeric) {
            return Err(SeriesError(s.chars().take(20).collect()));
        }
        Ok(Series([t[0].to_ascii_uppercase(), t.get(1).map_or(0, u8::to_ascii_uppercase)]))
    }

    /// The series as text.
    pub fn as_str(&self) -> &str {
        let len = if self.0[1] == 0 { 1 } else { 2 };
        std::str::from_utf8(&self.0[..len]).expect("ASCII by construction")
    }

    /// Whether a row of this series is an equity bar ([`EQUITY_SERIES`]).
    pub fn is_equity(self) -> bool {
        EQUITY_SERIES.iter().any(|(code, _)| code.as_bytes() == self.as_str().as_bytes())
    }
}

impl fmt::Display for Series {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Series {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Series({})", self.as_str())
    }
}

impl Serialize for Series {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Series {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str> as Deserialize>::deserialize(d)?;
        Series::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(feature = "openapi")]
string_schema!(
    Series,
    "The exchange's series: one or two letters or digits, upper case (`EQ`, `BE`, `SM`).",
    "^[A-Z0-9]{1,2}$",
    1,
    2,
    "EQ"
);

wire_enum!(
    /// Where a bar's ISIN comes from.
    IsinSource, "isin_source must be one of file, symbol (got {:?})", {
        /// The day's file named the ISIN.
        File => "file",
        /// The file named only the symbol: the ISIN is the one that carried
        /// that symbol on that day (section 10).
        Symbol => "symbol",
    }
);

/// What a daily file says of one security on one day, as published: the
/// compact form an importer reads and a store keeps (no text; the date,
/// security and series are the row's key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Figures {
    /// Opening price.
    pub open: Paise,
    /// Highest price.
    pub high: Paise,
    /// Lowest price.
    pub low: Paise,
    /// Closing price (NSE's: the weighted average of the last half hour).
    pub close: Paise,
    /// Last traded price; `None` when the file has none (the UDiFF file of
    /// 2024-09-27 leaves every `LastPric` empty).
    pub last: Option<Paise>,
    /// The previous day's close, as published (not adjusted on an
    /// ex-date).
    pub prev_close: Paise,
    /// Shares traded.
    pub volume: u64,
    /// Value traded, rupees.
    pub turnover: Paise,
    /// Number of trades.
    pub trades: u64,
    /// Shares delivered, when the file has it.
    pub delivery_qty: Option<u64>,
    /// Delivered share of the volume, percent, when the file has it.
    pub delivery_pct: Option<Percent>,
}

impl Figures {
    /// A day traded at one price, `price`, in one trade of `volume`
    /// shares: every price (and the previous close) `price`, the turnover
    /// `price` too, no last price and no delivery figures. The bar of a
    /// test or an example, where only the close matters.
    pub fn flat(price: Paise, volume: u64) -> Figures {
        let p = price;
        Figures {
            open: p,
            high: p,
            low: p,
            close: p,
            last: None,
            prev_close: p,
            volume,
            turnover: p,
            trades: 1,
            delivery_qty: None,
            delivery_pct: None,
        }
    }
}

/// What a bar is adjusted by ([`Bar::adjust`]): its prices multiplied by
/// `price`, its `prev_close` by `prev_close` (the factor of the day
/// before), its share counts divided by `shares`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Factors {
    /// The factor of the prices.
    pub price: f64,
    /// The factor of the previous close.
    pub prev_close: f64,
    /// The divisor of the share counts.
    pub shares: f64,
}

impl Factors {
    /// Nothing adjusted: every factor exactly 1.
    pub const NONE: Factors = Factors { price: 1.0, prev_close: 1.0, shares: 1.0 };

    /// `p` multiplied by `f`, rounded to four decimals; `p` itself when
    /// `f` is exactly 1.
    pub(crate) fn scale(self, p: Price, f: f64) -> Price {
        match f == 1.0 {
            true => p,
            false => Price::from_units((p.units() as f64 * f).round() as i64),
        }
    }

    /// `n` shares divided by [`Factors::shares`], rounded to whole shares;
    /// `n` itself when that is exactly 1.
    pub(crate) fn count(self, n: u64) -> u64 {
        match self.shares == 1.0 {
            true => n,
            false => (n as f64 / self.shares).round() as u64,
        }
    }
}

/// One security's day (`V1Bar`, contract 14.2): `date`, `isin`, `series`,
/// the prices, `volume`, `turnover`, `trades`, the delivery figures when the
/// file has them, and where the ISIN comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1Bar))]
pub struct Bar {
    /// The trading day, `YYYY-MM-DD`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date, example = "2025-06-16"))]
    pub date: NaiveDate,
    /// The security.
    pub isin: Isin,
    /// The series it traded in.
    pub series: Series,
    /// Opening price, rupees.
    pub open: Price,
    /// Highest price, rupees.
    pub high: Price,
    /// Lowest price, rupees.
    pub low: Price,
    /// Closing price, rupees.
    pub close: Price,
    /// Last traded price, rupees; `null` when the file has none.
    #[cfg_attr(feature = "openapi", schema(required))]
    pub last: Option<Price>,
    /// The previous day's close as published (on an ex-date, before the
    /// action).
    pub prev_close: Price,
    /// Shares traded.
    pub volume: u64,
    /// Value traded, rupees.
    pub turnover: Paise,
    /// Number of trades.
    pub trades: u64,
    /// Shares delivered; `null` when the file has none.
    #[cfg_attr(feature = "openapi", schema(required))]
    pub delivery_qty: Option<u64>,
    /// Delivered share of the volume, percent; `null` when the file has none.
    #[cfg_attr(feature = "openapi", schema(required))]
    pub delivery_pct: Option<Percent>,
    /// `file` when the day's file named the ISIN, `symbol` when it was
    /// resolved from the symbol.
    pub isin_source: IsinSource,
}

impl Bar {
    /// The field names in wire order: the JSON keys and the CSV header.
    pub const FIELDS: [&'static str; 15] = [
        "date",
        "isin",
        "series",
        "open",
        "high",
        "low",
        "close",
        "last",
        "prev_close",
        "volume",
        "turnover",
        "trades",
        "delivery_qty",
        "delivery_pct",
        "isin_source",
    ];

    /// Appends the CSV header line of bars (`text/csv`, contract 14.2):
    /// [`Bar::FIELDS`], comma-separated, ending with `\n`.
    pub fn csv_header(out: &mut String) {
        for (i, f) in Bar::FIELDS.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(f);
        }
        out.push('\n');
    }

    /// Appends the bar as one CSV line, its fields in [`Bar::FIELDS`]
    /// order: decimals as [`Price`]'s `Display` writes them (`480.60`), a
    /// `null` as an empty cell, ending with `\n`. No field needs quoting
    /// (dates, ISINs, series, numbers and `isin_source` hold no comma,
    /// quote or line break).
    pub fn write_csv(&self, out: &mut String) {
        use std::fmt::Write as _;
        fn opt<T: fmt::Display>(out: &mut String, v: Option<T>) {
            if let Some(v) = v {
                write!(out, "{v}").expect("writing to a String");
            }
        }
        write!(
            out,
            "{},{},{},{},{},{},{},",
            self.date, self.isin, self.series, self.open, self.high, self.low, self.close
        )
        .expect("writing to a String");
        opt(out, self.last);
        write!(out, ",{},{},{},{},", self.prev_close, self.volume, self.turnover, self.trades)
            .expect("writing to a String");
        opt(out, self.delivery_qty);
        out.push(',');
        opt(out, self.delivery_pct);
        out.push(',');
        out.push_str(self.isin_source.as_str());
        out.push('\n');
    }

    /// The bar with its prices multiplied by `f.price` (`prev_close` by
    /// `f.prev_close`, the factor of the day before) and rounded to four
    /// decimals, and its share counts (`volume`, `delivery_qty`) divided by
    /// `f.shares` and rounded to whole shares (contract 14.2). Turnover,
    /// trades and the delivered percentage are not adjusted: money and
    /// trades are what they were. A factor of exactly 1 changes nothing.
    pub fn adjust(&mut self, f: Factors) {
        self.open = f.scale(self.open, f.price);
        self.high = f.scale(self.high, f.price);
        self.low = f.scale(self.low, f.price);
        self.close = f.scale(self.close, f.price);
        self.last = self.last.map(|p| f.scale(p, f.price));
        self.prev_close = f.scale(self.prev_close, f.prev_close);
        self.volume = f.count(self.volume);
        self.delivery_qty = self.delivery_qty.map(|n| f.count(n));
    }

    /// The bar of a file's row, unadjusted.
    pub fn published(date: NaiveDate, isin: Isin, series: Series, isin_source: IsinSource, f: &Figures) -> Bar {
        Bar {
            date,
            isin,
            series,
            open: f.open.into(),
            high: f.high.into(),
            low: f.low.into(),
            close: f.close.into(),
            last: f.last.map(Price::from),
            prev_close: f.prev_close.into(),
            volume: f.volume,
            turnover: f.turnover,
            trades: f.trades,
            delivery_qty: f.delivery_qty,
            delivery_pct: f.delivery_pct,
            isin_source,
        }
    }
}

/// The exchange whose daily files the bars are (NSE's bhavcopy): a day of
/// bars is a day of this exchange.
pub const BARS_EXCHANGE: crate::Exchange = crate::Exchange::Nse;

/// The `data` of a `prices.published` event (`V1PricesPublished`, contract
/// 14.2 and 11.1): an import changed the bars of a day of an exchange; the
/// day now holds `bars` bars.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1PricesPublished))]
#[serde(deny_unknown_fields)]
pub struct PricesPublished {
    /// The trading day, `YYYY-MM-DD`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date, example = "2025-02-12"))]
    pub date: NaiveDate,
    /// The exchange whose day it is.
    pub exchange: crate::Exchange,
    /// How many bars the day holds now (every ISIN and series).
    #[cfg_attr(feature = "openapi", schema(example = 2391))]
    pub bars: u64,
}

impl PricesPublished {
    /// The draft of its `prices.published` event: about no company (an
    /// `isin` or `ticker` filter does not admit it).
    pub fn draft(&self) -> crate::event::EventDraft {
        crate::event::EventDraft {
            kind: crate::event::EventType::PricesPublished,
            subject: crate::event::EventSubject::default(),
            data: serde_json::to_string(self).expect("a day's publication always serialises"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_published_day_is_its_event() {
        let p =
            PricesPublished { date: NaiveDate::from_ymd_opt(2025, 2, 12).unwrap(), exchange: BARS_EXCHANGE, bars: 3 };
        let d = p.draft();
        assert_eq!(d.kind, crate::event::EventType::PricesPublished);
        assert_eq!(d.subject, crate::event::EventSubject::default());
        assert_eq!(d.data, r#"{"date":"2025-02-12","exchange":"nse","bars":3}"#);
        assert_eq!(serde_json::from_str::<PricesPublished>(&d.data).unwrap(), p);
    }

    #[test]
    fn decimals_are_read_exactly() {
        assert_eq!(Paise::parse("176.2").unwrap().units(), 17620);
        assert_eq!(Paise::parse(" 9331 ").unwrap().units(), 933100);
        assert_eq!(Paise::parse("0.05").unwrap().units(), 5);
        assert_eq!(Paise::parse(".5").unwrap().units(), 50);
        assert_eq!(Price::parse("123.4567").unwrap().units(), 1_234_567);
        for bad in ["", ".", "-1", "1.234", "1e3", "12a", "1.2.3", "99999999999999999999"] {
            assert!(Paise::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(Paise::parse("1.234").unwrap_err().to_string(), "has more than 2 decimals (got \"1.234\")");
    }

    #[test]
    fn decimals_print_two_places_at_least() {
        assert_eq!(Paise::parse("480.6").unwrap().to_string(), "480.60");
        assert_eq!(Price::from(Paise::parse("480.6").unwrap()).to_string(), "480.60");
        assert_eq!(Price::parse("123.4560").unwrap().to_string(), "123.456");
        assert_eq!(Price::from_units(-5).to_string(), "-0.0005");
        assert_eq!(Percent::parse("38.17").unwrap().to_string(), "38.17");
    }

    #[test]
    fn decimals_are_json_numbers_in_their_shortest_form() {
        let p = Paise::parse("9941670.15").unwrap();
        assert_eq!(serde_json::to_string(&p).unwrap(), "9941670.15");
        assert_eq!(serde_json::to_string(&Price::from(Paise::parse("480.60").unwrap())).unwrap(), "480.6");
        assert_eq!(serde_json::from_str::<Price>("123.4567").unwrap().units(), 1_234_567);
        assert_eq!(serde_json::from_str::<Paise>("480.6").unwrap().units(), 48060);
        // Every two-decimal value below 2^53 paise reads back exactly.
        for units in [1, 99, 10_001, 12_345_678_901, (1i64 << 53) - 1] {
            let text = serde_json::to_string(&Paise::from_units(units)).unwrap();
            assert_eq!(serde_json::from_str::<Paise>(&text).unwrap().units(), units, "{text}");
        }
    }

    #[test]
    fn series() {
        assert_eq!(Series::parse(" eq ").unwrap(), Series::EQ);
        assert_eq!(Series::parse("A").unwrap().as_str(), "A");
        assert!(Series::parse("EQX").is_err() && Series::parse("").is_err() && Series::parse("E-").is_err());
        let equity: Vec<&str> = ["EQ", "BE", "BZ", "SM", "ST", "SZ", "IT", "BL", "T0", "GB", "N1", "E1", "RR"]
            .into_iter()
            .filter(|s| Series::parse(s).unwrap().is_equity())
            .collect();
        assert_eq!(equity, ["EQ", "BE", "BZ", "SM", "ST", "SZ", "IT"]);
        assert_eq!(serde_json::to_string(&Series::EQ).unwrap(), "\"EQ\"");
        assert_eq!(serde_json::from_str::<Series>("\"BE\"").unwrap().as_str(), "BE");
    }

    #[test]
    fn a_bar_on_the_wire() {
        let figures = Figures {
            open: Paise::parse("177.2").unwrap(),
            high: Paise::parse("182.95").unwrap(),
            low: Paise::parse("176").unwrap(),
            close: Paise::parse("176.5").unwrap(),
            last: None,
            prev_close: Paise::parse("176.2").unwrap(),
            volume: 117_885,
            turnover: Paise::parse("21009000").unwrap(),
            trades: 7671,
            delivery_qty: Some(45000),
            delivery_pct: Some(Percent::parse("38.17").unwrap()),
        };
        let date = NaiveDate::from_ymd_opt(2024, 1, 1).unwrap();
        let bar = Bar::published(date, Isin::parse("INE144J01027").unwrap(), Series::EQ, IsinSource::Symbol, &figures);
        let json = serde_json::to_value(&bar).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"date": "2024-01-01", "isin": "INE144J01027", "series": "EQ", "open": 177.2,
                "high": 182.95, "low": 176.0, "close": 176.5, "last": null, "prev_close": 176.2, "volume": 117885,
                "turnover": 21009000.0, "trades": 7671, "delivery_qty": 45000, "delivery_pct": 38.17,
                "isin_source": "symbol"})
        );
        let mut keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        let mut fields = Bar::FIELDS.to_vec();
        fields.sort_unstable();
        assert_eq!(keys, fields, "FIELDS names every key");
        let text = serde_json::to_string(&bar).unwrap();
        let order: Vec<usize> = Bar::FIELDS.iter().map(|f| text.find(&format!("\"{f}\":")).unwrap()).collect();
        assert!(order.is_sorted(), "FIELDS is in wire order");
        assert_eq!(serde_json::from_str::<Bar>(&text).unwrap(), bar);

        let mut csv = String::new();
        Bar::csv_header(&mut csv);
        bar.write_csv(&mut csv);
        assert_eq!(
            csv,
            "date,isin,series,open,high,low,close,last,prev_close,volume,turnover,trades,delivery_qty,delivery_pct,\
             isin_source\n2024-01-01,INE144J01027,EQ,177.20,182.95,176.00,176.50,,176.20,117885,21009000.00,7671,45000,\
             38.17,symbol\n"
        );
    }

    #[test]
    fn adjusting_a_bar() {
        let figures = Figures {
            open: Paise::parse("145.29").unwrap(),
            high: Paise::parse("150").unwrap(),
            low: Paise::parse("140.01").unwrap(),
            close: Paise::parse("145.29").unwrap(),
            last: Some(Paise::parse("145.3").unwrap()),
            prev_close: Paise::parse("144").unwrap(),
            volume: 1001,
            turnover: Paise::parse("145435.29").unwrap(),
            trades: 10,
            delivery_qty: Some(503),
            delivery_pct: Some(Percent::parse("50.25").unwrap()),
        };
        let date = NaiveDate::from_ymd_opt(2025, 2, 11).unwrap();
        let bar = Bar::published(date, Isin::parse("INE592B01016").unwrap(), Series::EQ, IsinSource::File, &figures);
        let mut same = bar.clone();
        same.adjust(Factors::NONE);
        assert_eq!(same, bar, "a factor of 1 changes nothing");
        let mut split = bar.clone();
        split.adjust(Factors { price: 0.1, prev_close: 0.1, shares: 0.1 });
        assert_eq!(split.close.to_string(), "14.529");
        assert_eq!(split.low.to_string(), "14.001");
        assert_eq!(split.last.unwrap().to_string(), "14.53");
        assert_eq!((split.volume, split.delivery_qty), (10010, Some(5030)));
        assert_eq!((split.turnover, split.trades, split.delivery_pct), (bar.turnover, 10, bar.delivery_pct));
        let mut odd = bar.clone();
        odd.adjust(Factors { price: 1.0 / 3.0, prev_close: 0.5, shares: 3.0 });
        assert_eq!(odd.close.units(), 484_300, "145.29 / 3 = 48.43 exactly");
        assert_eq!(odd.high.to_string(), "50.00", "150 / 3, rounded to four decimals");
        assert_eq!(odd.low.to_string(), "46.67", "140.01 / 3 = 46.67");
        assert_eq!(odd.prev_close.to_string(), "72.00");
        assert_eq!(odd.volume, 334, "1001 / 3, rounded to whole shares");
    }
}
