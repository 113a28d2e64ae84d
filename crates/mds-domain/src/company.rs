//! The company record (`V1Company`) and its field types.

use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize};

use crate::detail::CompanyDetails;
use crate::isin::Isin;

/// One company/security, keyed by ISIN. Serialises as `V1Company`: every
/// field is present, the optional ones as `null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1Company))]
pub struct Company {
    /// Identifier of the security.
    pub isin: Isin,
    /// Trading symbol; may be shared by several ISINs.
    pub ticker: Ticker,
    /// Company name.
    pub name: String,
    /// Industry name (exact-match filter); `null` when unclassified.
    pub industry: Option<String>,
    /// Sector name; `null` when unclassified.
    pub sector: Option<String>,
    /// Listed on BSE.
    pub is_bse: bool,
    /// Listed on NSE.
    pub is_nse: bool,
    /// Market-capitalisation band; `null` when unknown.
    pub market_cap_band: Option<MarketCapBand>,
    /// URL of a logo image; `null` when there is none.
    pub logo_url: Option<String>,
    /// What is known beyond `V1Company` (not part of it: served by
    /// `GET /v1/companies/{isin}` as [`crate::CompanyDetail`]).
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub details: CompanyDetails,
}

/// The longest ticker accepted.
pub const TICKER_MAX_LEN: usize = 32;

/// A ticker: 1 to 32 printable ASCII characters without white space, stored
/// upper-case (`20MICRONS`, `M&M`, `BAJAJ-AUTO`).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ticker(String);

/// Why a string is not a ticker.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("ticker must be 1 to {TICKER_MAX_LEN} printable ASCII characters without spaces")]
pub struct TickerError;

impl Ticker {
    /// Parses a ticker: trimmed, upper-cased, then checked.
    pub fn parse(s: &str) -> Result<Self, TickerError> {
        let t = s.trim();
        if t.is_empty() || t.len() > TICKER_MAX_LEN || !t.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(TickerError);
        }
        Ok(Ticker(t.to_ascii_uppercase()))
    }
}

text_newtype!(Ticker, |e: TickerError, s: &str| format!("{e}: {s:?}"));

#[cfg(feature = "openapi")]
string_schema!(
    Ticker,
    "Trading symbol: 1 to 32 printable ASCII characters without white space, upper case.",
    "^[!-~]{1,32}$",
    1,
    TICKER_MAX_LEN,
    "BAJAJ-AUTO"
);

/// Defines a closed set of lower-case wire values with parse/as_str/serde.
macro_rules! wire_enum {
    ($(#[$m:meta])* $name:ident, $err:literal, { $($(#[$vm:meta])* $variant:ident => $s:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($(#[$vm])* $variant),+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The wire value.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $s),+ }
            }
        }

        impl FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s { $($s => Ok($name::$variant),)+ _ => Err(format!($err, s)) }
            }
        }

        wire_text!($name);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }

        #[cfg(feature = "openapi")]
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .enum_values(Some([$($s),+]))
                    .build()
                    .into()
            }
        }

        #[cfg(feature = "openapi")]
        impl utoipa::ToSchema for $name {}
    };
}

wire_enum!(
    /// Market-capitalisation band (SEBI: rank 1-100 large, 101-250 mid, the rest small).
    MarketCapBand, "market_cap must be one of large_cap, mid_cap, small_cap (got {:?})", {
        /// Ranks 1 to 100.
        Large => "large_cap",
        /// Ranks 101 to 250.
        Mid => "mid_cap",
        /// Rank 251 and below.
        Small => "small_cap",
    }
);

wire_enum!(
    /// A stock exchange a security can be listed on.
    Exchange, "exchange must be one of bse, nse (got {:?})", {
        /// BSE (Bombay Stock Exchange).
        Bse => "bse",
        /// NSE (National Stock Exchange of India).
        Nse => "nse",
    }
);

wire_enum!(
    /// The order of a company list (`sort`; contract section 15): by
    /// relevance to `search` (the default with it), or by `ticker`, then
    /// `isin` (the default, and the only order, without it).
    CompanySort, "sort must be one of relevance, ticker (got {:?})", {
        /// Exact ticker, then prefix, then other substring matches, then
        /// status, market cap, ticker and ISIN.
        Relevance => "relevance",
        /// `ticker`, then `isin`.
        Ticker => "ticker",
    }
);

wire_enum!(
    /// What a search matched (`match.field`): the current ticker or name,
    /// or a former one from the identity history (contract section 15).
    MatchField, "match field must be one of ticker, name, former_ticker, former_name (got {:?})", {
        /// The current ticker.
        Ticker => "ticker",
        /// The current name.
        Name => "name",
        /// A symbol the company (or an ISIN it superseded) carried before.
        FormerTicker => "former_ticker",
        /// A name the company (or an ISIN it superseded) had before.
        FormerName => "former_name",
    }
);

/// `match` on each result of a search: which field matched the term, and
/// its value (for a former ticker or name, the former one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1SearchMatch))]
pub struct SearchMatch {
    /// The field that matched.
    pub field: MatchField,
    /// Its value, as the company carries (or carried) it.
    pub value: String,
}

/// A row of the company list as a client reads it: the company, and on
/// each result of a search its `match` (schema `V1CompanyListItem`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompanyListItem {
    /// The company.
    #[serde(flatten)]
    pub company: Company,
    /// What a search matched (`None` without `search`).
    #[serde(rename = "match", default, skip_serializing_if = "Option::is_none")]
    pub matched: Option<SearchMatch>,
}

impl std::ops::Deref for CompanyListItem {
    type Target = Company;
    fn deref(&self) -> &Company {
        &self.company
    }
}

impl MarketCapBand {
    /// The band of a market-capitalisation rank (1 = largest), by SEBI's rule.
    pub fn from_rank(rank: usize) -> Self {
        match rank {
            0..=100 => MarketCapBand::Large,
            101..=250 => MarketCapBand::Mid,
            _ => MarketCapBand::Small,
        }
    }
}

/// A company name as the service stores it (contract section 10.3): trimmed,
/// each inner run of white space one space, a trailing comma removed (BSE
/// writes "Cipla Ltd.,"); the exchange's own spelling otherwise kept.
pub fn tidy_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for word in name.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    while out.ends_with(',') {
        out.pop();
        let kept = out.trim_end().len();
        out.truncate(kept);
    }
    out
}

impl Company {
    /// The field names of `V1Company` in wire order, each with whether it
    /// may be `null`: the JSON keys, the CSV header that `mds get companies
    /// --format csv` writes, and the columns `mds import companies` reads.
    pub const FIELDS: [(&'static str, bool); 9] = [
        ("isin", false),
        ("ticker", false),
        ("name", false),
        ("industry", true),
        ("sector", true),
        ("is_bse", false),
        ("is_nse", false),
        ("market_cap_band", true),
        ("logo_url", true),
    ];

    /// The field values as text, in [`Company::FIELDS`] order (`None` for
    /// `null`, `true`/`false` for the flags): one CSV row.
    pub fn field_texts(&self) -> [Option<&str>; 9] {
        let flag = |b: bool| Some(if b { "true" } else { "false" });
        [
            Some(self.isin.as_str()),
            Some(self.ticker.as_str()),
            Some(self.name.as_str()),
            self.industry.as_deref(),
            self.sector.as_deref(),
            flag(self.is_bse),
            flag(self.is_nse),
            self.market_cap_band.map(|b| b.as_str()),
            self.logo_url.as_deref(),
        ]
    }

    /// Whether the company is listed on `exchange`.
    pub fn listed_on(&self, exchange: Exchange) -> bool {
        match exchange {
            Exchange::Bse => self.is_bse,
            Exchange::Nse => self.is_nse,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_follow_sebi_ranks() {
        assert_eq!(MarketCapBand::from_rank(1), MarketCapBand::Large);
        assert_eq!(MarketCapBand::from_rank(100), MarketCapBand::Large);
        assert_eq!(MarketCapBand::from_rank(101), MarketCapBand::Mid);
        assert_eq!(MarketCapBand::from_rank(250), MarketCapBand::Mid);
        assert_eq!(MarketCapBand::from_rank(251), MarketCapBand::Small);
    }

    /// A company with some fields null.
    fn abb() -> Company {
        Company {
            isin: Isin::parse("INE117A01022").unwrap(),
            ticker: Ticker::parse("ABB").unwrap(),
            name: "ABB India Limited".into(),
            industry: None,
            sector: Some("Capital Goods".into()),
            is_bse: true,
            is_nse: false,
            market_cap_band: Some(MarketCapBand::Large),
            logo_url: None,
            details: CompanyDetails::default(),
        }
    }

    #[test]
    fn names_are_tidied_but_keep_their_spelling() {
        assert_eq!(tidy_name("  Sar  Auto Products Limited "), "Sar Auto Products Limited");
        assert_eq!(tidy_name("Cipla Ltd.,"), "Cipla Ltd.");
        assert_eq!(tidy_name("Wipro  Ltd. , "), "Wipro Ltd.");
        assert_eq!(tidy_name("Dr. Reddy's\tLaboratories Ltd"), "Dr. Reddy's Laboratories Ltd");
        assert_eq!(tidy_name("A, B Limited"), "A, B Limited");
        assert_eq!(tidy_name(","), "");
    }

    #[test]
    fn company_serialises_every_field() {
        let c = abb();
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["industry"], serde_json::Value::Null);
        assert_eq!(v["logo_url"], serde_json::Value::Null);
        assert_eq!(v["market_cap_band"], "large_cap");
        assert_eq!(v.as_object().unwrap().len(), 9);
    }

    #[test]
    fn fields_are_the_wire_keys_in_order() {
        let c = abb();
        // serde_json keeps struct fields in declaration order.
        let json = serde_json::to_string(&c).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let mut at = 0;
        for ((name, nullable), text) in Company::FIELDS.iter().zip(c.field_texts()) {
            let pos = json.find(&format!("\"{name}\":")).unwrap();
            assert!(pos > at, "{name} out of order");
            at = pos;
            let value = &v[name];
            match text {
                None => assert!(*nullable && value.is_null(), "{name}"),
                Some(t) => assert_eq!(value.as_str().map(str::to_owned).unwrap_or(value.to_string()), t, "{name}"),
            }
        }
        assert_eq!(v.as_object().unwrap().len(), Company::FIELDS.len());
    }
}
