//! Property tests of every import format (outside input): whatever the
//! bytes, a parser never panics; a refused file names lines that exist; and
//! what a parser accepts, written back out in the same format, parses to
//! the same records (companies also through the CSV that `mds get
//! companies --format csv` writes).
//!
//! Inputs are small real files (the demo data's first rows) with random
//! edits (bytes inserted, deleted or replaced, lines doubled or dropped, a
//! cut), and text cells with commas, quotes, line breaks, spaces and
//! non-ASCII. Case counts keep the suite to about a second.

use mds_domain::{Article, Company};
use mds_import::demo::{BSE_EQUITY_LIST, NEWS, NSE_EQUITY_LIST, NSE_MCAP};
use mds_import::exchange::{BseEquityList, BseListing, McapList, NseEquityList};
use mds_import::{
    ImportError, check_companies, companies_in_chunks, csv_header, csv_row, merge, parse_articles,
    parse_bse_equity_list, parse_companies, parse_nse_equity_list, parse_nse_mcap,
};
use proptest::prelude::*;
use proptest::sample::Index;

/// One random edit of a file.
#[derive(Debug, Clone)]
enum Edit {
    Insert(Index, u8),
    Delete(Index),
    Replace(Index, u8),
    DoubleLine(Index),
    DropLine(Index),
    Cut(Index),
}

/// Bytes that mean something to the formats, and any other.
fn byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        prop::sample::select(b",\"\n\r{}[]: -.0Zz\t\\".to_vec()),
        Just(0xFF),
        Just(0xC3),
        Just(0xEF),
        any::<u8>(),
    ]
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        3 => (any::<Index>(), byte()).prop_map(|(i, b)| Edit::Insert(i, b)),
        2 => any::<Index>().prop_map(Edit::Delete),
        3 => (any::<Index>(), byte()).prop_map(|(i, b)| Edit::Replace(i, b)),
        1 => any::<Index>().prop_map(Edit::DoubleLine),
        1 => any::<Index>().prop_map(Edit::DropLine),
        1 => any::<Index>().prop_map(Edit::Cut),
    ]
}

/// `base` with `edits` applied in turn.
fn edited(base: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut f = base.to_vec();
    for e in edits {
        let len = f.len();
        let lines = || -> Vec<Vec<u8>> { f.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect() };
        match e {
            Edit::Insert(i, b) => f.insert(i.index(len + 1), *b),
            Edit::Delete(i) | Edit::Replace(i, _) | Edit::Cut(i) if len == 0 => {}
            Edit::Delete(i) => {
                f.remove(i.index(len));
            }
            Edit::Replace(i, b) => f[i.index(len)] = *b,
            Edit::Cut(i) => f.truncate(i.index(len)),
            Edit::DoubleLine(i) => {
                let mut ls = lines();
                let at = i.index(ls.len());
                ls.insert(at, ls[at].clone());
                f = ls.join(&b'\n');
            }
            Edit::DropLine(i) => {
                let mut ls = lines();
                ls.remove(i.index(ls.len()));
                f = ls.join(&b'\n');
            }
        }
    }
    f
}

/// A file: `base` with up to five random edits, or (now and then) any bytes.
fn file(base: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        9 => prop::collection::vec(edit(), 0..6).prop_map(move |edits| edited(&base, &edits)),
        1 => prop::collection::vec(byte(), 0..200),
    ]
}

/// The first `n` lines of `bytes`, each with its line end.
fn head(bytes: &[u8], n: usize) -> Vec<u8> {
    bytes.split_inclusive(|&b| b == b'\n').take(n).flatten().copied().collect()
}

/// A refused file's problems are on lines the file has (or line 0/1 for
/// the file as a whole), in order.
fn lines_exist(e: &ImportError, bytes: &[u8]) -> Result<(), TestCaseError> {
    let last = bytes.split(|&b| b == b'\n').count().max(1);
    let lines = e.lines();
    prop_assert!(lines.iter().all(|&l| l <= last), "lines {lines:?} past the file's {last}: {e:?}");
    prop_assert!(lines.is_sorted(), "lines out of order: {lines:?}");
    Ok(())
}

/// Text cells as people write them: separators, quotes, line breaks, spaces
/// and non-ASCII among letters.
fn text() -> impl Strategy<Value = String> {
    prop_oneof!["[A-Za-z0-9 ,\"&.'()-]{0,30}", "[ \t\r\na-zé,\"]{0,12}", "\\PC{0,20}", any::<String>(),]
}

/// Some companies as they come out of an import: the demo lists' first
/// rows, merged (once).
fn demo_companies() -> &'static [Company] {
    static SOME: std::sync::OnceLock<Vec<Company>> = std::sync::OnceLock::new();
    SOME.get_or_init(|| {
        let nse = parse_nse_equity_list(&head(NSE_EQUITY_LIST, 40)).unwrap();
        let bse = parse_bse_equity_list(&head(BSE_EQUITY_LIST, 40)).unwrap();
        merge(&nse, &bse, Some(&parse_nse_mcap(&head(NSE_MCAP, 40)).unwrap())).companies
    })
}

/// Companies as CSV, the way `mds get companies --format csv` writes them.
fn as_csv(companies: &[Company]) -> Vec<u8> {
    let mut out = csv_header();
    for c in companies {
        out.push('\n');
        out.push_str(&csv_row(c));
    }
    out.push('\n');
    out.into_bytes()
}

/// Companies as JSON Lines of `V1Company`.
fn as_jsonl<T: serde::Serialize>(rows: &[T]) -> Vec<u8> {
    rows.iter().map(|r| serde_json::to_string(r).unwrap() + "\n").collect::<String>().into_bytes()
}

/// Without their details (what the CSV of `V1Company` carries).
fn v1(mut companies: Vec<Company>) -> Vec<Company> {
    for c in &mut companies {
        c.details = Default::default();
    }
    companies
}

/// Checks a companies file every way the import reads it: the whole parse,
/// the check, and the chunks agree; what is accepted round-trips through
/// CSV and JSON Lines.
fn check_companies_file(bytes: &[u8], chunk: usize) -> Result<(), TestCaseError> {
    let parsed = parse_companies(bytes);
    let checked = check_companies(bytes);
    match (&parsed, &checked) {
        (Ok(all), Ok(n)) => {
            prop_assert_eq!(all.len(), *n);
            let chunks: Vec<Company> = companies_in_chunks(bytes, chunk).flatten().collect();
            prop_assert_eq!(&chunks, all, "the chunks are the file");
            let plain = v1(all.clone());
            prop_assert_eq!(&parse_companies(&as_csv(&plain)).unwrap(), &plain, "through CSV");
            prop_assert_eq!(&parse_companies(&as_jsonl(&plain)).unwrap(), &plain, "through JSON Lines");
        }
        (Err(a), Err(b)) => {
            prop_assert_eq!(a.rows(), b.rows(), "check and parse refuse alike");
            lines_exist(a, bytes)?;
        }
        _ => prop_assert!(false, "parse {parsed:?} and check {checked:?} disagree"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn companies_csv_never_panics_and_round_trips(bytes in file(as_csv(&demo_companies()[..6])), chunk in 1..4usize) {
        check_companies_file(&bytes, chunk)?;
    }

    #[test]
    fn companies_jsonl_never_panics_and_round_trips(bytes in file(as_jsonl(&demo_companies()[..4])), chunk in 1..4usize) {
        check_companies_file(&bytes, chunk)?;
    }

    /// A company whose text is anything: accepted or refused, and if
    /// accepted, the CSV export re-imports to it.
    #[test]
    fn any_company_text_round_trips_through_csv(
        pick in any::<Index>(),
        name in text(),
        industry in proptest::option::of(text()),
        sector in proptest::option::of(text()),
        logo in proptest::option::of(prop_oneof![text(), "https://[a-z]{1,8}\\.example/[a-z,\"]{0,8}"]),
    ) {
        let companies = demo_companies();
        let mut c = companies[pick.index(companies.len())].clone();
        c.details = Default::default();
        c.name = name;
        c.industry = industry;
        c.sector = sector;
        c.logo_url = logo;
        for bytes in [as_jsonl(std::slice::from_ref(&c)), as_csv(std::slice::from_ref(&c))] {
            check_companies_file(&bytes, 1)?;
        }
    }

    #[test]
    fn news_never_panics_and_round_trips(bytes in file(head(NEWS, 4))) {
        match parse_articles(&bytes) {
            Ok(articles) => {
                prop_assert_eq!(parse_articles(&as_jsonl(&articles)).unwrap(), articles);
            }
            Err(e) => lines_exist(&e, &bytes)?,
        }
    }

    #[test]
    fn any_article_text_round_trips(
        headline in text(),
        body in proptest::option::of(text()),
        tags in prop::collection::vec(text(), 0..4),
        category in proptest::option::of(text()),
    ) {
        let mut a: Article = parse_articles(&head(NEWS, 1)).unwrap().remove(0);
        a.headline = headline;
        a.body = body;
        a.tags = tags;
        a.category = category;
        let bytes = as_jsonl(&[a]);
        match parse_articles(&bytes) {
            Ok(articles) => prop_assert_eq!(parse_articles(&as_jsonl(&articles)).unwrap(), articles),
            Err(e) => lines_exist(&e, &bytes)?,
        }
    }

    /// The exchanges' lists: never a panic; what parses merges; the NSE
    /// list and the market-cap file written back parse to the same rows.
    #[test]
    fn exchange_files_never_panic_and_round_trip(
        nse in file(head(NSE_EQUITY_LIST, 12)),
        bse in file(head(BSE_EQUITY_LIST, 12)),
        mcap in file(head(NSE_MCAP, 12)),
    ) {
        let nse = parse_nse_equity_list(&nse).map_err(|e| (lines_exist(&e, &nse), e));
        let bse = parse_bse_equity_list(&bse).map_err(|e| (lines_exist(&e, &bse), e));
        let mcap = parse_nse_mcap(&mcap).map_err(|e| (lines_exist(&e, &mcap), e));
        for r in [nse.as_ref().err(), bse.as_ref().err(), mcap.as_ref().err()].into_iter().flatten() {
            r.0.clone()?;
        }
        if let Ok(nse) = &nse {
            let again = parse_nse_equity_list(&nse_csv(nse)).unwrap();
            prop_assert_eq!(&again.listings.iter().map(|l| (l.isin.clone(), l.symbol.clone(), l.name.clone(), l.series.clone(), l.listed_on, l.face_value)).collect::<Vec<_>>(),
                &nse.listings.iter().map(|l| (l.isin.clone(), l.symbol.clone(), l.name.clone(), l.series.clone(), l.listed_on, l.face_value)).collect::<Vec<_>>());
        }
        if let Ok(bse) = &bse {
            let again = parse_bse_equity_list(&bse_csv(bse)).unwrap();
            let key = |l: &BseEquityList| l.listings.iter().map(|b| BseListing { line: 0, ..b.clone() }).collect::<Vec<_>>();
            prop_assert_eq!(key(&again), key(bse));
        }
        if let Ok(mcap) = &mcap {
            let ranks: Vec<usize> = mcap.rows().iter().map(|r| r.rank).collect();
            prop_assert_eq!(ranks, (1..=mcap.rows().len()).collect::<Vec<_>>());
            let again = parse_nse_mcap(&mcap_csv(mcap)).unwrap();
            let key = |m: &McapList| m.rows().iter().map(|r| (r.symbol.clone(), r.market_cap_lakhs, r.rank)).collect::<Vec<_>>();
            prop_assert_eq!(key(&again), key(mcap));
        }
        if let (Ok(nse), Ok(bse)) = (&nse, &bse) {
            let merged = merge(nse, bse, mcap.as_ref().ok());
            let mut isins: Vec<_> = merged.companies.iter().map(|c| c.isin.clone()).collect();
            isins.sort();
            isins.dedup();
            prop_assert_eq!(isins.len(), merged.companies.len(), "one company per ISIN");
        }
    }
}

/// A cell quoted as CSV needs.
fn cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_owned() }
}

/// A BSE list written back as BSE writes it (a trailing comma on each row).
fn bse_csv(list: &BseEquityList) -> Vec<u8> {
    let mut out = String::from(
        "Security Code,Issuer Name,Security Id,ISIN No,Industry New Name,Igroup Name,Status,Group,Face Value,\
         Sector Name,ISubgroup Name\r\n",
    );
    let level = |l: &Option<String>| cell(l.as_deref().unwrap_or("-"));
    for b in &list.listings {
        let cells = [
            b.scrip_code.clone(),
            cell(&b.name),
            cell(&b.security_id),
            b.isin.to_string(),
            level(&b.sector),
            level(&b.industry),
            b.status.as_str().to_owned(),
            b.group.clone().unwrap_or_default(),
            b.face_value.map(|f| f.to_string()).unwrap_or_default(),
            level(&b.macro_sector),
            level(&b.basic_industry),
        ];
        out.push_str(&cells.join(","));
        out.push_str(",\r\n");
    }
    out.into_bytes()
}

/// An NSE list written back as NSE writes it (names quoted as CSV needs).
fn nse_csv(list: &NseEquityList) -> Vec<u8> {
    let mut out = String::from("SYMBOL,NAME OF COMPANY,SERIES,DATE OF LISTING,ISIN NUMBER,FACE VALUE\n");
    for l in &list.listings {
        let name = cell(&l.name);
        let series = l.series.clone().unwrap_or_default();
        let listed = l.listed_on.map(|d| d.format("%d-%b-%Y").to_string().to_uppercase()).unwrap_or_default();
        let face = l.face_value.map(|f| f.to_string()).unwrap_or_default();
        out.push_str(&format!("{},{name},{series},{listed},{},{face}\n", l.symbol, l.isin));
    }
    out.into_bytes()
}

/// A market-cap file written back.
fn mcap_csv(list: &McapList) -> Vec<u8> {
    let mut out = String::from("Id,Symbol,Company_Name,Market_capitalization_lakhs\n");
    for (i, r) in list.rows().iter().enumerate() {
        out.push_str(&format!("{},{},x,{}\n", i + 1, r.symbol, r.market_cap_lakhs));
    }
    out.into_bytes()
}

/// The round trips are not vacuous: the demo rows themselves go through.
#[test]
fn the_demo_rows_round_trip() {
    let plain = v1(mds_import::demo_companies());
    assert_eq!(parse_companies(&as_csv(&plain)).unwrap(), plain);
    let articles = parse_articles(NEWS).unwrap();
    assert_eq!(parse_articles(&as_jsonl(&articles)).unwrap(), articles);
    let nse = parse_nse_equity_list(NSE_EQUITY_LIST).unwrap();
    assert_eq!(parse_nse_equity_list(&nse_csv(&nse)).unwrap().listings.len(), nse.listings.len());
    let bse = parse_bse_equity_list(BSE_EQUITY_LIST).unwrap();
    assert_eq!(parse_bse_equity_list(&bse_csv(&bse)).unwrap().listings.len(), bse.listings.len());
}

/// A change file's day (`09-APR-2025`).
fn day(d: chrono::NaiveDate) -> String {
    d.format("%d-%b-%Y").to_string().to_uppercase()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    /// NSE's change files and its SME list: never a panic; a refused file
    /// names lines it has; what parses, written back (with a header line or
    /// without), parses to the same rows.
    #[test]
    fn change_files_and_the_sme_list_never_panic_and_round_trip(
        symbols in file(head(mds_import::demo::NSE_SYMBOL_CHANGES, 12)),
        names in file(head(mds_import::demo::NSE_NAME_CHANGES, 12)),
        sme in file(head(mds_import::demo::NSE_SME_EQUITY_LIST_2026, 12)),
        header in any::<bool>(),
    ) {
        match mds_import::parse_symbol_changes(&symbols) {
            Ok(rows) => {
                let mut out = if header { "SYMB_COMPANY_NAME,SM_KEY_SYMBOL,SM_NEW_SYMBOL,SM_APPLICABLE_FROM\n".to_owned() } else { String::new() };
                for r in &rows {
                    out.push_str(&format!("{},{},{},{}\n", cell(&r.company), cell(r.from.as_str()), cell(r.to.as_str()), day(r.date)));
                }
                prop_assert_eq!(mds_import::parse_symbol_changes(out.as_bytes()).unwrap(), rows);
            }
            Err(e) => lines_exist(&e, &symbols)?,
        }
        match mds_import::parse_name_changes(&names) {
            Ok(rows) => {
                let mut out = if header { "NCH_SYMBOL,NCH_PREV_NAME,NCH_NEW_NAME,NCH_DT\n".to_owned() } else { String::new() };
                for r in &rows {
                    out.push_str(&format!("{},{},{},{}\n", cell(r.symbol.as_str()), cell(&r.from), cell(&r.to), day(r.date)));
                }
                prop_assert_eq!(mds_import::parse_name_changes(out.as_bytes()).unwrap(), rows);
            }
            Err(e) => lines_exist(&e, &names)?,
        }
        if let Err(e) = mds_import::exchange::parse_nse_sme_equity_list(&sme) {
            lines_exist(&e, &sme)?;
        }
    }
}

/// The first `n` lines of a real corporate-action file of `data/actions/`.
fn action_file_head(name: &str, n: usize) -> Vec<u8> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/actions").join(name);
    let compressed = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    head(&zstd::decode_all(compressed.as_slice()).expect("a zstd file"), n)
}

/// PURPOSE texts: one to three actions as the exchanges write them (real
/// spellings, realistic figures), joined as they join them, or any text.
fn purpose() -> impl Strategy<Value = String> {
    let amount = (0u32..100_000).prop_map(|c| format!("{}.{:02}", c / 100, c % 100));
    let small = 1u32..200;
    let one = prop_oneof![
        (prop::sample::select(vec!["", "Interim ", "Final ", "Special ", "Int ", "Special Interim "]), amount.clone())
            .prop_map(|(k, a)| format!("{k}Dividend - Rs {a} Per Share")),
        amount.clone().prop_map(|a| format!("Interim Dividend - Rs. - {a}")),
        (small.clone(), small.clone()).prop_map(|(a, b)| format!("Bonus {a}:{b}")),
        (small.clone(), small.clone(), amount.clone())
            .prop_map(|(a, b, p)| format!("Rights {a}:{b} @ Premium Rs {p}/-")),
        (prop::sample::select(vec![1u32, 2, 5, 10, 100]), prop::sample::select(vec![1u32, 2, 5, 10])).prop_map(
            |(f, t)| format!("Face Value Split (Sub-Division) - From Rs {f}/- Per Share To Re {t}/- Per Share")
        ),
        prop::sample::select(vec![
            "Annual General Meeting",
            "Buy Back",
            "Demerger",
            "Interest Payment",
            "Scheme Of Arrangement",
            "Consolidation Of Equity Shares From Re 1 Per Share To Rs 10 Per Share",
            "Income Distribution (InvIT)",
        ])
        .prop_map(str::to_owned),
    ];
    prop_oneof![
        4 => (prop::collection::vec(one, 1..4), prop::sample::select(vec!["/", " & ", "/ ", " + ", " And "]))
            .prop_map(|(parts, join)| parts.join(join)),
        1 => text(),
    ]
}

/// Real rows of NSE's two daily formats (UDiFF of 2025-02-12 with an
/// equity, a government loan and a fund; sec_bhavdata_full of 2026-08-21).
const UDIFF_DAY: &str = "TradDt,BizDt,Sgmt,Src,FinInstrmTp,FinInstrmId,ISIN,TckrSymb,SctySrs,XpryDt,FininstrmActlXpryDt,StrkPric,OptnTp,FinInstrmNm,OpnPric,HghPric,LwPric,ClsPric,LastPric,PrvsClsgPric,UndrlygPric,SttlmPric,OpnIntrst,ChngInOpnIntrst,TtlTradgVol,TtlTrfVal,TtlNbOfTxsExctd,SsnId,NewBrdLotQty,Rmks,Rsvd1,Rsvd2,Rsvd3,Rsvd4
2025-02-12,2025-02-12,CM,NSE,STK,16921,INE144J01027,20MICRONS,EQ,,,,,20 MICRONS LTD,171.00,176.94,158.20,171.14,171.59,168.42,,171.30,,,203986,34009542.61,7972,F1,1,,,,,
2025-02-12,2025-02-12,CM,NSE,STK,22438,IN0020200187,68GS2060,GS,,,,,GOI LOAN  6.8% 2060,101.03,101.03,99.81,99.81,99.81,99.00,,99.00,,,16695,1672913.51,2,F1,1,,,,,
2025-02-12,2025-02-12,CM,NSE,STK,20532,INF846K01W80,AXISGOLD,EQ,,,,,AXIS MF - AXIS GOLD ETF,75.00,75.00,71.51,71.91,71.77,72.50,,71.91,,,331310,23814569.75,2028,F1,1,,,,,
2025-02-12,2025-02-12,CM,NSE,STK,14318,INE592B01024,TTL,BE,,,,,T T LIMITED,14.99,14.99,13.80,14.01,13.80,145.29,,14.00,,,75290,1088687.51,939,F1,1,,,,,
";
const SECBHAV_DAY: &str = "SYMBOL,SERIES,DATE1,PREV_CLOSE,OPEN_PRICE,HIGH_PRICE,LOW_PRICE,LAST_PRICE,CLOSE_PRICE,AVG_PRICE,TTL_TRD_QNTY,TURNOVER_LACS,NO_OF_TRADES,DELIV_QTY,DELIV_PER
20MICRONS, EQ, 21-Aug-2026,203.96,208.0,208.0,202.73,204.6,204.19,204.88,129884,266.1,3497, 62928, 48.45
21STCENMGM, EQ, 21-Aug-2026,43.92,43.11,43.9,43.05,43.31,43.31,43.08,10939,4.71,35, 10737, 98.15
360ONE, EQ, 21-Aug-2026,1203.0,1208.0,1214.0,1190.1,1199.0,1199.0,1204.86,485140,5845.24,32846, 299939, 61.83
TTL, EQ, 21-Aug-2026,6.22,6.33,6.69,6.1,6.49,6.25,6.3,774049,48.78,436, -, -
";

/// A daily file read: never a panic; a refused one names lines it has; an
/// accepted one's rows are of one day, of equity series, on lines it has,
/// and all its rows are accounted for (read or skipped).
fn check_day_file(bytes: &[u8]) -> Result<(), TestCaseError> {
    use mds_import::bhavcopy::{BhavcopyError, parse_day};
    match parse_day("f.csv", bytes) {
        Ok(day) => {
            let last = bytes.split(|&b| b == b'\n').count();
            prop_assert!(day.rows.iter().all(|r| r.date == day.date && r.series.is_equity() && r.line <= last));
            prop_assert!(day.rows.len() as u64 + day.skipped.total() < last as u64);
        }
        Err(BhavcopyError::File { file, error }) => {
            prop_assert_eq!(file, "f.csv");
            lines_exist(&error, bytes)?;
        }
        Err(other) => prop_assert!(false, "not a file error: {other}"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]

    /// NSE's and BSE's corporate-action files: never a panic; a refused
    /// file names lines it has; every row read gives at least one action.
    #[test]
    fn action_files_never_panic(
        nse in file(action_file_head("nse_CF-CA-equities_2025-07-15_to_2026-07-15.csv.zst", 12)),
        bse in file(action_file_head("bse_Corporate_Actions_2026-07-23_to_2026-08-31.csv.zst", 12)),
    ) {
        match mds_import::actions::nse::read(&nse) {
            Ok(rows) => prop_assert!(rows.iter().all(|r| !mds_import::actions::nse_actions(r).is_empty())),
            Err(e) => lines_exist(&e, &nse)?,
        }
        match mds_import::actions::bse::read(&bse) {
            Ok(rows) => prop_assert!(rows.iter().all(|r| !mds_import::actions::bse_actions(r).is_empty())),
            Err(e) => lines_exist(&e, &bse)?,
        }
    }

    /// Any PURPOSE text: never a panic, at least one action, and each
    /// action, made a wire record, reads back from its JSON as itself.
    #[test]
    fn purpose_actions_round_trip_through_the_wire(
        text in purpose(),
        face_value in prop::option::of((1u32..100_000).prop_map(|c| f64::from(c) / 100.0)),
    ) {
        use mds_domain::actions::{ActionId, CorporateAction};
        let parsed = mds_import::actions::purpose::parse(&text, face_value);
        prop_assert!(!parsed.is_empty());
        let isin = mds_domain::Isin::parse("INE296A01024").unwrap();
        let ex_date = chrono::NaiveDate::from_ymd_opt(2025, 6, 16).unwrap();
        for p in parsed {
            prop_assert_eq!(p.reason.is_some(), p.action == mds_domain::actions::Action::Other);
            let action = CorporateAction {
                id: ActionId::of(&isin, ex_date, &p.action),
                isin: isin.clone(),
                symbol: mds_domain::Ticker::parse("BAJFINANCE").unwrap(),
                ex_date,
                record_date: None,
                purpose: text.clone(),
                sources: vec![mds_domain::Exchange::Nse],
                factor: p.action.factor(),
                action: p.action,
            };
            let json = serde_json::to_string(&action).unwrap();
            let back: CorporateAction = serde_json::from_str(&json).unwrap();
            prop_assert_eq!(back, action, "{}", json);
        }
    }

    /// NSE's daily price files, both formats: see [`check_day_file`].
    #[test]
    fn bhavcopy_files_never_panic(
        udiff in file(UDIFF_DAY.as_bytes().to_vec()),
        secbhav in file(SECBHAV_DAY.as_bytes().to_vec()),
    ) {
        check_day_file(&udiff)?;
        check_day_file(&secbhav)?;
    }

    /// Any decimal text: never a panic; what parses prints back to the
    /// same number.
    #[test]
    fn decimals_parse_exactly_or_not_at_all(chars in prop::collection::vec(prop::sample::select(b"0123456789 .-+e".to_vec()), 0..24)) {
        use mds_domain::prices::Paise;
        let text = String::from_utf8(chars).unwrap();
        if let Ok(p) = Paise::parse(&text) {
            prop_assert_eq!(Paise::parse(&p.to_string()), Ok(p));
        }
    }
}

/// The samples the property above edits are read whole, unedited.
#[test]
fn the_bhavcopy_samples_are_read() {
    let udiff = mds_import::bhavcopy::parse_day("u", UDIFF_DAY.as_bytes()).unwrap();
    let symbols: Vec<&str> = udiff.rows.iter().map(|r| r.symbol.as_str()).collect();
    assert_eq!((symbols, udiff.skipped.total(), udiff.skipped.funds), (vec!["20MICRONS", "TTL"], 2, 1));
    let secbhav = mds_import::bhavcopy::parse_day("s", SECBHAV_DAY.as_bytes()).unwrap();
    assert_eq!(secbhav.rows.len(), 4);
}
