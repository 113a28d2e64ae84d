//! The news article, the shape the news list shows it in, and its slug.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize};

use crate::isin::Isin;

/// Declares [`Article`] and [`ArticleSummary`] from one list of fields, in
/// wire order: the article has them all with `body` after `excerpt`, the
/// summary has them all but `body`; and the two conversions between them.
macro_rules! article_records {
    (
        head { $($(#[$hm:meta])* $h:ident: $ht:ty,)* }
        tail { $($(#[$tm:meta])* $t:ident: $tt:ty,)* }
    ) => {
        /// A news article. Serialises with every field present: optional
        /// fields with no value are `null`, `tags` is `[]`, so every article
        /// has one shape.
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        pub struct Article {
            $($(#[$hm])* pub $h: $ht,)*
            /// Full text.
            pub body: Option<String>,
            $($(#[$tm])* pub $t: $tt,)*
        }

        /// An article as the news list (`GET /v1/news`) shows it: every
        /// field of [`Article`] except `body`, which is omitted (not
        /// `null`). Optional fields with no value are `null` and `tags` is
        /// `[]`, as in [`Article`].
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1ArticleSummary))]
        pub struct ArticleSummary {
            $($(#[$hm])* pub $h: $ht,)*
            $($(#[$tm])* pub $t: $tt,)*
        }

        impl Article {
            /// The article as the news list shows it, and its body.
            pub fn into_parts(self) -> (ArticleSummary, Option<String>) {
                (ArticleSummary { $($h: self.$h,)* $($t: self.$t,)* }, self.body)
            }

            /// The article of a summary and a body.
            pub fn from_parts(summary: ArticleSummary, body: Option<String>) -> Self {
                Article { $($h: summary.$h,)* body, $($t: summary.$t,)* }
            }
        }
    };
}

article_records! {
    head {
        /// Identifier of the article; the path key of `GET /v1/news/{slug}`.
        slug: Slug,
        /// Headline (required, non-empty).
        headline: String,
        /// Sub-headline.
        subheadline: Option<String>,
        /// Short summary.
        excerpt: Option<String>,
    }
    tail {
        /// Category.
        category: Option<String>,
        /// Tags, `[]` when none.
        #[serde(default, deserialize_with = "null_as_empty")]
        tags: Vec<String>,
        /// ISIN of the related company.
        isin: Option<Isin>,
        /// Ticker of the related company.
        ticker: Option<String>,
        /// Name of the related company.
        company_name: Option<String>,
        /// Author.
        author_name: Option<String>,
        /// Image URL.
        hero_image: Option<String>,
        /// Public URL of the article.
        url: Option<String>,
        /// Publication instant; `null` for an undated article (listed last).
        #[serde(default, with = "crate::time::rfc3339_opt")]
        #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
        published_at: Option<DateTime<Utc>>,
        /// Last update instant.
        #[serde(default, with = "crate::time::rfc3339_opt")]
        #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
        updated_at: Option<DateTime<Utc>>,
    }
}

impl Article {
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

    /// The two schemas list the same properties, bar `body` (mds-http's
    /// document marks them all required).
    #[cfg(feature = "openapi")]
    #[test]
    fn summary_schema_is_the_article_schema_without_body() {
        use utoipa::PartialSchema;
        let props = |s: utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>| {
            let v = serde_json::to_value(s).unwrap();
            let mut p: Vec<String> = v["properties"].as_object().unwrap().keys().cloned().collect();
            p.sort();
            p
        };
        let mut article = props(Article::schema());
        article.retain(|k| k != "body");
        assert_eq!(props(ArticleSummary::schema()), article);
    }
}
