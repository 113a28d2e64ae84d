//! The news article, the shape the news list shows it in, and its slug.

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

/// An article as the news list (`GET /v1/news`) shows it: every field of
/// [`Article`] except `body`, which is omitted (not `null`). Optional fields
/// with no value are `null` and `tags` is `[]`, as in [`Article`]; a test
/// holds the two field lists together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1ArticleSummary))]
pub struct ArticleSummary {
    /// Identifier of the article; `GET /v1/news/{slug}` gives it with its body.
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
    /// Publication instant; `null` for an undated article (listed last).
    #[serde(default, with = "crate::time::rfc3339_opt")]
    #[cfg_attr(feature = "openapi", schema(required, value_type = Option<String>, format = DateTime))]
    pub published_at: Option<DateTime<Utc>>,
    /// Last update instant.
    #[serde(default, with = "crate::time::rfc3339_opt")]
    #[cfg_attr(feature = "openapi", schema(required, value_type = Option<String>, format = DateTime))]
    pub updated_at: Option<DateTime<Utc>>,
}

impl Article {
    /// The article as the news list shows it, and its body.
    pub fn into_parts(self) -> (ArticleSummary, Option<String>) {
        let Article {
            slug,
            headline,
            subheadline,
            excerpt,
            body,
            category,
            tags,
            isin,
            ticker,
            company_name,
            author_name,
            hero_image,
            url,
            published_at,
            updated_at,
        } = self;
        let summary = ArticleSummary {
            slug,
            headline,
            subheadline,
            excerpt,
            category,
            tags,
            isin,
            ticker,
            company_name,
            author_name,
            hero_image,
            url,
            published_at,
            updated_at,
        };
        (summary, body)
    }

    /// The article of a summary and a body.
    pub fn from_parts(summary: ArticleSummary, body: Option<String>) -> Self {
        let ArticleSummary {
            slug,
            headline,
            subheadline,
            excerpt,
            category,
            tags,
            isin,
            ticker,
            company_name,
            author_name,
            hero_image,
            url,
            published_at,
            updated_at,
        } = summary;
        Article {
            slug,
            headline,
            subheadline,
            excerpt,
            body,
            category,
            tags,
            isin,
            ticker,
            company_name,
            author_name,
            hero_image,
            url,
            published_at,
            updated_at,
        }
    }

    /// The article as the news list shows it (without its body).
    pub fn summary(&self) -> ArticleSummary {
        self.clone().into_parts().0
    }
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
    fn minimal_article_has_full_shape() {
        let a: Article = serde_json::from_str(r#"{"slug":"x","headline":"H","tags":null}"#).unwrap();
        let v = serde_json::to_value(&a).unwrap();
        assert_eq!(v.as_object().unwrap().len(), 15);
        assert_eq!(v["tags"], serde_json::json!([]));
        assert_eq!(v["published_at"], serde_json::Value::Null);
    }

    fn full() -> Article {
        serde_json::from_value(serde_json::json!({
            "slug": "a-1", "headline": "H", "subheadline": "S", "excerpt": "E", "body": "B",
            "category": "results", "tags": ["q2", "bank"], "isin": "INE002A01018", "ticker": "RELIANCE",
            "company_name": "Reliance", "author_name": "A", "hero_image": "https://x/i.png",
            "url": "https://x/a-1", "published_at": "2026-11-02T09:30:00Z",
            "updated_at": "2026-11-02T10:00:00.5+05:30"
        }))
        .unwrap()
    }

    /// The summary is the article without `body`: the same keys and values
    /// but that one, whether fields are set or `null`.
    #[test]
    fn summary_is_the_article_without_its_body() {
        let minimal: Article = serde_json::from_str(r#"{"slug":"x","headline":"H"}"#).unwrap();
        for a in [full(), minimal] {
            let mut whole = serde_json::to_value(&a).unwrap();
            whole.as_object_mut().unwrap().remove("body").expect("an article has a body key");
            let (summary, body) = a.clone().into_parts();
            assert_eq!(serde_json::to_value(&summary).unwrap(), whole);
            assert_eq!(Article::from_parts(summary.clone(), body), a);
            assert_eq!(a.summary(), summary);
            let back: ArticleSummary = serde_json::from_value(whole).unwrap();
            assert_eq!(back, summary);
        }
    }

    /// The two schemas list the same properties, bar `body`, all required.
    #[cfg(feature = "openapi")]
    #[test]
    fn summary_schema_is_the_article_schema_without_body() {
        use utoipa::PartialSchema;
        let props = |s: utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>| {
            let v = serde_json::to_value(s).unwrap();
            let mut p: Vec<String> = v["properties"].as_object().unwrap().keys().cloned().collect();
            let mut r: Vec<String> =
                v["required"].as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_owned()).collect();
            p.sort();
            r.sort();
            assert_eq!(p, r, "every property is required");
            p
        };
        let mut article = props(Article::schema());
        article.retain(|k| k != "body");
        assert_eq!(props(ArticleSummary::schema()), article);
    }
}
