//! The full-text query of `GET /v1/news?q=` (contract section 15), parsed
//! once at the edge: words (all must match), `"a phrase"` and `prefix*`,
//! and the list's order with it ([`NewsSort`]).
//!
//! Case and accents are not this type's business: the node's search index
//! splits each term into words and folds both with the analyzer that
//! indexed the text. A term is never read as an operator: `OR`, `NOT` or
//! `headline:x` are words like any other.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer};

use crate::article::Slug;

/// The most characters `q` may hold (after trimming).
pub const Q_MAX_CHARS: usize = 200;
/// The most terms (words, phrases, prefixes) `q` may hold.
pub const Q_MAX_TERMS: usize = 16;

/// One term of a query: every term must match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Term {
    /// A word, matched whole.
    Word(String),
    /// Words that must appear in this order, next to each other.
    Phrase(String),
    /// A word beginning with this.
    Prefix(String),
}

/// A parsed `q`: its terms, and the text as given (trimmed), which is its
/// canonical form for a cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewsText {
    text: String,
    terms: Vec<Term>,
}

/// Whether `s` holds a character the index makes a word of (letters and
/// digits; the rest separate words).
fn has_word(s: &str) -> bool {
    s.chars().any(char::is_alphanumeric)
}

impl NewsText {
    /// Parses a `q`: 1 to [`Q_MAX_CHARS`] characters once trimmed, quotes
    /// balanced, at least one word, at most [`Q_MAX_TERMS`] terms.
    /// Separators alone (`&`, `-`) are no term.
    pub fn parse(s: &str) -> Result<Self, String> {
        let text = s.trim();
        if text.is_empty() {
            return Err("q must hold at least one word to search for".into());
        }
        if text.chars().count() > Q_MAX_CHARS {
            return Err(format!("q must be at most {Q_MAX_CHARS} characters"));
        }
        if text.chars().filter(|&c| c == '"').count() % 2 == 1 {
            return Err("q has an unbalanced quote: a phrase is written between two double quotes".into());
        }
        let mut terms = Vec::new();
        for (i, part) in text.split('"').enumerate() {
            if i % 2 == 1 {
                if has_word(part) {
                    terms.push(Term::Phrase(part.trim().to_owned()));
                }
                continue;
            }
            for word in part.split_whitespace() {
                match word.strip_suffix('*') {
                    Some(stem) if has_word(stem) => terms.push(Term::Prefix(stem.trim_end_matches('*').to_owned())),
                    _ if has_word(word) => terms.push(Term::Word(word.to_owned())),
                    _ => {}
                }
            }
        }
        if terms.is_empty() {
            return Err("q must hold at least one word (letters or digits) to search for".into());
        }
        if terms.len() > Q_MAX_TERMS {
            return Err(format!("q may hold at most {Q_MAX_TERMS} words, phrases or prefixes"));
        }
        Ok(NewsText { text: text.to_owned(), terms })
    }

    /// The query as given, trimmed.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Its terms, in the order given.
    pub fn terms(&self) -> &[Term] {
        &self.terms
    }
}

impl fmt::Display for NewsText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

wire_enum!(
    /// The order of a news search (`sort`; contract section 15): by
    /// relevance to `q` (BM25, the default with it), or newest first as
    /// the list (`published_at`, the default and only order without `q`).
    NewsSort, "sort must be one of relevance, published_at (got {:?})", {
        /// Most relevant first (BM25), ties in list order.
        Relevance => "relevance",
        /// The list's order: newest first, then slug; undated last.
        PublishedAt => "published_at",
    }
);

/// What the search index holds of an article: the text `q` searches, by
/// slug (the store reads it in list order, a batch at a time).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArticleText {
    /// The article.
    pub slug: Slug,
    /// Its headline.
    pub headline: String,
    /// Its sub-headline.
    pub subheadline: Option<String>,
    /// Its excerpt.
    pub excerpt: Option<String>,
    /// Its body.
    pub body: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_words_phrases_and_prefixes() {
        let q = NewsText::parse("  Reliance \"net profit\" infra* & ").unwrap();
        assert_eq!(q.as_str(), "Reliance \"net profit\" infra* &");
        assert_eq!(
            q.terms(),
            [Term::Word("Reliance".into()), Term::Phrase("net profit".into()), Term::Prefix("infra".into())]
        );
    }

    #[test]
    fn operators_are_words() {
        let words = |q: &str| NewsText::parse(q).unwrap().terms().to_vec();
        let word = |w: &str| Term::Word(w.into());
        assert_eq!(words("a OR NOT b"), [word("a"), word("OR"), word("NOT"), word("b")]);
        assert_eq!(words("headline:x"), [word("headline:x")]);
    }

    #[test]
    fn bad_queries_say_why() {
        for bad in ["", "   ", "\"open", "& - *", "\"\"", &"a".repeat(201), &"w ".repeat(17)] {
            assert!(NewsText::parse(bad).is_err(), "{bad:?}");
        }
        assert!(NewsText::parse(&"a".repeat(200)).is_ok());
        assert!(NewsText::parse("Société").is_ok());
    }
}
