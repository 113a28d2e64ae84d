//! Checks of single values that several import formats share, each returning
//! the sentence an operator reads next to the line number.

use mds_domain::{Isin, Ticker};

/// The trimmed value, `None` when it is absent or empty.
pub(crate) fn non_empty(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|s| !s.is_empty())
}

/// An ISIN with a correct check digit.
pub(crate) fn parse_isin(value: &str) -> Result<Isin, String> {
    if value.trim().is_empty() {
        return Err("isin is empty".to_owned());
    }
    Isin::parse(value).map_err(|e| format!("isin: {e}"))
}

/// A ticker (trimmed, upper-cased).
pub(crate) fn parse_ticker(value: &str) -> Result<Ticker, String> {
    if value.trim().is_empty() {
        return Err("ticker is empty".to_owned());
    }
    Ticker::parse(value).map_err(|e| format!("ticker {:?} is not valid: {e}", value.trim()))
}

/// An absolute http(s) URL without white space; anything else would reach
/// API clients as a broken link.
pub(crate) fn parse_url(field: &str, value: &str) -> Result<String, String> {
    if let Err(e) = mds_domain::bounds::URL.check(value) {
        return Err(format!("{field}: {e}"));
    }
    let rest = value.strip_prefix("https://").or_else(|| value.strip_prefix("http://"));
    match rest {
        Some(rest) if !rest.is_empty() && !rest.chars().any(char::is_whitespace) => Ok(value.to_owned()),
        _ => Err(format!("{field} must be an http:// or https:// URL without spaces (got {value:?})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert!(parse_url("url", "https://img.example.com/a.png").is_ok());
        assert!(parse_url("url", "http://example.com").is_ok());
        assert!(parse_url("url", "ftp://x").is_err());
        assert!(parse_url("url", "https://").is_err());
        assert!(parse_url("url", "https://a b").is_err());
    }

    #[test]
    fn isins_and_tickers() {
        assert_eq!(parse_isin(" ").unwrap_err(), "isin is empty");
        assert!(parse_isin("INE117A01023").unwrap_err().starts_with("isin: not a valid ISIN"));
        assert_eq!(parse_ticker(" m&m ").unwrap().as_str(), "M&M");
        assert_eq!(
            parse_ticker("JK AGRI").unwrap_err(),
            "ticker \"JK AGRI\" is not valid: ticker must be 1 to 32 printable ASCII characters without spaces"
        );
    }
}
