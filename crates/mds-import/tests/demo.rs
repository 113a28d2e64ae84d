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

/// The demo's companies as its last lists show them: those of 2026 over
/// those of 2024 (the store's statuses are checked by the store's identity
/// tests: every article's company is active).
fn latest_companies() -> Vec<mds_domain::Company> {
    let mut by_isin: HashMap<_, _> = demo_companies().into_iter().map(|c| (c.isin.clone(), c)).collect();
    for c in mds_import::demo_history().snapshots_2026.companies {
        by_isin.insert(c.isin.clone(), c);
    }
    by_isin.into_values().collect()
}

#[test]
fn the_demo_history_is_two_snapshots_and_the_change_files() {
    let h = mds_import::demo_history();
    assert_eq!(
        (h.snapshots_2024.as_of, h.snapshots_2026.as_of),
        (mds_import::demo::DAY_2024, mds_import::demo::DAY_2026)
    );
    let rows = |s: &mds_domain::snapshot::SnapshotImport| s.series.iter().map(|(_, r)| r.len()).collect::<Vec<_>>();
    assert_eq!(rows(&h.snapshots_2024), vec![1_935, 4_454]);
    assert_eq!(rows(&h.snapshots_2026), vec![2_365, 545]);
    assert_eq!(h.snapshots_2026.companies.len(), 2_910);
    // Every line of NSE's symbol file (1,029, one without a company name);
    // the name file's 2,298 rows hold repeats, kept once.
    assert_eq!((h.symbol_changes.len(), h.name_changes.len()), (1_029, 2_047));
}

#[test]
fn demo_articles_point_at_demo_companies() {
    let articles = demo_articles();
    assert_eq!(articles.len(), 50);
    let companies = latest_companies();
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

/// The imports `mds demo` runs read as an operator's files would: each
/// format's own reading accepts its embedded files, the action files
/// among them (both NSE's and both BSE's).
#[test]
fn the_demo_imports_read_without_refusal() {
    let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 29).unwrap();
    let imports = mds_import::demo::imports();
    let names: Vec<&str> = imports.iter().map(|(f, _)| f.name).collect();
    assert_eq!(names, ["exchanges", "exchanges", "nse-changes", "nse-actions", "bse-actions", "nse-bhavcopy", "news"]);
    let mut action_rows = 0;
    for (format, given) in &imports {
        let read = (format.read)(given, today).unwrap_or_else(|e| panic!("{}: {e}", format.name));
        if let mds_import::format::Input::Actions { files, count, .. } = read.input {
            assert_eq!(count, 2, "{}", format.name);
            action_rows += files.rows();
        }
    }
    // NSE's 21,246 + 1,977 rows, BSE's 2,519 + 338 (data/actions/README.md).
    assert_eq!(action_rows, 21_246 + 1_977 + 2_519 + 338);
}
