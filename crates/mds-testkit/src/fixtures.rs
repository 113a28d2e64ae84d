//! Test fixtures: valid ISINs (check digit by the `isin` crate), companies
//! and articles with no optional field, a series of companies, the news
//! list a set of articles makes, worked out plainly, and a day's bar at
//! one price.

use mds_domain::news::{NewsKey, list_order};
use mds_domain::prices::{Bar, Figures, IsinSource, Paise, Series};
use mds_domain::{
    Article, ArticleSummary, Company, Exchange, Isin, Listing, ListingStatus, MarketCap, NewsFilter, Slug, Ticker,
};

/// An ISIN from its first 11 characters (country, then 9 characters), with
/// its ISO 6166 check digit added.
///
/// Panics on a body that is not 2 letters and 9 letters or digits.
pub fn isin(body: &str) -> Isin {
    let built = isin::build_from_payload(body).unwrap_or_else(|e| panic!("ISIN body {body:?}: {e}"));
    Isin::parse(built.as_ref()).expect("a built ISIN is valid")
}

/// The `i`-th of a series of valid ISINs: `INE`, `i` in 8 digits, the check
/// digit.
pub fn isin_of(i: u32) -> Isin {
    isin(&format!("INE{i:08}"))
}

/// A company with no optional field: BSE only, named like its ticker.
pub fn bare_company(isin: Isin, ticker: &str) -> Company {
    Company {
        isin,
        ticker: Ticker::parse(ticker).expect("valid ticker"),
        name: ticker.to_owned(),
        industry: None,
        sector: None,
        is_bse: true,
        is_nse: false,
        market_cap_band: None,
        logo_url: None,
        details: Default::default(),
    }
}

/// A company listed on both exchanges with every detail filled in, as `mds
/// import exchanges` gives them (named `<ticker> Detailed`; its BSE listing
/// suspended).
pub fn detailed_company(isin: &str, ticker: &str) -> Company {
    let mut c = bare_company(Isin::parse(isin).expect("a valid ISIN"), ticker);
    c.name = format!("{ticker} Detailed");
    c.is_nse = true;
    c.details.listings = vec![
        Listing {
            exchange: Exchange::Nse,
            symbol: ticker.into(),
            scrip_code: None,
            series: Some("EQ".into()),
            listed_on: chrono::NaiveDate::from_ymd_opt(2008, 10, 6),
            face_value: Some(5.0),
            status: ListingStatus::Active,
            last_seen: None,
        },
        Listing {
            exchange: Exchange::Bse,
            symbol: ticker.into(),
            scrip_code: Some("533022".into()),
            series: Some("B".into()),
            listed_on: None,
            face_value: Some(5.0),
            status: ListingStatus::Suspended,
            last_seen: None,
        },
    ];
    c.details.classification.macro_sector = Some("Commodities".into());
    c.details.classification.basic_industry = Some("Industrial Minerals".into());
    c.details.market_cap = Some(MarketCap { inr_crore: 507.07, as_of: chrono::NaiveDate::from_ymd_opt(2024, 3, 28) });
    c
}

/// The `i`-th company of a series: ISIN [`isin_of`]`(i)`, the given ticker,
/// name `Company {i}`, BSE only, no optional field.
pub fn company(i: u32, ticker: &str) -> Company {
    Company { name: format!("Company {i}"), ..bare_company(isin_of(i), ticker) }
}

/// An article with no optional field.
pub fn bare_article(slug: &str, headline: &str) -> Article {
    Article {
        slug: Slug::parse(slug).expect("valid slug"),
        headline: headline.to_owned(),
        subheadline: None,
        excerpt: None,
        body: None,
        category: None,
        tags: Vec::new(),
        isin: None,
        ticker: None,
        company_name: None,
        author_name: None,
        hero_image: None,
        url: None,
        published_at: None,
        updated_at: None,
    }
}

/// The news list of `articles` under `filter`, worked out plainly (the
/// filter's [`NewsFilter::matches`], a sort by [`list_order`]): what the
/// store's and the server's pages must add up to.
pub fn news_list(articles: &[Article], filter: &NewsFilter) -> Vec<ArticleSummary> {
    let mut list: Vec<ArticleSummary> = articles.iter().map(Article::summary).filter(|a| filter.matches(a)).collect();
    list.sort_by(|a, b| list_order(&NewsKey::of(a), &NewsKey::of(b)));
    list
}

/// The part of `list` (in list order) after the position `after`: the rows
/// a page starting there may hold.
pub fn news_after<'a>(list: &'a [ArticleSummary], after: Option<&NewsKey>) -> &'a [ArticleSummary] {
    match after {
        None => list,
        Some(k) => {
            let start = list.partition_point(|a| list_order(&NewsKey::of(a), k).is_le());
            &list[start..]
        }
    }
}

/// The query pairs of a news filter as a client might send them: the ISIN
/// and ticker in lower case, `published_after` at another offset than UTC
/// (each the same filter to the API).
pub fn news_filter_pairs(f: &NewsFilter) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(v) = &f.isin {
        out.push(("isin", v.as_str().to_lowercase()));
    }
    if let Some(v) = &f.ticker {
        out.push(("ticker", v.as_str().to_lowercase()));
    }
    if let Some(v) = &f.category {
        out.push(("category", v.as_str().to_owned()));
    }
    if let Some(v) = &f.tag {
        out.push(("tag", v.as_str().to_owned()));
    }
    let ist = chrono::FixedOffset::east_opt(5 * 3600 + 1800).expect("an offset");
    if let Some(v) = &f.published_after {
        out.push(("published_after", v.with_timezone(&ist).to_rfc3339()));
    }
    if let Some(v) = &f.published_before {
        out.push(("published_before", mds_domain::time::format_utc(v)));
    }
    out
}

/// The `EQ` bar of `isin` on `date` (YYYY-MM-DD) of a day traded at one
/// price, `close` (rupees as published, `"176.2"`), `volume` shares in one
/// trade; its ISIN as the file gave it.
///
/// Panics on a day, ISIN or price that does not parse.
pub fn flat_bar(date: &str, isin: &str, close: &str, volume: u64) -> Bar {
    let f = Figures::flat(Paise::parse(close).expect("a price"), volume);
    Bar::published(date.parse().expect("a day"), Isin::parse(isin).expect("an ISIN"), Series::EQ, IsinSource::File, &f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computed_isins_match_real_ones() {
        assert_eq!(isin("INE117A0102").as_str(), "INE117A01022");
        assert_eq!(isin("INE144J0102").as_str(), "INE144J01027");
        assert_eq!(isin("US037833100").as_str(), "US0378331005");
        assert_eq!(isin_of(7).as_str(), &format!("{}", isin("INE00000007"))[..]);
    }
}
