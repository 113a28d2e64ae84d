//! End-of-day prices (contract 14.2) against the real server: `GET
//! /v1/companies/{isin}/prices`, adjusted and continued through an ISIN
//! change, and the market on one day `GET /v1/prices`, its keyset walk,
//! both as JSON and CSV, with their tags, counting and bad input. The data
//! are the repository's real files: the demo's exchange lists and symbol
//! changes and NSE's corporate actions (imported by `mds import`, as an
//! operator would), and five days of NSE's UDiFF archive around TTL's
//! split of 2025-02-12 (Rs 10 to Re 1, with a new ISIN), imported through
//! the node's import of daily files.

use crate::common;

use common::prices::{DAYS, TTL_NEW, TTL_OLD, loaded, loaded_with};
use common::{assert_problem, naming};
use mds_domain::prices::Bar;
use serde_json::Value;

/// The bars of a body, decoded as the wire type.
fn bars(body: &Value) -> Vec<Bar> {
    serde_json::from_value(body["bars"].clone()).expect("bars as the wire type")
}

/// The close of the bar of `isin` on `day`.
fn close_on(bars: &[Bar], isin: &str, day: &str) -> f64 {
    let bar = bars.iter().find(|b| b.isin.as_str() == isin && b.date.to_string() == day);
    bar.unwrap_or_else(|| panic!("a bar of {isin} on {day}")).close.to_f64()
}

/// The plain rule of adjustment: each bar's close times the factors of the
/// adjustments whose ex-date is after it, rounded to four decimals.
fn adjusted_closes(raw: &[Bar], adjustments: &Value) -> Vec<f64> {
    let adjustments = adjustments.as_array().unwrap();
    raw.iter()
        .map(|b| {
            let f: f64 = adjustments
                .iter()
                .filter(|a| a["ex_date"].as_str().unwrap() > b.date.to_string().as_str())
                .map(|a| a["factor"].as_f64().unwrap())
                .product();
            (b.close.units() as f64 * f).round() / 10_000.0
        })
        .collect()
}

/// A CSV body's header and rows, each row its cells.
fn csv_rows(text: &str) -> (String, Vec<Vec<String>>) {
    let mut lines = text.lines();
    let header = lines.next().expect("a header line").to_owned();
    (header, lines.map(|l| l.split(',').map(str::to_owned).collect()).collect())
}

#[tokio::test]
async fn a_series_continues_through_the_split_adjusted() {
    let (app, _dir) = loaded().await;
    let span = format!("from={}&to={}", DAYS[0], DAYS[4]);

    // As published: the close steps about tenfold at the ex-date, the bars
    // before it named by the old ISIN.
    let raw_body = app.get_json(&format!("/v1/companies/{TTL_NEW}/prices?{span}&adjust=none"), 200).await;
    assert_eq!((raw_body["isin"].as_str(), raw_body["adjust"].as_str()), (Some(TTL_NEW), Some("none")));
    assert_eq!(raw_body["adjustments"], serde_json::json!([]));
    let raw = bars(&raw_body);
    let days: Vec<String> = raw.iter().map(|b| b.date.to_string()).collect();
    assert_eq!(days, DAYS, "a bar a trading day, oldest first, none invented");
    let isins: Vec<&str> = raw.iter().map(|b| b.isin.as_str()).collect();
    assert_eq!(isins, [TTL_OLD, TTL_OLD, TTL_OLD, TTL_NEW, TTL_NEW], "each bar names its ISIN");
    let (before, after) = (close_on(&raw, TTL_OLD, "2025-02-11"), close_on(&raw, TTL_NEW, "2025-02-12"));
    assert_eq!((before, after), (145.29, 14.01), "the README's closes");
    assert!((8.0..12.0).contains(&(before / after)), "unadjusted: about tenfold");

    // As the file has them: every bar the store holds of both ISINs, and
    // the file's own row of the day before the split.
    let isins = [mds_domain::Isin::parse(TTL_NEW).unwrap(), mds_domain::Isin::parse(TTL_OLD).unwrap()];
    let stored = app.store.bars_of(&isins, DAYS[0].parse().unwrap(), DAYS[4].parse().unwrap()).await.unwrap();
    assert_eq!(raw, stored, "adjust=none is the file's numbers");
    let file = std::fs::read_to_string(_dir.path().join("nse-cm-bhavcopy-2025-02-11.csv")).unwrap();
    let row = file.lines().find(|l| l.contains(TTL_OLD)).expect("TTL's row");
    let cells: Vec<&str> = row.split(',').collect();
    let b = raw.iter().find(|b| b.date.to_string() == "2025-02-11").unwrap();
    assert_eq!(
        [b.open.to_f64(), b.high.to_f64(), b.low.to_f64(), b.close.to_f64()],
        [14, 15, 16, 17].map(|i| cells[i].parse::<f64>().unwrap()),
        "OpnPric, HghPric, LwPric, ClsPric"
    );
    assert_eq!(b.volume.to_string(), cells[24], "TtlTradgVol");

    // Split-adjusted (the default): the split's factor applied before its
    // ex-date, volumes the other way; no step beyond an ordinary day.
    let split_body = app.get_json(&format!("/v1/companies/{TTL_NEW}/prices?{span}"), 200).await;
    assert_eq!(split_body["adjust"], "split");
    assert_eq!(app.get_json(&format!("/v1/companies/{TTL_NEW}/prices?{span}&adjust=split"), 200).await, split_body);
    let actions = app.get_json(&format!("/v1/companies/{TTL_NEW}/actions?type=split"), 200).await;
    let split_action = actions["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["ex_date"] == "2025-02-12")
        .expect("TTL's split of 2025-02-12")
        .clone();
    assert_eq!(split_action["isin"], TTL_OLD);
    assert_eq!(
        split_body["adjustments"],
        serde_json::json!([{"action_id": split_action["id"], "ex_date": "2025-02-12", "type": "split", "factor": 0.1}])
    );
    let split = bars(&split_body);
    let adjusted_before = close_on(&split, TTL_OLD, "2025-02-11");
    assert_eq!(adjusted_before, 14.529);
    assert!((adjusted_before / after - 1.0).abs() < 0.2, "split-adjusted: {adjusted_before} then {after}");
    let closes: Vec<f64> = split.iter().map(|b| b.close.to_f64()).collect();
    assert_eq!(closes, adjusted_closes(&raw, &split_body["adjustments"]));
    for (s, r) in split.iter().zip(&raw) {
        let expected = match s.date.to_string().as_str() < "2025-02-12" {
            true => (r.volume as f64 / 0.1).round() as u64,
            false => r.volume,
        };
        assert_eq!(s.volume, expected, "{}: volume the other way", s.date);
        assert_eq!((s.turnover, s.trades, &s.isin), (r.turnover, r.trades, &r.isin), "not adjusted");
    }

    // Without the lineage: the new ISIN's own bars only. The old ISIN's
    // series is its own, adjusted by its split.
    let own = bars(&app.get_json(&format!("/v1/companies/{TTL_NEW}/prices?{span}&lineage=false"), 200).await);
    assert_eq!(own, raw[3..].to_vec(), "after the split nothing adjusts");
    let old = app.get_json(&format!("/v1/companies/{TTL_OLD}/prices?{span}"), 200).await;
    assert_eq!(bars(&old).len(), 3);
    assert_eq!(close_on(&bars(&old), TTL_OLD, "2025-02-11"), 14.529);
    // Bounds: both inclusive; `to` defaults to the last day loaded.
    let one = bars(&app.get_json(&format!("/v1/companies/{TTL_NEW}/prices?from=2025-02-11&to=2025-02-11"), 200).await);
    assert_eq!(one.iter().map(|b| b.date.to_string()).collect::<Vec<_>>(), ["2025-02-11"]);
    let defaulted = app.get_json(&format!("/v1/companies/{TTL_NEW}/prices"), 200).await;
    assert_eq!(defaulted, split_body, "a year to the last day loaded holds the five days");

    // Total: a dividend that went ex on one of the days adjusts the bars
    // before it by (close - amount) / close, of the last close before it.
    let dividends = app
        .store
        .action_page(
            &mds_store::ActionFilter {
                action_type: Some(mds_domain::actions::ActionType::Dividend),
                from: Some(DAYS[1].parse().unwrap()),
                to: Some(DAYS[4].parse().unwrap()),
                source: None,
            },
            None,
            10_000,
        )
        .await
        .unwrap();
    let mut checked = 0;
    for d in &dividends {
        let mds_domain::actions::Action::Dividend { dividend } = &d.action else { continue };
        let Some(amount) = dividend.amount else { continue };
        let path = format!("/v1/companies/{}/prices?{span}&lineage=false", d.isin);
        let r = app.get(&format!("{path}&adjust=none")).await;
        if r.status() != 200 {
            continue;
        }
        let series = bars(&r.json().await.unwrap());
        let Some(last) = series.iter().rev().find(|b| b.date < d.ex_date) else { continue };
        let total = app.get_json(&format!("{path}&adjust=total"), 200).await;
        let applied = total["adjustments"].as_array().unwrap();
        let this = applied.iter().find(|a| a["action_id"] == d.id.as_str()).expect("the dividend is applied");
        let close = last.close.to_f64();
        let factor = this["factor"].as_f64().unwrap();
        assert!((factor - (close - amount) / close).abs() < 1e-9, "{}: {factor} of {close} and {amount}", d.id);
        let closes: Vec<f64> = bars(&total).iter().map(|b| b.close.to_f64()).collect();
        assert_eq!(closes, adjusted_closes(&series, &total["adjustments"]), "{}", d.isin);
        if applied.iter().all(|a| a["type"] == "dividend") {
            let volumes: Vec<u64> = bars(&total).iter().map(|b| b.volume).collect();
            assert_eq!(volumes, series.iter().map(|b| b.volume).collect::<Vec<_>>(), "a dividend leaves volumes");
        }
        checked += 1;
    }
    assert!(checked >= 3, "dividends went ex on these days: {checked} checked of {}", dividends.len());

    // CSV: the bars only, a header of the bar's fields; a tag of its own.
    let path = format!("/v1/companies/{TTL_NEW}/prices?{span}");
    let r = app.get_with_headers(&path, &[("accept", "text/csv")]).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/csv; charset=utf-8");
    let vary: Vec<&str> = r.headers().get_all("vary").iter().map(|v| v.to_str().unwrap()).collect();
    assert!(vary.iter().any(|v| v.eq_ignore_ascii_case("accept")), "Vary: {vary:?}");
    let csv_tag = r.headers()["etag"].to_str().unwrap().to_owned();
    let (header, rows) = csv_rows(&r.text().await.unwrap());
    assert_eq!(
        header,
        "date,isin,series,open,high,low,close,last,prev_close,volume,turnover,trades,delivery_qty,delivery_pct,isin_source"
    );
    assert_eq!(rows.len(), split.len());
    for (row, bar) in rows.iter().zip(&split) {
        assert_eq!(row.len(), Bar::FIELDS.len());
        assert_eq!((row[0].as_str(), row[1].as_str()), (bar.date.to_string().as_str(), bar.isin.as_str()));
        assert_eq!(row[6].parse::<f64>().unwrap(), bar.close.to_f64());
        assert_eq!(row[9].parse::<u64>().unwrap(), bar.volume);
        assert_eq!(row[14], "file");
    }
    // Tags: JSON and CSV apart, each answered 304 with Vary.
    let r = app.get(&path).await;
    let vary: Vec<&str> = r.headers().get_all("vary").iter().map(|v| v.to_str().unwrap()).collect();
    assert!(vary.iter().any(|v| v.eq_ignore_ascii_case("accept")), "Vary: {vary:?}");
    let json_tag = r.headers()["etag"].to_str().unwrap().to_owned();
    assert_ne!(json_tag, csv_tag);
    let r = app.get_with_headers(&path, &[("if-none-match", &json_tag)]).await;
    assert_eq!(r.status(), 304);
    assert!(r.headers().get_all("vary").iter().any(|v| v == "accept"), "a 304 varies as its 200");
    let r = app.get_with_headers(&path, &[("if-none-match", &csv_tag), ("accept", "text/csv")]).await;
    assert_eq!(r.status(), 304);
    let r = app.get_with_headers(&path, &[("if-none-match", &json_tag), ("accept", "text/csv")]).await;
    assert_eq!(r.status(), 200, "the JSON form's tag is not the CSV form's");

    // Ten years a request at most: the bound names `from`.
    for q in ["from=2015-02-12&to=2025-02-13", "from=2015-02-12"] {
        let b = assert_problem(app.get(&format!("/v1/companies/{TTL_NEW}/prices?{q}")).await, 400, "invalid_parameter")
            .await;
        assert_eq!(b["param"], "from", "{q}: {b}");
    }
    app.get_json(&format!("/v1/companies/{TTL_NEW}/prices?from=2015-02-13"), 200).await;
}

#[tokio::test]
async fn the_market_of_a_day_is_walked_once_and_both_routes_count() {
    let (app, _dir) = loaded().await;
    let day = "2025-02-12";
    let stored = app.store.day_bars(day.parse().unwrap()).await.unwrap();
    assert!(stored.bars.len() > 1000, "a day of NSE's market");

    // The keyset walk covers the day exactly once, by ISIN then series.
    let path = format!("/v1/prices?date={day}&limit=200");
    let (rows, last) = app
        .walk_pages(&path, 200, |page| {
            assert_eq!(page["date"], day);
        })
        .await;
    assert_eq!(last["next_cursor"], Value::Null);
    let walked: Vec<Bar> = rows.into_iter().map(|r| serde_json::from_value(r).unwrap()).collect();
    let want: Vec<Bar> = stored.bars.iter().map(|b| b.bar(stored.date)).collect();
    assert_eq!(walked, want, "every bar once, in order");
    let keys: std::collections::HashSet<(String, String)> =
        walked.iter().map(|b| (b.isin.to_string(), b.series.to_string())).collect();
    assert_eq!(keys.len(), walked.len());
    // A series: only its bars. Another day: nothing invented.
    let be = app.get_json(&format!("/v1/prices?date={day}&series=BE&limit=200"), 200).await;
    let be: Vec<Bar> = serde_json::from_value(be["data"].clone()).unwrap();
    assert!(!be.is_empty() && be.iter().all(|b| b.series.as_str() == "BE"));
    assert!(be.iter().any(|b| b.isin.as_str() == TTL_NEW), "TTL's first day, in BE");
    let holiday = app.get_json("/v1/prices?date=2025-02-08", 200).await;
    assert_eq!(holiday, serde_json::json!({"date": "2025-02-08", "data": [], "has_more": false, "next_cursor": null}));
    // A cursor is bound to its day and series.
    let first = app.get_json(&format!("/v1/prices?date={day}&limit=5"), 200).await;
    let cursor = first["next_cursor"].as_str().unwrap();
    for other in ["date=2025-02-11", &format!("date={day}&series=EQ")] {
        let r = app.get(&format!("/v1/prices?{other}&cursor={cursor}")).await;
        assert_eq!(assert_problem(r, 400, "invalid_cursor").await["param"], "cursor");
    }

    // CSV: the whole day in one answer.
    let r = app.get_with_headers(&format!("/v1/prices?date={day}"), &[("accept", "text/csv")]).await;
    assert_eq!(r.headers()["content-type"], "text/csv; charset=utf-8");
    let (header, rows) = csv_rows(&r.text().await.unwrap());
    assert_eq!(header, Bar::FIELDS.join(","));
    assert_eq!(rows.len(), want.len());
    let isins: Vec<&str> = rows.iter().map(|r| r[1].as_str()).collect();
    assert_eq!(isins, want.iter().map(|b| b.isin.as_str()).collect::<Vec<_>>());

    // Bad input.
    let isin = TTL_NEW;
    app.assert_params_refused(
        &format!("/v1/companies/{isin}/prices"),
        naming(
            "invalid_parameter",
            &[
                ("adjust", &["adjust=splits", "adjust="][..]),
                ("from", &["from=2024-1-01", "from=2024-02-30", "from=2025-03-01"][..]),
                ("to", &["to=x", "from=2025-02-01&to=2025-01-31"][..]),
                ("lineage", &["lineage=yes"][..]),
            ],
        ),
    )
    .await;
    app.assert_params_refused(
        &format!("/v1/companies/{isin}/prices"),
        [("date=2025-02-12", "unknown_parameter", "date")],
    )
    .await;
    app.assert_params_refused(
        "/v1/prices",
        naming(
            "invalid_parameter",
            &[
                ("date", &["", "limit=5", "date=2025-2-12"][..]),
                ("series", &["date=2025-02-12&series=EQX"][..]),
                ("limit", &["date=2025-02-12&limit=0"][..]),
            ],
        ),
    )
    .await;
    let unknown = mds_testkit::fixtures::isin_of(7);
    assert_problem(app.get(&format!("/v1/companies/{unknown}/prices")).await, 404, "not_found").await;
    assert_problem(app.get("/v1/companies/INE592B01025/prices").await, 404, "not_found").await;
    assert_problem(app.get("/v1/companies/XX/prices?adjust=x").await, 400, "invalid_parameter").await;

    // Counting: 200s (either form), 400 and 404 count; a 304 does not.
    let before = app.counted().await;
    let r = app.get(&format!("/v1/companies/{isin}/prices")).await;
    assert_eq!(r.headers()["cache-control"].to_str().unwrap().split(',').next().unwrap(), "private");
    let etag = r.headers()["etag"].to_str().unwrap().to_owned();
    let r = app.get_with_headers(&format!("/v1/prices?date={day}"), &[("accept", "text/csv")]).await;
    let market_tag = r.headers()["etag"].to_str().unwrap().to_owned();
    assert_eq!(app.get("/v1/prices").await.status(), 400);
    assert_eq!(app.get("/v1/companies/INE002A01019/prices").await.status(), 404);
    let r = app.get_with_headers(&format!("/v1/companies/{isin}/prices"), &[("if-none-match", &etag)]).await;
    assert_eq!(r.status(), 304);
    let r = app
        .get_with_headers(&format!("/v1/prices?date={day}"), &[("if-none-match", &market_tag), ("accept", "text/csv")])
        .await;
    assert_eq!(r.status(), 304);
    let counted = app.counted().await.since(&before);
    assert_eq!(counted.month, 4, "200s, a 400 and a 404 count; the 304s do not");
    assert_eq!(counted.on("/v1/prices"), 2, "each under its route");
    assert_eq!(counted.on("/v1/companies/{isin}/prices"), 2);
}

/// Contract 13.2 and 14.2: a dividend's `factor` on the actions routes is
/// the price routes' own, from the last close before its ex-date; `null`
/// where no close before it is loaded.
#[tokio::test]
async fn dividends_on_the_actions_routes_carry_the_price_routes_factor() {
    let (app, _dir) = loaded().await;
    const HERO: &str = "INE158A01026";
    // Hero MotoCorp's interim dividend of Rs 100, ex 2025-02-12.
    let own =
        app.get_json(&format!("/v1/companies/{HERO}/actions?type=dividend&from=2025-02-12&to=2025-02-12"), 200).await;
    let own = own["data"].as_array().unwrap();
    assert_eq!(own.len(), 1);
    let prices = app.get_json(&format!("/v1/companies/{HERO}/prices?from={}&adjust=total", DAYS[0]), 200).await;
    let adjustment = prices["adjustments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["action_id"] == own[0]["id"])
        .expect("the price route adjusts by the dividend")
        .clone();
    let close = close_on(
        &bars(&app.get_json(&format!("/v1/companies/{HERO}/prices?from={}&adjust=none", DAYS[0]), 200).await),
        HERO,
        "2025-02-11",
    );
    let want = (close - 100.0) / close;
    let factor = own[0]["factor"].as_f64().expect("a factor from the close of 2025-02-11");
    assert!((factor - want).abs() < 1e-9, "{factor} vs {want}");
    assert_eq!(own[0]["factor"], adjustment["factor"], "one rule on both routes");
    // The calendar says the same; a dividend going ex before the first day
    // loaded (CONCOR, 2025-02-06) has no close before it: null.
    let page =
        app.get_json("/v1/actions?ex_date_from=2025-02-06&ex_date_to=2025-02-12&type=dividend&limit=100", 200).await;
    let data = page["data"].as_array().unwrap();
    let hero = data.iter().find(|a| a["id"] == own[0]["id"]).expect("in the calendar");
    assert_eq!(hero["factor"], own[0]["factor"]);
    let concor = data.iter().find(|a| a["symbol"] == "CONCOR" && a["ex_date"] == "2025-02-06").expect("CONCOR's");
    assert!(concor["factor"].is_null(), "no close before 2025-02-07 is loaded");
    let with = data.iter().filter(|a| a["factor"].is_number()).count();
    assert!(with > 10, "the dividends after the first day loaded have factors ({with})");
}

/// With no answer kept (`--page-cache-mib 0`: every answer made), a series
/// asked again with other dates or another adjustment is cut from the
/// lineage's whole series the node keeps (`--price-series-mib`), not read
/// from the store again: with the store unreachable, it is still answered.
#[tokio::test]
async fn with_no_answer_kept_a_series_is_still_cut_from_memory() {
    let ((app, _dir), faults) = keeping_no_answer().await;
    let whole = bars(&app.get_json(&format!("/v1/companies/{TTL_NEW}/prices?from={}", DAYS[0]), 200).await);
    assert_eq!(whole.len(), DAYS.len());

    faults.set(common::faults::Fault::Unreachable);
    let cut = app.get_json(&format!("/v1/companies/{TTL_NEW}/prices?from={}&adjust=none", DAYS[1]), 200).await;
    faults.set(common::faults::Fault::None);
    let cut = bars(&cut);
    assert_eq!(cut.len(), DAYS.len() - 1);
    assert_eq!(cut.first().map(|b| b.date.to_string()), Some(DAYS[1].to_owned()));
}

/// With no answer kept, a market day's pages (JSON and CSV) are cut from
/// the day the node keeps apart as it keeps a series (`--price-series-mib`):
/// with the store unreachable after the first page, the next page and the
/// CSV are still answered, and the pages walk the day as the store holds it.
#[tokio::test]
async fn with_no_answer_kept_a_market_day_is_still_cut_from_memory() {
    let ((app, _dir), faults) = keeping_no_answer().await;
    let day = DAYS[2];
    let first = app.get_json(&format!("/v1/prices?date={day}&limit=5"), 200).await;
    let cursor = first["next_cursor"].as_str().unwrap().to_owned();

    faults.set(common::faults::Fault::Unreachable);
    let next = app.get_json(&format!("/v1/prices?date={day}&limit=5&cursor={cursor}"), 200).await;
    let csv = app.get_with_headers(&format!("/v1/prices?date={day}"), &[("accept", "text/csv")]).await;
    faults.set(common::faults::Fault::None);
    assert_eq!(csv.status(), 200);
    let (_, rows) = csv_rows(&csv.text().await.unwrap());

    let stored = app.store.day_bars(day.parse().unwrap()).await.unwrap();
    let want: Vec<Bar> = stored.bars.iter().map(|b| b.bar(stored.date)).collect();
    let got: Vec<Bar> = [bars_of(&first), bars_of(&next)].concat();
    assert_eq!(got, want[..10], "the first two pages, in the store's order");
    assert_eq!(rows.len(), want.len(), "the whole day in CSV");
}

/// The bars of a market page.
fn bars_of(page: &Value) -> Vec<Bar> {
    serde_json::from_value(page["data"].clone()).unwrap()
}

/// The loaded store served by a node keeping no answer
/// (`--page-cache-mib 0`), and the store's faults.
async fn keeping_no_answer() -> ((common::TestApp, tempfile::TempDir), std::sync::Arc<common::faults::Faulty>) {
    let mut config = common::reloading_every(std::time::Duration::from_millis(100));
    config.node.page_cache_bytes = 0;
    common::with_faults(common::Options { config, ..common::Options::default() }, loaded_with).await
}
