//! The ISIN, identifier of a company/security (ISO 6166).

/// A validated ISIN: twelve characters, upper-case, with a correct check digit.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Isin(String);

/// Why a string is not an ISIN.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a valid ISIN ({reason}): {value:?}")]
pub struct IsinError {
    /// The value as given (truncated to 40 characters).
    pub value: String,
    /// What is wrong with it.
    pub reason: String,
}

impl Isin {
    /// The length of every ISIN, in characters (and bytes: they are ASCII).
    pub const LEN: usize = 12;

    /// Parses an ISIN, accepting surrounding white space and lower case.
    pub fn parse(s: &str) -> Result<Self, IsinError> {
        let v = s.trim().to_ascii_uppercase();
        match isin::parse(&v) {
            Ok(_) => Ok(Isin(v)),
            Err(e) => Err(IsinError { value: s.chars().take(40).collect(), reason: e.to_string() }),
        }
    }
}

text_newtype!(Isin, |e: IsinError, _: &str| e);

#[cfg(feature = "openapi")]
string_schema!(
    Isin,
    "ISIN (ISO 6166): two letters, nine alphanumerics, a check digit; upper case.",
    "^[A-Z]{2}[A-Z0-9]{9}[0-9]$",
    Isin::LEN,
    Isin::LEN,
    "INE117A01022"
);
