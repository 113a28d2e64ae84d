//! The bounds of stored text: the longest value each field may hold, one
//! place for the importers (a row over a bound is refused with its line)
//! and for the filters that match these fields. Names and titles are
//! counted in characters; bodies and URLs in bytes (UTF-8), which is what
//! they cost.

/// How a bound is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Unicode scalar values.
    Chars,
    /// UTF-8 bytes.
    Bytes,
}

/// The longest value a field may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    /// The field's name, as the operator reads it.
    pub field: &'static str,
    /// The most it may hold.
    pub max: usize,
    /// In what.
    pub unit: Unit,
}

impl Bound {
    const fn chars(field: &'static str, max: usize) -> Self {
        Bound { field, max, unit: Unit::Chars }
    }

    const fn bytes(field: &'static str, max: usize) -> Self {
        Bound { field, max, unit: Unit::Bytes }
    }

    /// `Ok` when `value` is within the bound, else the sentence an operator
    /// reads (it never repeats the value: it may be megabytes).
    pub fn check(&self, value: &str) -> Result<(), String> {
        let (len, unit) = match self.unit {
            // Cheap first: a value of at most `max` bytes has at most `max` chars.
            Unit::Chars if value.len() <= self.max => return Ok(()),
            Unit::Chars => (value.chars().count(), "characters"),
            Unit::Bytes => (value.len(), "bytes"),
        };
        if len <= self.max {
            Ok(())
        } else {
            Err(format!("{} is {len} {unit} long; at most {} are allowed", self.field, self.max))
        }
    }
}

/// A company's name (the contract's figure).
pub const COMPANY_NAME: Bound = Bound::chars("name", 500);
/// An industry (also the longest `industry` filter).
pub const INDUSTRY: Bound = Bound::chars("industry", 200);
/// A sector.
pub const SECTOR: Bound = Bound::chars("sector", 200);
/// Any URL (a logo, an article's link or image).
pub const URL: Bound = Bound::bytes("url", 2048);
/// An article's headline.
pub const HEADLINE: Bound = Bound::chars("headline", 500);
/// An article's subheadline.
pub const SUBHEADLINE: Bound = Bound::chars("subheadline", 1000);
/// An article's excerpt.
pub const EXCERPT: Bound = Bound::chars("excerpt", 5000);
/// An article's body (the contract's figure: 200 KB).
pub const BODY: Bound = Bound::bytes("body", 200 * 1024);
/// An article's category.
pub const CATEGORY: Bound = Bound::chars("category", 100);
/// One tag of an article.
pub const TAG: Bound = Bound::chars("tag", 64);
/// How many tags an article may carry.
pub const MAX_TAGS: usize = 50;
/// The company name an article names.
pub const ARTICLE_COMPANY_NAME: Bound = Bound::chars("company_name", 500);
/// An article's author.
pub const AUTHOR_NAME: Bound = Bound::chars("author_name", 200);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_count_chars_or_bytes() {
        assert!(COMPANY_NAME.check(&"é".repeat(500)).is_ok(), "500 chars, 1000 bytes");
        assert_eq!(
            COMPANY_NAME.check(&"é".repeat(501)).unwrap_err(),
            "name is 501 characters long; at most 500 are allowed"
        );
        assert!(BODY.check(&"x".repeat(200 * 1024)).is_ok());
        assert_eq!(
            BODY.check(&"é".repeat(102_401)).unwrap_err(),
            "body is 204802 bytes long; at most 204800 are allowed"
        );
    }
}
