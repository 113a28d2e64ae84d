//! proptest strategies of the wire records, for the tests that hold two
//! ways of making the same bytes together (the news index's rows and
//! pages against serde and the store).

use chrono::{DateTime, Utc};
use mds_domain::{Article, Isin, Slug};
use proptest::prelude::*;

/// An article whose optional text fields and tags (none to three) are of
/// `text`, its headline of `headline`, its two instants of `instant`, its
/// ISIN one of `isins`; every optional field may be `null`; no body.
pub fn article(
    headline: BoxedStrategy<String>,
    text: BoxedStrategy<String>,
    instant: BoxedStrategy<DateTime<Utc>>,
    isins: &'static [&'static str],
) -> impl Strategy<Value = Article> {
    let o = || prop::option::of(text.clone());
    let isin = prop::option::of(prop::sample::select(isins.to_vec()));
    let strings = ("[a-z0-9-]{1,30}", headline, o(), o(), o(), prop::collection::vec(text.clone(), 0..4), isin);
    let more = (o(), o(), o(), o(), o(), prop::option::of(instant.clone()), prop::option::of(instant));
    (strings, more).prop_map(
        |(
            (slug, headline, subheadline, excerpt, category, tags, isin),
            (ticker, company_name, author_name, hero_image, url, published_at, updated_at),
        )| Article {
            slug: Slug::parse(&slug).expect("the pattern makes slugs"),
            headline,
            subheadline,
            excerpt,
            body: None,
            category,
            tags,
            isin: isin.map(|i| Isin::parse(i).expect("a valid ISIN")),
            ticker,
            company_name,
            author_name,
            hero_image,
            url,
            published_at,
            updated_at,
        },
    )
}
