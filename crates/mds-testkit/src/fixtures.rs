//! Test fixtures: valid ISINs (check digit by the `isin` crate), companies
//! and articles with no optional field, a series of companies.

use mds_domain::{Article, Company, Isin, Slug, Ticker};

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
    }
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
