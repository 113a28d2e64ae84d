//! The filters and page size of `GET /v1/companies`, parsed once at the edge.
//!
//! Each parser returns a sentence a person can act on; the HTTP layer turns it
//! into `400 invalid_parameter` naming the parameter. The names, order and
//! documentation of the parameters themselves are in [`crate::params`].

use chrono::NaiveDate;

use crate::company::{Company, CompanySort, Exchange, MarketCapBand, Ticker};
use crate::identity::StatusFilter;
use crate::params;
#[cfg(feature = "openapi")]
use crate::params::param_schema;

/// The first character of a ticker: `A`-`Z` or `0`-`9`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Letter(u8);

impl Letter {
    /// Parses one character, `A`-`Z` (either case) or `0`-`9`.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s.as_bytes() {
            [b] if b.is_ascii_alphanumeric() => Ok(Letter(b.to_ascii_uppercase())),
            _ => Err("letter must be one character, A-Z or 0-9".into()),
        }
    }

    /// The upper-case character.
    pub fn as_char(self) -> char {
        self.0 as char
    }

    /// Whether `ticker` starts with this letter.
    pub fn matches(self, ticker: &Ticker) -> bool {
        ticker.as_str().as_bytes().first() == Some(&self.0)
    }
}

/// The longest `industry` value accepted, in characters.
pub const INDUSTRY_MAX_LEN: usize = crate::bounds::INDUSTRY.max;

/// An industry name to filter by: 1 to 200 characters (the bound of a
/// stored industry, [`crate::bounds::INDUSTRY`]), matched exactly and
/// case-sensitively (no trimming, no case folding). An industry no company
/// has is valid: it selects nothing.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Industry(String);

impl Industry {
    /// Parses an industry name.
    pub fn parse(s: &str) -> Result<Self, String> {
        if s.is_empty() || crate::bounds::INDUSTRY.check(s).is_err() {
            Err(format!("industry must be 1 to {INDUSTRY_MAX_LEN} characters, matched exactly"))
        } else {
            Ok(Industry(s.to_owned()))
        }
    }

    /// The name, as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Shortest search term, in characters, after trimming.
pub const SEARCH_MIN_CHARS: usize = 2;
/// Longest search term, in characters, after trimming.
pub const SEARCH_MAX_CHARS: usize = 100;

/// A search term: trimmed, 2 to 100 characters, kept in Unicode lower case
/// for case-insensitive substring matching (`NESTLÉ` finds `Nestlé`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SearchTerm(String);

impl SearchTerm {
    /// Parses a search term.
    pub fn parse(s: &str) -> Result<Self, String> {
        let t = s.trim();
        let n = t.chars().count();
        if !(SEARCH_MIN_CHARS..=SEARCH_MAX_CHARS).contains(&n) {
            return Err(format!(
                "search must be {SEARCH_MIN_CHARS} to {SEARCH_MAX_CHARS} characters after trimming (got {n})"
            ));
        }
        // The kept form is the folded one (the cursor's filter, sent back as a
        // query), so it must be within the bound too: a few characters
        // lower-case to two ("İ" to "i̇").
        let folded = fold(t);
        let m = folded.chars().count();
        if m > SEARCH_MAX_CHARS {
            return Err(format!(
                "search must be at most {SEARCH_MAX_CHARS} characters once lower-cased (got {m} from {n})"
            ));
        }
        Ok(SearchTerm(folded))
    }

    /// The folded (lower-case) term.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether the folded text contains the term.
    pub fn matches_folded(&self, folded: &str) -> bool {
        folded.contains(&self.0)
    }
}

/// Case folding used for search, on both the term and the searched text.
pub fn fold(s: &str) -> String {
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    // NFC first, so a decomposed "é" (e + U+0301) and a composed one match;
    // then lower case, and NFC again (lower-casing may decompose).
    use unicode_normalization::UnicodeNormalization as _;
    s.nfc().collect::<String>().to_lowercase().nfc().collect()
}

/// Default page size.
pub const LIMIT_DEFAULT: u16 = 50;
/// Largest page size.
pub const LIMIT_MAX: u16 = 200;

/// A page size, 1 to 200.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit(u16);

impl Limit {
    /// The largest page size.
    pub const MAX: Limit = Limit(LIMIT_MAX);

    /// Parses a decimal integer from 1 to 200; anything else is refused,
    /// never clamped.
    pub fn parse(s: &str) -> Result<Self, String> {
        let err = || format!("limit must be an integer from 1 to {LIMIT_MAX}");
        if s.is_empty() || s.len() > 3 || s.starts_with('0') || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        match s.parse::<u16>() {
            Ok(n) if (1..=LIMIT_MAX).contains(&n) => Ok(Limit(n)),
            _ => Err(err()),
        }
    }

    /// The page size.
    pub fn get(self) -> usize {
        self.0 as usize
    }
}

impl Default for Limit {
    fn default() -> Self {
        Limit(LIMIT_DEFAULT)
    }
}

/// The company filters of `GET /v1/companies`; all given ones must hold
/// (AND). Each field is one query parameter of the same name (see
/// [`crate::params`]); with the feature `openapi` this type also describes
/// them in the OpenAPI document (`IntoParams`), so the doc comments below are
/// what API readers see.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
pub struct CompanyFilter {
    /// First character of the ticker: `A`-`Z` (case-insensitive) or `0`-`9`.
    #[cfg_attr(
        feature = "openapi",
        param(value_type = Option<String>, pattern = "^[A-Za-z0-9]$", min_length = 1, max_length = 1, example = "R")
    )]
    pub letter: Option<Letter>,
    /// Exact, case-sensitive industry, 1 to 200 bytes; an unknown one gives an empty page.
    #[cfg_attr(
        feature = "openapi",
        param(value_type = Option<String>, min_length = 1, max_length = 200, example = "Refineries")
    )]
    pub industry: Option<Industry>,
    /// Exchange the security is listed on.
    pub exchange: Option<Exchange>,
    /// Market-capitalisation band.
    pub market_cap: Option<MarketCapBand>,
    /// Case-insensitive substring of `name` or `ticker`; trimmed, then 2 to 100 characters.
    #[cfg_attr(
        feature = "openapi",
        param(value_type = Option<String>, min_length = 2, max_length = 100, pattern = "^\\s*\\S.*\\S\\s*$", example = "bajaj")
    )]
    pub search: Option<SearchTerm>,
    /// Exact ticker, case-insensitive (may match several securities).
    #[cfg_attr(feature = "openapi", param(inline, value_type = Option<param_schema::Ticker>, example = "RELIANCE"))]
    pub ticker: Option<Ticker>,
    /// Which companies by status: `active` (the default), `superseded`,
    /// `delisted` or `any`. With `as_of`, the status of that day: every
    /// company listed then is `active` then, so `superseded` and `delisted`
    /// give an empty page.
    #[cfg_attr(
        feature = "openapi",
        param(value_type = Option<String>, pattern = "^(active|superseded|delisted|any)$", example = "any")
    )]
    pub status: StatusFilter,
    /// The master as it stood at the end of this day (`YYYY-MM-DD`, from
    /// 1990-01-01 up to today; the pattern states
    /// the years 1990 to 2099, a day after today is refused all the same): companies listed then, with the ticker and
    /// name of that day, which `ticker`, `letter` and `search` match.
    /// Industry, sector, market-cap band, logo and the exchange flags are
    /// not tracked over time: they are today's. The cursor is bound to it.
    #[cfg_attr(
        feature = "openapi",
        param(value_type = Option<String>, format = Date, pattern = r"^(199[0-9]|20[0-9][0-9])-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$", example = "2024-01-31")
    )]
    pub as_of: Option<NaiveDate>,
    /// The order: `relevance` (the default with `search`: an exact ticker
    /// first, then a name, ticker or word of the name beginning with the
    /// term, then other substrings, a former ticker or name just after the
    /// same kind of match on a current one; then active before superseded
    /// and delisted, larger market cap first (none last), ticker, ISIN) or
    /// `ticker` (`ticker`, then `isin`: the default, and the only value,
    /// without `search`). The cursor is bound to it.
    #[cfg_attr(
        feature = "openapi",
        param(value_type = Option<String>, pattern = "^(relevance|ticker)$", example = "relevance")
    )]
    pub sort: Option<CompanySort>,
}

impl CompanyFilter {
    /// Whether `c` passes every filter but `as_of` (which needs the
    /// company's history). `folded_name` and `folded_ticker` are
    /// [`fold`] of the company's name and ticker (callers keep them
    /// precomputed so a scan does not allocate).
    pub fn matches(&self, c: &Company, folded_name: &str, folded_ticker: &str) -> bool {
        self.letter.is_none_or(|l| l.matches(&c.ticker))
            && self.industry.as_ref().is_none_or(|i| c.industry.as_deref() == Some(i.as_str()))
            && self.exchange.is_none_or(|e| c.listed_on(e))
            && self.market_cap.is_none_or(|m| c.market_cap_band == Some(m))
            && self.ticker.as_ref().is_none_or(|t| &c.ticker == t)
            && self.search.as_ref().is_none_or(|s| s.matches_folded(folded_name) || s.matches_folded(folded_ticker))
            && self.status.admits(c.details.status)
    }

    /// The order of the list: as given, else `relevance` with `search` and
    /// `ticker` without (contract section 15).
    pub fn order(&self) -> CompanySort {
        match (self.sort, &self.search) {
            (Some(s), _) => s,
            (None, Some(_)) => CompanySort::Relevance,
            (None, None) => CompanySort::Ticker,
        }
    }

    /// A canonical text form of the filters, used to bind a cursor to them.
    pub fn canonical(&self) -> String {
        let mut canonical = crate::params::Canonical::default();
        let mut put = |k: &str, v: Option<&str>| canonical.put(k, v);
        let letter = self.letter.map(|l| l.as_char().to_string());
        put(params::LETTER, letter.as_deref());
        put(params::INDUSTRY, self.industry.as_ref().map(Industry::as_str));
        put(params::EXCHANGE, self.exchange.map(|e| e.as_str()));
        put(params::MARKET_CAP, self.market_cap.map(|m| m.as_str()));
        put(params::SEARCH, self.search.as_ref().map(|s| s.as_str()));
        put(params::TICKER, self.ticker.as_ref().map(|t| t.as_str()));
        // The default status is left out, so a cursor issued before the
        // parameter existed still opens.
        put(params::STATUS, (self.status != StatusFilter::DEFAULT).then(|| self.status.as_str()));
        let as_of = self.as_of.map(|d| d.format("%Y-%m-%d").to_string());
        put(params::AS_OF, as_of.as_deref());
        // The order of a search (a list without one has one order, and its
        // cursors stay as they were): a cursor of a search made before
        // relevance ranking, in ticker order, is refused, not misread.
        put(params::SORT, self.search.as_ref().map(|_| self.order().as_str()));
        canonical.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_form_is_unambiguous() {
        let a = CompanyFilter { industry: Some(Industry::parse("a;search=1:b").unwrap()), ..Default::default() };
        let b = CompanyFilter {
            industry: Some(Industry::parse("a").unwrap()),
            search: Some(SearchTerm::parse("b;").unwrap()),
            ..Default::default()
        };
        assert_ne!(a.canonical(), b.canonical());
        assert_eq!(CompanyFilter::default().canonical(), "");
    }

    #[test]
    fn folding_is_lower_case_nfc() {
        assert_eq!(fold("NESTLE"), "nestle");
        assert_eq!(fold("Nestl\u{e9}"), "nestl\u{e9}");
        assert_eq!(fold("Nestle\u{301}"), "nestl\u{e9}", "decomposed becomes composed");
        assert_eq!(fold("NESTL\u{c9}"), fold("nestle\u{301}"));
    }
}
