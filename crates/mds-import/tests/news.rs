//! The news import file: a good file parses to exact articles; every bad line
//! is refused with every problem on its exact line.

mod common;

use common::assert_report;
use mds_domain::time::parse_rfc3339;
use mds_domain::{Article, Isin, Slug};
use mds_import::{ImportError, parse_articles};
use mds_testkit::fixtures::bare_article;

const FULL: &str = r#"{"slug":"tcs-deal-wins","headline":" TCS reports deal wins ","subheadline":"Sub","excerpt":"Ex","body":"P1\n\nP2","category":"earnings","tags":["earnings"," it "],"isin":"INE467B01029","ticker":"tcs","company_name":"Tata Consultancy Services Limited","author_name":"MDS Demo Desk","hero_image":"https://news.example.com/i.jpg","url":"https://news.example.com/a","published_at":"2026-01-08T13:13:00+05:30","updated_at":"2026-01-08T15:13:00+05:30"}"#;

#[test]
fn good_file_parses_to_exact_articles() {
    let text =
        format!("{FULL}\n\n{}\n", r#"{"slug":"minimal","headline":"H","tags":null,"subheadline":"  ","isin":null}"#);
    let articles = parse_articles(text.as_bytes()).unwrap();
    let full = Article {
        slug: Slug::parse("tcs-deal-wins").unwrap(),
        headline: "TCS reports deal wins".into(),
        subheadline: Some("Sub".into()),
        excerpt: Some("Ex".into()),
        body: Some("P1\n\nP2".into()),
        category: Some("earnings".into()),
        tags: vec!["earnings".into(), "it".into()],
        isin: Some(Isin::parse("INE467B01029").unwrap()),
        ticker: Some("TCS".into()),
        company_name: Some("Tata Consultancy Services Limited".into()),
        author_name: Some("MDS Demo Desk".into()),
        hero_image: Some("https://news.example.com/i.jpg".into()),
        url: Some("https://news.example.com/a".into()),
        published_at: Some(parse_rfc3339("2026-01-08T07:43:00Z").unwrap()),
        updated_at: Some(parse_rfc3339("2026-01-08T09:43:00Z").unwrap()),
    };
    let minimal = bare_article("minimal", "H");
    assert_eq!(articles, vec![full, minimal]);
}

#[test]
fn bad_values_are_all_reported_on_their_lines() {
    let text = [
        r#"{"slug":"ok","headline":"H"}"#,
        r#"{"slug":"Bad_Slug","headline":"  "}"#,
        r#"{"slug":"b","headline":"H","isin":"INE467B01028","ticker":"T X"}"#,
        r#"{"slug":"c","headline":"H","published_at":"2026-01-08 13:13:00","updated_at":"2026-01-08T13:13:00"}"#,
        r#"{"slug":"d","headline":"H","published_at":"2026-01-08T13:13:00+05:30","updated_at":"2026-01-07T13:13:00+05:30"}"#,
        r#"{"slug":"e","headline":"H","tags":["a",""],"url":"news.example.com/e"}"#,
    ]
    .join("\n");
    assert_report(
        parse_articles(text.as_bytes()),
        "line 2: slug \"Bad_Slug\": slug must be 1 to 200 characters of a-z, 0-9 and '-'
         line 2: headline is empty
         line 3: isin: not a valid ISIN…
         line 3: ticker \"T X\" is not valid…
         line 4: published_at must be an RFC 3339 date-time with an offset…
         line 4: updated_at must be an RFC 3339 date-time with an offset…
         line 5: updated_at is before published_at
         line 6: tags[1] is empty
         line 6: url must be an http:// or https:// URL without spaces (got \"news.example.com/e\")",
    );
}

#[test]
fn duplicate_slug_names_the_earlier_line() {
    let text = "{\"slug\":\"a\",\"headline\":\"H\"}\n\n{\"slug\":\"b\",\"headline\":\"H\"}\n{\"slug\":\"a\",\"headline\":\"\"}\n";
    assert_report(
        parse_articles(text.as_bytes()),
        "line 4: duplicate slug a: it is already on line 1
         line 4: headline is empty",
    );
}

#[test]
fn unknown_field_and_bad_json_are_reported_with_their_lines() {
    let text = "{\"slug\":\"a\",\"headline\":\"H\",\"head_line\":\"x\"}\n{\"slug\":\"b\",\"headline\":\"H\"\n{\"headline\":\"H\"}\n\"just a string\"\n";
    assert_report(
        parse_articles(text.as_bytes()),
        "line 1: unknown field `head_line`, expected one of `slug`…
         line 2: not valid JSON: EOF while parsing an object…
         line 3: missing field `slug`…
         line 4: not a JSON object: each line must hold one object, {...}",
    );
}

#[test]
fn empty_file_is_a_file_error() {
    for text in ["", "\n \n", "\u{feff}"] {
        assert_eq!(parse_articles(text.as_bytes()), Err(ImportError::File("the file is empty".into())), "{text:?}");
    }
}

#[test]
fn non_utf8_is_reported_on_its_line() {
    let mut bytes = b"{\"slug\":\"a\",\"headline\":\"H\"}\n".to_vec();
    bytes.extend_from_slice(b"{\"slug\":\"b\",\"headline\":\"Caf\xE9\"}\n");
    let err = parse_articles(&bytes).unwrap_err();
    assert_eq!(err.lines(), vec![2]);
    assert!(err.to_string().starts_with("line 2: not UTF-8"));
}

#[test]
fn text_over_its_bound_is_refused_on_its_line() {
    let body = "b".repeat(200 * 1024 + 1);
    let tags: Vec<String> = (0..51).map(|i| format!("\"t{i}\"")).collect();
    let file = [
        format!(r#"{{"slug":"a","headline":"H","body":"{body}"}}"#),
        format!(r#"{{"slug":"b","headline":"{}","tags":["{}"]}}"#, "h".repeat(501), "t".repeat(65)),
        format!(r#"{{"slug":"c","headline":"H","tags":[{}]}}"#, tags.join(",")),
        format!(r#"{{"slug":"d","headline":"H","body":"{}"}}"#, "b".repeat(200 * 1024)),
    ]
    .join("\n");
    assert_report(
        parse_articles(file.as_bytes()),
        "line 1: body is 204801 bytes long; at most 204800 are allowed
         line 2: headline is 501 characters long; at most 500 are allowed
         line 2: tags[0]: tag is 65 characters long; at most 64 are allowed
         line 3: 51 tags; at most 50 are allowed",
    );
}
