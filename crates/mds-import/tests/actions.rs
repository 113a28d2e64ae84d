//! Corporate actions read from the real NSE and BSE files of
//! `data/actions/` (zstd-compressed copies of `../shared/data/actions/`).
//!
//! - `every_shape_has_a_checked_row`: for every distinct `PURPOSE` shape
//!   of the files (lower case, numbers and punctuation normalised), a real
//!   row whose actions were worked out by hand from its text ([`CASES`]).
//! - `report_of_other_rows_and_the_issue_target`: prints rows per file,
//!   actions per type and the rows read as `other` by reason and shape, and
//!   asserts issue 42's target: no EQ split, bonus, dividend, rights or
//!   buyback row of the NSE files is `other` or lacks its figures.
//! - `bajfinance_split_and_bonus_of_16_jun_2025`: the combined factor 1/10.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Instant;

use chrono::NaiveDate;
use mds_domain::actions::{Action, ActionType, CorporateAction, DividendKind};
use mds_domain::{Exchange, Isin, Ticker};
use mds_import::actions::{self, OtherReason, ParsedAction, ResolvedAction, bse, nse};

const NSE_FILES: [&str; 2] =
    ["nse_CF-CA-equities_2016-01-05_to_2025-07-18.csv", "nse_CF-CA-equities_2025-07-15_to_2026-07-15.csv"];
const BSE_FILES: [&str; 2] =
    ["bse_Corporate_Actions_2025-07-15_to_2026-07-15.csv", "bse_Corporate_Actions_2026-07-23_to_2026-08-31.csv"];

/// A real file, decompressed.
fn file(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/actions").join(format!("{name}.zst"));
    let compressed = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    zstd::decode_all(compressed.as_slice()).expect("a zstd file")
}

/// One row of either exchange, as the tests look at it.
struct Row {
    file: &'static str,
    line: usize,
    /// NSE series, `None` for BSE.
    series: Option<String>,
    purpose: String,
    face_value: Option<f64>,
    actions: Vec<ParsedAction>,
}

/// The four files, decompressed, NSE's first.
fn all_files() -> Vec<(&'static str, Vec<u8>)> {
    NSE_FILES.iter().chain(&BSE_FILES).map(|&name| (name, file(name))).collect()
}

/// Every row of the four files with its actions.
fn all_rows() -> Vec<Row> {
    rows_of(&all_files())
}

/// Every row of `files` (as [`all_files`] gives them) with its actions.
fn rows_of(files: &[(&'static str, Vec<u8>)]) -> Vec<Row> {
    let mut out = Vec::new();
    for (name, bytes) in files {
        if name.starts_with("nse") {
            for r in nse::read(bytes).unwrap_or_else(|e| panic!("{name}: {e}")) {
                let actions = actions::nse_actions(&r);
                out.push(Row {
                    file: name,
                    line: r.line,
                    series: r.series,
                    purpose: r.purpose,
                    face_value: r.face_value,
                    actions,
                });
            }
        } else {
            for r in bse::read(bytes).unwrap_or_else(|e| panic!("{name}: {e}")) {
                let actions = actions::bse_actions(&r);
                out.push(Row { file: name, line: r.line, series: None, purpose: r.purpose, face_value: None, actions });
            }
        }
    }
    out
}

/// A text's shape: lower case, runs of digits as `N` (a run of numbers,
/// such as `1.0000` or `2:1`, one `N`), anything else not a letter as one
/// space.
fn shape(text: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if c.is_ascii_alphabetic() {
            word.push(c.to_ascii_lowercase());
        } else if c.is_ascii_digit() {
            if !word.ends_with('N') {
                word.push('N');
            }
        } else if !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words.dedup_by(|b, a| a == "N" && b == "N");
    words.join(" ")
}

/// Whether a row's actions are decided by its NSE series, not its text
/// (fund and debt series: `other` whatever the text says).
fn by_series(series: Option<&str>) -> bool {
    series.is_some_and(|s| matches!(s, "IV" | "RR" | "GS") || (s.len() == 2 && s.starts_with('H')))
}

/// Actions written short: `div 5 final`, `div - none`, `split 10>2`,
/// `cons 1>10`, `bonus 1:2`, `rights 2:1 @12`, `rights - @-`, `buyback -`,
/// `demerger`, `other meeting`; several joined by `; `.
fn short(actions: &[ParsedAction]) -> String {
    let num = |v: Option<f64>| v.map_or("-".to_owned(), |v| v.to_string());
    let ratio = |a: Option<u32>, b: Option<u32>| match (a, b) {
        (Some(a), Some(b)) => format!("{a}:{b}"),
        _ => "-".to_owned(),
    };
    let kind = |k: Option<DividendKind>| k.map_or("none", |k| k.as_str());
    actions
        .iter()
        .map(|p| match &p.action {
            Action::Dividend { dividend } => format!("div {} {}", num(dividend.amount), kind(dividend.kind)),
            Action::Bonus { bonus } => format!("bonus {}", ratio(bonus.ratio_new, bonus.ratio_held)),
            Action::Split { split: f } => format!("split {}>{}", num(f.face_value_from), num(f.face_value_to)),
            Action::Consolidation { consolidation: f } => {
                format!("cons {}>{}", num(f.face_value_from), num(f.face_value_to))
            }
            Action::Rights { rights } => {
                format!("rights {} @{}", ratio(rights.ratio_new, rights.ratio_held), num(rights.price))
            }
            Action::Buyback { buyback } => format!("buyback {}", num(buyback.price)),
            Action::Demerger => "demerger".to_owned(),
            Action::Other => format!("other {}", p.reason.map_or("?", OtherReason::as_str)),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[test]
fn every_shape_has_a_checked_row() {
    let rows = all_rows();
    // Every case is a real row's text (with its face value).
    let real: BTreeSet<(&str, Option<u64>)> =
        rows.iter().map(|r| (r.purpose.as_str(), r.face_value.map(f64::to_bits))).collect();
    let mut wrong = Vec::new();
    for &(text, face_value, expected) in CASES {
        assert!(
            real.contains(&(text, face_value.map(f64::to_bits))),
            "not a row of the files: {text:?} {face_value:?}"
        );
        let got = short(&mds_import::actions::purpose::parse(text, face_value));
        if got != expected {
            wrong.push(format!("{text:?} ({face_value:?}): expected {expected:?}, got {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "{} cases read wrong:\n{}", wrong.len(), wrong.join("\n"));
    // Every shape read from the text has a case.
    let covered: BTreeSet<String> = CASES.iter().map(|c| shape(c.0)).collect();
    let mut missing: BTreeMap<String, (usize, &Row)> = BTreeMap::new();
    for r in rows.iter().filter(|r| !by_series(r.series.as_deref())) {
        let s = shape(&r.purpose);
        if !covered.contains(&s) {
            missing.entry(s).or_insert((0, r)).0 += 1;
        }
    }
    let list: Vec<String> = missing
        .iter()
        .map(|(s, (n, r))| {
            format!("{n} rows of shape {s:?}, e.g. {}:{} {:?} ({:?})", r.file, r.line, r.purpose, r.face_value)
        })
        .collect();
    assert!(list.is_empty(), "{} shapes without a case:\n{}", list.len(), list.join("\n"));
}

/// The types issue 42 names, which every EQ row of the NSE files must be
/// read as, with figures.
fn is_target_text(purpose: &str) -> bool {
    let t = purpose.to_ascii_lowercase();
    ["div", "bonus", "split", "splt", "sub-division", "right", "buy back", "buyback", "buy-back"]
        .iter()
        .any(|w| t.contains(w))
}

/// EQ rows of the NSE files that name a target type but are rightly not
/// typed with figures, each checked by hand: the text gives no figure, or
/// the instrument is not equity shares. (text, why)
const TARGET_EXCEPTIONS: &[(&str, &str)] = &[
    ("Interim Dividend", "no amount in the text"),
    ("Interim Divdend", "no amount in the text"),
    ("Annual General Meeting/Dividend - Rs  Per Share", "no amount in the text"),
    ("Annual General Meeting/Dividend - Rs  Per Sh/", "no amount in the text"),
    ("Scheme Of Arangement- Bonus - 1 Debenture For 1 Equity Share Held", "a bonus of debentures"),
    ("Scheme Of Arrangement - Bonus Ncrps 1:10", "a bonus of preference shares"),
    ("Scheme Of Arrangement - Bonus Ncrps 4:1", "a bonus of preference shares"),
    ("Bonus Ncrps 1:116", "a bonus of preference shares"),
    ("Rights:14 Compulosry Convertible Debentures For Every 15 Equity Shares", "rights to debentures"),
];

#[test]
fn report_of_other_rows_and_the_issue_target() {
    let started = Instant::now();
    let files = all_files();
    let decompressed = started.elapsed();
    let started = Instant::now();
    let rows = rows_of(&files);
    let elapsed = started.elapsed();
    let bytes: usize = files.iter().map(|f| f.1.len()).sum();
    println!("decompressed the four files ({bytes} bytes) in {:.1} ms", decompressed.as_secs_f64() * 1000.0);
    let mut per_file: BTreeMap<&str, usize> = BTreeMap::new();
    let mut per_type: BTreeMap<&str, usize> = BTreeMap::new();
    let mut other: BTreeMap<(&str, &str), BTreeMap<String, usize>> = BTreeMap::new();
    let mut misses = Vec::new();
    let mut used = BTreeSet::new();
    let mut targets = 0usize;
    for r in &rows {
        *per_file.entry(r.file).or_default() += 1;
        for a in &r.actions {
            *per_type.entry(a.action.action_type().as_str()).or_default() += 1;
        }
        if let [ParsedAction { action: Action::Other, reason: Some(reason) }] = r.actions.as_slice() {
            *other.entry((r.file, reason.as_str())).or_default().entry(shape(&r.purpose)).or_default() += 1;
        }
        let eq_nse = r.series.as_deref() == Some("EQ");
        if eq_nse && is_target_text(&r.purpose) {
            targets += 1;
        }
        if eq_nse && is_target_text(&r.purpose) && !fully_typed(&r.actions) {
            let known = TARGET_EXCEPTIONS.iter().position(|(text, _)| *text == r.purpose);
            if let Some(k) = known {
                used.insert(k);
            } else {
                misses.push(format!("{}:{} {:?} -> {}", r.file, r.line, r.purpose, short(&r.actions)));
            }
        }
    }
    println!("parsed {} rows of the four files in {:.1} ms", rows.len(), elapsed.as_secs_f64() * 1000.0);
    for (f, n) in &per_file {
        println!("rows {f}: {n}");
    }
    for (t, n) in &per_type {
        println!("actions {t}: {n}");
    }
    for ((f, reason), shapes) in &other {
        let total: usize = shapes.values().sum();
        println!("other {f} {reason}: {total} rows");
        let mut by_count: Vec<_> = shapes.iter().collect();
        by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        for (s, n) in by_count.iter().take(8) {
            println!("    {n:>5}  {s}");
        }
        if by_count.len() > 8 {
            println!("    ... and {} more shapes", by_count.len() - 8);
        }
    }
    let excepted = rows
        .iter()
        .filter(|r| r.series.as_deref() == Some("EQ") && TARGET_EXCEPTIONS.iter().any(|(t, _)| *t == r.purpose))
        .count();
    println!(
        "NSE EQ rows naming a dividend, bonus, split, rights or buyback: {targets}; typed with figures: {}; hand-listed exceptions: {excepted}",
        targets - excepted - misses.len()
    );
    assert_eq!(used.len(), TARGET_EXCEPTIONS.len(), "an exception matches no row: {used:?}");
    assert!(misses.is_empty(), "{} EQ target rows not typed with figures:\n{}", misses.len(), misses.join("\n"));
    assert_eq!(per_file.values().sum::<usize>(), 21_246 + 1_977 + 2_519 + 338);
}

/// Typed (no `other`) with every figure the type has (a rights price may
/// be null: it needs a face value and a premium).
fn fully_typed(actions: &[ParsedAction]) -> bool {
    actions.iter().all(|a| match &a.action {
        Action::Dividend { dividend } => dividend.amount.is_some(),
        Action::Bonus { bonus } => bonus.ratio_new.is_some() && bonus.ratio_held.is_some(),
        Action::Split { split: f } | Action::Consolidation { consolidation: f } => {
            f.face_value_from.is_some() && f.face_value_to.is_some()
        }
        Action::Rights { rights } => rights.ratio_new.is_some() && rights.ratio_held.is_some(),
        Action::Buyback { .. } | Action::Demerger => true,
        Action::Other => false,
    })
}

#[test]
fn bajfinance_split_and_bonus_of_16_jun_2025() {
    let day = NaiveDate::from_ymd_opt(2025, 6, 16).unwrap();
    let isin = Isin::parse("INE296A01024").unwrap();
    let rows = nse::read(&file(NSE_FILES[0])).unwrap();
    let resolved: Vec<ResolvedAction> = rows
        .iter()
        .filter(|r| r.symbol.as_str() == "BAJFINANCE" && r.ex_date == day)
        .flat_map(|r| {
            actions::nse_actions(r).into_iter().map(|p| ResolvedAction {
                isin: isin.clone(),
                symbol: Ticker::parse("BAJFINANCE").unwrap(),
                source: Exchange::Nse,
                action: p.action,
                ex_date: r.ex_date,
                record_date: r.record_date,
                purpose: r.purpose.clone(),
            })
        })
        .collect();
    let merged = actions::merge(resolved);
    let of = |t: ActionType| merged.actions.iter().find(|a| a.action.action_type() == t).unwrap();
    assert_eq!(merged.actions.len(), 2);
    let (split, bonus) = (of(ActionType::Split), of(ActionType::Bonus));
    assert_eq!(split.factor, Some(0.5));
    assert_eq!(bonus.factor, Some(0.2));
    let factor: f64 = merged.actions.iter().map(|a| a.factor.unwrap()).product();
    assert!((factor - 0.1).abs() < 1e-12, "{factor}");
    // The wire form of both, and back.
    for a in &merged.actions {
        let json = serde_json::to_string(a).unwrap();
        assert_eq!(&serde_json::from_str::<CorporateAction>(&json).unwrap(), a);
    }
    let json = serde_json::to_value(split).unwrap();
    assert_eq!(json["split"]["face_value_from"], 2.0);
    assert_eq!(json["split"]["face_value_to"], 1.0);
    assert_eq!(json["purpose"], "Face Value Split (Sub-Division) - From Rs 2/- Per Share To Re 1/- Per Share");
}

#[test]
fn overlapping_nse_files_merge_into_one_action_each() {
    // The two NSE files overlap on 2025-07-15..18 (73 rows each; CAMS and
    // KOTAKBANK differ only in FACE VALUE): read twice, each symbol's
    // actions are those of one file, every one a repeat.
    let a = nse::read(&file(NSE_FILES[0])).unwrap();
    let b = nse::read(&file(NSE_FILES[1])).unwrap();
    let (from, to) = (NaiveDate::from_ymd_opt(2025, 7, 15).unwrap(), NaiveDate::from_ymd_opt(2025, 7, 18).unwrap());
    // A stand-in ISIN (resolution is the caller's), one symbol at a time.
    let isin = Isin::parse("INE296A01024").unwrap();
    let resolved = |rows: &[nse::NseActionRow], symbol: &Ticker| -> Vec<ResolvedAction> {
        rows.iter()
            .filter(|r| (from..=to).contains(&r.ex_date) && &r.symbol == symbol)
            .flat_map(|r| {
                actions::nse_actions(r).into_iter().map(|p| ResolvedAction {
                    isin: isin.clone(),
                    symbol: r.symbol.clone(),
                    source: Exchange::Nse,
                    action: p.action,
                    ex_date: r.ex_date,
                    record_date: r.record_date,
                    purpose: r.purpose.clone(),
                })
            })
            .collect()
    };
    let symbols: BTreeSet<Ticker> =
        a.iter().filter(|r| (from..=to).contains(&r.ex_date)).map(|r| r.symbol.clone()).collect();
    assert!(symbols.len() > 40, "{}", symbols.len());
    for symbol in &symbols {
        let (first, second) = (resolved(&a, symbol), resolved(&b, symbol));
        let once = actions::merge(first.clone());
        let twice = actions::merge(first.into_iter().chain(second.clone()));
        assert_eq!(twice.actions, once.actions, "{symbol}");
        assert_eq!(twice.repeats, second.len() + once.repeats, "{symbol}");
        assert_eq!(twice.across_exchanges, 0);
    }
}

/// One real row per shape: (PURPOSE as in the file, trimmed; its FACE VALUE;
/// the actions worked out by hand from the text, in [`short`] form).
const CASES: &[(&str, Option<f64>, &str)] = &[
    ("Annual General Meeting", Some(5.0), "other meeting"),
    ("Annual General Meeting/Dividend - Rs 3.70 Per Share", Some(2.0), "div 3.7 none"),
    ("Interim Dividend - Rs 5.50/- Per Share", Some(1.0), "div 5.5 interim"),
    ("Dividend - Rs 6/- Per Share", Some(10.0), "div 6 none"),
    ("Final Dividend - Rs. - 2.0000", None, "div 2 final"),
    ("Annual General Meeting/ Dividend - Re 0.30/- Per Share", Some(1.0), "div 0.3 none"),
    ("Dividend - Re 0.85/- Per Share", Some(1.0), "div 0.85 none"),
    ("Interim Dividend  - Re 0.20/- Per Share", Some(1.0), "div 0.2 interim"),
    ("Interim Dividend - Rs. - 11.0000", None, "div 11 interim"),
    ("Bonus 1:2", Some(10.0), "bonus 1:2"),
    ("Interim Dividend - Rs 5/- Per Share (Purpose Revised)", Some(2.0), "div 5 interim"),
    ("Rights 1:4 @ Premium Rs 282/-", Some(10.0), "rights 1:4 @292"),
    ("Face Value Split (Sub-Division) - From Rs 10/- Per Share To Rs 5/- Per Share", Some(5.0), "split 10>5"),
    ("Buy Back", Some(1.0), "buyback -"),
    ("Extra Ordinary General Meeting", Some(10.0), "other meeting"),
    ("Dividend - Rs. - 11.0000", None, "div 11 none"),
    ("Face Value Split (Sub-Division) - From Rs 5/- Per Share To Re 1/- Per Share", Some(1.0), "split 5>1"),
    ("Buyback", Some(10.0), "buyback -"),
    ("Interim Dividend -  Re 1/- Per Share (Purpose Revised)", Some(1.0), "div 1 interim"),
    ("Bonus issue 1:1", None, "bonus 1:1"),
    ("Right Issue of Equity Shares", None, "rights - @-"),
    ("Interim Dividend - Rs 2.85 Per Sh", Some(1.0), "div 2.85 interim"),
    ("Demerger", Some(10.0), "demerger"),
    ("Stock  Split From Rs.10/- to Rs.1/-", None, "split 10>1"),
    (
        "Annual General Meeting/ Dividend - Rs 25/- Per Share + Special Dividend - Rs 5/- Per Share",
        Some(10.0),
        "div 25 none; div 5 special",
    ),
    ("Income Distribution (InvIT)", None, "other fund"),
    ("Dividend Rs 15 Per Sh", Some(1.0), "div 15 none"),
    ("Annual General Meeting/Dividend Rs 7.50 Per Sh", Some(2.0), "div 7.5 none"),
    ("Special Dividend - Rs 3.25/- Per Share", Some(10.0), "div 3.25 special"),
    ("Dividend-Rs 3/- Per Share + Special Dividend Rs 7/- Per Share", Some(2.0), "div 3 none; div 7 special"),
    (
        "Interim Dividend Rs 15.50 Per Share + Special Dividend Rs 4/- Per Share",
        Some(10.0),
        "div 15.5 interim; div 4 special",
    ),
    ("Special Dividend - Rs. - 3.0000", None, "div 3 special"),
    ("Buy Back Of Shares", Some(10.0), "buyback -"),
    ("Scheme Of Arrangement", Some(10.0), "other restructuring"),
    ("Income Distribution REITs", None, "other fund"),
    ("Annual General Meeting/ Dividend -Rs 2/- Per Share (Purpose Revised)", Some(1.0), "div 2 none"),
    ("Interim Dividend - Re 1 Per Sh", Some(10.0), "div 1 interim"),
    ("Dividend Re 1 Per Sh", Some(2.0), "div 1 none"),
    ("Interim Dividend", Some(1.0), "div - interim"),
    ("Annual General Meeting (Book Closure Dates Revised)", Some(10.0), "other meeting"),
    ("Extraordinary General Meeting", Some(1.0), "other meeting"),
    ("Annual General Meeting (Date Revised)", Some(10.0), "other meeting"),
    ("Resolution Plan -Suspension", None, "other restructuring"),
    ("Annual General Meeting And Dividend Rs.2.50 Per Share", Some(10.0), "div 2.5 none"),
    ("Spin Off", None, "demerger"),
    (
        "Annual General Meeting/Final Dividend - Rs 7/- Per Share/Special Dividend - Rs 5/- Per Share",
        Some(2.0),
        "div 7 final; div 5 special",
    ),
    ("Annual General Meetingdividend - Rs 1.10 Per Share", Some(10.0), "div 1.1 none"),
    ("Rights  1:1 @ Premium Rs 4.50 Per Share", Some(10.0), "rights 1:1 @14.5"),
    ("Annual General Meeting/ Dividend - Re  0.20 Per Sh", Some(1.0), "div 0.2 none"),
    ("Fv Splt Frm Rs 10 To Rs 2", Some(2.0), "split 10>2"),
    (
        "Annual General Meeting/Dividend - Rs 3/- Per Share/Special Dividend Re 1/- Per Share",
        Some(5.0),
        "div 3 none; div 1 special",
    ),
    (
        "Bonus 4:1/Face Value Split (Sub-Division) - From Rs 10/- Per Share To Rs 5/- Per Share",
        Some(1.0),
        "bonus 4:1; split 10>5",
    ),
    ("Annual General Meeting (Book Closure Start Date Revised)", Some(10.0), "other meeting"),
    ("Annual General Meetingdividend Re 0.20 Per Share", Some(2.0), "div 0.2 none"),
    ("Rights 2:5 @ Premium Re 0.85/-", Some(1.0), "rights 2:5 @1.85"),
    ("Final Dividend - Rs 1.20/- Per Share", Some(2.0), "div 1.2 final"),
    (
        "Annual General Meeting/ Dividend - Re 0.75/- Per Share (Book Closure Dates Revised)",
        Some(10.0),
        "div 0.75 none",
    ),
    ("Face Value Split From Rs 10 To Re 1", Some(1.0), "split 10>1"),
    ("Special Interim Dividend Rs 12/- Per Share", Some(10.0), "div 12 special"),
    ("Bonus 1:2/ Dividend - Rs 1.10 Per Share", Some(10.0), "bonus 1:2; div 1.1 none"),
    ("Reduction of Capital", None, "other restructuring"),
    ("Amalgamation", None, "other restructuring"),
    ("Rights 2:7", Some(2.0), "rights 2:7 @-"),
    (
        "Interim Dividend Rs 3/- Per Share + Special Dividend Rs 1.25/- Per Share (Purpose Revised)",
        Some(2.0),
        "div 3 interim; div 1.25 special",
    ),
    ("Annual Book Closure", Some(10.0), "other meeting"),
    ("Annual General Meeting And Dividend Re.1/- Per Share", Some(1.0), "div 1 none"),
    ("Annual General Meeting/Dividend Re 1/- Per Share (Book Closure Start Date Revised)", Some(10.0), "div 1 none"),
    ("Annual General Meeting/Dividend - Re 0.50 Per Share (Purpose Revised)", Some(5.0), "div 0.5 none"),
    ("Fv Splt Frm Rs 10 To Re 1", Some(1.0), "split 10>1"),
    ("Interm Dividend Rs 1.50 Per Share", Some(2.0), "div 1.5 interim"),
    ("Annual General Meeting/Dividend - 0.40 Per Share", Some(1.0), "div 0.4 none"),
    ("Annual General Meeting/Dividend - Re 1/- Per Share (Date Revised)", Some(10.0), "div 1 none"),
    ("Annual General Meeting/Dividend Rs 2.70/-", Some(10.0), "div 2.7 none"),
    ("Int Dividend - Rs 1.18 Per Share", Some(10.0), "div 1.18 interim"),
    ("Buyback Of Shares", Some(10.0), "buyback -"),
    (
        "Final Dividend - Rs 25/- Per Share + Special Dividend - Rs 22/- Per Share",
        Some(10.0),
        "div 25 final; div 22 special",
    ),
    ("Annual General Meeting/ Interim Dividend - Rs 1.50/- Per Share", Some(2.0), "div 1.5 interim"),
    ("Scheme Of Demerger", Some(10.0), "demerger"),
    ("Face Value Split From Rs 10/- Per Share To Rs 2/- Per Share", Some(2.0), "split 10>2"),
    ("Dividend - Rs 2 Per Share/Special Dividend Re 0.50 Per Share", Some(10.0), "div 2 none; div 0.5 special"),
    ("Annual General Meeting / Dividend- Rs 7.50 Per Share (Date Revised)", Some(10.0), "div 7.5 none"),
    ("Int Div Rs 4 Per Sh", Some(1.0), "div 4 interim"),
    (
        "Annual General Meeting/Dividend - Rs 120 Per Share Special Dividend 155 Per Share",
        Some(10.0),
        "div 120 none; div 155 special",
    ),
    ("Annual General Meeting/Dividend - Rs  Per Share", Some(1.0), "div - none"),
    ("Special Dividend - Rs 3/- Per Share (Purpose Revised)", Some(1.0), "div 3 special"),
    ("Annual General Meeting/Dividend - Rs 7.50/- Per Share (Book Closure Dates Revised)", Some(10.0), "div 7.5 none"),
    ("Face Value Split From Rs 10 To Rs 2", Some(2.0), "split 10>2"),
    ("Annual General Meeting/ Interim Dividend - Re 1/- Per Share (Purpose Revised)", Some(1.0), "div 1 interim"),
    ("Dividend-Rs.1.30/- Per Share (Book Closure Dates Revised)", Some(1.0), "div 1.3 none"),
    ("Annual General Meeting (Book Closure End Date Revised)", Some(10.0), "other meeting"),
    ("Interim Dividend - Rs 1.90 Per Share (Record Date  Revised)", Some(2.0), "div 1.9 interim"),
    ("Special Dividend - Re 1/- Per Share", Some(5.0), "div 1 special"),
    ("Interim Dividend - 14.50 Per Share", Some(10.0), "div 14.5 interim"),
    ("Dividend", None, "div - none"),
    ("Dividend Rs - 1.30 Per Share (Date Revised)", Some(1.0), "div 1.3 none"),
    ("Annual General Meeting/Dividend - Rs 2 Per Equity Share", Some(5.0), "div 2 none"),
    ("Dividend - Rs 106 Per Share Special Dividend 243 Per Share", Some(10.0), "div 106 none; div 243 special"),
    (
        "Annual General Meeting/Dividend - Rs 107 Per Share And Special Dividend - Rs 143 Per Share",
        Some(10.0),
        "div 107 none; div 143 special",
    ),
    ("Interim Dividend - Re 1 Per Share/ Special Dividend - Rs 2 Per Share", Some(1.0), "div 1 interim; div 2 special"),
    (
        "Annual General Meeting/Special Dividend - Rs 15 Per Share/Dividend - Rs 15 Per Share",
        Some(5.0),
        "div 15 special; div 15 none",
    ),
    ("Dividend - Rs1.50  Per Share", Some(1.0), "div 1.5 none"),
    ("Consolidation of Shares", None, "cons ->-"),
    ("Interim Dividend Rs 11.50 Per Share (Purposed Revised)", Some(1.0), "div 11.5 interim"),
    ("Interim Dividend -  Rs 4/- Share", Some(5.0), "div 4 interim"),
    ("Scheme Of Arrangement & Reconstruction", Some(2.0), "other restructuring"),
    (
        "Annual General Meeting/ Final Dividend - Rs 7/- + Special Dividend -Rs 3/- Per Share",
        Some(1.0),
        "div 7 final; div 3 special",
    ),
    // "Interest" for "Interim": a dividend of a share, read as interim
    ("Interest Dividend - Re 0.30/- Per Share", Some(10.0), "div 0.3 interim"),
    (
        "Interim Dividend - Rs 3/- Per Share + Special Dividend -  Re 0.20 Per Share (Purpose Revised)",
        Some(2.0),
        "div 3 interim; div 0.2 special",
    ),
    (
        "Interim Dividend Re 0.80/- Per Share + Special Dividend Re 0.40/- Per Share",
        Some(2.0),
        "div 0.8 interim; div 0.4 special",
    ),
    ("Interim Dividend - Rs 1.20/- Per Share (Purppose Revised)", Some(10.0), "div 1.2 interim"),
    ("Annual General Meeting/ Final Dividend - Rs 5/- Per Share", Some(10.0), "div 5 final"),
    ("Dividend Rs 14.30 Per Share (Purpose Revised)", Some(10.0), "div 14.3 none"),
    (
        "Annual General Meeting/Final Dividend- Rs 18.50/- Per Share + Interim Dividend -Rs 12/- Per Share (Purpose Revised)",
        Some(1.0),
        "div 18.5 final; div 12 interim",
    ),
    ("Annual General Meeting/Divided - Rs 35/- Per Share", Some(10.0), "div 35 none"),
    (
        "Annual General Meeting/Final Dividend Rs.20/- Per Share And Special Dividend Rs.50/- Per Share",
        Some(10.0),
        "div 20 final; div 50 special",
    ),
    ("Annual Genral Meeting/Dividend Rs 2.45 Per Share", Some(10.0), "div 2.45 none"),
    ("Anual General Meeting", Some(1.0), "other meeting"),
    ("Annual General Meeting (Bc Dates Revised)", Some(5.0), "other meeting"),
    ("Annul General Meeting", Some(10.0), "other meeting"),
    ("Rights 1:2@Prem Rs 40", Some(10.0), "rights 1:2 @50"),
    ("Anuual General Meeting", Some(1.0), "other meeting"),
    ("Annual General Meeing", Some(2.0), "other meeting"),
    ("Dividend - 2.50 Per Share", Some(2.0), "div 2.5 none"),
    ("Rights 1:28 @ Prem Rs 67/- Per Share", Some(1.0), "rights 1:28 @68"),
    (
        "Bonus 1:1/Face Value Split (Sub-Division) - From Rs 10/- Per Share To Re 1/- Per Share",
        Some(1.0),
        "bonus 1:1; split 10>1",
    ),
    ("Face Value Split From Rs 10/- Per Share To Re 1/- Per Share", Some(1.0), "split 10>1"),
    ("Special Interim Dividend Rs 27.50 Per Share (Purpose Revised)", Some(2.0), "div 27.5 special"),
    (
        "Annual General Meeting/Dividend - Re 1.50 Per Share/Special Dividend Re 0.25 Per Share",
        Some(1.0),
        "div 1.5 none; div 0.25 special",
    ),
    ("Annual General Meetin/Dividend - Rs 1.70 Per Share", Some(10.0), "div 1.7 none"),
    (
        "Annual General Meeting/Dividend - Rs 1.80 Per Share (Book Closure Start Date Revised)",
        Some(10.0),
        "div 1.8 none",
    ),
    ("Annual General Meeting/Div-Re 0.85 Per Share", Some(1.0), "div 0.85 none"),
    ("Annual General Meeting /Interim Dividend - Re 0.50 Per Share", Some(10.0), "div 0.5 interim"),
    ("Annual General Meeting/Dividend - Re 0.05", Some(10.0), "div 0.05 none"),
    ("Scheme Of Amalgamation", Some(10.0), "other restructuring"),
    ("Annual General Meeting/Dividend- Re0.30 Per Share", Some(10.0), "div 0.3 none"),
    ("Interim Div - Rs 3 Per Share", Some(10.0), "div 3 interim"),
    ("Composite Scheme Of Arrangement", Some(1.0), "other restructuring"),
    ("Adjourned Annual General Meeting", Some(10.0), "other meeting"),
    ("Interim Dividend Rs - Rs 1.70 Per Share", Some(10.0), "div 1.7 interim"),
    (
        "Interim Dividend - Rs 41 Per Share And Special Dividend - Rs 70 Per Share",
        Some(10.0),
        "div 41 interim; div 70 special",
    ),
    ("Dividend Rs -3.5/Special Dividend Rs 2.5 Per Share", Some(2.0), "div 3.5 none; div 2.5 special"),
    ("Scheme Of Arangement- Bonus - 1 Debenture For 1 Equity Share Held", Some(1.0), "other not_shares"),
    ("Special Dividend - Rs 12.5 Per Sh", Some(10.0), "div 12.5 special"),
    ("Dividend Rs 25 Per Eq Sh", Some(10.0), "div 25 none"),
    ("Interim Dividend - Rs 3 Per Share Special Dividend - Re 1 Per Share", Some(2.0), "div 3 interim; div 1 special"),
    ("Dividend - Rs  1.50 Per Share And Special Dividend - Rs 2. Per Share", Some(5.0), "div 1.5 none; div 2 special"),
    ("Rights 1:50 @ Premium Rs 175  With 6 Warrants For 50 Equity Shares", Some(5.0), "rights 1:50 @180"),
    ("Interim Divdend - Rs 7.60 Per Share", Some(10.0), "div 7.6 interim"),
    ("Rights Issue 4:17@ Premium Rs 390/-", Some(1.0), "rights 4:17 @391"),
    ("Dividend - Re 0.85 Per Share/ Special Dividend - Re 0.70 Per Share", Some(1.0), "div 0.85 none; div 0.7 special"),
    ("Scheme Of Arrangement - Bonus Ncrps 1:10", Some(2.0), "other not_shares"),
    ("Face Value Split (Sub-Division) - From Rs10/- Per Share To Rs 5/- Per Share", Some(5.0), "split 10>5"),
    ("Capital Reduction", Some(10.0), "other restructuring"),
    ("Dividend - Rs 160 Per Share & Special Dividend - Rs 375", Some(10.0), "div 160 none; div 375 special"),
    ("Final Dividend Rs 6/- Plus Special Dividend Rs 4/- Per Share", Some(2.0), "div 6 final; div 4 special"),
    ("Interim Dividend Re 0.60 Per Share (Purposed Revised)", Some(2.0), "div 0.6 interim"),
    ("Interim Dividend - Rs 5/- Pe R Share", Some(2.0), "div 5 interim"),
    ("Iinterim Dividend Rs 21/- Per Share (Purpose Revised)", Some(5.0), "div 21 interim"),
    (
        "Interim Dividend - Re 1/- Per Share / Special Dividend - Re 1/- Per Share (Purpose Revised)",
        Some(1.0),
        "div 1 interim; div 1 special",
    ),
    (
        "Interim Dividend - Rs 3/- Per Share + Special Dividend - Rs 2.50/- Per Share (Purpse Revised)",
        Some(2.0),
        "div 3 interim; div 2.5 special",
    ),
    (
        "Interim Dividend Rs 5.75/- + Special Dividend - Rs 1.25/- Per Share (Purpose Revised)",
        Some(5.0),
        "div 5.75 interim; div 1.25 special",
    ),
    ("Rights 5: 116 At Premium Rs 244/- Per Share", Some(1.0), "rights 5:116 @245"),
    (
        "Interim Dividend  - Rs 8/- Per Share And Special Dividend - Rs 10/- Per Share ((Purpose Revised)",
        Some(2.0),
        "div 8 interim; div 10 special",
    ),
    ("Interim Dividend - Rs 12/- Per Share (Pupose Revised)", Some(10.0), "div 12 interim"),
    (
        "Interim Dividend - Re 1/- Per Share + Additional Dividend -  Re 1/- Per Share (Purpose Revised)",
        Some(5.0),
        "div 1 interim; div 1 none",
    ),
    (
        "Interim Div - Rs 6/- Per Share + Face Value Split (Sub-Division) - From Rs 10/- Per Share To Re 1/- Per Share",
        Some(1.0),
        "div 6 interim; split 10>1",
    ),
    ("Capital Reduction -  From Rs 10/- To Rs 4/- Per Share", Some(10.0), "other restructuring"),
    ("Composite Scheme Of Amalgamation And Arrangement", Some(10.0), "other restructuring"),
    ("Interim Dividend - S 5/- Per Share (Purpose Revised)", Some(5.0), "div 5 interim"),
    ("Scheme Of Arrangement In The Nature Of Demerger", Some(10.0), "demerger"),
    ("Agm/Dividend - Rs 4/- Per Share", Some(10.0), "div 4 none"),
    // the special 2 is included in the 8.50
    ("Dividend-Rs.8.50 Per Share (Including Special Dividend Of Rs.2/- Per Share).", Some(1.0), "div 8.5 none"),
    ("Annual General Meeting And Final Dividend Rs.14.25 Per Share", Some(5.0), "div 14.25 final"),
    ("Annual General Meeing/ Dividend - Rs 2.30/- Per Share", Some(2.0), "div 2.3 none"),
    ("Sheme Of Arrangement", Some(2.0), "other restructuring"),
    ("Annul General Meeting/ Dividend - Rs 5.30/- Per Share", Some(1.0), "div 5.3 none"),
    ("Annua General Meeting", Some(2.0), "other meeting"),
    ("Final Dividend - Rs 15/- And Special Dividend  - Rs. 18/-", Some(10.0), "div 15 final; div 18 special"),
    ("Annual General Meeting/ Divdend - Re 0.50/- Per Share", Some(5.0), "div 0.5 none"),
    ("Agm/Div-Rs 1.10/- Per Share", Some(1.0), "div 1.1 none"),
    ("Annual General Meeting/ Special Dividend -Rs 3.50/- Per Share", Some(2.0), "div 3.5 special"),
    ("Annual Gemeral Meeting", Some(1.0), "other meeting"),
    (
        "Annual General Meeting/ Dividend - Rs 12.50/- Per Share + Interim Dividend - Rs 11.50 Per Share (Purpose Revised)",
        Some(5.0),
        "div 12.5 none; div 11.5 interim",
    ),
    ("Annual Genral Meeting/ Dividend - Re 0.20/- Per Share", Some(1.0), "div 0.2 none"),
    ("Dividend - Re 0.70/- Per Share/ Right 26:151", Some(1.0), "div 0.7 none; rights 26:151 @-"),
    ("1st Interim Dividend Rs.5/- Per Share (Purpose Revised)", Some(2.0), "div 5 interim"),
    ("Annnual General Meeting", Some(2.0), "other meeting"),
    ("Annual General Meeting/ Dividend - Rs 2/- Per Share (Book Closure End Date Revised)", Some(5.0), "div 2 none"),
    ("Buy Back/Interim Dividend - Re 0.25 Per Share", Some(5.0), "buyback -; div 0.25 interim"),
    (
        "Annual General Meeting/Final Dividend Rs.2/- Per Share And One Time Special Dividend Rs.0.50/- Per Share",
        Some(2.0),
        "div 2 final; div 0.5 special",
    ),
    (
        "Annual Genaral Meeting/ Dividend - Re 0.50/- Per Share (Book Closure Start Date Revised)",
        Some(2.0),
        "div 0.5 none",
    ),
    ("Agm/Dividend - Re 0.20/- Per Share", Some(2.0), "div 0.2 none"),
    ("Annual General Meetingagm", Some(2.0), "other meeting"),
    ("Annual General Meeting/ Divided - Re 0.50/- Per Share", Some(10.0), "div 0.5 none"),
    ("Anual General Meeting/ Dividend -Rs 1.10/- Per Share", Some(10.0), "div 1.1 none"),
    ("Aannual General Meeting/Dividend - 1.40 Per Share", Some(10.0), "div 1.4 none"),
    ("Annual General Meeting (Book Closure Date Revised)", Some(2.0), "other meeting"),
    ("Annual General Meeting/Final Dividend - Re 0.20 Per Share (Purpose Revised)", Some(1.0), "div 0.2 final"),
    ("Annual Genral Meeting", Some(10.0), "other meeting"),
    ("Annual General Meeting/ Dividend -  Re.1/- Per Share (Bokk Closure Dates Revised)", Some(2.0), "div 1 none"),
    ("Annual General Meeeting", Some(10.0), "other meeting"),
    ("Annaul General Meeting", Some(5.0), "other meeting"),
    ("Annual Closing", Some(10.0), "other meeting"),
    ("Annual Book Closing", Some(10.0), "other meeting"),
    ("Buy Back Of Share", Some(1.0), "buyback -"),
    ("Third Interim Dividend Rs 7/- Per Share (Purpose Revised)", Some(1.0), "div 7 interim"),
    ("Intrim Dividend  - Rs 1.25 Per Share", Some(5.0), "div 1.25 interim"),
    ("Interim Dividend Rs 11/- + Special Dividend Rs 7.50 Per Share", Some(2.0), "div 11 interim; div 7.5 special"),
    ("Interim Dividend Rs 10/- Per Share (Purose Revised)", Some(5.0), "div 10 interim"),
    ("Interim Dividend Rs 4/- Per Hare (Purpose Revised)", Some(10.0), "div 4 interim"),
    ("Int Div Re 0.40 Per Share", Some(2.0), "div 0.4 interim"),
    ("Bonus 1:1/Interim Dividend Rs 2/- Per Share (Purpose Revised)", Some(10.0), "bonus 1:1; div 2 interim"),
    ("Interim Dividend Re 1/- Share", Some(1.0), "div 1 interim"),
    ("Interim Dividend Rs 2/- Per Share (Purpose And Record Date Revised)", Some(10.0), "div 2 interim"),
    ("Int Div Re 1/- Per Share (Purpose Revised)", Some(10.0), "div 1 interim"),
    ("Interim Dividend Rs 5/- Per Equity Share (Purpose Revised)", Some(10.0), "div 5 interim"),
    (
        "Annual General Meeting/Dividend - Rs 23/- Per Share/Interim Dividend -Rs 15/- Per Share",
        Some(1.0),
        "div 23 none; div 15 interim",
    ),
    ("Annual General Meeting/Dividend-Rs 4.50 Per Share (Bc Start Date Revised)", Some(5.0), "div 4.5 none"),
    ("Buyback/Interim Dividend Rs 6/- Per Share (Purpose Revised)", Some(2.0), "buyback -; div 6 interim"),
    ("Annual General Meeting/Dividend-Rs 11/- Per Share (Revised)", Some(10.0), "div 11 none"),
    ("Inteim Dividend Rs 1.25 Per Share", Some(1.0), "div 1.25 interim"),
    (
        "Annual General Meeting/Final Dividend Rs 2.50 + Special Dividend Re 0.50 Per Share",
        Some(1.0),
        "div 2.5 final; div 0.5 special",
    ),
    ("Annual General Meeting/Dividend - Rs 2.50 Per Share/Bonus 1:10 (Revised)", Some(2.0), "div 2.5 none; bonus 1:10"),
    ("Annual General Meetin/Dividend - Rs 3.50 Per Share (Purpose Revised)", Some(10.0), "div 3.5 none"),
    ("Annual General Meeting/Dividend - Rs 6/- Per Shre", Some(2.0), "div 6 none"),
    ("Annula General Meeting/Dividend - Re 1/- Per Share", Some(1.0), "div 1 none"),
    ("Annual General Meeting/Div-Rs 1.75 Per Share", Some(1.0), "div 1.75 none"),
    ("Annal General Meeting/Dividend - Rs 2.80 Per Share", Some(8.0), "div 2.8 none"),
    (
        "Annual General Meeting/Divided - Rs 3.50 Per Share/Special Dividend - Rs 1.50 Per Share",
        Some(10.0),
        "div 3.5 none; div 1.5 special",
    ),
    // "Ividend"
    ("Annual General Meeing/Ividend - Rs 6 Per Share", Some(2.0), "div 6 none"),
    ("Annual General Meeting/Dividend - Re 1/-Er Share", Some(1.0), "div 1 none"),
    ("Annaul General Meeting (Book Closure Dates Revised)", Some(1.0), "other meeting"),
    ("Annua General Meeting/Dividend-Re 1/- Per Share", Some(10.0), "div 1 none"),
    ("Interm Dividend - Re 1/- Per Share", Some(2.0), "div 1 interim"),
    (
        "Annual General Meeting/Dividend - Rs 10 Per Share/Face Value Split (Sub-Division) - From Rs 10/- Per Share To Re 1/- Per Share (Purpose Revised)",
        Some(1.0),
        "div 10 none; split 10>1",
    ),
    (
        "Annual General Meeting/Dividend - Re 1/- Per Share/ Interim Dividend Re 1/- Per Share (Purpose Revised)",
        Some(2.0),
        "div 1 none; div 1 interim",
    ),
    (
        "Annual General Meeting/Face Value Split (Sub-Division) - From Rs 10/- Per Share To Re 1/- Per Share",
        Some(1.0),
        "split 10>1",
    ),
    ("Annual General Meetin", Some(1.0), "other meeting"),
    ("Annual General Meeting/Dividend - Re 0.10 Per Share(Dates Revised)", Some(1.0), "div 0.1 none"),
    ("Annual General Meeting- Re 0.85 Per Share (Purpose Revised)", Some(10.0), "other meeting"),
    ("Annual General Meting", Some(10.0), "other meeting"),
    ("Annual General Meeting/Dividend - Rs 3/- Per Share (Book Closure Date Revised)", Some(10.0), "div 3 none"),
    ("Int Div - Rs 4/- Per Share (Purpose Revised)", Some(1.0), "div 4 interim"),
    ("Annualgeneral Meeting", Some(2.0), "other meeting"),
    (
        "Rights - 4:25 Fully Paid Up Shares @ Premium Rs 500/- Per Share / 2:25 Partly Paid Up Shares @ Premium Rs 605/- Per Share",
        Some(1.0),
        "rights 4:25 @501; rights 2:25 @606",
    ),
    ("Extra-Oirdinary General Meeting", Some(10.0), "other meeting"),
    ("Interim Dividend Rs 16.50 Per Share (Purpose And Date Revised)", Some(10.0), "div 16.5 interim"),
    ("Interim Dividend - Rs2.50 Per Share (Purpose Revised)", Some(5.0), "div 2.5 interim"),
    ("Interim Dividend Rs 6/- Per Share 9purpose Revised)", Some(2.0), "div 6 interim"),
    ("Interim Dividend - Rs 5 Per Share (Record Date Updated)", Some(10.0), "div 5 interim"),
    ("Inerim Dividend- Rs 2.70 Per Share", Some(1.0), "div 2.7 interim"),
    (
        "Interim Dividend- Rs 3 Per Share / Rights 1:16 @ Premium Rs 554 Per Share",
        Some(1.0),
        "div 3 interim; rights 1:16 @555",
    ),
    ("Meeting Of Equity Shareholders", Some(2.0), "other meeting"),
    (
        "Annual General Meeting/ Final Dividend Rs 20.50 Per Shar/ Special Dividend - Rs 10 Per Share",
        Some(5.0),
        "div 20.5 final; div 10 special",
    ),
    ("Annual General Meeting/ Change In Registrar And Transfer Agent", Some(1.0), "other unrecognised"),
    ("Dividend Re - Re 1 Per Share", Some(10.0), "div 1 none"),
    ("Dividend- Re 6 Per Share (Rate Revised)", Some(1.0), "div 6 none"),
    (
        "Annual General Meeting/Final Dividend Rs 1.50 Per Share/Special Dividend Re 0.50 Per Share",
        Some(10.0),
        "div 1.5 final; div 0.5 special",
    ),
    (
        "Annual General Meeting/Final Dividend- Re 0.40 Per Share/ Special Dividend- Re 0.60 Per Share (Purpose Revised)",
        Some(1.0),
        "div 0.4 final; div 0.6 special",
    ),
    ("Int Div- 2 Per Share (Purpose Revised)", Some(2.0), "div 2 interim"),
    (
        "Annual General Meeting/Final Dividend- Rs 15 Per Share/ Special Dividend- 35 Per Share",
        Some(10.0),
        "div 15 final; div 35 special",
    ),
    (
        "Annual General Meeting/Interim Dividend- Re 0.50 Per Share(Date And Purpose Revised)",
        Some(10.0),
        "div 0.5 interim",
    ),
    (
        "Annual General Meeting/ Final Dividend- Rs 1.50 Per Share/ Interim Dividend- Re 1 Per Share",
        Some(2.0),
        "div 1.5 final; div 1 interim",
    ),
    ("Annual General Meeting/Dividend- Rs 2 Per Share (Rate Updated)", Some(2.0), "div 2 none"),
    ("Capital Reduction Rs 10 To Rs 3.30 / Consolidation Rs 3.30 To Rs.10", Some(10.0), "cons 3.3>10"),
    ("Annual General Meeting (Purpose Revised)", Some(2.0), "other meeting"),
    ("Annual General Meeting/Dividend Re 0.30 Per Share (Rate Revised)", Some(10.0), "div 0.3 none"),
    ("Interim Dividend - Rs 9 Per Share (Date And Purpose Revised)", Some(1.0), "div 9 interim"),
    ("Interim Dividend Rs - Rs 3.80 Per Sh", Some(2.0), "div 3.8 interim"),
    ("Dividend Rs - Rs 2.50 Per Share", Some(10.0), "div 2.5 none"),
    ("Scheme Of Arrangement Of Demerger", Some(1.0), "demerger"),
    ("Interim Div - Re 0.20 Per Share", Some(10.0), "div 0.2 interim"),
    ("Rights 87:38 @ Premium Of Rs 2.50 Per Share", Some(10.0), "rights 87:38 @12.5"),
    ("Annual General Meeting(Dt Rev)", Some(10.0), "other meeting"),
    (
        "Annual General Meeting / Special Dividend - Rs 416 Per Share/ Final Dividend - Rs 24 Per Share",
        Some(10.0),
        "div 416 special; div 24 final",
    ),
    ("Annual General Meeting/Dividend - Rs 1.30 Per", Some(1.0), "div 1.3 none"),
    ("Annual General Meeting/ Dividend - Rs 3.50 Per Sahre", Some(5.0), "div 3.5 none"),
    ("Agm/Spl Div- Rs.5/- Div-7.5/-", Some(10.0), "div 5 special; div 7.5 none"),
    ("De-Merger", Some(10.0), "demerger"),
    (
        "Interim Dividend - Rs 23 Per Share/ Special Dividend - Rs180 Per Share",
        Some(1.0),
        "div 23 interim; div 180 special",
    ),
    ("Rights:14 Compulosry Convertible Debentures For Every 15 Equity Shares", Some(10.0), "other not_shares"),
    ("Interim Dividend - Rs 3 Per Eq Share", Some(10.0), "div 3 interim"),
    (
        "Interim Dividend - Rs 2.20 Per Sh And Special Dividend - Rs 4 Per Sh",
        Some(2.0),
        "div 2.2 interim; div 4 special",
    ),
    ("Interim Dividend - Re 1 Per Sh Special Dividend - Rs 3 Per Sh", Some(10.0), "div 1 interim; div 3 special"),
    ("Interim Dividend - Rs 1.50 Pr Sh", Some(2.0), "div 1.5 interim"),
    ("Interim Dividend - Re 1 Pr Sh", Some(2.0), "div 1 interim"),
    ("Special Dividend - Rs 25 Pr Sh", Some(10.0), "div 25 special"),
    (
        "Interim Dividend - Rs 2 Per Share/ Splecial Dividend - Rs 18 Per Share",
        Some(2.0),
        "div 2 interim; div 18 special",
    ),
    ("Interin Dividend - Rs 5 Per Sh", Some(5.0), "div 5 interim"),
    ("Interim Dividend - Rs 0.50 Per Hsare", Some(10.0), "div 0.5 interim"),
    ("Rights 9:77 Partly Paid @ Premium Rs 100/-", Some(10.0), "rights 9:77 @110"),
    ("Dividend - Rs 20 And Special Dividend - Rs 20 Per Share", Some(10.0), "div 20 none; div 20 special"),
    ("Annual General Meetingdividend - Rs 7.5 Per Sh", Some(10.0), "div 7.5 none"),
    ("Annual General Meeting/Dividend - Rs 0.15 Per Sharee", Some(1.0), "div 0.15 none"),
    ("Interim Dividned - Rs 135 Per Share", Some(1.0), "div 135 interim"),
    ("Interimdividend - Rs 1.30  Per Share", Some(2.0), "div 1.3 interim"),
    (
        "Interim Dividend - Rs 6 Per Share Special Interim Dividend - Rs 10 Per Share",
        Some(2.0),
        "div 6 interim; div 10 special",
    ),
    ("Merger/Demerger", Some(1.0), "demerger"),
    // a dividend, though paid under a scheme
    ("Dividend - Rs 12.50 Per Share Pursuant To Scheme", Some(1.0), "div 12.5 none"),
    ("Nterim Dividend - Rs 5 Per Share", Some(10.0), "div 5 interim"),
    ("Dividend - Rs 13.50 Per Share/ Interim Dividend - Rs 5 Per Share", Some(1.0), "div 13.5 none; div 5 interim"),
    ("Divdend - Rs 0.50 Per Share/Interim Dividend - Rs 0.75 Per Share", Some(2.0), "div 0.5 none; div 0.75 interim"),
    ("Annual General Meeting/Dividend - Rs Rs 0.50 Per Share", Some(2.0), "div 0.5 none"),
    ("Div - Rs 0.50 Per Sh", Some(2.0), "div 0.5 none"),
    ("Annual General Meeting/Dividend - Rs 0.50 Per Shaee", Some(10.0), "div 0.5 none"),
    ("Extra General Meeting", Some(1.0), "other meeting"),
    ("Extra-Ordinary General Meting", Some(10.0), "other meeting"),
    ("Interim Divdend", Some(10.0), "div - interim"),
    ("Interim Dividend - Rs 6.25 Per Shar", Some(5.0), "div 6.25 interim"),
    ("Dividend - Rs 3 Per Share/Special Dividend - Rs 2 Per Sh", Some(10.0), "div 3 none; div 2 special"),
    ("Entra Ordinary General Meeting", Some(2.0), "other meeting"),
    ("Interim Dividend - Rs 25 Per Sh/Dividend - Rs 65 Per Share", Some(1.0), "div 25 interim; div 65 none"),
    ("Extra Ordinary Annual General Meeting", Some(10.0), "other meeting"),
    (
        "Annual General Meeting/Final Dividend- Re 1 Per Share/Special Dividend- Rs 0.40 Per Share",
        Some(1.0),
        "div 1 final; div 0.4 special",
    ),
    ("Annual General Meeting/Interim Dividend - Rs 6.50 Per Sh", Some(1.0), "div 6.5 interim"),
    ("Capital Reduction Pursuant To Nclt Order", Some(10.0), "other restructuring"),
    ("Annual General Meeting/Dividend - R E 1 Per Share", Some(10.0), "div 1 none"),
    ("Specia Ldividend - Rs 850 Per Share", Some(10.0), "div 850 special"),
    ("Bonus Ncrps 1:116", Some(5.0), "other not_shares"),
    ("Final Dividend - Rs  194/ Special Dividend - Rs 183 Per Share", Some(10.0), "div 194 final; div 183 special"),
    ("Special Interim Dividend - Re 1 Per Share", Some(2.0), "div 1 special"),
    ("Extra Oridinary General Meeting", Some(10.0), "other meeting"),
    (
        "Annual General Meeting/Dividend - Re 1 Per Share/ Special Dividend - Rs 14 Per Share",
        Some(1.0),
        "div 1 none; div 14 special",
    ),
    ("Dividend - Rs12 Per Share", Some(2.0), "div 12 none"),
    ("Annual General Meetingdividend - Re 1 Per Sh", Some(5.0), "div 1 none"),
    ("Inteim Dividend - Re 0.10 Per Share", Some(1.0), "div 0.1 interim"),
    ("Inteirm Dividend - Rs 30 Per Share", Some(10.0), "div 30 interim"),
    ("Face Value Split (Sub-Division) - From Rs10/- Per Share To Re 1/- Per Share", Some(1.0), "split 10>1"),
    (
        "Special Dividend Rs -10 Per Share/Interim Dividend Rs - 26 Per Share",
        Some(1.0),
        "div 10 special; div 26 interim",
    ),
    ("Annual General Meeting /Dividend - 1 Rs Per Share", Some(5.0), "div 1 none"),
    ("Special Dividend - Rs 525 Per Share/ Dividend - Rs 160 Per Share", Some(10.0), "div 525 special; div 160 none"),
    ("Annual General Meeting/Dividend - Rs  Per Sh/", Some(2.0), "div - none"),
    ("Annual General Meeting/Dividend - Rs  Re 1 Per Share", Some(1.0), "div 1 none"),
    ("Annual General Meeting/Dividend - Rs10 Per Sh/", Some(10.0), "div 10 none"),
    ("Annual General Me0etingdividend - Rs 1.2 Per Share", Some(10.0), "div 1.2 none"),
    ("Extra Annual General Meeting", Some(10.0), "other meeting"),
    ("Rights 7:10 @ Prm Rs 102/-", Some(10.0), "rights 7:10 @112"),
    ("Interimdividend - Re 0.50 Per Share", Some(1.0), "div 0.5 interim"),
    ("Interim Dividend - Rs Per 0.50 Share", Some(5.0), "div 0.5 interim"),
    ("Consolidation Of Equity Shares From Re 1 Per Share To Rs 10 Per Share", Some(10.0), "cons 1>10"),
    (
        "Dividend - Rs 35 Per Share & Special Dividend Of Rs 100 Per Share/ Special Dividend Of Rs 30",
        Some(10.0),
        "div 35 none; div 100 special; div 30 special",
    ),
    ("Intereim Dividend - Rs 3.50 Per Share", Some(10.0), "div 3.5 interim"),
    ("Rights 1:9 @ Premium 91", Some(10.0), "rights 1:9 @101"),
    ("Dividend - Re 1 Per Share/Special Dividend - Rs 2 Per Share", Some(2.0), "div 1 none; div 2 special"),
];

#[test]
fn nse_and_bse_publish_the_same_actions_alike() {
    // The same span (2025-07-15 .. 2026-07-15) from both exchanges. With no
    // ISINs here, a BSE row is matched to NSE rows by its security id
    // where that is an NSE symbol too: its typed actions should then agree
    // with NSE's in type, ex-date and figures (the merge key, kind left
    // out), whatever each exchange's wording.
    let nse_rows = nse::read(&file(NSE_FILES[1])).unwrap();
    let bse_rows = bse::read(&file(BSE_FILES[0])).unwrap();
    let key = |a: &Action, day: NaiveDate| (a.action_type(), day, a.figures_key());
    let mut nse_keys: BTreeMap<&str, BTreeSet<(ActionType, NaiveDate, String)>> = BTreeMap::new();
    for r in &nse_rows {
        for p in actions::nse_actions(r) {
            nse_keys.entry(r.symbol.as_str()).or_default().insert(key(&p.action, r.ex_date));
        }
    }
    let (mut matched, mut compared) = (0usize, 0usize);
    let mut unmatched: BTreeMap<ActionType, Vec<String>> = BTreeMap::new();
    for r in &bse_rows {
        let Some(keys) = nse_keys.get(r.security_name.as_str()) else { continue };
        for p in actions::bse_actions(r).into_iter().filter(|p| p.reason.is_none()) {
            compared += 1;
            let (t, day) = (p.action.action_type(), r.ex_date);
            // A row without figures joins NSE's action of that type and day.
            let bare_match = p.action.lacks_figures() && keys.iter().filter(|k| k.0 == t && k.1 == day).count() == 1;
            if keys.contains(&key(&p.action, day)) || bare_match {
                matched += 1;
            } else {
                unmatched
                    .entry(p.action.action_type())
                    .or_default()
                    .push(format!("{} {} {:?}", r.security_name, r.ex_date, r.purpose));
            }
        }
    }
    println!("BSE typed actions of securities NSE lists by the same id: {compared}, of which {matched} are NSE's too");
    for (t, list) in &unmatched {
        println!(
            "  not on NSE alike, {t}: {} (e.g. {})",
            list.len(),
            list.iter().take(3).cloned().collect::<Vec<_>>().join("; ")
        );
    }
    assert!(compared > 1000, "{compared}");
    assert!(matched * 100 >= compared * 97, "{matched} of {compared}");
}
