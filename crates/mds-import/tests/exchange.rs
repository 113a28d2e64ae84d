//! The exchanges' own files and the merge, on small hand-made files (every
//! error on its exact line) and on the real demo files (the published counts).

mod common;

use std::collections::{BTreeMap, HashMap};

use chrono::NaiveDate;
use common::{assert_report, listed};
use mds_domain::{
    Classification, Company, CompanyDetails, Exchange, Isin, Listing, ListingStatus, MarketCap, MarketCapBand, Ticker,
};
use mds_import::demo::{BSE_EQUITY_LIST, NSE_EQUITY_LIST, NSE_MCAP};
use mds_import::exchange::mcap_day_from_file_name;
use mds_import::exchange::{BseTickerSource, SkippedRow};
use mds_import::{ImportError, merge, parse_bse_equity_list, parse_nse_equity_list, parse_nse_mcap};

const NSE_HEADER: &str =
    "SYMBOL,NAME OF COMPANY, SERIES, DATE OF LISTING, PAID UP VALUE, MARKET LOT, ISIN NUMBER, FACE VALUE";
const BSE_HEADER: &str = "Security Code,Issuer Name,Security Id,Security Name,Status,Group,Face Value,ISIN No,Industry,Instrument,Sector Name,Industry New Name,Igroup Name,ISubgroup Name";

fn isin(s: &str) -> Isin {
    Isin::parse(s).unwrap()
}

fn ticker(s: &str) -> Ticker {
    Ticker::parse(s).unwrap()
}

// ---- small files ----------------------------------------------------------

// The (industry, sector) BSE gives 20 Microns, JK Agri Genetics and ABB.
const MICRONS: Option<(&str, &str)> = Some(("Minerals & Mining", "Metals & Mining"));
const JK_AGRI: Option<(&str, &str)> = Some(("Agricultural Food & other Products", "Fast Moving Consumer Goods"));
const ABB: Option<(&str, &str)> = Some(("Electrical Equipment", "Capital Goods"));

fn small_nse() -> String {
    format!(
        "{NSE_HEADER}\n\
         20MICRONS,20 Microns Limited,EQ,06-OCT-2008,5,1,INE144J01027,5\n\
         ABB,ABB India Limited,EQ,01-JAN-1995,2,1,INE117A01022,2\n\
         NSEONLY,Aakash Exploration Services Limited,EQ,01-JAN-2020,1,1,INE087Z01024,1\n"
    )
}

fn small_bse() -> String {
    [
        BSE_HEADER,
        "500002,ABB India Limited,ABB,ABB India Limited,Active,A ,2.00,INE117A01022,Heavy Electrical Equipment,Equity,Industrials,Capital Goods,Electrical Equipment,Heavy Electrical Equipment,",
        "533022,20 Microns Limited,20MICRONS,20 MICRONS LTD.,Active,B ,5.00,INE144J01027,Industrial Minerals,Equity,Commodities,Metals & Mining,Minerals & Mining,Industrial Minerals,",
        "536493,JK Agri Genetics Limited,JK AGRI,JK Agri Genetics Ltd,Active,X ,10.00,INE690O01011,Other Agricultural Products,Equity,Fast Moving Consumer Goods,Fast Moving Consumer Goods,Agricultural Food & other Products,Other Agricultural Products,",
        "512505,\"Meenakshi Steel Industries Ltd.,\",MEENST,MEENAKSHI STEEL INDUSTRIES LTD.,Active,ZP,10.00,-,Iron & Steel Products,Equity,Industrials,Capital Goods,Industrial Products,Iron & Steel Products,",
        "590001,Some ETF,ETFX,SOME ETF,Active,F ,1.00,INF204K01EY0,-,ETF,-,-,-,-,",
    ]
    .join("\r\n")
        + "\r\n"
}

fn small_mcap() -> &'static str {
    "Id,Symbol,Company_Name,Market_capitalization_lakhs\r\n1,20MICRONS,20 Microns Limited,50706.70\r\n2,ABB,ABB India Limited,1000000\r\n3,OTHER,Other Ltd,2000000\r\n"
}

#[test]
fn small_files_merge_to_exact_companies() {
    let nse = parse_nse_equity_list(small_nse().as_bytes()).unwrap();
    let bse = parse_bse_equity_list(small_bse().as_bytes()).unwrap();
    let mcap = parse_nse_mcap(small_mcap().as_bytes()).unwrap();
    assert_eq!(bse.skipped_without_isin, vec![SkippedRow { line: 5, isin: "-".into() }]);
    assert_eq!(bse.listings[2].ticker_source, BseTickerSource::SecurityCode);
    assert_eq!(mcap.rank_of(&ticker("OTHER")), Some(1));
    assert_eq!(mcap.rank_of(&ticker("ABB")), Some(2));
    assert_eq!(mcap.rank_of(&ticker("NSEONLY")), None);

    let merged = merge(&nse, &bse, Some(&mcap));
    assert_eq!(merged.skipped_without_isin, 1);
    assert_eq!(
        merged.notes,
        vec![
            "BSE list line 5: skipped, no ISIN (ISIN cell \"-\")".to_owned(),
            "BSE list line 4: Security Id \"JK AGRI\" is not a valid ticker; the Security Code 536493 is the ticker of INE690O01011".to_owned(),
        ]
    );
    // The V1Company fields (the details have their own test, below).
    let without_details: Vec<Company> =
        merged.companies.iter().map(|c| Company { details: Default::default(), ..c.clone() }).collect();
    assert_eq!(
        without_details,
        vec![
            listed("20MICRONS", "INE144J01027", "20 Microns Limited", MICRONS, true, true, Some(MarketCapBand::Large)),
            listed("536493", "INE690O01011", "JK Agri Genetics Limited", JK_AGRI, true, false, None),
            listed("ABB", "INE117A01022", "ABB India Limited", ABB, true, true, Some(MarketCapBand::Large)),
            listed("ETFX", "INF204K01EY0", "Some ETF", None, true, false, None),
            listed("NSEONLY", "INE087Z01024", "Aakash Exploration Services Limited", None, false, true, None),
        ]
    );
    let without_mcap = merge(&nse, &bse, None);
    assert!(without_mcap.companies.iter().all(|c| c.market_cap_band.is_none()));
    assert!(without_mcap.companies.iter().all(|c| c.details.market_cap.is_none()));
}

/// The details the files give: the NSE listing (series, date, face value),
/// the BSE one (security id, code, group, face value, status), the four
/// levels, and the market capitalisation in crore of the day it is of.
#[test]
fn small_files_merge_with_their_details() {
    let nse = parse_nse_equity_list(small_nse().as_bytes()).unwrap();
    let bse = parse_bse_equity_list(small_bse().as_bytes()).unwrap();
    let day = NaiveDate::from_ymd_opt(2024, 3, 28);
    let mcap = parse_nse_mcap(small_mcap().as_bytes()).unwrap().with_as_of(day);
    let merged = merge(&nse, &bse, Some(&mcap));
    let of = |t: &str| merged.companies.iter().find(|c| c.ticker.as_str() == t).unwrap().details.clone();
    let nse_listing = |symbol: &str, date: (i32, u32, u32), face: f64| Listing {
        exchange: Exchange::Nse,
        symbol: symbol.into(),
        scrip_code: None,
        series: Some("EQ".into()),
        listed_on: NaiveDate::from_ymd_opt(date.0, date.1, date.2),
        face_value: Some(face),
        status: ListingStatus::Active,
        last_seen: None,
    };
    let bse_listing = |symbol: &str, code: &str, group: &str, face: f64| Listing {
        exchange: Exchange::Bse,
        symbol: symbol.into(),
        scrip_code: Some(code.into()),
        series: Some(group.into()),
        listed_on: None,
        face_value: Some(face),
        status: ListingStatus::Active,
        last_seen: None,
    };
    let levels = |m: &str, s: &str, i: &str, b: &str| Classification {
        macro_sector: Some(m.into()),
        sector: Some(s.into()),
        industry: Some(i.into()),
        basic_industry: Some(b.into()),
    };
    assert_eq!(
        of("20MICRONS"),
        CompanyDetails {
            listings: vec![nse_listing("20MICRONS", (2008, 10, 6), 5.0), bse_listing("20MICRONS", "533022", "B", 5.0)],
            classification: levels("Commodities", "Metals & Mining", "Minerals & Mining", "Industrial Minerals"),
            market_cap: Some(MarketCap { inr_crore: 507.067, as_of: day }),
            ..CompanyDetails::default()
        }
    );
    assert_eq!(
        of("536493"),
        CompanyDetails {
            listings: vec![bse_listing("JK AGRI", "536493", "X", 10.0)],
            classification: levels(
                "Fast Moving Consumer Goods",
                "Fast Moving Consumer Goods",
                "Agricultural Food & other Products",
                "Other Agricultural Products"
            ),
            market_cap: None,
            ..CompanyDetails::default()
        }
    );
    assert_eq!(of("ABB").market_cap, Some(MarketCap { inr_crore: 10_000.0, as_of: day }));
    assert_eq!(of("ETFX").classification, Classification::default(), "'-' is unclassified at every level");
    assert_eq!(
        of("NSEONLY"),
        CompanyDetails {
            listings: vec![nse_listing("NSEONLY", (2020, 1, 1), 1.0)],
            classification: Classification::default(),
            market_cap: None,
            ..CompanyDetails::default()
        }
    );
}

#[test]
fn bad_detail_cells_are_reported_with_their_line() {
    let nse = format!(
        "{NSE_HEADER}\n\
         A,A Ltd,EQ,31-FEB-2001,1,1,INE144J01027,1\n\
         B,B Ltd,E Q,01-JAN-2001,1,1,INE117A01022,ten\n"
    );
    assert_report(
        parse_nse_equity_list(nse.as_bytes()),
        "line 2: DATE OF LISTING must be a date such as 06-OCT-2008 (got \"31-FEB-2001\")
         line 3: SERIES must be a short code without spaces (got \"E Q\")
         line 3: FACE VALUE must be a non-negative number of rupees (got \"ten\")",
    );
    let bse = [
        BSE_HEADER,
        "500002,ABB India Limited,ABB,ABB,Dormant,A ,2.00,INE117A01022,x,Equity,x,Capital Goods,Electrical Equipment,x,",
        "5000X3,Aegis,AEGISLOG,AEGIS,Suspended,A ,-1,INE208C01025,x,Equity,x,Gas,Gas,x,",
    ]
    .join("\r\n");
    assert_report(
        parse_bse_equity_list(bse.as_bytes()),
        "line 2: Status must be Active, Suspended or Delisted (got \"Dormant\")
         line 3: Security Code must be digits (got \"5000X3\")
         line 3: Face Value must be a non-negative number of rupees (got \"-1\")",
    );
}

/// Section 10.3: an exchange list's name gives its day in any of four
/// spellings; a month alone, or two different days, is not a day.
#[test]
fn a_list_file_name_gives_a_full_day_or_only_part_of_one() {
    use mds_import::format::{NameDay, list_day_in_name};
    let full = |y, m, d| NameDay::Full(NaiveDate::from_ymd_opt(y, m, d).unwrap());
    for (name, want) in [
        ("nse_EQUITY_L_2026-05-17.csv", full(2026, 5, 17)),
        ("EQUITY_L_17-05-2026.csv", full(2026, 5, 17)),
        ("EQUITY_L_17052026.csv", full(2026, 5, 17)),
        ("EQUITY_L_20260517.csv", full(2026, 5, 17)),
        ("Equity-20240130.csv", full(2024, 1, 30)),
        ("MCAP28032024.csv", full(2024, 3, 28)),
        ("nse_EQUITY_L_2024-01.csv", NameDay::Partial("2024-01".into())),
        ("bse_Equity_2024-01.csv", NameDay::Partial("2024-01".into())),
        ("EQUITY_L_01-2024.csv", NameDay::Partial("01-2024".into())),
        ("EQUITY_L_202401.csv", NameDay::Partial("202401".into())),
        ("list_2024-01-01_to_2024-02-01.csv", NameDay::Partial("2024-01-01, 2024-02-01".into())),
        ("list_2024-01-30_2024-01-30.csv", full(2024, 1, 30)),
        ("EQUITY_L.csv", NameDay::None),
        ("SME_EQUITY_L.csv", NameDay::None),
        ("equity-v2.csv", NameDay::None),
        ("EQUITY_L_2024-02-30.csv", NameDay::Partial("2024-02-30".into())),
        ("EQUITY_L_123456789.csv", NameDay::None),
    ] {
        assert_eq!(list_day_in_name(name), want, "{name}");
    }
}

#[test]
fn a_market_cap_file_name_gives_its_day() {
    let d = |y, m, day| NaiveDate::from_ymd_opt(y, m, day);
    assert_eq!(mcap_day_from_file_name("MCAP28032024.csv"), d(2024, 3, 28));
    assert_eq!(mcap_day_from_file_name("nse_mcap_2024-03-28.csv"), d(2024, 3, 28));
    assert_eq!(mcap_day_from_file_name("mcap-2024-02-30.csv"), None, "not a day");
    assert_eq!(mcap_day_from_file_name("MCAP123456789.csv"), None, "nine digits are no DDMMYYYY");
    assert_eq!(mcap_day_from_file_name("mcap.csv"), None);
}

#[test]
fn nse_bad_rows_are_all_reported() {
    let text = format!(
        "{NSE_HEADER}\n\
         20MICRONS,20 Microns Limited,EQ,06-OCT-2008,5,1,INE144J01027,5\n\
         ABB,ABB India Limited,EQ,01-JAN-1995,2,1,INE117A01023,2\n\
         TWO WORDS,,EQ,01-JAN-1995,2,1,INE117A01022,2\n\
         SHORT,Short Row,EQ\n\
         AGAIN,Again Ltd,EQ,01-JAN-1995,2,1,INE144J01027,2\n\
         NOISIN,No ISIN Ltd,EQ,01-JAN-1995,2,1,NA,2\n"
    );
    assert_report(
        parse_nse_equity_list(text.as_bytes()),
        "line 3: isin: not a valid ISIN…
         line 4: SYMBOL: ticker \"TWO WORDS\" is not valid…
         line 4: NAME OF COMPANY is empty
         line 5: expected 8 cells, one per header column, but found 3
         line 6: duplicate ISIN INE144J01027: it is already on line 2",
    );
}

#[test]
fn nse_placeholder_isin_is_skipped_and_counted() {
    let text = format!(
        "{NSE_HEADER}\nA,A Ltd,EQ,01-JAN-2000,1,1,INE144J01027,1\nB,B Ltd,EQ,x,1,1,-,1\nC,C Ltd,EQ,x,1,1, ,1\n"
    );
    let list = parse_nse_equity_list(text.as_bytes()).unwrap();
    assert_eq!(list.listings.len(), 1);
    assert_eq!(
        list.skipped_without_isin,
        vec![SkippedRow { line: 3, isin: "-".into() }, SkippedRow { line: 4, isin: String::new() }]
    );
}

#[test]
fn missing_required_columns_are_reported_on_the_header_line() {
    let missing = |column: &str| format!("line 1: required column \"{column}\" is missing from the header");
    assert_report(parse_nse_equity_list(b"SYMBOL,NAME OF COMPANY,SERIES\nA,A Ltd,EQ\n"), &missing("ISIN NUMBER"));
    let bse = parse_bse_equity_list(b"Security Code,Issuer Name,Security Id,ISIN No\r\n1,A,A,INE144J01027,\r\n");
    assert_report(bse, &[missing("Industry New Name"), missing("Igroup Name")].join("\n"));
    assert_report(parse_nse_mcap(b"Id,Symbol,Company_Name\n1,A,A Ltd\n"), &missing("Market_capitalization_lakhs"));
}

#[test]
fn exchange_headers_ignore_case_spaces_and_extra_columns() {
    let text = " symbol ,Name Of Company,isin number,NEW COLUMN\nA,A Ltd,INE144J01027,x\n";
    let list = parse_nse_equity_list(text.as_bytes()).unwrap();
    assert_eq!(list.listings[0].symbol, ticker("A"));
    let text = "SYMBOL,SYMBOL,NAME OF COMPANY,ISIN NUMBER\nA,A,A Ltd,INE144J01027\n";
    assert_report(
        parse_nse_equity_list(text.as_bytes()),
        "line 1: column \"SYMBOL\" appears more than once in the header",
    );
}

#[test]
fn bse_bad_rows_are_all_reported_with_crlf_line_numbers() {
    let text = [
        BSE_HEADER,
        "500002,ABB India Limited,ABB,ABB,Active,A ,2.00,INE117A01022,x,Equity,x,Capital Goods,Electrical Equipment,x,",
        "",
        "500003,,AEGISLOG,AEGIS,Active,A ,1.00,INE208C01024,x,Equity,x,Gas,Gas,x,",
        "500004,X Ltd,BAD ID,X,Active,A ,1.00,INE117A01022,x,Equity,x,-,-,x,",
        "500005,Y Ltd,Y,Y,Active,A ,1.00,INE144J01027,x,Equity,x,-,-,x,extra,",
        "500006,\"Z\r\nLtd\",Z,Z,Active,A ,1.00,NA,x,Equity,x,-,-,x,",
        ",W Ltd,W W,W,Active,A ,1.00,INE002A01018,x,Equity,x,-,-,x,",
    ]
    .join("\r\n");
    assert_report(
        parse_bse_equity_list(text.as_bytes()),
        "line 4: isin: not a valid ISIN…
         line 4: Issuer Name is empty
         line 5: duplicate ISIN INE117A01022: it is already on line 2
         line 6: expected 14 cells, one per header column, but found 16
         line 9: Security Id \"W W\" is not a valid ticker, and Security Code \"\" cannot stand in for it
         line 9: Security Code must be digits (got \"\")",
    );
}

#[test]
fn mcap_bad_rows_are_all_reported() {
    let text = "Id,Symbol,Company_Name,Market_capitalization_lakhs\r\n1,A,A,10\r\n2,B,B,\r\n3,C,C,-5\r\n4,A,A again,abc\r\n5,,E,1\r\n";
    assert_report(
        parse_nse_mcap(text.as_bytes()),
        "line 3: Market_capitalization_lakhs must be a non-negative number of lakh rupees (got \"\")
         line 4: Market_capitalization_lakhs must be a non-negative number of lakh rupees (got \"-5\")
         line 5: duplicate Symbol A: it is already on line 2
         line 5: Market_capitalization_lakhs must be a non-negative number of lakh rupees (got \"abc\")
         line 6: Symbol: ticker is empty",
    );
}

#[test]
fn exchange_files_empty_and_header_only() {
    assert_eq!(parse_nse_equity_list(b""), Err(ImportError::File("the file is empty".into())));
    let header_only = format!("{BSE_HEADER}\r\n");
    assert_eq!(
        parse_bse_equity_list(header_only.as_bytes()),
        Err(ImportError::File("no rows: the file has a header but no data rows".into()))
    );
}

// ---- the real demo files --------------------------------------------------

#[test]
fn real_files_parse_with_the_published_row_counts() {
    let nse = parse_nse_equity_list(NSE_EQUITY_LIST).unwrap();
    let bse = parse_bse_equity_list(BSE_EQUITY_LIST).unwrap();
    let mcap = parse_nse_mcap(NSE_MCAP).unwrap();
    assert_eq!(nse.listings.len(), 1_935);
    assert!(nse.skipped_without_isin.is_empty());
    // 4,456 rows, of which 2 have no real ISIN: '-' (Meenakshi Steel) and
    // 'NA' (Asian Flora, padded with spaces in the file), on the lines
    // `grep -n` gives for them.
    assert_eq!(bse.listings.len(), 4_454);
    assert_eq!(
        bse.skipped_without_isin,
        vec![SkippedRow { line: 924, isin: "-".into() }, SkippedRow { line: 2_124, isin: "NA".into() }]
    );
    assert_eq!(mcap.rows().len(), 2_255);
    // Every row's line is its physical line in the CRLF file: header is
    // line 1, so the last of 4,456 data rows is line 4,457.
    assert_eq!(bse.listings.last().unwrap().line, 4_457);
    assert_eq!(nse.listings.last().unwrap().line, 1_936);
}

#[test]
fn real_files_merge_to_the_published_figures() {
    let nse = parse_nse_equity_list(NSE_EQUITY_LIST).unwrap();
    let bse = parse_bse_equity_list(BSE_EQUITY_LIST).unwrap();
    let mcap = parse_nse_mcap(NSE_MCAP).unwrap();
    let merged = merge(&nse, &bse, Some(&mcap));
    let companies = &merged.companies;

    // The reference data's README counts 4,592 ISINs in NSE ∪ BSE, but that
    // count includes the 2 BSE placeholders ('-' and 'NA'), which are not
    // ISINs: 4,590 real ones, 2,655 of them BSE-only (README: 2,657).
    assert_eq!(companies.len(), 4_590);
    assert_eq!(merged.skipped_without_isin, 2);
    let both = companies.iter().filter(|c| c.is_nse && c.is_bse).count();
    let nse_only = companies.iter().filter(|c| c.is_nse && !c.is_bse).count();
    let bse_only = companies.iter().filter(|c| !c.is_nse && c.is_bse).count();
    assert_eq!((both, nse_only, bse_only), (1_799, 136, 2_655));
    assert!(companies.iter().all(|c| c.is_nse || c.is_bse));

    // All 1,799 shared ISINs carry the BSE classification.
    assert!(companies.iter().filter(|c| c.is_nse && c.is_bse).all(|c| c.industry.is_some() && c.sector.is_some()));
    assert!(companies.iter().filter(|c| !c.is_bse).all(|c| c.industry.is_none() && c.sector.is_none()));
    assert!(companies.iter().all(|c| c.logo_url.is_none()));

    // Sorted by (ticker, isin), one company per ISIN.
    assert!(companies.windows(2).all(|w| (&w[0].ticker, &w[0].isin) < (&w[1].ticker, &w[1].isin)));

    // Two skipped placeholders and two BSE-only Security Ids with a space,
    // whose Security Code is their ticker.
    assert_eq!(merged.notes.len(), 4, "{:#?}", merged.notes);
    for (code, name) in [("536493", "JK Agri Genetics Limited"), ("539115", "Alan Scott Industries Ltd.")] {
        let c = companies.iter().find(|c| c.ticker.as_str() == code).unwrap();
        assert_eq!(c.name, name);
        assert!(c.is_bse && !c.is_nse);
    }
}

#[test]
fn twenty_microns_is_on_both_exchanges_with_bse_classification() {
    let companies = mds_import::demo_companies();
    let c = companies.iter().find(|c| c.isin == isin("INE144J01027")).unwrap();
    assert_eq!(c.details.listings.len(), 2, "listed on both, with details");
    assert_eq!(c.details.classification.basic_industry.as_deref(), Some("Industrial Minerals"));
    assert_eq!(c.details.market_cap.as_ref().map(|m| m.inr_crore), Some(507.067034));
    // Rank 1,410 of 2,255 in the market-cap file: small.
    let band = Some(MarketCapBand::Small);
    assert_eq!(
        &Company { details: Default::default(), ..c.clone() },
        &listed("20MICRONS", "INE144J01027", "20 Microns Limited", MICRONS, true, true, band)
    );
}

#[test]
fn market_cap_bands_follow_the_ranking_of_the_whole_mcap_file() {
    let mcap = parse_nse_mcap(NSE_MCAP).unwrap();
    // The boundaries of the README: #100 about ₹84,146 Cr, #250 about ₹25,580 Cr.
    assert_eq!(mcap.rows()[99].symbol, ticker("INDHOTEL"));
    assert_eq!(mcap.rows()[100].symbol, ticker("CUMMINSIND"));
    assert_eq!(mcap.rows()[249].symbol, ticker("ANGELONE"));
    assert_eq!(mcap.rows()[250].symbol, ticker("MOTILALOFS"));
    assert_eq!(mcap.rank_of(&ticker("RELIANCE")), Some(1));

    let companies = mds_import::demo_companies();
    let mut bands: BTreeMap<Option<MarketCapBand>, usize> = BTreeMap::new();
    for c in &companies {
        *bands.entry(c.market_cap_band).or_default() += 1;
    }
    // Ranks are taken over the whole market-cap file (as SEBI ranks every
    // listed company). 337 of its symbols are not on the January NSE list,
    // but none of them is in the top 250, so every large and mid rank lands
    // on a company: exactly 100 large and 150 mid. 1,918 of the 1,935 NSE
    // symbols are in the file, so 1,918 - 250 = 1,668 are small; the other
    // 17 NSE companies and all 2,655 BSE-only ones have no band.
    assert_eq!(bands.get(&Some(MarketCapBand::Large)), Some(&100));
    assert_eq!(bands.get(&Some(MarketCapBand::Mid)), Some(&150));
    assert_eq!(bands.get(&Some(MarketCapBand::Small)), Some(&1_668));
    assert_eq!(bands.get(&None), Some(&(17 + 2_655)));
    assert!(companies.iter().filter(|c| !c.is_nse).all(|c| c.market_cap_band.is_none()));
    let nse = parse_nse_equity_list(NSE_EQUITY_LIST).unwrap();
    let not_on_nse = mcap.rows().iter().filter(|r| !nse.listings.iter().any(|l| l.symbol == r.symbol)).count();
    assert_eq!(not_on_nse, 2_255 - 1_918);
}

#[test]
fn some_tickers_are_shared_by_several_isins() {
    let companies = mds_import::demo_companies();
    let mut by_ticker: HashMap<&str, Vec<&Company>> = HashMap::new();
    for c in &companies {
        by_ticker.entry(c.ticker.as_str()).or_default().push(c);
    }
    let mut shared: Vec<&str> = by_ticker.iter().filter(|(_, v)| v.len() > 1).map(|(t, _)| *t).collect();
    shared.sort_unstable();
    assert_eq!(shared, vec!["CREATIVE", "DOLPHIN", "FOCUS", "KALYANI", "WORTH"]);
    // Each is one NSE company and one BSE-only company with the same id.
    for t in shared {
        let v = &by_ticker[t];
        assert_eq!(v.len(), 2);
        assert_eq!(v.iter().filter(|c| c.is_nse).count(), 1, "{t}");
    }
}
