//! The query of `GET /v1/news`, defined once: its filters and parameters
//! (names, the rules that parse them and, with the feature `openapi`, their
//! OpenAPI description), the order of the list, and a position in it.
//!
//! The server parses a request with [`NewsQueryParams`]'s [`QueryParams::parse`], the store
//! selects with [`NewsFilter`] and [`NewsKey`], the OpenAPI document lists
//! [`NewsFilter`] and [`PageParams`] as the parameters (`IntoParams`), and
//! the Rust client names what it sends with the constants below; a test
//! checks that the constants are the names of the `IntoParams` derive.
//! [`NewsFilter::matches`] and [`list_order`] are the rules written plainly,
//! for the tests that hold the store to them.

use std::cmp::Ordering;

use chrono::{DateTime, Utc};

use crate::article::{ArticleSummary, Slug};
use crate::news_search::{NewsSort, NewsText};
#[cfg(feature = "openapi")]
use crate::params::param_schema;
use crate::params::{CURSOR, Filter, LIMIT, Paged, ParamError, SORT, TICKER, one};
use crate::time::{format_utc, parse_rfc3339};
use crate::{Isin, Ticker, bounds};

/// `isin`: articles about this company ([`NewsFilter::isin`]).
pub const ISIN: &str = "isin";
/// `category`: exact category ([`NewsFilter::category`]).
pub const CATEGORY: &str = "category";
/// `tag`: articles carrying this tag ([`NewsFilter::tag`]).
pub const TAG: &str = "tag";
/// `published_after`: published strictly after ([`NewsFilter::published_after`]).
pub const PUBLISHED_AFTER: &str = "published_after";
/// `published_before`: published strictly before ([`NewsFilter::published_before`]).
pub const PUBLISHED_BEFORE: &str = "published_before";

/// `q`: full-text search over headline, subheadline, excerpt and body
/// ([`NewsFilter::q`]).
pub const Q: &str = "q";

/// The filter parameters of `GET /v1/news`, in the order they are checked.
pub const NEWS_FILTER_PARAMETERS: &[&str] = &[ISIN, TICKER, CATEGORY, TAG, PUBLISHED_AFTER, PUBLISHED_BEFORE, Q, SORT];
/// Every parameter `GET /v1/news` defines: the filters, then pagination.
pub const NEWS_PARAMETERS: &[&str] =
    &[ISIN, TICKER, CATEGORY, TAG, PUBLISHED_AFTER, PUBLISHED_BEFORE, Q, SORT, CURSOR, LIMIT];

/// The article filters of `GET /v1/news`; all given ones must hold (AND).
/// Each field is the query parameter of the same name; with the feature
/// `openapi` this type also describes them (`IntoParams`), so the doc
/// comments are what API readers see.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
pub struct NewsFilter {
    /// Articles about the company with this ISIN (ISO 6166, check digit verified; case-insensitive).
    #[cfg_attr(feature = "openapi", param(inline, value_type = Option<param_schema::Isin>, example = "INE002A01018"))]
    pub isin: Option<Isin>,
    /// Articles about the company with this ticker: exact, case-insensitive.
    #[cfg_attr(feature = "openapi", param(inline, value_type = Option<param_schema::Ticker>, example = "RELIANCE"))]
    pub ticker: Option<Ticker>,
    /// Exact, case-sensitive category, 1 to 100 characters; an unknown one gives an empty page.
    #[cfg_attr(
        feature = "openapi",
        param(value_type = Option<String>, min_length = 1, max_length = 100, example = "earnings")
    )]
    pub category: Option<Exact>,
    /// Articles carrying this tag: exact, case-sensitive, 1 to 64 characters.
    #[cfg_attr(feature = "openapi", param(value_type = Option<String>, min_length = 1, max_length = 64, example = "results"))]
    pub tag: Option<Exact>,
    /// Published strictly after this instant: RFC 3339 with an offset (`Z` or `+05:30`; send `+` as `%2B`).
    /// Articles without `published_at` are left out.
    #[cfg_attr(
        feature = "openapi",
        param(value_type = Option<String>, format = DateTime, example = "2026-01-01T00:00:00+00:00")
    )]
    pub published_after: Option<DateTime<Utc>>,
    /// Published strictly before this instant (RFC 3339 with an offset), which must be later than
    /// `published_after`. Articles without `published_at` are left out.
    #[cfg_attr(
        feature = "openapi",
        param(value_type = Option<String>, format = DateTime, example = "2026-02-01T00:00:00Z")
    )]
    pub published_before: Option<DateTime<Utc>>,
    /// Full-text search over headline, subheadline, excerpt and body: words (all must match),
    /// `"a phrase"` (words next to each other, in order) and `prefix*`, case- and
    /// accent-insensitive (`societe` finds `Société`); other punctuation separates words, and
    /// `AND`, `OR`, `NOT` are words like any other. 1 to 200 characters, at most 16 terms, quotes
    /// balanced. Combines with the other filters.
    #[cfg_attr(
        feature = "openapi",
        param(value_type = Option<String>, min_length = 1, max_length = 200, example = "\"net profit\" reliance")
    )]
    pub q: Option<NewsText>,
    /// The order of a search: `relevance` (the default with `q`: BM25, a match in the headline
    /// weighing most, ties newest first) or `published_at` (newest first, as the list without
    /// `q`: the default and the only value without it). The cursor is bound to it.
    #[cfg_attr(
        feature = "openapi",
        param(value_type = Option<String>, pattern = "^(relevance|published_at)$", example = "relevance")
    )]
    pub sort: Option<NewsSort>,
}

/// A value matched exactly (a category, a tag): 1 to the field's stored
/// bound of characters, kept as given (no trimming, no case folding).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Exact(String);

impl Exact {
    /// Parses a value of the field bounded by `bound`.
    fn parse(bound: bounds::Bound, s: &str) -> Result<Self, String> {
        if s.is_empty() || bound.check(s).is_err() {
            Err(format!("{} must be 1 to {} characters, matched exactly", bound.field, bound.max))
        } else {
            Ok(Exact(s.to_owned()))
        }
    }

    /// A category to match.
    pub fn category(s: &str) -> Result<Self, String> {
        Self::parse(bounds::CATEGORY, s)
    }

    /// A tag to match.
    pub fn tag(s: &str) -> Result<Self, String> {
        Self::parse(bounds::TAG, s)
    }

    /// The value, as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Parses an instant of a date bound: RFC 3339 with an offset.
fn instant(name: &str, s: &str) -> Result<DateTime<Utc>, String> {
    parse_rfc3339(s).map_err(|_| {
        // A `+` sent unencoded in a query string arrives as a space.
        let hint = if s.trim().contains(' ') { "; send a '+' in the offset as %2B" } else { "" };
        format!("{name} must be an RFC 3339 date-time with an offset, such as 2026-01-01T00:00:00Z{hint}")
    })
}

impl NewsFilter {
    /// Whether `a` passes every filter but `q` (which needs the text; the
    /// node's search index answers it): the rule the store's query follows,
    /// written plainly (for tests and for readers).
    pub fn matches(&self, a: &ArticleSummary) -> bool {
        let at = a.published_at;
        self.isin.as_ref().is_none_or(|i| a.isin.as_ref() == Some(i))
            && self
                .ticker
                .as_ref()
                .is_none_or(|t| a.ticker.as_ref().is_some_and(|x| x.eq_ignore_ascii_case(t.as_str())))
            && self.category.as_ref().is_none_or(|c| a.category.as_deref() == Some(c.as_str()))
            && self.tag.as_ref().is_none_or(|t| a.tags.iter().any(|x| x == t.as_str()))
            && self.published_after.is_none_or(|t| at.is_some_and(|at| at > t))
            && self.published_before.is_none_or(|t| at.is_some_and(|at| at < t))
    }

    /// Whether the filter leaves out undated articles (it bounds the date).
    pub fn dated_only(&self) -> bool {
        self.published_after.is_some() || self.published_before.is_some()
    }

    /// A canonical text form of the filters, used to bind a cursor to them:
    /// two spellings of one filter (an ISIN in lower case, an instant with
    /// another offset) have one form.
    pub fn canonical(&self) -> String {
        let mut canonical = crate::params::Canonical::default();
        let mut put = |k: &str, v: Option<&str>| canonical.put(k, v);
        put(ISIN, self.isin.as_ref().map(Isin::as_str));
        put(TICKER, self.ticker.as_ref().map(Ticker::as_str));
        put(CATEGORY, self.category.as_ref().map(Exact::as_str));
        put(TAG, self.tag.as_ref().map(Exact::as_str));
        put(PUBLISHED_AFTER, self.published_after.as_ref().map(format_utc).as_deref());
        put(PUBLISHED_BEFORE, self.published_before.as_ref().map(format_utc).as_deref());
        put(Q, self.q.as_ref().map(NewsText::as_str));
        put(SORT, self.q.as_ref().map(|_| self.order().as_str()));
        canonical.finish()
    }

    /// The order of the list: as given, else `relevance` with `q` and
    /// `published_at` without (contract section 15).
    pub fn order(&self) -> NewsSort {
        match (self.sort, &self.q) {
            (Some(s), _) => s,
            (None, Some(_)) => NewsSort::Relevance,
            (None, None) => NewsSort::PublishedAt,
        }
    }
}

/// The query of `GET /v1/news`: filters (AND) and pagination.
pub type NewsQueryParams = Paged<NewsFilter>;

/// Parsed in the order of [`NEWS_PARAMETERS`]. A `published_before` not
/// later than `published_after` is an error of `published_before`.
impl Filter for NewsFilter {
    const ROUTE_PARAMETERS: &'static [&'static str] = NEWS_PARAMETERS;

    fn parse<'a>(get: &impl Fn(&str) -> Option<&'a str>) -> Result<Self, ParamError> {
        let filter = NewsFilter {
            isin: one(get, ISIN, |s| {
                Isin::parse(s)
                    .map_err(|_| "isin must be a valid ISIN: 12 characters with an ISO 6166 check digit".into())
            })?,
            ticker: one(get, TICKER, |t| Ticker::parse(t).map_err(|e| e.to_string()))?,
            category: one(get, CATEGORY, Exact::category)?,
            tag: one(get, TAG, Exact::tag)?,
            published_after: one(get, PUBLISHED_AFTER, |s| instant(PUBLISHED_AFTER, s))?,
            published_before: one(get, PUBLISHED_BEFORE, |s| instant(PUBLISHED_BEFORE, s))?,
            q: one(get, Q, NewsText::parse)?,
            sort: one(get, SORT, str::parse::<NewsSort>)?,
        };
        if let (Some(after), Some(before)) = (filter.published_after, filter.published_before) {
            if after >= before {
                return Err(ParamError {
                    param: PUBLISHED_BEFORE,
                    detail: format!(
                        "published_before ({}) must be later than published_after ({}): both are exclusive",
                        format_utc(&before),
                        format_utc(&after)
                    ),
                });
            }
        }
        if filter.sort == Some(NewsSort::Relevance) && filter.q.is_none() {
            return Err(ParamError {
                param: SORT,
                detail: "sort=relevance needs q; without it the order is published_at".into(),
            });
        }
        // One query, one form (as the company list's `sort`): the order is
        // held with `q`, and not at all without it.
        let filter = NewsFilter { sort: filter.q.as_ref().map(|_| filter.order()), ..filter };
        Ok(filter)
    }
}

/// A position in the news list: the key of the last article served. The
/// list is ordered by `published_at` descending, then `slug` ascending;
/// articles without `published_at` come last, by `slug` ([`list_order`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewsKey {
    /// The article's publication instant (`None`: undated, in the tail).
    pub published_at: Option<DateTime<Utc>>,
    /// The article's slug.
    pub slug: Slug,
}

impl NewsKey {
    /// The key of an article.
    pub fn of(a: &ArticleSummary) -> Self {
        NewsKey { published_at: a.published_at, slug: a.slug.clone() }
    }
}

/// The order of the news list: newest first, then by slug; undated
/// articles last, by slug.
pub fn list_order(a: &NewsKey, b: &NewsKey) -> Ordering {
    match (a.published_at, b.published_at) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
    .then_with(|| a.slug.cmp(&b.slug))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::QueryParams;
    use crate::testing::refused;

    #[test]
    fn lists_agree() {
        assert_eq!([NEWS_FILTER_PARAMETERS, crate::params::PAGE_PARAMETERS].concat(), NEWS_PARAMETERS);
    }

    #[test]
    fn bad_values_name_their_parameter() {
        refused::<NewsQueryParams>(&[
            (&[("isin", "not-an-isin")][..], ISIN),
            (&[("isin", "INE002A01019")][..], ISIN),
            (&[("ticker", "")][..], TICKER),
            (&[("ticker", "TWO WORDS")][..], TICKER),
            (&[("category", "")][..], CATEGORY),
            (&[("tag", "")][..], TAG),
            (&[("published_after", "2026-01-01")][..], PUBLISHED_AFTER),
            (&[("published_after", "2026-01-01T00:00:00")][..], PUBLISHED_AFTER),
            (&[("published_before", "yesterday")][..], PUBLISHED_BEFORE),
            (&[("limit", "0")][..], LIMIT),
            (&[("limit", "201")][..], LIMIT),
        ]);
        let long_tag = "t".repeat(65);
        assert_eq!(NewsQueryParams::from_pairs(&[("tag", &long_tag)]).unwrap_err().param, TAG);
        assert!(NewsQueryParams::from_pairs(&[("tag", &"t".repeat(64))]).is_ok());
        assert!(NewsQueryParams::from_pairs(&[("category", &"c".repeat(101))]).is_err());
        // An unencoded '+' arrives as a space: the sentence says so.
        let e = NewsQueryParams::from_pairs(&[("published_after", "2026-01-01T00:00:00 05:30")]).unwrap_err();
        assert!(e.detail.contains("%2B"), "{}", e.detail);
    }

    #[test]
    fn the_date_bounds_must_leave_room() {
        let t = "2026-01-01T05:30:00+05:30";
        let same = NewsQueryParams::from_pairs(&[("published_after", t), ("published_before", "2026-01-01T00:00:00Z")])
            .unwrap_err();
        assert_eq!(same.param, PUBLISHED_BEFORE);
        let reversed = NewsQueryParams::from_pairs(&[
            ("published_after", "2026-02-01T00:00:00Z"),
            ("published_before", "2026-01-01T00:00:00Z"),
        ]);
        assert_eq!(reversed.unwrap_err().param, PUBLISHED_BEFORE);
        let ok = NewsQueryParams::from_pairs(&[
            ("published_after", "2026-01-01T00:00:00Z"),
            ("published_before", "2026-01-01T00:00:00.001Z"),
        ]);
        assert!(ok.is_ok());
    }

    #[test]
    fn good_values_parse_to_one_canonical_form() {
        let a = NewsQueryParams::from_pairs(&[
            ("isin", " ine002a01018 "),
            ("ticker", "reliance"),
            ("published_after", "2026-01-01T05:30:00+05:30"),
            ("limit", "7"),
            ("cursor", "c"),
        ])
        .unwrap();
        let b = NewsQueryParams::from_pairs(&[
            ("isin", "INE002A01018"),
            ("ticker", "RELIANCE"),
            ("published_after", "2026-01-01T00:00:00Z"),
        ])
        .unwrap();
        assert_eq!(a.filter, b.filter);
        assert_eq!(a.filter.canonical(), b.filter.canonical());
        assert_eq!((a.page.cursor.as_deref(), a.page.limit.get()), (Some("c"), 7));
        assert_eq!(NewsQueryParams::from_pairs(&[]).unwrap(), NewsQueryParams::default());
        assert_eq!(NewsFilter::default().canonical(), "");
        // A category is not a tag.
        let c = NewsQueryParams::from_pairs(&[("category", "x")]).unwrap().filter.canonical();
        let t = NewsQueryParams::from_pairs(&[("tag", "x")]).unwrap().filter.canonical();
        assert_ne!(c, t);
    }

    #[test]
    fn undated_articles_come_last_by_slug() {
        let key = |t: Option<&str>, s: &str| NewsKey {
            published_at: t.map(|t| parse_rfc3339(t).unwrap()),
            slug: Slug::parse(s).unwrap(),
        };
        let mut keys = [
            key(None, "b"),
            key(Some("2026-01-01T00:00:00Z"), "z"),
            key(None, "a"),
            key(Some("2026-01-02T00:00:00Z"), "y"),
            key(Some("2026-01-01T00:00:00Z"), "c"),
        ];
        keys.sort_by(list_order);
        let slugs: Vec<&str> = keys.iter().map(|k| k.slug.as_str()).collect();
        assert_eq!(slugs, ["y", "c", "z", "a", "b"]);
    }

    #[cfg(feature = "openapi")]
    #[test]
    fn openapi_parameters_are_the_constants() {
        assert_eq!(crate::testing::param_names::<NewsFilter>(), NEWS_FILTER_PARAMETERS);
    }
}
