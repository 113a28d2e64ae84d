//! What the import tests share: a refused file's problems and checking them
//! against what a test expects, line by line; the companies the exchanges'
//! lists give.
//!
//! Each test binary uses only some of it.

#![allow(dead_code, unreachable_pub)]

use std::fmt::Debug;

use mds_domain::{Company, Isin, MarketCapBand, Ticker};
use mds_import::ImportError;

/// The problems of a refused file as (line, message), in order; panics when
/// the file was accepted.
#[track_caller]
pub fn problems<T: Debug>(result: Result<T, ImportError>) -> Vec<(usize, String)> {
    match result {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.rows().iter().map(|r| (r.line, r.message.clone())).collect(),
    }
}

/// The line of each problem of a refused file, in order.
#[track_caller]
pub fn problem_lines<T: Debug>(result: Result<T, ImportError>) -> Vec<usize> {
    problems(result).into_iter().map(|(line, _)| line).collect()
}

/// The message of a file refused as a whole; panics on anything else.
#[track_caller]
pub fn file_error<T: Debug>(result: Result<T, ImportError>) -> String {
    match result {
        Err(ImportError::File(m)) => m,
        other => panic!("expected a file-level error, got {other:?}"),
    }
}

/// Asserts that the file was refused with exactly the problems `expected`
/// lists: one `line N: message` line each, as the refusal prints them (the
/// lines' leading white space is not part of them). A `…` stands for any text,
/// for the parts of a message that come from a library (`serde`'s lists of
/// fields) or that the test does not pin down.
#[track_caller]
pub fn assert_report<T: Debug>(result: Result<T, ImportError>, expected: &str) {
    let got: Vec<String> = match result {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.rows().iter().map(ToString::to_string).collect(),
    };
    let expected: Vec<&str> = expected.lines().map(str::trim_start).collect();
    // Each line as expected where it matches, so a failure shows only the
    // lines that differ.
    let shown: Vec<&str> =
        got.iter().enumerate().map(|(i, g)| expected.get(i).copied().filter(|e| matches(g, e)).unwrap_or(g)).collect();
    assert_eq!(shown, expected);
}

/// Whether `text` is `pattern`, each `…` of which stands for any text.
fn matches(text: &str, pattern: &str) -> bool {
    let mut parts = pattern.split('…');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else { return false };
    let mut last = None;
    for part in parts {
        if let Some(prev) = last.replace(part) {
            match rest.find(prev) {
                Some(at) => rest = &rest[at + prev.len()..],
                None => return false,
            }
        }
    }
    match last {
        None => rest.is_empty(),
        Some(last) => rest.ends_with(last),
    }
}

/// A company of the exchanges' lists: no logo, no details; `class` is its
/// (industry, sector), `bse` and `nse` where it is listed.
pub fn listed(
    ticker: &str,
    isin: &str,
    name: &str,
    class: Option<(&str, &str)>,
    bse: bool,
    nse: bool,
    band: Option<MarketCapBand>,
) -> Company {
    let (industry, sector) = class.unzip();
    Company {
        isin: Isin::parse(isin).unwrap(),
        ticker: Ticker::parse(ticker).unwrap(),
        name: name.into(),
        industry: industry.map(Into::into),
        sector: sector.map(Into::into),
        is_bse: bse,
        is_nse: nse,
        market_cap_band: band,
        logo_url: None,
        details: Default::default(),
    }
}
