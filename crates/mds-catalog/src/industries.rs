//! The classification tree of `GET /v1/industries`
//! ([`Catalog::industries`]): the active companies counted at each of the
//! four levels (contract section 15).
//!
//! A row's sector and industry are its own (the list's `sector` and
//! `industry`, what the `industry` filter matches), its macro-sector and
//! basic industry those of its detail's classification; a row without
//! them has `null` there. Rows are counted per distinct path (a path is a
//! few dictionary ids), and only the distinct classification objects are
//! read as JSON, so a million rows take one pass over their flags and ids.

use std::collections::HashMap;

use mds_domain::facets::{Industries, Levels};
use mds_domain::{Classification, CompanyStatus};

use crate::catalog::Catalog;
use crate::layout::Section;
use crate::tail;

/// A row's path as the catalog holds it: its classification object's
/// JSON, its sector and its industry.
type Path<'a> = (Option<&'a str>, Option<&'a [u8]>, Option<&'a [u8]>);

impl Catalog {
    /// The classification tree of the active companies.
    pub fn industries(&self) -> Industries {
        // Counted by (classification id, sector, industry) as bytes of the
        // catalog, then each distinct classification read once.
        let mut paths: HashMap<Path<'_>, u64> = HashMap::new();
        for i in 0..self.len() {
            if self.status(i) != CompanyStatus::Active {
                continue;
            }
            let tail = self.bytes(Section::DetailOff, Section::Details, i);
            let class = if tail.is_empty() { None } else { tail::parts(tail, self).and_then(|p| p.classification) };
            *paths.entry((class, self.sector(i), self.industry(i))).or_default() += 1;
        }
        let mut classes: HashMap<&str, Classification> = HashMap::new();
        for (class, _, _) in paths.keys() {
            if let Some(json) = class {
                classes.entry(json).or_insert_with(|| serde_json::from_str(json).unwrap_or_default());
            }
        }
        fn text(b: Option<&[u8]>) -> Option<&str> {
            b.map(|b| std::str::from_utf8(b).unwrap_or_default())
        }
        Industries::of(paths.iter().map(|(&(class, sector, industry), &n)| {
            let c = class.and_then(|json| classes.get(json));
            let levels: Levels<'_> = [
                c.and_then(|c| c.macro_sector.as_deref()),
                text(sector),
                text(industry),
                c.and_then(|c| c.basic_industry.as_deref()),
            ];
            (levels, n)
        }))
    }
}

#[cfg(test)]
mod tests {
    use mds_domain::{Classification, Company, CompanyStatus};

    use crate::Catalog;

    fn company(
        isin: &str,
        ticker: &str,
        industry: Option<&str>,
        basic: Option<&str>,
        status: CompanyStatus,
    ) -> Company {
        let mut c = mds_testkit::fixtures::bare_company(mds_domain::Isin::parse(isin).unwrap(), ticker);
        c.industry = industry.map(str::to_owned);
        c.sector = industry.map(|_| "Financial Services".to_owned());
        c.details.status = status;
        if basic.is_some() {
            c.details.classification = Classification {
                macro_sector: Some("Financial Services".into()),
                sector: c.sector.clone(),
                industry: c.industry.clone(),
                basic_industry: basic.map(str::to_owned),
            };
        }
        c
    }

    #[test]
    fn active_companies_are_counted_on_their_path() {
        let catalog = Catalog::new(vec![
            company("INE002A01018", "A", Some("Banks"), Some("Private Sector Bank"), CompanyStatus::Active),
            company("INE009A01021", "B", Some("Banks"), Some("Private Sector Bank"), CompanyStatus::Active),
            company("INE040A01034", "C", Some("Banks"), None, CompanyStatus::Active),
            company("INE062A01020", "D", Some("Banks"), Some("Private Sector Bank"), CompanyStatus::Delisted),
            company("INE467B01029", "E", None, None, CompanyStatus::Active),
        ]);
        let tree = catalog.industries();
        assert_eq!(tree.count, 4, "the delisted company is not counted");
        let v = serde_json::to_value(&tree).unwrap();
        assert_eq!(v["macro_sectors"][0]["name"], "Financial Services");
        assert_eq!(v["macro_sectors"][0]["count"], 2);
        let banks = &v["macro_sectors"][0]["sectors"][0]["industries"][0];
        assert_eq!(banks["name"], "Banks");
        assert_eq!(banks["basic_industries"], serde_json::json!([{"name": "Private Sector Bank", "count": 2}]));
        // Without a classification: sector and industry of the row, the rest null.
        let unclassified = &v["macro_sectors"][1];
        assert_eq!(unclassified["name"], serde_json::Value::Null);
        assert_eq!(unclassified["count"], 2);
        assert_eq!(unclassified["sectors"][0]["name"], "Financial Services");
        assert_eq!(unclassified["sectors"][1]["name"], serde_json::Value::Null);
        assert!(catalog.has_industry("Banks"));
        assert!(!catalog.has_industry("banks"));
        assert_eq!(catalog.industry_names().collect::<Vec<_>>(), ["Banks"]);
    }
}
