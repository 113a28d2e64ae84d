//! Suite functions for companies and articles.

use super::*;

/// Upserting no rows reports zero and writes nothing.
pub async fn empty_upserts_change_nothing(store: &dyn Store) {
    migrated(store).await;
    let g = generations(store).await;
    assert_eq!(store.upsert_companies(&[]).await.expect("upsert"), summary(0, 0));
    assert_eq!(store.upsert_articles(&[]).await.expect("upsert"), summary(0, 0));
    assert_eq!(generations(store).await, g);
    assert!(store.companies().await.expect("companies").is_empty());
    assert_eq!(store.article_count().await.expect("count"), 0);
}

/// Insert and update counts are exact, and an update replaces every field,
/// optional ones back to null included.
pub async fn upsert_companies_counts_and_replaces_every_field(store: &dyn Store) {
    migrated(store).await;
    let a = company("INE117A0102", "ABB", "ABB India Limited");
    let b = company("INE144J0102", "20MICRONS", "20 Microns Limited");
    let c = company("INE002A0101", "RELIANCE", "Reliance Industries");
    let first = store.upsert_companies(&[a.clone(), b.clone(), c.clone()]).await.expect("insert");
    assert_eq!(first, summary(3, 0));
    assert_eq!(store.companies().await.expect("companies"), vec![b.clone(), a.clone(), c.clone()]);

    let a2 = Company {
        isin: a.isin.clone(),
        ticker: ticker("ABBN"),
        name: "ABB (renamed)".into(),
        industry: None,
        sector: None,
        is_bse: false,
        is_nse: true,
        market_cap_band: None,
        logo_url: None,
        details: Default::default(),
    };
    let b2 = Company { market_cap_band: Some(MarketCapBand::Small), industry: Some("Minerals".into()), ..b.clone() };
    let d = company("INE009A0102", "INFY", "Infosys");
    let second = store.upsert_companies(&[a2.clone(), d.clone(), b2.clone()]).await.expect("upsert");
    assert_eq!(second, summary(1, 2));
    assert_eq!(store.companies().await.expect("companies"), vec![b2, a2, d, c]);
}

/// Change stamps (contract section 7.2): an upsert stamps the rows it
/// inserts or changes with the generation it makes and its time; rows given
/// exactly as stored keep their stamps and are counted unchanged; an upsert
/// that changes nothing bumps no generation.
pub async fn change_stamps_mark_only_what_changed(store: &dyn Store) {
    migrated(store).await;
    let stamps = |rows: Vec<mds_store::StoredCompany>| -> Vec<(String, i64, DateTime<Utc>)> {
        rows.into_iter().map(|r| (r.company.isin.as_str().to_owned(), r.change_seq, r.updated_at)).collect()
    };
    let stored = async || {
        let mut out = Vec::new();
        store.companies_sorted(&mut |c| out.push(c)).await.expect("companies_sorted");
        out
    };
    let a = company("INE117A0102", "ABB", "ABB India Limited");
    let b = company("INE144J0102", "MICRONS", "20 Microns Limited");
    let before = Utc::now() - chrono::Duration::seconds(1);
    assert_eq!(store.upsert_companies(&[a.clone(), b.clone()]).await.expect("insert"), summary(2, 0));
    let g1 = generations(store).await.companies;
    let first = stamps(stored().await);
    assert!(first.iter().all(|(_, seq, at)| *seq == g1 && *at >= before), "{first:?}");

    // The same rows again: nothing changes, not even the generation.
    let same = store.upsert_companies(&[b.clone(), a.clone()]).await.expect("again");
    assert_eq!(same, UpsertSummary { inserted: 0, updated: 0, unchanged: 2 });
    assert_eq!(generations(store).await.companies, g1);
    assert_eq!(stamps(stored().await), first);

    // One row changed, one left, one new: only two are stamped anew.
    let mut b2 = b.clone();
    b2.details.classification.sector = Some("Minerals".into());
    let c = company("INE002A0101", "RELIANCE", "Reliance Industries");
    let s = store.upsert_companies(&[a.clone(), b2, c]).await.expect("upsert");
    assert_eq!(s, UpsertSummary { inserted: 1, updated: 1, unchanged: 1 });
    let g2 = generations(store).await.companies;
    assert_eq!(g2, g1 + 1);
    let second = stamps(stored().await);
    let seq_of = |isin: &str| second.iter().find(|(i, _, _)| i == isin).expect("row").1;
    let seqs = [isin("INE117A0102"), isin("INE144J0102"), isin("INE002A0101")].map(|i| seq_of(i.as_str()));
    assert_eq!(seqs, [g1, g2, g2]);
}

/// Details (listings, classification, market cap) are stored and read back
/// whole; a row given without details keeps the stored ones (a file without
/// detail columns does not erase them) and, if nothing else differs, is
/// unchanged; other details replace them.
pub async fn company_details_round_trip(store: &dyn Store) {
    use mds_domain::{Exchange, Listing, ListingStatus, MarketCap};
    migrated(store).await;
    let mut a = company("INE117A0102", "ABB", "ABB India Limited");
    a.details.listings = vec![
        Listing::bare(Exchange::Nse, "ABB"),
        Listing {
            exchange: Exchange::Bse,
            symbol: "ABB".into(),
            scrip_code: Some("500002".into()),
            series: Some("A".into()),
            listed_on: chrono::NaiveDate::from_ymd_opt(1995, 1, 2),
            face_value: Some(2.0),
            status: ListingStatus::Active,
            last_seen: None,
        },
    ];
    a.details.classification.macro_sector = Some("Industrials".into());
    a.details.classification.basic_industry = Some("Heavy Electrical Equipment".into());
    a.details.market_cap =
        Some(MarketCap { inr_crore: 155_221.75, as_of: chrono::NaiveDate::from_ymd_opt(2024, 3, 28) });
    store.upsert_companies(std::slice::from_ref(&a)).await.expect("insert");
    assert_eq!(store.companies().await.expect("companies"), vec![a.clone()]);
    let bare = Company { details: Default::default(), ..a.clone() };
    let s = store.upsert_companies(std::slice::from_ref(&bare)).await.expect("upsert");
    assert_eq!((s.updated, s.unchanged), (0, 1));
    assert_eq!(store.companies().await.expect("companies"), vec![a.clone()]);
    let renamed = Company { name: "ABB (renamed)".into(), ..bare };
    assert_eq!(store.upsert_companies(std::slice::from_ref(&renamed)).await.expect("upsert").updated, 1);
    assert_eq!(store.companies().await.expect("companies"), vec![Company { details: a.details.clone(), ..renamed }]);
    let mut other = a.clone();
    other.details.market_cap = None;
    assert_eq!(store.upsert_companies(std::slice::from_ref(&other)).await.expect("upsert").updated, 1);
    assert_eq!(store.companies().await.expect("companies")[0].details, other.details);
}

/// The same ISIN twice in one call: the later row wins, and it counts as one
/// insert and one update (as row-by-row upserts would).
pub async fn upsert_companies_repeated_isin_in_one_call(store: &dyn Store) {
    migrated(store).await;
    let a = company("INE117A0102", "ABB", "first");
    let a2 = Company { name: "second".into(), ..a.clone() };
    let s = store.upsert_companies(&[a, a2.clone()]).await.expect("upsert");
    assert_eq!(s, summary(1, 1));
    assert_eq!(store.companies().await.expect("companies"), vec![a2]);
}

/// Thousands of rows in one call (more than any backend's statement batch),
/// then a mix of updates and inserts: counts and contents exact.
pub async fn upsert_companies_in_large_batches(store: &dyn Store) {
    migrated(store).await;
    let make = |i: u32, name: &str| {
        let mut c = company(&format!("INE{i:08}"), &format!("T{i:05}"), name);
        if i % 3 == 0 {
            c.logo_url = None;
            c.market_cap_band = Some(MarketCapBand::Mid);
        }
        c
    };
    let first: Vec<Company> = (0..1234).map(|i| make(i, "v1")).collect();
    assert_eq!(store.upsert_companies(&first).await.expect("insert"), summary(1234, 0));
    // 1000..1234 updated, 1234..1500 new.
    let second: Vec<Company> = (1000..1500).map(|i| make(i, "v2")).collect();
    assert_eq!(store.upsert_companies(&second).await.expect("upsert"), summary(266, 234));

    let all = store.companies().await.expect("companies");
    assert_eq!(all.len(), 1500);
    for (i, c) in (0..1500).zip(&all) {
        assert_eq!(c, &make(i, if i < 1000 { "v1" } else { "v2" }));
    }
}

/// Companies handed over a chunk at a time are one upsert: counted and
/// stored as if given at once (an ISIN in two chunks: the later row wins),
/// one generation bump, and chunks that are all empty change nothing.
pub async fn upsert_company_chunks_is_one_upsert(store: &dyn Store) {
    migrated(store).await;
    let a = company("INE117A0102", "ABB", "first");
    let b = company("INE144J0102", "20MICRONS", "20 Microns Limited");
    let c = company("INE002A0101", "RELIANCE", "Reliance Industries");
    let a2 = Company { name: "second".into(), ..a.clone() };
    let g = generations(store).await;
    let mut chunks = vec![vec![a.clone(), b.clone()], vec![], vec![c.clone(), a2.clone()]].into_iter();
    assert_eq!(store.upsert_company_chunks(&mut chunks).await.expect("upsert"), summary(3, 1));
    assert_eq!(store.companies().await.expect("companies"), vec![b, a2, c]);
    assert_eq!(generations(store).await.companies, g.companies + 1, "one bump for the whole import");
    let g = generations(store).await;
    let mut empty = vec![Vec::<Company>::new(), vec![]].into_iter();
    assert_eq!(store.upsert_company_chunks(&mut empty).await.expect("upsert"), summary(0, 0));
    assert_eq!(generations(store).await, g);
}

/// Companies whose order by ticker, then ISIN, in byte order no
/// natural-language collation gives: punctuation, digits and `_` or `~`
/// around the letters, a ticker that prefixes another, several ISINs under
/// one ticker. As (ISIN body, ticker, name), in no order.
const ORDER_ROWS: [(&str, &str, &str); 18] = [
    ("INE00000003", "M&M", "Mahindra"),
    ("INE00000009", "ABB", "ABB 9"),
    ("INE00000001", "ABB", "ABB 1"),
    ("INE00000005", "AB", "AB"),
    ("INE00000002", "20MICRONS", "20 Microns"),
    ("US000000007", "ABB", "ABB US"),
    ("INE00000004", "A", "A"),
    ("INE00000008", "ABB-X", "ABB-X"),
    ("INE00000011", "MM", "MM"),
    ("INE00000012", "M2", "M2"),
    ("US000000019", "M&M", "M&M US"),
    ("INE00000013", "M-M", "M-M"),
    ("INE00000014", "M_M", "M_M"),
    ("INE00000015", "M~", "M~"),
    ("INE00000016", "M", "M"),
    ("INE00000017", "M.M", "M.M"),
    ("INE00000018", "M&M", "M&M India"),
    ("GB000000011", "M&M", "M&M UK"),
];

/// [`ORDER_ROWS`] as (ticker, ISIN body) in the order they must come in.
const ORDER_WANT: [(&str, &str); 18] = [
    ("20MICRONS", "INE00000002"),
    ("A", "INE00000004"),
    ("AB", "INE00000005"),
    ("ABB", "INE00000001"),
    ("ABB", "INE00000009"),
    ("ABB", "US000000007"),
    ("ABB-X", "INE00000008"),
    ("M", "INE00000016"),
    ("M&M", "GB000000011"),
    ("M&M", "INE00000003"),
    ("M&M", "INE00000018"),
    ("M&M", "US000000019"),
    ("M-M", "INE00000013"),
    ("M.M", "INE00000017"),
    ("M2", "INE00000012"),
    ("MM", "INE00000011"),
    ("M_M", "INE00000014"),
    ("M~", "INE00000015"),
];

/// Stores [`ORDER_ROWS`] (all of them new); how many.
async fn store_order_rows(store: &dyn Store) -> u64 {
    let rows: Vec<Company> = ORDER_ROWS.iter().map(|&(i, t, n)| company(i, t, n)).collect();
    assert_eq!(store.upsert_companies(&rows).await.expect("insert"), summary(rows.len() as u64, 0));
    rows.len() as u64
}

/// The (ticker, ISIN body) of each of `companies`, in their order.
fn tickers_and_isins(companies: &[Company]) -> Vec<(&str, &str)> {
    companies.iter().map(|c| (c.ticker.as_str(), &c.isin.as_str()[..11])).collect()
}

/// Companies come ordered by ticker, then ISIN, in byte order
/// ([`ORDER_ROWS`]); several ISINs may share one ticker.
pub async fn companies_are_ordered_by_ticker_then_isin(store: &dyn Store) {
    migrated(store).await;
    store_order_rows(store).await;
    assert_eq!(tickers_and_isins(&store.companies().await.expect("companies")), ORDER_WANT);
}

/// Every article field survives the store: tags in order (duplicates kept),
/// nulls as nulls, instants to the nanosecond; an unknown slug is `None`.
pub async fn articles_round_trip_every_field(store: &dyn Store) {
    migrated(store).await;
    let full = full_article("reliance-q2-results-2026");
    let bare = bare_article("x");
    assert_eq!(store.upsert_articles(&[full.clone(), bare.clone()]).await.expect("insert"), summary(2, 0));
    assert_eq!(store.article(&full.slug).await.expect("article"), Some(full));
    assert_eq!(store.article(&bare.slug).await.expect("article"), Some(bare));
    assert_eq!(store.article(&slug("no-such-article")).await.expect("article"), None);
    assert_eq!(store.article_count().await.expect("count"), 2);
}

/// Insert and update counts are exact; an update replaces every field, back
/// to null and `[]` included; `article_count` counts slugs.
pub async fn upsert_articles_counts_and_replaces_every_field(store: &dyn Store) {
    migrated(store).await;
    let many: Vec<Article> = (0..120).map(|i| full_article(&format!("story-{i}"))).collect();
    assert_eq!(store.upsert_articles(&many).await.expect("insert"), summary(120, 0));
    assert_eq!(store.article_count().await.expect("count"), 120);

    let replaced = bare_article("story-7");
    let mut changed = full_article("story-100");
    changed.tags = vec!["only".into()];
    changed.published_at = Some(at("2027-01-01T00:00:00Z"));
    let new = bare_article("story-new");
    let s = store.upsert_articles(&[replaced.clone(), new.clone(), changed.clone()]).await.expect("upsert");
    assert_eq!(s, summary(1, 2));
    assert_eq!(store.article_count().await.expect("count"), 121);
    assert_eq!(store.article(&replaced.slug).await.expect("article"), Some(replaced));
    assert_eq!(store.article(&changed.slug).await.expect("article"), Some(changed));
    assert_eq!(store.article(&new.slug).await.expect("article"), Some(new));
    assert_eq!(store.article(&slug("story-8")).await.expect("article"), Some(full_article("story-8")));
}

/// The companies of `store` in the order `companies_sorted` hands them out.
async fn sorted(store: &dyn Store) -> Vec<Company> {
    let mut out = Vec::new();
    store.companies_sorted(&mut |c| out.push(c.company)).await.expect("companies_sorted");
    out
}

/// `companies_sorted` hands out companies by ticker, then ISIN, in the byte
/// order of their UTF-8 (Rust's `str` order), which no natural-language
/// collation gives ([`ORDER_ROWS`]).
pub async fn companies_sorted_are_in_byte_order(store: &dyn Store) {
    migrated(store).await;
    assert!(sorted(store).await.is_empty());
    assert_eq!(store.company_count().await.expect("count"), 0);

    let stored = store_order_rows(store).await;
    let companies = sorted(store).await;
    let got = tickers_and_isins(&companies);
    assert_eq!(got, ORDER_WANT);
    let mut by_rust = got.clone();
    by_rust.sort();
    assert_eq!(got, by_rust, "Rust's str order");
    assert_eq!(store.company_count().await.expect("count"), stored);
}

/// `companies_sorted` hands out exactly what `companies` returns, every field
/// decoded alike, in `(ticker, isin)` order, across more rows than any
/// backend reads ahead; `company_count` counts them.
pub async fn companies_sorted_agree_with_companies(store: &dyn Store) {
    migrated(store).await;
    let rows: Vec<Company> = (0..700u32)
        .map(|i| {
            // Tickers repeat (several ISINs each) and are not in ISIN order.
            let mut c = company(&format!("INE{:08}", (i * 7919) % 1000), &format!("T{}", i % 97), &format!("n{i}"));
            match i % 4 {
                0 => {
                    c.industry = None;
                    c.sector = None;
                    c.market_cap_band = None;
                    c.logo_url = None;
                }
                1 => c.market_cap_band = Some(MarketCapBand::Small),
                2 => (c.is_bse, c.is_nse) = (false, true),
                _ => c.name = "Ünïcödé & Co. \"Ltd\" 📈".to_owned(),
            }
            c
        })
        .collect();
    store.upsert_companies(&rows).await.expect("insert");
    let mut want = rows.clone();
    want.sort_by(|a, b| (a.ticker.as_str(), a.isin.as_str()).cmp(&(b.ticker.as_str(), b.isin.as_str())));
    let got = sorted(store).await;
    assert_eq!(got, want);
    assert_eq!(got, store.companies().await.expect("companies"));
    assert_eq!(store.company_count().await.expect("count"), 700);
}
