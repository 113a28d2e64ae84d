//! The news article and its slug.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize};

use crate::isin::Isin;

/// A news article. Serialises with every field present: optional fields with
/// no value are `null`, `tags` is `[]`, so every article has one shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Article {
    /// Identifier of the article; the path key.
    pub slug: Slug,
    /// Headline (required, non-empty).
    pub headline: String,
    /// Sub-headline.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required))]
    pub subheadline: Option<String>,
    /// Short summary.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required))]
    pub excerpt: Option<String>,
    /// Full text.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required))]
    pub body: Option<String>,
    /// Category.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required))]
    pub category: Option<String>,
    /// Tags, `[]` when none.
    #[serde(default, deserialize_with = "null_as_empty")]
    #[cfg_attr(feature = "openapi", schema(required))]
    pub tags: Vec<String>,
    /// ISIN of the related company.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required))]
    pub isin: Option<Isin>,
    /// Ticker of the related company.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required))]
    pub ticker: Option<String>,
    /// Name of the related company.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required))]
    pub company_name: Option<String>,
    /// Author.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required))]
    pub author_name: Option<String>,
    /// Image URL.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required))]
    pub hero_image: Option<String>,
    /// Public URL of the article.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required))]
    pub url: Option<String>,
    /// Publication instant.
    #[serde(default, with = "crate::time::rfc3339_opt")]
    #[cfg_attr(feature = "openapi", schema(required, value_type = Option<String>, format = DateTime))]
    pub published_at: Option<DateTime<Utc>>,
    /// Last update instant.
    #[serde(default, with = "crate::time::rfc3339_opt")]
    #[cfg_attr(feature = "openapi", schema(required, value_type = Option<String>, format = DateTime))]
    pub updated_at: Option<DateTime<Utc>>,
}

fn null_as_empty<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(Option::<Vec<String>>::deserialize(d)?.unwrap_or_default())
}

/// The longest slug that can exist.
pub const SLUG_MAX_LEN: usize = 200;

/// An article slug: 1 to 200 characters of `[a-z0-9-]`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Slug(String);

/// Why a string cannot be a slug.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("slug must be 1 to {SLUG_MAX_LEN} characters of a-z, 0-9 and '-'")]
pub struct SlugError;

impl Slug {
    /// Parses a slug exactly as given (no trimming, no case folding: a URL
    /// path with upper case is a different, impossible, slug).
    pub fn parse(s: &str) -> Result<Self, SlugError> {
        if s.is_empty()
            || s.len() > SLUG_MAX_LEN
            || !s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            return Err(SlugError);
        }
        Ok(Slug(s.to_owned()))
    }
}

text_newtype!(Slug, |e: SlugError, s: &str| format!("{e}: {s:?}"));

#[cfg(feature = "openapi")]
string_schema!(
    Slug,
    "Article slug: 1 to 200 characters of a-z, 0-9 and '-'.",
    "^[a-z0-9-]{1,200}$",
    1,
    SLUG_MAX_LEN,
    "reliance-q2-results-2026"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert!(Slug::parse("reliance-q2-results-2026").is_ok());
        assert!(Slug::parse("Upper").is_err());
        assert!(Slug::parse("a_b").is_err());
        assert!(Slug::parse("").is_err());
        assert!(Slug::parse(&"a".repeat(201)).is_err());
        assert!(Slug::parse(&"a".repeat(200)).is_ok());
    }

    #[test]
    fn minimal_article_has_full_shape() {
        let a: Article = serde_json::from_str(r#"{"slug":"x","headline":"H","tags":null}"#).unwrap();
        let v = serde_json::to_value(&a).unwrap();
        assert_eq!(v.as_object().unwrap().len(), 15);
        assert_eq!(v["tags"], serde_json::json!([]));
        assert_eq!(v["published_at"], serde_json::Value::Null);
    }
}
