//! The companies import file: good files parse to exact companies; every bad
//! file is refused with every problem on its exact line.

mod common;

use chrono::NaiveDate;
use common::{assert_report, file_error, listed, problem_lines, problems};
use mds_domain::{Company, CompanyDetail, Exchange, Listing, ListingStatus, MarketCap, MarketCapBand};
use mds_import::parse_companies;

const HEADER: &str = "isin,ticker,name,industry,sector,is_bse,is_nse,market_cap_band,logo_url";

fn abb() -> Company {
    let class = Some(("Electrical Equipment", "Capital Goods"));
    let abb = listed("ABB", "INE117A01022", "ABB India Limited", class, true, true, Some(MarketCapBand::Large));
    Company { logo_url: Some("https://img.example.com/abb.png".into()), ..abb }
}

fn microns() -> Company {
    listed("20MICRONS", "INE144J01027", "20 Microns Limited", None, false, true, None)
}

#[test]
fn good_csv_parses_to_exact_companies() {
    let csv = format!(
        "{HEADER}\n\
         INE117A01022,ABB,ABB India Limited,Electrical Equipment,Capital Goods,true,TRUE,large_cap,https://img.example.com/abb.png\n\
         ine144j01027, 20microns ,\"20 Microns Limited\",,,0,1,,\n"
    );
    assert_eq!(parse_companies(csv.as_bytes()).unwrap(), vec![abb(), microns()]);
}

#[test]
fn csv_columns_may_come_in_any_order_and_optional_ones_may_be_absent() {
    let csv = " is_nse , name,isin,ticker,is_bse\r\n1,20 Microns Limited,INE144J01027,20MICRONS,false\r\n";
    assert_eq!(parse_companies(csv.as_bytes()).unwrap(), vec![microns()]);
}

#[test]
fn a_utf8_bom_is_accepted() {
    let csv = format!("\u{feff}{HEADER}\nINE144J01027,20MICRONS,20 Microns Limited,,,false,true,,\n");
    assert_eq!(parse_companies(csv.as_bytes()).unwrap(), vec![microns()]);
}

#[test]
fn good_json_lines_parse_to_exact_companies() {
    let jsonl = concat!(
        "{\"isin\":\"INE117A01022\",\"ticker\":\"ABB\",\"name\":\"ABB India Limited\",\"industry\":\"Electrical Equipment\",",
        "\"sector\":\"Capital Goods\",\"is_bse\":true,\"is_nse\":true,\"market_cap_band\":\"large_cap\",",
        "\"logo_url\":\"https://img.example.com/abb.png\"}\n",
        "\n",
        "  {\"isin\":\"INE144J01027\",\"ticker\":\"20MICRONS\",\"name\":\"20 Microns Limited\",\"industry\":null,",
        "\"is_bse\":false,\"is_nse\":true}\r\n",
    );
    assert_eq!(parse_companies(jsonl.as_bytes()).unwrap(), vec![abb(), microns()]);
}

#[test]
fn json_lines_round_trip_the_wire_form() {
    let line = serde_json::to_string(&abb()).unwrap();
    assert_eq!(parse_companies(line.as_bytes()).unwrap(), vec![abb()]);
}

#[test]
fn unknown_column_is_named_on_line_1() {
    let csv = "isin,ticker,name,industy,is_bse,is_nse\nINE144J01027,20MICRONS,X,Y,true,true\n";
    assert_report(parse_companies(csv.as_bytes()), "line 1: unknown column \"industy\"…");
}

#[test]
fn repeated_column_is_named_on_line_1() {
    let csv = "isin,ticker,name,is_bse,is_nse,ticker\nINE144J01027,A,X,true,true,A\n";
    assert_report(parse_companies(csv.as_bytes()), "line 1: column \"ticker\" appears more than once in the header");
}

#[test]
fn missing_required_columns_are_each_named_on_line_1() {
    let csv = "isin,name,is_bse\nINE144J01027,X,true\n";
    assert_report(
        parse_companies(csv.as_bytes()),
        "line 1: required column \"ticker\" is missing from the header
         line 1: required column \"is_nse\" is missing from the header",
    );
}

#[test]
fn wrong_header_reports_every_problem_on_line_1() {
    // A file with some other header altogether, such as an exchange's list.
    let csv = "SYMBOL,NAME OF COMPANY,ISIN NUMBER\n20MICRONS,20 Microns Limited,INE144J01027\n";
    let errs = problems(parse_companies(csv.as_bytes()));
    assert_eq!(errs.len(), 3 + 5, "{errs:?}");
    assert!(errs.iter().all(|(line, _)| *line == 1));
}

#[test]
fn bad_isin_is_reported_with_its_line() {
    let csv = format!("{HEADER}\nINE117A01022,ABB,ABB,,,true,true,,\nINE117A01023,ABC,ABC,,,true,true,,\n");
    assert_report(parse_companies(csv.as_bytes()), "line 3: isin: not a valid ISIN…");
}

#[test]
fn bad_boolean_names_the_column_and_the_value() {
    let csv = format!("{HEADER}\nINE117A01022,ABB,ABB,,,yes,true,,\n");
    assert_report(parse_companies(csv.as_bytes()), "line 2: is_bse must be true, false, 1 or 0 (got \"yes\")");
}

#[test]
fn empty_required_cells_are_errors() {
    let csv = format!("{HEADER}\n,,  ,,,,,,\n");
    assert_report(
        parse_companies(csv.as_bytes()),
        "line 2: isin is empty
         line 2: ticker is empty
         line 2: name is empty
         line 2: is_bse must be true, false, 1 or 0 (got \"\")
         line 2: is_nse must be true, false, 1 or 0 (got \"\")",
    );
}

#[test]
fn bad_ticker_band_and_url_are_reported() {
    let csv = format!("{HEADER}\nINE117A01022,TWO WORDS,ABB,,,1,1,large,ftp://x\n");
    assert_report(
        parse_companies(csv.as_bytes()),
        "line 2: ticker \"TWO WORDS\" is not valid: ticker must be 1 to 32 printable ASCII characters without spaces
         line 2: market_cap_band must be large_cap, mid_cap or small_cap (got \"large\")
         line 2: logo_url must be an http:// or https:// URL without spaces (got \"ftp://x\")",
    );
}

#[test]
fn duplicate_isin_is_reported_on_the_later_line_naming_the_earlier() {
    let csv = format!(
        "{HEADER}\nINE117A01022,ABB,ABB,,,1,1,,\nINE144J01027,20MICRONS,M,,,1,1,,\nine117a01022,ABB2,ABB again,,,1,1,,\n"
    );
    assert_report(parse_companies(csv.as_bytes()), "line 4: duplicate isin INE117A01022: it is already on line 2");
}

#[test]
fn wrong_cell_count_is_reported() {
    let csv =
        format!("{HEADER}\nINE117A01022,ABB,ABB,,,1,1,,\nINE144J01027,20MICRONS,M,1,1\nINE144J01027,X,M,,,1,1,,,\n");
    assert_report(
        parse_companies(csv.as_bytes()),
        "line 3: expected 9 cells, one per header column, but found 5
         line 4: expected 9 cells, one per header column, but found 10",
    );
}

#[test]
fn empty_file_and_header_only_are_file_errors() {
    for empty in ["", " \n\r\n  ", "\u{feff}"] {
        assert_eq!(file_error(parse_companies(empty.as_bytes())), "the file is empty", "{empty:?}");
    }
    for header_only in [format!("{HEADER}\n"), format!("{HEADER}\n\n\n")] {
        let error = file_error(parse_companies(header_only.as_bytes()));
        assert_eq!(error, "no rows: the file has a header but no data rows", "{header_only:?}");
    }
}

#[test]
fn non_utf8_is_reported_on_its_line_with_the_other_errors() {
    let mut bytes = format!("{HEADER}\nINE117A01022,ABB,ABB,,,1,1,,\n").into_bytes();
    bytes.extend_from_slice(b"INE144J01027,20MICRONS,Caf\xE9 Ltd,,,1,1,,\n");
    bytes.extend_from_slice(b"INE144J01027,X,Y,,,1,1,,\n");
    assert_report(
        parse_companies(&bytes),
        "line 3: not UTF-8 (byte 0xE9 at position 27 of the line); save the file as UTF-8
         line 4: duplicate isin INE144J01027: it is already on line 3",
    );
}

#[test]
fn line_numbers_count_quoted_multi_line_fields() {
    let csv = format!(
        "{HEADER}\nINE117A01022,ABB,\"ABB\nIndia\nLimited\",,,1,1,,\nINE144J01027,20MICRONS,M,,,maybe,1,,\n\nINE117A01023,X,Y,,,1,1,,\n"
    );
    assert_eq!(problem_lines(parse_companies(csv.as_bytes())), vec![5, 7]);
}

#[test]
fn several_bad_rows_are_all_reported_in_line_order() {
    let csv = format!(
        "{HEADER}\n\
         INE117A01022,ABB,ABB,,,1,1,,\n\
         INE117A01023,ABC,ABC,,,1,1,,\n\
         INE144J01027,20MICRONS,M,,,1,no,,\n\
         INE002A01018,RELIANCE,,,,1,1,,\n\
         INE002A01018,RELIANCE,Reliance,,,1,1,,\n\
         INE040A01034,HDFCBANK,HDFC Bank,,,1,1,huge,\n"
    );
    let err = parse_companies(csv.as_bytes()).unwrap_err();
    assert_eq!(err.lines(), vec![3, 4, 5, 6, 7]);
    assert_eq!(err.to_string().lines().count(), 5);
    assert!(err.to_string().starts_with("line 3: isin: not a valid ISIN"));
    // Line 6 repeats the ISIN of line 5, whose empty name is a problem of its
    // own: both are reported now, not one after the other is fixed.
    assert_eq!(err.rows()[3].message, "duplicate isin INE002A01018: it is already on line 5");
    assert_eq!(err.summary(), "5 errors on 5 lines, the first on line 3");
}

#[test]
fn json_lines_unknown_field_is_reported_with_its_line() {
    let jsonl = concat!(
        "{\"isin\":\"INE144J01027\",\"ticker\":\"20MICRONS\",\"name\":\"M\",\"is_bse\":false,\"is_nse\":true}\n",
        "\n",
        "{\"isin\":\"INE117A01022\",\"ticker\":\"ABB\",\"name\":\"ABB\",\"is_bse\":true,\"is_nse\":true,\"industy\":\"X\"}\n",
    );
    assert_report(parse_companies(jsonl.as_bytes()), "line 3: unknown field `industy`, expected one of `isin`…");
}

#[test]
fn json_lines_bad_json_and_bad_values_are_all_reported() {
    let jsonl = concat!(
        "{\"isin\":\"INE144J01027\",\"ticker\":\"20MICRONS\",\"name\":\"M\",\"is_bse\":false,\"is_nse\":true}\n",
        "{\"isin\":\"INE117A01022\",\"ticker\":\"ABB\",\n",
        "{\"isin\":\"INE117A01023\",\"ticker\":\"ABB\",\"name\":\"ABB\",\"is_bse\":true,\"is_nse\":true}\n",
        "{\"isin\":\"INE002A01018\",\"ticker\":\"R\",\"name\":\"R\",\"is_bse\":\"yes\",\"is_nse\":true}\n",
        "{\"isin\":\"INE040A01034\",\"ticker\":\"H\",\"name\":\"H\",\"is_nse\":true}\n",
        "[1, 2]\n",
        "{\"isin\":\"INE144J01027\",\"ticker\":\"X\",\"name\":\"X\",\"is_bse\":true,\"is_nse\":true}\n",
    );
    assert_report(
        parse_companies(jsonl.as_bytes()),
        "line 2: not valid JSON: EOF while parsing a value (column 38)
         line 3: isin: not a valid ISIN…
         line 4: invalid type: string \"yes\", expected a boolean…
         line 5: missing field `is_bse`…
         line 6: not a JSON object: each line must hold one object, {...}
         line 7: duplicate isin INE144J01027: it is already on line 1",
    );
}

#[test]
fn json_lines_detection_skips_leading_white_space_and_bom() {
    let jsonl = "\u{feff}\n\n  {\"isin\":\"INE144J01027\",\"ticker\":\"20MICRONS\",\"name\":\"20 Microns Limited\",\"is_bse\":false,\"is_nse\":true}";
    assert_eq!(parse_companies(jsonl.as_bytes()).unwrap(), vec![microns()]);
    let bad = "\n\n{\"isin\":\"INE144J01027\"}";
    assert_eq!(problem_lines(parse_companies(bad.as_bytes())), vec![3]);
}

#[test]
fn text_over_its_bound_is_refused_on_its_line() {
    // A name of 30 MB was once accepted and then served in pages.
    let huge = "N".repeat(30 << 20);
    let csv = format!(
        "{HEADER}\n\
         INE117A01022,ABB,{huge},,,true,true,,\n\
         INE144J01027,20MICRONS,{},{},,false,true,,\n\
         INE467B01029,TCS,Tata Consultancy Services Limited,,,true,true,,https://x.example/{}\n",
        "é".repeat(501),
        "i".repeat(201),
        "p".repeat(2048),
    );
    assert_report(
        parse_companies(csv.as_bytes()),
        "line 2: name is 31457280 characters long; at most 500 are allowed
         line 3: name is 501 characters long; at most 500 are allowed
         line 3: industry is 201 characters long; at most 200 are allowed
         line 4: logo_url: url is 2066 bytes long; at most 2048 are allowed",
    );
    // At the bound: accepted.
    let csv = format!("{HEADER}\nINE117A01022,ABB,{},,,true,true,,\n", "é".repeat(500));
    assert_eq!(parse_companies(csv.as_bytes()).unwrap()[0].name.chars().count(), 500);
}

/// What `mds get companies --format csv` writes (the header from
/// `Company::FIELDS`, the cells from `Company::field_texts`) is what this
/// reader takes back.
#[test]
fn csv_of_the_wire_fields_round_trips() {
    let header = Company::FIELDS.map(|(name, _)| name).join(",");
    let mut csv = header;
    for c in [abb(), microns()] {
        csv.push('\n');
        csv.push_str(&c.field_texts().map(|v| v.unwrap_or("")).join(","));
    }
    assert_eq!(parse_companies(csv.as_bytes()).unwrap(), vec![abb(), microns()]);
}

#[test]
fn a_checked_file_comes_back_in_chunks_in_file_order() {
    let csv = format!(
        "{HEADER}\n\
         INE117A01022,ABB,ABB India Limited,Electrical Equipment,Capital Goods,true,TRUE,large_cap,https://img.example.com/abb.png\n\
         \n\
         INE144J01027,20MICRONS,20 Microns Limited,,,false,true,,\n"
    );
    assert_eq!(mds_import::check_companies(csv.as_bytes()).unwrap(), 2);
    let chunks: Vec<Vec<Company>> = mds_import::companies_in_chunks(csv.as_bytes(), 1).collect();
    assert_eq!(chunks, vec![vec![abb()], vec![microns()]]);
    let whole: Vec<Vec<Company>> = mds_import::companies_in_chunks(csv.as_bytes(), 1000).collect();
    assert_eq!(whole, vec![vec![abb(), microns()]]);
    // A bad file: the check says why, as parsing does.
    let bad = format!("{HEADER}\nINE117A01022,ABB,,,,true,true,,\n");
    assert_eq!(mds_import::check_companies(bad.as_bytes()).unwrap_err().lines(), vec![2]);
}

// ---- the optional detail fields (contract section 7.1) -------------------

#[test]
fn csv_detail_columns_become_details() {
    let text = format!(
        "{HEADER},nse_series,nse_listed_on,nse_face_value,bse_scrip_code,bse_group,bse_status,macro_sector,basic_industry,market_cap_inr_crore,market_cap_as_of\n\
         INE117A01022,ABB,ABB India Limited,Electrical Equipment,Capital Goods,true,true,large_cap,,EQ,1995-01-01,2,500002,A,suspended,Industrials,Heavy Electrical Equipment,155221.75,2024-03-28\n\
         INE144J01027,20MICRONS,20 Microns Limited,,,true,false,,,,,,,,,,,,\n"
    );
    let c = parse_companies(text.as_bytes()).unwrap();
    let d = &c[0].details;
    assert_eq!(d.listings.len(), 2);
    let (nse, bse) = (&d.listings[0], &d.listings[1]);
    assert_eq!((nse.exchange, nse.symbol.as_str(), nse.series.as_deref()), (Exchange::Nse, "ABB", Some("EQ")));
    assert_eq!((nse.listed_on, nse.face_value), (NaiveDate::from_ymd_opt(1995, 1, 1), Some(2.0)));
    assert_eq!(
        (bse.symbol.as_str(), bse.scrip_code.as_deref(), bse.series.as_deref()),
        ("ABB", Some("500002"), Some("A"))
    );
    assert_eq!(bse.status, ListingStatus::Suspended);
    assert_eq!(d.classification.macro_sector.as_deref(), Some("Industrials"));
    assert_eq!(d.classification.sector.as_deref(), Some("Capital Goods"), "the company's own sector");
    assert_eq!(d.classification.basic_industry.as_deref(), Some("Heavy Electrical Equipment"));
    assert_eq!(d.market_cap, Some(MarketCap { inr_crore: 155_221.75, as_of: NaiveDate::from_ymd_opt(2024, 3, 28) }));
    assert!(c[1].details.is_empty(), "empty detail cells are no details");
}

#[test]
fn json_lines_take_the_detail_record_as_the_api_writes_it() {
    let mut c = abb();
    c.details.listings = vec![Listing::bare(Exchange::Nse, "ABB"), Listing::bare(Exchange::Bse, "ABB")];
    c.details.listings[1].scrip_code = Some("500002".into());
    c.details.classification.basic_industry = Some("Heavy Electrical Equipment".into());
    c.details.market_cap = Some(MarketCap { inr_crore: 1.5, as_of: None });
    let served = CompanyDetail::of(&c, chrono::Utc::now());
    let line = serde_json::to_string(&served).unwrap();
    let back = parse_companies(format!("{line}\n").as_bytes()).unwrap();
    assert_eq!(back, vec![c], "a synced record imports back as it was (its updated_at ignored)");
}

#[test]
fn bad_details_are_reported_with_their_line() {
    let text = format!(
        "{HEADER},nse_series,bse_scrip_code,bse_status,nse_listed_on,market_cap_inr_crore,market_cap_as_of\n\
         INE117A01022,ABB,ABB,,,true,false,,,EQ,,,,,\n\
         INE144J01027,MIC,Mic,,,true,true,,,,50X,gone,,,\n\
         INE002A01018,REL,Rel,,,false,true,,,,,,2024-13-01,-3,\n\
         INE009A01021,INF,Inf,,,false,true,,,,,,,,2024-03-28\n"
    );
    assert_report(
        parse_companies(text.as_bytes()),
        "line 2: a listing on nse is given but is_nse is false
         line 3: bse_status: status must be one of active, suspended, delisted (got \"gone\"); scrip_code must be BSE's digits, on the BSE listing only (got \"50X\")
         line 4: nse_listed_on must be a date YYYY-MM-DD (got \"2024-13-01\"); market_cap_inr_crore must be a non-negative number (got \"-3\")
         line 5: market_cap_as_of is given without market_cap_inr_crore",
    );
    // A delisted listing is one the flags no longer list (section 10.3), as
    // the API shows it: a detail read back imports.
    let delisted = r#"{"isin":"INE117A01022","ticker":"ABB","name":"ABB","industry":null,"sector":null,"is_bse":true,"is_nse":false,"market_cap_band":null,"logo_url":null,"listings":[{"exchange":"nse","symbol":"ABB","scrip_code":null,"series":null,"listed_on":null,"face_value":null,"status":"delisted"},{"exchange":"bse","symbol":"ABB","scrip_code":null,"series":null,"listed_on":null,"face_value":null,"status":"active"}]}"#;
    assert!(parse_companies(format!("{delisted}\n").as_bytes()).is_ok(), "a delisted listing with is_nse false");
    let json = r#"{"isin":"INE117A01022","ticker":"ABB","name":"ABB","industry":null,"sector":null,"is_bse":true,"is_nse":false,"market_cap_band":null,"logo_url":null,"listings":[{"exchange":"bse","symbol":"ABB","scrip_code":null,"series":null,"listed_on":null,"face_value":null,"status":"active"},{"exchange":"bse","symbol":"X","scrip_code":null,"series":null,"listed_on":null,"face_value":null,"status":"active"}]}"#;
    assert_report(parse_companies(format!("{json}\n").as_bytes()), "line 1: two listings on bse");
}
