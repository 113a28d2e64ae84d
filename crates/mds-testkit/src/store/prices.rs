//! Suite functions for end-of-day prices ([`mds_store::PriceStore`]): a
//! day is replaced whole and idempotently, an import is all or nothing and
//! merges with what a day holds (its own earlier days included), and the
//! reads (a series, the market on a day, the days held) filter, order and
//! page, across years (PostgreSQL: partitions); each day an import writes
//! is one `prices.published` event in its transaction.

use chrono::NaiveDate;
use mds_domain::prices::{Figures, IsinSource, Paise, Percent, Series};
use mds_store::{DayBars, PriceDay, PriceImport, StoredBar};

use super::*;
use crate::fixtures::isin_of;

/// The day `y`-`m`-`d`.
fn day(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).expect("a day")
}

/// A bar of the `i`-th ISIN in `series`, closing at `close` paise, with
/// every optional figure (`full`) or none.
fn bar(i: u32, series: &str, close: i64, full: bool) -> StoredBar {
    let p = Paise::from_units;
    StoredBar {
        isin: isin_of(i),
        series: Series::parse(series).expect("a series"),
        symbol: Ticker::parse(&format!("SYM{i}")).expect("a ticker"),
        isin_source: if full { IsinSource::Symbol } else { IsinSource::File },
        figures: Figures {
            open: p(close - 100),
            high: p(close + 250),
            low: p(close - 300),
            close: p(close),
            last: full.then(|| p(close + 5)),
            prev_close: p(close - 50),
            // Past 2^32 and 2^53 paise: the columns are 64-bit.
            volume: 5_000_000_000 + u64::from(i),
            turnover: p(99_416_701_500_000_015),
            trades: 142_871,
            delivery_qty: full.then_some(26_873_975),
            delivery_pct: full.then(|| Percent::from_units(3244)),
        },
    }
}

/// A day of `bars`.
fn of(date: NaiveDate, bars: Vec<StoredBar>) -> DayBars {
    DayBars { date, bars }
}

/// `day` sorted as the store reads it.
fn sorted(mut day: DayBars) -> DayBars {
    day.sort();
    day
}

/// A day is written whole and read back exactly; the same day again
/// writes nothing; another set of bars replaces every bar it held. The
/// `prices` generation moves with every write, and only then.
pub async fn a_day_is_replaced_whole_and_idempotently(store: &dyn Store) {
    store.migrate().await.expect("migrate");
    let prices = || async { store.generations().await.expect("generations").prices };
    assert_eq!(prices().await, 0, "no price import yet");
    let d = day(2025, 2, 12);
    let first = of(d, vec![bar(3, "EQ", 14529, true), bar(1, "BE", 1401, false), bar(1, "EQ", 1402, true)]);
    let done = store.replace_day(&first).await.expect("write");
    assert_eq!(done, PriceImport { new: 1, bars_written: 3, ..PriceImport::default() });
    assert_eq!(store.day_bars(d).await.expect("read"), sorted(first.clone()), "every field, by ISIN then series");
    assert_eq!(store.price_days().await.expect("days"), [PriceDay { date: d, bars: 3 }]);
    assert_eq!(prices().await, 1, "a day written");

    let again = store.replace_day(&first).await.expect("again");
    assert_eq!(again, PriceImport { unchanged: 1, ..PriceImport::default() });
    assert_eq!(prices().await, 1, "nothing written: the generation stays");

    let second = of(d, vec![bar(1, "EQ", 1403, true), bar(2, "SM", 9000, false)]);
    let done = store.replace_day(&second).await.expect("replace");
    assert_eq!(done, PriceImport { replaced: 1, bars_written: 2, bars_removed: 3, ..PriceImport::default() });
    assert_eq!(store.day_bars(d).await.expect("read"), sorted(second));
    assert_eq!(store.price_days().await.expect("days"), [PriceDay { date: d, bars: 2 }]);
    assert_eq!(prices().await, 2, "a day replaced");

    assert_eq!(store.day_bars(day(2025, 2, 13)).await.expect("a day not held"), of(day(2025, 2, 13), vec![]));
    let emptied = store.replace_day(&of(d, vec![])).await.expect("empty");
    assert_eq!(emptied, PriceImport { replaced: 1, bars_removed: 2, ..PriceImport::default() });
    assert_eq!(store.price_days().await.expect("days"), []);
}

/// An import that fails half-way (an `Err` handed after days were
/// written) writes nothing, and the days held stay as they were.
pub async fn a_price_import_is_all_or_nothing(store: &dyn Store) {
    store.migrate().await.expect("migrate");
    let kept = of(day(2024, 12, 31), vec![bar(1, "EQ", 100, false)]);
    store.replace_day(&kept).await.expect("write");
    let mut days = vec![
        Ok(of(day(2024, 12, 31), vec![bar(1, "EQ", 200, false)])),
        Ok(of(day(2025, 1, 1), vec![bar(2, "EQ", 300, true)])),
        Err(StoreError::Invalid("the third file is bad".into())),
    ]
    .into_iter();
    let e = store.import_days(&mut days, &mut |handed, _held| handed).await.expect_err("refused");
    assert!(matches!(&e, StoreError::Invalid(m) if m == "the third file is bad"), "{e:?}");
    assert_eq!(store.price_days().await.expect("days"), [PriceDay { date: day(2024, 12, 31), bars: 1 }]);
    assert_eq!(store.day_bars(day(2024, 12, 31)).await.expect("read"), kept);
    assert_eq!(store.day_bars(day(2025, 1, 1)).await.expect("read").bars, []);
}

/// The `prices.published` events of the log after `after`.
async fn published_after(store: &dyn Store, after: mds_domain::EventId) -> Vec<mds_domain::prices::PricesPublished> {
    let page = store.event_page(after, &mds_domain::EventFilter::default(), 100).await.expect("log").events;
    assert!(page.iter().all(|e| e.event.kind == mds_domain::EventType::PricesPublished), "{page:?}");
    page.iter().map(|e| serde_json::from_value(e.event.data.clone()).expect("a publication")).collect()
}

/// Each day an import writes is one `prices.published` (`{"date",
/// "exchange", "bars"}`, the bars it holds after the import) in the
/// import's transaction, in day order, a day handed twice announced once;
/// a day left as it was, and an import that fails, announce nothing.
pub async fn a_price_import_announces_each_day_it_writes(store: &dyn Store) {
    use mds_domain::prices::{BARS_EXCHANGE, PricesPublished};
    store.migrate().await.expect("migrate");
    let (d1, d2) = (day(2025, 2, 12), day(2025, 2, 11));
    let published = |date, bars| PricesPublished { date, exchange: BARS_EXCHANGE, bars };
    let mut days = vec![
        Ok(of(d1, vec![bar(1, "EQ", 100, false), bar(2, "EQ", 200, false)])),
        Ok(of(d2, vec![bar(1, "EQ", 90, false)])),
        Ok(of(d1, vec![bar(3, "BE", 300, true)])),
    ]
    .into_iter();
    let mut union = |mut handed: DayBars, held: DayBars| {
        handed.bars.extend(held.bars);
        handed
    };
    let done = store.import_days(&mut days, &mut union).await.expect("import");
    assert_eq!((done.new, done.replaced), (2, 1));
    let all = published_after(store, mds_domain::EventId(0)).await;
    assert_eq!(all, [published(d2, 1), published(d1, 3)], "day order, the bars held last, once a day");

    let last = latest_event(store).await;
    let same = store.replace_day(&of(d2, vec![bar(1, "EQ", 90, false)])).await.expect("again");
    assert_eq!(same.unchanged, 1);
    let mut failing =
        vec![Ok(of(d2, vec![bar(1, "EQ", 91, false)])), Err(StoreError::Invalid("bad".into()))].into_iter();
    store.import_days(&mut failing, &mut |handed, _held| handed).await.expect_err("refused");
    assert_eq!(latest_event(store).await, last, "nothing announced");

    store.replace_day(&of(d2, vec![bar(1, "EQ", 91, false), bar(4, "EQ", 5, false)])).await.expect("changed");
    assert_eq!(published_after(store, last).await, [published(d2, 2)]);
}

/// Each day handed is merged with what the day holds then: held bars, and
/// within one import, what an earlier handing of the same day made.
pub async fn a_price_import_merges_with_what_a_day_holds(store: &dyn Store) {
    store.migrate().await.expect("migrate");
    let d = day(2026, 8, 21);
    store.replace_day(&of(d, vec![bar(1, "EQ", 100, false)])).await.expect("write");
    let mut seen = Vec::new();
    // The merge keeps every held bar the handed day does not have.
    let mut union = |mut handed: DayBars, held: DayBars| {
        seen.push(held.bars.len());
        for b in held.bars {
            if !handed.bars.iter().any(|h| h.isin == b.isin && h.series == b.series) {
                handed.bars.push(b);
            }
        }
        handed
    };
    let mut days = vec![
        Ok(of(d, vec![bar(2, "EQ", 200, true)])),
        Ok(of(d, vec![bar(3, "EQ", 300, true), bar(1, "EQ", 101, false)])),
        Ok(of(d, vec![bar(3, "EQ", 300, true)])),
    ]
    .into_iter();
    let done = store.import_days(&mut days, &mut union).await.expect("import");
    assert_eq!(seen, [1, 2, 3], "each merge sees what the import wrote before");
    assert_eq!(
        done,
        PriceImport { replaced: 2, unchanged: 1, bars_written: 5, bars_removed: 3, ..PriceImport::default() }
    );
    let held = store.day_bars(d).await.expect("read");
    assert_eq!(held, sorted(of(d, vec![bar(1, "EQ", 101, false), bar(2, "EQ", 200, true), bar(3, "EQ", 300, true)])));
}

/// A series reads one or several ISINs over an inclusive range of days,
/// across years, by day then ISIN; the market on a day reads by ISIN then
/// series, filtered by series, a keyset page at a time.
pub async fn price_reads_filter_order_and_page(store: &dyn Store) {
    store.migrate().await.expect("migrate");
    let days = [day(2024, 1, 1), day(2024, 12, 31), day(2025, 1, 1), day(2026, 8, 21)];
    let mut handed = days.iter().enumerate().map(|(n, &d)| {
        let c = 1000 * (n as i64 + 1);
        Ok(of(
            d,
            vec![
                bar(2, "EQ", c, true),
                bar(1, "BE", c + 1, false),
                bar(1, "EQ", c + 2, false),
                bar(3, "SM", c + 3, true),
            ],
        ))
    });
    let done = store.import_days(&mut handed, &mut |h, _| h).await.expect("import");
    assert_eq!(done, PriceImport { new: 4, bars_written: 16, ..PriceImport::default() });
    let held: Vec<NaiveDate> = store.price_days().await.expect("days").iter().map(|p| p.date).collect();
    assert_eq!(held, days);

    let series = store.bars_of(&[isin_of(1), isin_of(3)], day(2024, 12, 31), day(2025, 1, 1)).await.expect("a series");
    let keys: Vec<(NaiveDate, String, &str)> =
        series.iter().map(|b| (b.date, b.isin.as_str().to_owned(), b.series.as_str())).collect();
    let i1 = isin_of(1).as_str().to_owned();
    let i3 = isin_of(3).as_str().to_owned();
    assert_eq!(
        keys,
        [
            (days[1], i1.clone(), "BE"),
            (days[1], i1.clone(), "EQ"),
            (days[1], i3.clone(), "SM"),
            (days[2], i1.clone(), "BE"),
            (days[2], i1.clone(), "EQ"),
            (days[2], i3.clone(), "SM"),
        ]
    );
    assert_eq!(series[5], bar(3, "SM", 3003, true).bar(days[2]), "the wire bar of the stored one");
    assert_eq!(store.bars_of(&[isin_of(2)], days[0], days[3]).await.expect("all").len(), 4);
    assert_eq!(store.bars_of(&[isin_of(2)], days[3], days[0]).await.expect("from after to"), []);
    assert_eq!(store.bars_of(&[], days[0], days[3]).await.expect("no ISIN"), []);
    assert_eq!(store.bars_of(&[isin_of(9)], days[0], days[3]).await.expect("unknown"), []);

    let whole = store.market_page(days[3], None, None, 100).await.expect("the market");
    let keys: Vec<(String, &str)> = whole.iter().map(|b| (b.isin.as_str().to_owned(), b.series.as_str())).collect();
    let i2 = isin_of(2).as_str().to_owned();
    assert_eq!(keys, [(i1.clone(), "BE"), (i1.clone(), "EQ"), (i2.clone(), "EQ"), (i3.clone(), "SM")]);
    let mut paged = Vec::new();
    let mut after: Option<(mds_domain::Isin, Series)> = None;
    loop {
        let page = store.market_page(days[3], None, after.as_ref().map(|(i, s)| (i, *s)), 3).await.expect("a page");
        paged.extend(page.iter().cloned());
        match page.last() {
            Some(last) if page.len() == 3 => after = Some((last.isin.clone(), last.series)),
            _ => break,
        }
    }
    assert_eq!(paged, whole, "pages walk the whole day once");
    let eq = store.market_page(days[3], Some(Series::EQ), None, 100).await.expect("EQ only");
    assert_eq!(eq.iter().map(|b| b.isin.as_str().to_owned()).collect::<Vec<_>>(), [i1, i2]);
    assert_eq!(store.market_page(days[3], None, None, 0).await.expect("no room"), []);
    assert_eq!(store.market_page(day(2026, 8, 22), None, None, 10).await.expect("not held"), []);
}
