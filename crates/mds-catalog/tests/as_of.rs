//! Randomised comparison of the catalog's `as_of` pages, details and symbol
//! periods with a naive oracle that replays each company's identity events
//! up to the day (the rule of `replay.rs`, written again plainly): random
//! companies with listings, symbol and name changes, delistings and ISIN
//! changes (splits) on random days since 1985, many days and filters.

use std::collections::HashMap;

use chrono::NaiveDate;
use mds_catalog::{Catalog, ChangeStamp, SortKey};
use mds_domain::query::fold;
use mds_domain::{
    Company, CompanyDetails, CompanyFilter, CompanyStatus, Exchange, IdentityChange, IdentityEvent, Isin, Letter,
    SearchTerm, StatusFilter, Ticker,
};
use mds_testkit::fixtures::isin_of;
use mds_testkit::rng::Rng;

const SYMBOLS: &[&str] = &["TATA", "TMPV", "BAJ", "BAJFIN", "REL", "INFY", "ABB", "ZEN", "M&M", "20MIC"];
const NAMES: &[&str] = &[
    "Tata Motors",
    "Bajaj Finance",
    "Reliance",
    "Infosys",
    "Zen Tech",
    "Nestlé",
    "Mahindra",
    "Dr. \"Reddy's\" \\ Labs",
];

fn day(rng: &mut Rng) -> NaiveDate {
    NaiveDate::from_ymd_opt(1985, 1, 1).unwrap() + chrono::Days::new(rng.below(15_300) as u64)
}

fn ticker(s: &str) -> Ticker {
    Ticker::parse(s).unwrap()
}

/// Companies and their events (grouped by ISIN, each ISIN's by date).
fn generate(rng: &mut Rng, n: usize) -> (Vec<Company>, Vec<(Isin, IdentityEvent)>) {
    let mut companies = Vec::new();
    let mut events: HashMap<Isin, Vec<IdentityEvent>> = HashMap::new();
    let mut k = 0u32;
    while companies.len() < n {
        k += 1;
        let isin = isin_of(k * 7);
        let mut symbol = rng.pick(SYMBOLS).to_string();
        let mut name = rng.pick(NAMES).to_string();
        let mut status = CompanyStatus::Active;
        let mut evs = Vec::new();
        if rng.chance(85) {
            let mut d = day(rng);
            let exchange = if rng.chance(60) { Exchange::Nse } else { Exchange::Bse };
            evs.push(IdentityEvent {
                date: d,
                exact: rng.chance(50),
                observed_between: None,
                change: IdentityChange::Listed { exchange, symbol: ticker(&symbol) },
            });
            if rng.chance(30) {
                let other = if exchange == Exchange::Nse { Exchange::Bse } else { Exchange::Nse };
                evs.push(IdentityEvent {
                    date: day(rng).max(d),
                    exact: false,
                    observed_between: None,
                    change: IdentityChange::Listed { exchange: other, symbol: ticker(rng.pick::<&str>(SYMBOLS)) },
                });
            }
            for _ in 0..rng.below(4) {
                d = d + chrono::Days::new(rng.below(3000) as u64);
                let change = match rng.below(3) {
                    0 => {
                        let to = rng.pick(SYMBOLS).to_string();
                        let c = IdentityChange::SymbolChanged { exchange, from: ticker(&symbol), to: ticker(&to) };
                        symbol = to;
                        c
                    }
                    1 => {
                        let to = format!("{} {}", rng.pick(NAMES), rng.below(3));
                        let c = IdentityChange::NameChanged { from: name.clone(), to: to.clone() };
                        name = to;
                        c
                    }
                    _ => {
                        status = CompanyStatus::Delisted;
                        IdentityChange::Delisted { exchange, symbol: ticker(&symbol) }
                    }
                };
                evs.push(IdentityEvent { date: d, exact: rng.chance(50), observed_between: None, change });
            }
            // A split: the symbol moves to a new ISIN of the same issuer.
            if rng.chance(15) && status == CompanyStatus::Active {
                k += 1;
                let to = isin_of(k * 7);
                let change = IdentityChange::IsinChanged {
                    from: isin.clone(),
                    to: to.clone(),
                    face_value_from: [Some(10.0), Some(2.5), None][rng.below(3)],
                    face_value_to: [None, Some(1.0), Some(0.25)][rng.below(3)],
                };
                let e = IdentityEvent {
                    date: d + chrono::Days::new(1 + rng.below(500) as u64),
                    exact: false,
                    observed_between: None,
                    change,
                };
                evs.push(e.clone());
                status = CompanyStatus::Superseded;
                let mut succ = vec![e];
                if rng.chance(40) {
                    let to_name = format!("{} New", rng.pick(NAMES));
                    succ.push(IdentityEvent {
                        date: succ[0].date + chrono::Days::new(rng.below(900) as u64),
                        exact: true,
                        observed_between: None,
                        change: IdentityChange::NameChanged { from: name.clone(), to: to_name.clone() },
                    });
                    companies.push(company(&to, &symbol, &to_name, CompanyStatus::Active, rng));
                } else {
                    companies.push(company(&to, &symbol, &name, CompanyStatus::Active, rng));
                }
                events.insert(to, succ);
            }
        }
        // Sometimes today's record disagrees with the history (a fallback).
        if rng.chance(5) {
            symbol = rng.pick(SYMBOLS).to_string();
        }
        evs.sort_by_key(|e| e.date);
        if !evs.is_empty() {
            events.insert(isin.clone(), evs);
        } else if rng.chance(20) {
            status = CompanyStatus::Delisted;
        }
        companies.push(company(&isin, &symbol, &name, status, rng));
    }
    let mut grouped: Vec<(Isin, IdentityEvent)> = Vec::new();
    let mut isins: Vec<&Isin> = events.keys().collect();
    isins.sort();
    for i in isins {
        grouped.extend(events[i].iter().map(|e| (i.clone(), e.clone())));
    }
    (companies, grouped)
}

fn company(isin: &Isin, symbol: &str, name: &str, status: CompanyStatus, rng: &mut Rng) -> Company {
    Company {
        isin: isin.clone(),
        ticker: ticker(symbol),
        name: name.to_owned(),
        industry: rng.chance(50).then(|| "Banks".to_owned()),
        sector: None,
        is_bse: rng.chance(50),
        is_nse: rng.chance(70),
        market_cap_band: None,
        logo_url: None,
        details: CompanyDetails { status, ..Default::default() },
    }
}

/// The oracle: an ISIN's standing after its events up to `day` among its
/// first `upto`: (listed on: 1 NSE, 2 BSE, 4 unnamed; symbols; name).
type Standing = (u8, [Option<String>; 2], Option<String>);

struct Oracle<'a> {
    events: HashMap<&'a str, Vec<&'a IdentityEvent>>,
}

fn ex(e: Exchange) -> (u8, usize) {
    match e {
        Exchange::Nse => (1, 0),
        Exchange::Bse => (2, 1),
    }
}

impl Oracle<'_> {
    fn standing(&self, isin: &str, d: NaiveDate, upto: usize, depth: u8) -> Standing {
        let mut s: Standing = (0, [None, None], None);
        let evs = self.events.get(isin).cloned().unwrap_or_default();
        for (k, e) in evs.iter().enumerate() {
            if k >= upto || e.date > d {
                continue;
            }
            match &e.change {
                IdentityChange::Listed { exchange, symbol } => {
                    s.0 |= ex(*exchange).0;
                    s.1[ex(*exchange).1] = Some(symbol.to_string());
                }
                IdentityChange::SymbolChanged { exchange, to, .. } => s.1[ex(*exchange).1] = Some(to.to_string()),
                IdentityChange::NameChanged { to, .. } => s.2 = Some(to.clone()),
                IdentityChange::Delisted { exchange, .. } => s.0 &= !(ex(*exchange).0 | 4),
                IdentityChange::IsinChanged { from, to, .. } => {
                    if from.as_str() == isin {
                        s.0 = 0;
                    } else if to.as_str() == isin && depth < 32 {
                        let fe = self.events.get(from.as_str()).cloned().unwrap_or_default();
                        let at = fe.iter().position(|x| *x == *e).unwrap_or(usize::MAX);
                        let old = self.standing(from.as_str(), e.date, at, depth + 1);
                        s.0 |= if old.0 == 0 && s.0 == 0 { 4 } else { old.0 };
                        s.1 = [old.1[0].clone().or(s.1[0].clone()), old.1[1].clone().or(s.1[1].clone())];
                        s.2 = old.2.or(s.2);
                    }
                }
            }
        }
        s
    }

    /// The company as it stood on `d`, if listed then.
    fn on(&self, c: &Company, d: NaiveDate) -> Option<Company> {
        let evs = self.events.get(c.isin.as_str()).cloned().unwrap_or_default();
        if evs.is_empty() {
            return (c.details.status == CompanyStatus::Active).then(|| c.clone());
        }
        let s = self.standing(c.isin.as_str(), d, usize::MAX, 0);
        if s.0 == 0 {
            return None;
        }
        let on = if s.0 & 1 != 0 {
            Some(Exchange::Nse)
        } else if s.0 & 2 != 0 {
            Some(Exchange::Bse)
        } else {
            None
        };
        let set = match on {
            Some(e) => s.1[ex(e).1].clone(),
            None => s.1[0].clone().or(s.1[1].clone()),
        };
        let ticker = set
            .or_else(|| {
                evs.iter().filter(|e| e.date > d).find_map(|e| match &e.change {
                    IdentityChange::SymbolChanged { exchange, from, .. } if on.is_none_or(|o| o == *exchange) => {
                        Some(from.to_string())
                    }
                    _ => None,
                })
            })
            .unwrap_or_else(|| c.ticker.to_string());
        let name =
            s.2.or_else(|| {
                evs.iter().filter(|e| e.date > d).find_map(|e| match &e.change {
                    IdentityChange::NameChanged { from, .. } => Some(from.clone()),
                    _ => None,
                })
            })
            .unwrap_or_else(|| c.name.clone());
        let details = CompanyDetails { status: CompanyStatus::Active, ..Default::default() };
        Some(Company { ticker: Ticker::parse(&ticker).unwrap(), name, details, ..c.clone() })
    }

    fn symbol_on(&self, isin: &str, d: NaiveDate, e: Exchange) -> Option<String> {
        let s = self.standing(isin, d, usize::MAX, 0);
        if s.0 & ex(e).0 != 0 { s.1[ex(e).1].clone() } else { None }
    }
}

/// Rows without their `match`, which each row of a search carries last,
/// and only then: its value is the row's ticker or name of the day.
fn unmatched(rows: Vec<String>, search: bool) -> Vec<String> {
    rows.into_iter()
        .map(|row| match row.rfind(",\"match\":") {
            Some(at) => {
                assert!(search, "{row}");
                let m: serde_json::Value = serde_json::from_str(&row[at + 9..row.len() - 1]).unwrap();
                let v: serde_json::Value = serde_json::from_str(&format!("{}}}", &row[..at])).unwrap();
                let field = m["field"].as_str().unwrap();
                assert!(["ticker", "name"].contains(&field), "no former value matches with as_of: {row}");
                assert_eq!(m["value"], v[field], "{row}");
                format!("{}}}", &row[..at])
            }
            None => {
                assert!(!search, "{row}");
                row
            }
        })
        .collect()
}

fn key(c: &Company) -> SortKey {
    SortKey::new(c.ticker.as_str(), c.isin.as_str())
}

#[test]
fn as_of_pages_details_and_symbols_match_a_replay_of_the_events() {
    let mut rng = Rng(0xA50F_2026);
    let (companies, events) = generate(&mut rng, 400);
    let catalog = Catalog::from_stamped_with_history(
        companies.iter().map(|c| (ChangeStamp::default(), c.clone())).collect(),
        events.clone(),
    );
    let loaded = Catalog::from_bytes(catalog.as_bytes().to_vec()).expect("its own snapshot loads");
    let mut oracle = Oracle { events: HashMap::new() };
    for (i, e) in &events {
        oracle.events.entry(i.as_str()).or_default().push(e);
    }
    let dates: Vec<NaiveDate> = events.iter().map(|(_, e)| e.date).collect();
    let (mut nonempty, mut versions_seen) = (0, 0);
    for round in 0..300 {
        let d = match rng.below(3) {
            0 => *rng.pick(&dates),
            1 => rng.pick(&dates).pred_opt().unwrap(),
            _ => day(&mut rng),
        }
        .max(mds_domain::identity::AS_OF_MIN);
        let mut want: Vec<Company> = companies.iter().filter_map(|c| oracle.on(c, d)).collect();
        want.sort_by(|a, b| (&a.ticker, &a.isin).cmp(&(&b.ticker, &b.isin)));
        let pick = want.first().cloned();
        let f = CompanyFilter {
            as_of: Some(d),
            letter: if rng.chance(20) { Letter::parse(&rng.pick(SYMBOLS)[..1]).ok() } else { None },
            ticker: if rng.chance(15) { Some(ticker(rng.pick::<&str>(SYMBOLS))) } else { None },
            search: if rng.chance(25) {
                SearchTerm::parse(rng.pick::<&str>(&["ta", "baj", "new", "nestl", "2", "m&"])).ok()
            } else {
                None
            },
            exchange: if rng.chance(20) { Some(Exchange::Nse) } else { None },
            industry: if rng.chance(15) { mds_domain::Industry::parse("Banks").ok() } else { None },
            status: match rng.below(8) {
                0 => StatusFilter::Any,
                1 => StatusFilter::Only(CompanyStatus::Delisted),
                _ => StatusFilter::DEFAULT,
            },
            sort: Some(mds_domain::CompanySort::Ticker),
            ..Default::default()
        };
        let want: Vec<&Company> =
            want.iter().filter(|c| f.matches(c, &fold(&c.name), &fold(c.ticker.as_str()))).collect();
        nonempty += usize::from(!want.is_empty());
        let limit = *rng.pick(&[1, 3, 10, 200]);
        let mut got = Vec::new();
        let mut after = None;
        loop {
            let cat = if round % 2 == 0 { &catalog } else { &loaded };
            let p = cat.page(&f, after.as_ref(), limit);
            got.extend(unmatched(p.json_rows(), f.search.is_some()));
            match p.next {
                Some(k) => after = Some(k),
                None => break,
            }
            assert!(got.len() <= want.len(), "round {round}: walk runs past the matches");
        }
        let expect: Vec<String> = want.iter().map(|c| serde_json::to_string(c).unwrap()).collect();
        assert_eq!(got, expect, "round {round}: {f:?}");
        if let Some(c) = want.get(rng.below(want.len().max(1))) {
            // A cursor from a key in the middle resumes right after it.
            let from = want.partition_point(|x| key(x) <= key(c));
            let p = catalog.page(&f, Some(&key(c)), 5);
            assert_eq!(
                unmatched(p.json_rows(), f.search.is_some()),
                expect[from..].iter().take(5).cloned().collect::<Vec<_>>(),
                "round {round}"
            );
        }
        // Details on that day, listed or not.
        for c in companies.iter().step_by(7) {
            let row = catalog.find_isin(c.isin.as_str()).unwrap();
            let mut out = Vec::new();
            let listed = catalog.write_detail_on(row, d, &mut out);
            match oracle.on(c, d) {
                Some(o) => {
                    assert!(listed, "round {round}: {} listed on {d}", c.isin);
                    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
                    assert_eq!(
                        (v["ticker"].as_str().unwrap(), v["name"].as_str().unwrap()),
                        (o.ticker.as_str(), o.name.as_str())
                    );
                    assert_eq!(v["status"], "active");
                    versions_seen += usize::from(o.ticker != c.ticker || o.name != c.name);
                }
                None => assert!(!listed, "round {round}: {} not listed on {d}", c.isin),
            }
        }
        drop(pick);
    }
    assert!(nonempty > 150, "only {nonempty} days listed anything");
    assert!(versions_seen > 20, "only {versions_seen} details differed from today's");

    // Symbol periods: each period is exact (carried inside, not just before
    // nor at its end), and every day an event shows a symbol carried lies in
    // a period of that symbol.
    let far = NaiveDate::from_ymd_opt(2100, 1, 1).unwrap();
    for (isin, e) in &events {
        for exchange in [Exchange::Nse, Exchange::Bse] {
            let Some(s) = oracle.symbol_on(isin.as_str(), e.date, exchange) else { continue };
            let h = catalog.symbol_history(exchange, &ticker(&s)).expect("a carried symbol has periods");
            // The bytes served are what serde writes for the record.
            let served = catalog.symbol_history_json(exchange, &s).unwrap();
            assert_eq!(String::from_utf8(served).unwrap(), serde_json::to_string(&h).unwrap());
            assert!(
                h.periods.iter().any(|p| p.isin == *isin && p.from <= e.date && p.to.is_none_or(|t| e.date < t)),
                "{isin} carried {s} on {exchange:?} on {}",
                e.date
            );
            for p in &h.periods {
                let on = |d: NaiveDate| oracle.symbol_on(p.isin.as_str(), d, exchange);
                assert_eq!(on(p.from).as_deref(), Some(s.as_str()), "{p:?}");
                assert_ne!(on(p.from.pred_opt().unwrap()).as_deref(), Some(s.as_str()), "{p:?} starts later");
                match p.to {
                    Some(t) => {
                        assert_eq!(on(t.pred_opt().unwrap()).as_deref(), Some(s.as_str()), "{p:?}");
                        assert_ne!(on(t).as_deref(), Some(s.as_str()), "{p:?} ends");
                    }
                    None => assert_eq!(on(far).as_deref(), Some(s.as_str()), "{p:?} is current"),
                }
            }
            let order: Vec<_> =
                h.periods.iter().map(|p| (std::cmp::Reverse(p.to.unwrap_or(far)), std::cmp::Reverse(p.from))).collect();
            assert!(order.windows(2).all(|w| w[0] <= w[1]), "periods ordered by to desc, then from desc");
        }
    }
    // History: each company's events, as given; successors and predecessors.
    for c in &companies {
        let h = catalog.history(&c.isin).unwrap();
        let want: Vec<IdentityEvent> =
            oracle.events.get(c.isin.as_str()).map(|v| v.iter().map(|e| (*e).clone()).collect()).unwrap_or_default();
        assert_eq!(h.events, want, "{}", c.isin);
        let served = catalog.history_json(c.isin.as_str()).unwrap();
        assert_eq!(String::from_utf8(served).unwrap(), serde_json::to_string(&h).unwrap(), "{}", c.isin);
    }
    let mem: usize = catalog
        .sizes()
        .iter()
        .filter(|(n, _)| n.starts_with("history") || n.starts_with("symbol"))
        .map(|(_, b)| b)
        .sum();
    assert!(mem / companies.len() < 200, "{mem} bytes of history for {} companies", companies.len());
}

/// What the history costs a catalog at the benchmark's distribution
/// (every company listed, as an exchange snapshot lists it; 10% of
/// companies with 1 to 5 events more, 1% splits): at most 50 bytes per
/// company (issue 26), counted as the bytes of the history sections plus
/// the status lists, over the catalog without them.
#[test]
fn the_history_costs_at_most_50_bytes_per_company() {
    let mut rng = Rng(0xB17E5);
    let n = 50_000u32;
    let mut companies = Vec::with_capacity(n as usize);
    let mut events: Vec<(Isin, IdentityEvent)> = Vec::new();
    let base = NaiveDate::from_ymd_opt(2000, 1, 1).unwrap();
    for k in 0..n {
        let isin = isin_of(k);
        let sym = format!("S{k}");
        let name = format!("Company {k} Limited");
        let mut c = company(&isin, &sym, &name, CompanyStatus::Active, &mut rng);
        if k % 10 == 0 {
            let mut d = base + chrono::Days::new(rng.below(8000) as u64);
            let mut evs = vec![IdentityEvent {
                date: d,
                exact: true,
                observed_between: None,
                change: IdentityChange::Listed { exchange: Exchange::Nse, symbol: ticker(&format!("S{k}X")) },
            }];
            let mut last = format!("S{k}X");
            for j in 0..rng.below(5) {
                d = d + chrono::Days::new(1 + rng.below(300) as u64);
                let change = if j % 2 == 0 {
                    let to = if j == 0 { sym.clone() } else { format!("S{k}Y{j}") };
                    let c =
                        IdentityChange::SymbolChanged { exchange: Exchange::Nse, from: ticker(&last), to: ticker(&to) };
                    last = to;
                    c
                } else {
                    IdentityChange::NameChanged { from: format!("Old {k} {j}"), to: name.clone() }
                };
                evs.push(IdentityEvent { date: d, exact: false, observed_between: None, change });
            }
            c.ticker = ticker(&last);
            if k % 100 == 0 {
                let to = isin_of(n + k);
                let split = IdentityEvent {
                    date: d + chrono::Days::new(30),
                    exact: false,
                    observed_between: None,
                    change: IdentityChange::IsinChanged {
                        from: isin.clone(),
                        to: to.clone(),
                        face_value_from: Some(2.0),
                        face_value_to: Some(1.0),
                    },
                };
                evs.push(split.clone());
                c.details.status = CompanyStatus::Superseded;
                events.push((to.clone(), split));
                companies.push(company(&to, &last, &name, CompanyStatus::Active, &mut rng));
            }
            events.extend(evs.into_iter().map(|e| (isin.clone(), e)));
        } else {
            let listed = IdentityChange::Listed { exchange: Exchange::Nse, symbol: ticker(&sym) };
            events.push((
                isin.clone(),
                IdentityEvent { date: base, exact: false, observed_between: None, change: listed },
            ));
        }
        companies.push(c);
    }
    events.sort_by(|a, b| a.0.cmp(&b.0));
    let stamped = |cs: &[Company]| cs.iter().map(|c| (ChangeStamp::default(), c.clone())).collect::<Vec<_>>();
    let with = Catalog::from_stamped_with_history(stamped(&companies), events);
    let plain: Vec<Company> =
        companies.iter().map(|c| Company { details: CompanyDetails::default(), ..c.clone() }).collect();
    let without = Catalog::from_stamped(stamped(&plain));
    let history = Catalog::history_bytes;
    // Everything the history adds: its own sections, and what the rest of
    // the buffer grew by (the status lists).
    let cost = with.as_bytes().len() - (without.as_bytes().len() - history(&without));
    let per_company = cost as f64 / companies.len() as f64;
    println!(
        "{} companies: history sections {} bytes, catalog {} bytes, {} without any history: {per_company:.1} B/company",
        companies.len(),
        history(&with),
        with.as_bytes().len(),
        without.as_bytes().len() - history(&without),
    );
    assert!(per_company <= 50.0, "{per_company:.1} bytes per company");
}

/// Section 10.3: a successor ISIN listed only on NSE has no BSE symbol
/// period, though it took over its predecessor's standing (BAJFINANCE's
/// split: the old ISIN on both lists, the new one on NSE's only); the old
/// ISIN keeps its BSE period up to the change.
#[test]
fn bse_symbol_periods_are_only_of_isins_bse_listed() {
    let d = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
    let (old, new) = (Isin::parse("INE296A01024").unwrap(), Isin::parse("INE296A01032").unwrap());
    let company = |isin: &Isin, exchanges: &[Exchange], status: CompanyStatus| {
        let mut details = CompanyDetails { status, ..Default::default() };
        details.listings = exchanges.iter().map(|x| mds_domain::Listing::bare(*x, "BAJFINANCE")).collect();
        Company {
            isin: isin.clone(),
            ticker: ticker("BAJFINANCE"),
            name: "Bajaj Finance Limited".into(),
            industry: None,
            sector: None,
            is_bse: exchanges.contains(&Exchange::Bse),
            is_nse: exchanges.contains(&Exchange::Nse),
            market_cap_band: None,
            logo_url: None,
            details,
        }
    };
    let split = IdentityChange::IsinChanged {
        from: old.clone(),
        to: new.clone(),
        face_value_from: Some(2.0),
        face_value_to: Some(1.0),
    };
    let event = |date: &str, change: IdentityChange| IdentityEvent {
        date: d(date),
        exact: false,
        observed_between: None,
        change,
    };
    let listed = |x| IdentityChange::Listed { exchange: x, symbol: ticker("BAJFINANCE") };
    let events = vec![
        (old.clone(), event("2024-01-30", listed(Exchange::Nse))),
        (old.clone(), event("2024-01-30", listed(Exchange::Bse))),
        (old.clone(), event("2026-05-17", split.clone())),
        (new.clone(), event("2026-05-17", split)),
    ];
    let companies = vec![
        company(&old, &[Exchange::Nse, Exchange::Bse], CompanyStatus::Superseded),
        company(&new, &[Exchange::Nse], CompanyStatus::Active),
    ];
    let catalog = Catalog::from_stamped_with_history(
        companies.into_iter().map(|c| (ChangeStamp::default(), c)).collect(),
        events,
    );
    let periods = |x| {
        let h = catalog.symbol_history(x, &ticker("BAJFINANCE")).unwrap();
        h.periods.iter().map(|p| (p.isin.as_str().to_owned(), p.from, p.to)).collect::<Vec<_>>()
    };
    assert_eq!(periods(Exchange::Bse), vec![("INE296A01024".to_owned(), d("2024-01-30"), Some(d("2026-05-17")))]);
    assert_eq!(
        periods(Exchange::Nse),
        vec![
            ("INE296A01032".to_owned(), d("2026-05-17"), None),
            ("INE296A01024".to_owned(), d("2024-01-30"), Some(d("2026-05-17")))
        ]
    );
}
