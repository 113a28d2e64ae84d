//! How often a company search finds the company meant (contract section
//! 15, issue 44): an evaluation set made here from the real lists the
//! repository carries (`data/demo`, embedded in `mds-import`), loaded into
//! a real store as `mds demo` loads them (NSE and BSE of January 2024,
//! NSE's main board and SME lists of 17 May 2026, NSE's symbol- and
//! name-change files), and the catalog a node builds from that store.
//!
//! The queries, each with the company it means, for every company on an
//! NSE list of 2026 that the store holds as active:
//! - `name`: its name as listed;
//! - `first words`: the fewest first words of its name (at least three
//!   characters) that begin no other active company's name;
//! - `short form`: its name without the legal suffix (`Limited`, `Ltd`,
//!   `Ltd.`), when it has one;
//! - `symbol`: its NSE symbol;
//! - `former symbol` and `former name`: every old symbol of NSE's
//!   symbol-change file and every previous name of its name-change file
//!   that leads (through the file's chains) to a company of the set,
//!   unless that text is today some active company's own ticker or name
//!   (then it means that company, not a former one).
//!
//! Top-1: the first result is the company meant; top-3: it is among the
//! first three. The test prints both per kind and overall, and requires
//! top-1 of at least 95% overall. `SEARCH_EVAL_OUT=FILE` also writes the
//! set (kind, query, ISIN meant, rank found or empty) as CSV.
//!
//! `cargo test -p mds --test suite search_eval:: -- --nocapture`

use crate::common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;

use mds_catalog::{Catalog, ChangeStamp};
use mds_domain::query::fold;
use mds_domain::{CompanyFilter, CompanyStatus, SearchTerm};

/// One query of the set.
struct Query {
    kind: &'static str,
    text: String,
    isin: String,
}

/// The name without its legal suffix, if it has one.
fn short_form(name: &str) -> Option<&str> {
    for suffix in [" Limited", " Ltd.", " Ltd", " LIMITED", " LTD"] {
        if let Some(s) = name.strip_suffix(suffix) {
            return Some(s.trim_end_matches([',', ' ']));
        }
    }
    None
}

#[tokio::test]
async fn top_1_and_top_3_accuracy_on_the_real_lists() {
    let (url, _db) = common::TestDatabase::create().await;
    let store = mds_store::open(&url).await.unwrap();
    store.migrate().await.unwrap();
    let h = mds_import::demo_history();
    for snapshots in [&h.snapshots_2024, &h.snapshots_2026] {
        store.import_snapshots(snapshots).await.unwrap();
    }
    store.import_nse_changes(&h.symbol_changes, &h.name_changes).await.unwrap();
    let companies = store.companies().await.unwrap();
    let events = store.identity_events().await.unwrap();
    let catalog = Catalog::from_stamped_with_history(
        companies.iter().cloned().map(|c| (ChangeStamp::default(), c)).collect(),
        events,
    );

    let active: Vec<_> = companies.iter().filter(|c| c.details.status == CompanyStatus::Active).collect();
    let by_isin: HashMap<&str, _> = active.iter().map(|c| (c.isin.as_str(), *c)).collect();
    // The companies of NSE's lists of 2026 (main board and SME) that are active.
    let nse: Vec<_> =
        h.snapshots_2026.companies.all().into_iter().filter_map(|c| by_isin.get(c.isin.as_str()).copied()).collect();
    let current: HashSet<String> = active.iter().flat_map(|c| [fold(c.ticker.as_str()), fold(&c.name)]).collect();
    let names: Vec<String> = active.iter().map(|c| fold(&c.name)).collect();
    let by_ticker: HashMap<&str, &str> = nse.iter().map(|c| (c.ticker.as_str(), c.isin.as_str())).collect();

    let mut set = Vec::new();
    for c in &nse {
        let isin = c.isin.as_str().to_owned();
        let q = |kind, text: &str| Query { kind, text: text.to_owned(), isin: isin.clone() };
        set.push(q("name", &c.name));
        set.push(q("symbol", c.ticker.as_str()));
        if let Some(s) = short_form(&c.name) {
            set.push(q("short form", s));
        }
        let words: Vec<&str> = c.name.split_whitespace().collect();
        let own = fold(&c.name);
        for k in 1..words.len() {
            let prefix = words[..k].join(" ");
            let folded = fold(&prefix);
            if folded.chars().count() < 3 {
                continue;
            }
            let unique = names.iter().filter(|n| n.starts_with(&folded)).all(|n| *n == own);
            if unique {
                set.push(q("first words", &prefix));
                break;
            }
        }
    }
    // The change files' old symbols and previous names, followed through
    // the symbol changes to a symbol of 2026.
    let renamed: HashMap<&str, &str> =
        h.symbol_changes.iter().map(|s| (s.from.as_str(), s.to.as_str())).filter(|(a, b)| a != b).collect();
    let follow = |start: &str| {
        let mut s: &str = start;
        for _ in 0..16 {
            if let Some(isin) = by_ticker.get(s) {
                return Some(isin.to_string());
            }
            s = renamed.get(s)?;
        }
        None
    };
    let mut seen = HashSet::new();
    for s in &h.symbol_changes {
        if let Some(isin) = follow(s.to.as_str()) {
            let text = s.from.as_str();
            if !current.contains(&fold(text)) && seen.insert((text.to_owned(), isin.clone())) {
                set.push(Query { kind: "former symbol", text: text.to_owned(), isin });
            }
        }
    }
    for n in &h.name_changes {
        if let Some(isin) = follow(n.symbol.as_str()) {
            let text = n.from.trim();
            if !current.contains(&fold(text)) && seen.insert((text.to_owned(), isin.clone())) {
                set.push(Query { kind: "former name", text: text.to_owned(), isin });
            }
        }
    }

    // Search each, as `GET /v1/companies?search=…&limit=3` does.
    let mut tally: BTreeMap<&str, [usize; 3]> = BTreeMap::new();
    let mut out = std::env::var_os("SEARCH_EVAL_OUT").map(|p| std::fs::File::create(p).unwrap());
    if let Some(f) = out.as_mut() {
        writeln!(f, "kind,query,isin,rank").unwrap();
    }
    for q in &set {
        let Ok(term) = SearchTerm::parse(&q.text) else { continue };
        let filter = CompanyFilter { search: Some(term), ..Default::default() };
        let rows = catalog.page(&filter, None, 3).json_rows();
        let rank = rows.iter().position(|r| r.contains(&format!("\"isin\":\"{}\"", q.isin)));
        let t = tally.entry(q.kind).or_default();
        t[0] += 1;
        t[1] += usize::from(rank == Some(0));
        t[2] += usize::from(rank.is_some());
        if let Some(f) = out.as_mut() {
            let text = q.text.replace('"', "\"\"");
            writeln!(f, "{},\"{text}\",{},{}", q.kind, q.isin, rank.map_or(String::new(), |r| (r + 1).to_string()))
                .unwrap();
        }
    }
    let total = tally.values().fold([0; 3], |a, t| [a[0] + t[0], a[1] + t[1], a[2] + t[2]]);
    let pct = |k: usize, n: usize| 100.0 * k as f64 / n.max(1) as f64;
    println!("search evaluation: {} NSE companies, {} queries", nse.len(), total[0]);
    println!("| kind | queries | top-1 | top-3 |\n|---|---|---|---|");
    for (kind, t) in tally.iter().chain([(&"all", &total)]) {
        println!("| {kind} | {} | {:.1}% | {:.1}% |", t[0], pct(t[1], t[0]), pct(t[2], t[0]));
    }
    assert!(nse.len() > 2_000, "the set covers NSE's lists ({} companies)", nse.len());
    assert!(tally.get("former symbol").is_some_and(|t| t[0] > 20), "{tally:?}");
    assert!(tally.get("former name").is_some_and(|t| t[0] > 20), "{tally:?}");
    let top1 = pct(total[1], total[0]);
    assert!(top1 >= 95.0, "top-1 accuracy {top1:.1}% is below 95%");
}
