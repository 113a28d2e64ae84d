//! The embedded demo data set: it parses, and its news points at its companies.

use std::collections::{HashMap, HashSet};

use mds_import::{demo_articles, demo_companies};

#[test]
fn demo_companies_are_the_merged_exchange_lists() {
    let companies = demo_companies();
    assert_eq!(companies.len(), 4_590);
    let merged = mds_import::demo::demo_merge();
    assert_eq!(merged.skipped_without_isin, 2);
    assert_eq!(merged.companies, companies);
}

#[test]
fn demo_articles_point_at_demo_companies() {
    let articles = demo_articles();
    assert_eq!(articles.len(), 50);
    let companies = demo_companies();
    let by_isin: HashMap<_, _> = companies.iter().map(|c| (&c.isin, c)).collect();
    let tickers: HashSet<&str> = companies.iter().map(|c| c.ticker.as_str()).collect();
    let mut with_isin = 0;
    for a in &articles {
        if let Some(isin) = &a.isin {
            with_isin += 1;
            let c = by_isin.get(isin).unwrap_or_else(|| panic!("{}: no company {isin}", a.slug));
            assert_eq!(a.ticker.as_deref(), Some(c.ticker.as_str()), "{}", a.slug);
            assert_eq!(a.company_name.as_deref(), Some(c.name.as_str()), "{}", a.slug);
        } else if let Some(ticker) = &a.ticker {
            assert!(tickers.contains(ticker.as_str()), "{}: no company {ticker}", a.slug);
            let names: Vec<&str> =
                companies.iter().filter(|c| c.ticker.as_str() == ticker).map(|c| c.name.as_str()).collect();
            assert!(names.contains(&a.company_name.as_deref().unwrap_or_default()), "{}", a.slug);
        } else {
            assert_eq!(a.company_name, None, "{}", a.slug);
        }
    }
    // Some articles leave the ISIN (or the company) out, so the null shape
    // is exercised.
    assert!(with_isin < articles.len());
}

#[test]
fn demo_articles_vary_their_shape_and_content() {
    let articles = demo_articles();
    let categories: HashSet<&str> = articles.iter().filter_map(|a| a.category.as_deref()).collect();
    assert!(categories.len() >= 6, "{categories:?}");
    assert!(articles.iter().all(|a| (2..=5).contains(&a.tags.len())));
    assert!(articles.iter().all(|a| a.body.is_some() && a.published_at.is_some() && a.url.is_some()));
    assert!(articles.iter().any(|a| a.subheadline.is_none()));
    assert!(articles.iter().any(|a| a.hero_image.is_none()));
    assert!(articles.iter().any(|a| a.author_name.is_none()));
    assert!(articles.iter().any(|a| a.updated_at.is_some()));
    assert!(articles.iter().all(|a| { a.url.as_deref().unwrap().starts_with("https://news.example.com/") }));
    assert!(articles.iter().all(|a| { a.body.as_deref().unwrap().contains("fictional demo content") }));
    let y2026 = mds_domain::time::parse_rfc3339("2026-01-01T00:00:00+05:30").unwrap();
    let y2027 = mds_domain::time::parse_rfc3339("2027-01-01T00:00:00+05:30").unwrap();
    assert!(articles.iter().all(|a| (y2026..y2027).contains(&a.published_at.unwrap())));
}
