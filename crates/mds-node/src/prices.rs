//! End-of-day prices (contract 14.2): a security's series, adjusted and
//! continued through the ISINs it superseded (`GET
//! /v1/companies/{isin}/prices`, [`Node::company_prices`]), and the market
//! on one day in keyset pages (`GET /v1/prices`, [`Node::market_prices`]),
//! each as JSON or CSV ([`PriceFormat`]).
//!
//! # What is kept, and for how long
//! An answer is a function of the store's bars (the `prices` generation,
//! bumped by an import that wrote a day), its actions (the `actions`
//! generation: the adjustments) and, for a series, the catalog's identity
//! history (its lineage): [`PriceViews`] keeps, per `prices` and `actions`
//! generation followed by the node's reload task, the answers made (by
//! route, format and raw query; a series' also by catalog generation and
//! ISIN), the last day loaded, and each lineage's whole series as read
//! from the store ([`Lineage`]: its bars and the factors of its actions,
//! those of dividends and rights issues computed from the close before
//! them), so a series asked again with other bounds or another adjustment
//! is cut and adjusted in memory, not read again, and each market day
//! read, whole, so its pages and its CSV are cut from memory. The answers
//! are bounded in bytes by the node's page cache setting, the series and
//! days by their own (`price_series_bytes`, each): with no page kept, a
//! series or a market page is still cut from memory. A series' JSON is
//! written from the bars as kept, each with its factors, without copying
//! them ([`company_prices_json`]).
//!
//! # Tags
//! Each body is tagged with the digest of its bytes (as the actions
//! routes'), so an answer whose bytes did not change keeps its tag across
//! imports and is the same on every node; the CSV form's bytes, and so
//! its tag, differ from the JSON form's.
//!
//! # Cursors
//! A market cursor is the last bar's ISIN and series sealed with the
//! node's cursor codec under the scope `prices` and the filters' canonical
//! form (the day and series), so it is refused with another day or series,
//! on another list, or altered.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use arc_swap::ArcSwap;
use chrono::NaiveDate;
use mds_catalog::CursorError;
use mds_domain::Isin;
use mds_domain::actions::CorporateAction;
use mds_domain::bar_json::company_prices_json;
use mds_domain::price_query::{
    Adjust, Adjustment, CompanyPricesParams, MarketDay, MarketDayFilter, MarketDayQueryParams, MarketKey, close_before,
    factor_of, factors_of,
};
use mds_domain::prices::{Bar, Factors, Series};
use mds_store::ActionFilter;

use crate::action_pages::isins_of;
use crate::error::ReadError;
use crate::keyset::{Keyset, cut};
use crate::lists::per_catalog;
use crate::node::Node;
use crate::pages::{List, PageCache, PageKey};
use crate::tagged::Tagged;

/// The form an answer is asked in (`Accept`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriceFormat {
    /// `application/json`: the whole answer.
    Json,
    /// `text/csv`: a header line of the bar's fields and a line a bar; on
    /// `GET /v1/prices`, the whole day.
    Csv,
}

impl PriceFormat {
    /// Its part of a kept answer's key.
    fn key(self) -> &'static str {
        match self {
            PriceFormat::Json => "j",
            PriceFormat::Csv => "c",
        }
    }
}

/// A security's whole series, as its lineage gives it: every bar of its
/// ISINs, oldest first, and every action of theirs that may adjust it
/// with its factor, oldest ex-date first.
#[derive(Debug)]
pub struct Lineage {
    /// The bars, by day, then ISIN, then series.
    bars: Vec<Bar>,
    /// The actions of a type some adjustment applies whose factor is
    /// known, by ex-date then id.
    adjustments: Vec<Adjustment>,
}

impl Lineage {
    /// The series of `bars` (by day) of the lineage `isins` adjusted by
    /// `actions`: each action's factor its own, or for a dividend or rights
    /// issue, from the last close of the lineage before its ex-date
    /// ([`close_before`]).
    fn new(bars: Vec<Bar>, actions: &[CorporateAction], isins: &[Isin]) -> Self {
        let mut adjustments: Vec<Adjustment> = actions
            .iter()
            .filter(|a| Adjust::Total.applies(a.action.action_type()))
            .filter_map(|a| {
                let factor = factor_of(a, || close_before(&bars, isins, a.ex_date))?;
                Some(Adjustment {
                    action_id: a.id.clone(),
                    ex_date: a.ex_date,
                    action_type: a.action.action_type(),
                    factor,
                })
            })
            .collect();
        adjustments.sort_by(|a, b| (a.ex_date, &a.action_id).cmp(&(b.ex_date, &b.action_id)));
        Lineage { bars, adjustments }
    }

    /// What it holds, in bytes (roughly: its vectors and the ISINs' text).
    fn bytes(&self) -> usize {
        self.bars.len() * BAR_BYTES + self.adjustments.len() * (size_of::<Adjustment>() + 32)
    }

    /// Its bars of `from` to `to` (both inclusive), to be adjusted as
    /// `adjust` asks by the adjustments whose ex-date is after the first of
    /// them and not after `last` (the last day loaded: an action yet to go
    /// ex adjusts nothing).
    fn cut(&self, from: NaiveDate, to: NaiveDate, adjust: Adjust, last: NaiveDate) -> Cut<'_> {
        let start = self.bars.partition_point(|b| b.date < from);
        let end = self.bars.partition_point(|b| b.date <= to);
        let bars = &self.bars[start..end.max(start)];
        let Some(first) = bars.first().map(|b| b.date) else { return Cut::default() };
        let applied: Vec<Adjustment> = self
            .adjustments
            .iter()
            .filter(|a| adjust.applies(a.action_type) && a.ex_date > first && a.ex_date <= last)
            .cloned()
            .collect();
        Cut { bars, factors: factors_of(bars, &applied), applied }
    }
}

/// Bars of a [`Lineage`] as asked: its bars of the days asked, as held
/// (not copied), what each is adjusted by, and the adjustments applied.
#[derive(Debug, Default)]
struct Cut<'a> {
    /// The bars, by day, as held.
    bars: &'a [Bar],
    /// What each of them is adjusted by.
    factors: Vec<Factors>,
    /// The adjustments applied to at least one of them.
    applied: Vec<Adjustment>,
}

impl Cut<'_> {
    /// The bars adjusted (copies).
    fn adjusted(&self) -> Vec<Bar> {
        let adjust = |(bar, f): (&Bar, &Factors)| {
            let mut bar = bar.clone();
            bar.adjust(*f);
            bar
        };
        self.bars.iter().zip(&self.factors).map(adjust).collect()
    }

    /// The answer of the company `isin` in `format`, adjusted as `adjust`
    /// says: [`company_prices_json`] (a `V1CompanyPrices`) or the CSV of
    /// its bars adjusted.
    fn answer(&self, isin: &Isin, adjust: Adjust, format: PriceFormat) -> Tagged {
        match format {
            PriceFormat::Csv => csv(&self.adjusted()),
            PriceFormat::Json => {
                Tagged::hashed(company_prices_json(isin, adjust, self.bars, &self.factors, &self.applied))
            }
        }
    }
}

/// What a node keeps of the price routes for one `prices` and `actions`
/// generation; see the [module](self).
#[derive(Debug)]
struct Generation {
    /// The generations (`prices`, `actions`); `None` before the node first
    /// followed the store.
    at: Option<(i64, i64)>,
    /// The answers made, by route and key.
    pages: Arc<PageCache>,
    /// The last day loaded, once read (`Some(None)`: no day is loaded).
    last_day: Mutex<Option<Option<NaiveDate>>>,
    /// The lineages read, by catalog generation, ISIN and whether the
    /// lineage was followed.
    series: Mutex<Held<SeriesKey, Lineage>>,
    /// The market's days read, each whole, by ISIN then series.
    days: Mutex<Held<NaiveDate, Vec<Bar>>>,
}

/// What a generation keeps of what it read from the store, with the bytes
/// it holds: all dropped when one more would pass the node's
/// `price_series_bytes` (and read again when asked: a series or a day is
/// never more than one read away).
#[derive(Debug)]
struct Held<K, V> {
    /// The values kept, by key.
    values: HashMap<K, Arc<V>>,
    /// What they hold, in bytes, as their makers counted.
    bytes: usize,
}

impl<K: std::hash::Hash + Eq, V> Held<K, V> {
    fn new() -> Self {
        Held { values: HashMap::new(), bytes: 0 }
    }

    /// The value kept for `key`.
    fn get(&self, key: &K) -> Option<Arc<V>> {
        self.values.get(key).cloned()
    }

    /// Keeps `value` of `size` bytes for `key` when it fits in `bound`,
    /// dropping all else kept when they would not fit together.
    fn put(&mut self, key: K, value: Arc<V>, size: usize, bound: usize) {
        if size > bound {
            return;
        }
        if self.bytes + size > bound {
            *self = Held::new();
        }
        self.bytes += size;
        self.values.insert(key, value);
    }
}

/// What a bar is taken to hold in memory: the struct and its ISIN's text.
const BAR_BYTES: usize = size_of::<Bar>() + 32;

/// What a lineage's series is kept by: the catalog generation its lineage
/// was read from, the ISIN asked for, and whether the lineage was followed.
type SeriesKey = (i64, Isin, bool);

impl Generation {
    fn new(at: Option<(i64, i64)>, max_bytes: usize) -> Self {
        Generation {
            at,
            pages: Arc::new(PageCache::new(max_bytes)),
            last_day: Mutex::new(None),
            series: Mutex::new(Held::new()),
            days: Mutex::new(Held::new()),
        }
    }
}

/// The price routes' answers and series a node keeps, per `prices` and
/// `actions` generation; see the [module](self).
#[derive(Debug)]
pub struct PriceViews {
    current: ArcSwap<Generation>,
    max_bytes: usize,
}

impl PriceViews {
    /// Keeps at most `max_bytes` of answers per generation (`0`: none);
    /// the series, as much as the node's `price_series_bytes` says.
    pub fn new(max_bytes: usize) -> Self {
        PriceViews { current: ArcSwap::from_pointee(Generation::new(None, max_bytes)), max_bytes }
    }

    /// What is kept for the generations followed now. Taken before the
    /// store is read, and what is made kept in it: what is read across a
    /// move goes to the old generation, which nobody asks again.
    fn current(&self) -> Arc<Generation> {
        self.current.load_full()
    }

    /// Follows the store's `prices` and `actions` generations: another
    /// pair starts with nothing kept.
    pub fn follow(&self, prices: i64, actions: i64) {
        let at = Some((prices, actions));
        if self.current.load().at == at {
            return;
        }
        self.current.rcu(|held| match held.at == at {
            true => Arc::clone(held),
            false => Arc::new(Generation::new(at, self.max_bytes)),
        });
    }
}

/// The market's cursors: the scope `prices`, and a position sealed as the
/// ISIN's 12 bytes, then the series'.
impl Keyset for MarketDayFilter {
    const LIST: &'static [u8] = b"prices";
    type Key = MarketKey;

    fn key_bytes(key: &MarketKey) -> Vec<u8> {
        let mut out = Vec::with_capacity(14);
        out.extend_from_slice(key.isin.as_str().as_bytes());
        out.extend_from_slice(key.series.as_str().as_bytes());
        out
    }

    fn key_of(bytes: &[u8]) -> Result<MarketKey, CursorError> {
        let (isin, series) = bytes.split_at_checked(Isin::LEN).ok_or(CursorError::Forged)?;
        let isin = std::str::from_utf8(isin).ok().and_then(|s| Isin::parse(s).ok()).ok_or(CursorError::Forged)?;
        let series = std::str::from_utf8(series).ok().and_then(|s| Series::parse(s).ok()).ok_or(CursorError::Forged)?;
        if series.as_str().len() != bytes.len() - Isin::LEN {
            return Err(CursorError::Forged);
        }
        Ok(MarketKey { isin, series })
    }

    fn canonical(&self) -> String {
        MarketDayFilter::canonical(self)
    }
}

/// Bars as CSV: the header line and a line a bar.
fn csv(bars: &[Bar]) -> Tagged {
    let mut out = String::with_capacity(64 + bars.len() * 120);
    Bar::csv_header(&mut out);
    for bar in bars {
        bar.write_csv(&mut out);
    }
    Tagged::hashed(out.into_bytes())
}

impl Node {
    /// The last day loaded (`None`: none is), as read once per generation.
    async fn last_price_day(&self, kept: &Generation) -> Result<Option<NaiveDate>, ReadError> {
        if let Some(last) = *kept.last_day.lock().unwrap_or_else(PoisonError::into_inner) {
            return Ok(last);
        }
        let last = self.store().price_days().await?.last().map(|d| d.date);
        *kept.last_day.lock().unwrap_or_else(PoisonError::into_inner) = Some(last);
        Ok(last)
    }

    /// The whole series of `isins` (the lineage of `isins[0]`), kept or
    /// read from the store (and kept).
    async fn lineage_series(
        &self,
        kept: &Generation,
        catalog: i64,
        isins: &[Isin],
        followed: bool,
    ) -> Result<Arc<Lineage>, ReadError> {
        let key = (catalog, isins[0].clone(), followed);
        if let Some(found) = kept.series.lock().unwrap_or_else(PoisonError::into_inner).get(&key) {
            return Ok(found);
        }
        let bars = self.store().bars_of(isins, NaiveDate::MIN, NaiveDate::MAX).await?;
        let actions = self.store().actions_of(isins, &ActionFilter::default()).await?;
        let made = Arc::new(Lineage::new(bars, &actions, isins));
        let bound = self.config().price_series_bytes;
        kept.series.lock().unwrap_or_else(PoisonError::into_inner).put(key, made.clone(), made.bytes(), bound);
        Ok(made)
    }

    /// Every bar of the market on `date`, by ISIN then series, kept or read
    /// from the store (and kept); `None` when no day is kept
    /// (`price_series_bytes` 0): a page is then read from the store alone.
    async fn market_day(&self, kept: &Generation, date: NaiveDate) -> Result<Option<Arc<Vec<Bar>>>, ReadError> {
        if let Some(found) = kept.days.lock().unwrap_or_else(PoisonError::into_inner).get(&date) {
            return Ok(Some(found));
        }
        let bound = self.config().price_series_bytes;
        if bound == 0 {
            return Ok(None);
        }
        let mut day = self.store().day_bars(date).await?;
        day.sort();
        let made: Arc<Vec<Bar>> = Arc::new(day.bars.iter().map(|b| b.bar(date)).collect());
        let size = made.len() * BAR_BYTES;
        kept.days.lock().unwrap_or_else(PoisonError::into_inner).put(date, made.clone(), size, bound);
        Ok(Some(made))
    }

    /// The prices of the company with `isin` asked with the query string
    /// `raw` in `format` (`V1CompanyPrices`, or its bars as CSV): kept, or
    /// parsed by `parse` and made (and kept). `None` when the catalog has
    /// no such company. A bad query is refused before an unknown ISIN is.
    pub async fn company_prices<E: From<ReadError>>(
        &self,
        isin: &Isin,
        raw: Option<&str>,
        format: PriceFormat,
        parse: impl FnOnce(Option<&str>) -> Result<CompanyPricesParams, E>,
    ) -> Result<Option<Tagged>, E> {
        let catalog = self.catalog_version();
        let kept = self.price_views().current();
        let kept_as = per_catalog(&catalog, &[isin.as_str(), format.key(), raw.unwrap_or("")]);
        let key = PageKey { list: List::CompanyPrices, query: &kept_as };
        if let Some(page) = kept.pages.get(key) {
            return Ok(Some(page));
        }
        let params = parse(raw)?;
        let Some(isins) = isins_of(&catalog, isin, params.lineage()) else { return Ok(None) };
        let generation = catalog.generation();
        drop(catalog);
        let last = self.last_price_day(&kept).await?;
        let span = params.span(last).map_err(ReadError::from)?;
        let adjust = params.adjust();
        let made = match (span, last) {
            (Some((from, to)), Some(last)) => {
                let series = self.lineage_series(&kept, generation, &isins, params.lineage()).await?;
                series.cut(from, to, adjust, last).answer(isin, adjust, format)
            }
            _ => Cut::default().answer(isin, adjust, format),
        };
        kept.pages.put(key, made.clone());
        Ok(Some(made))
    }

    /// The market on a day asked with the query string `raw` in `format`:
    /// a page (`V1MarketDay`) in JSON, the whole day (its `cursor` and
    /// `limit` checked but not used) in CSV; kept, or parsed by `parse`
    /// and read from the store (and kept).
    pub async fn market_prices<E: From<ReadError>>(
        &self,
        raw: Option<&str>,
        format: PriceFormat,
        parse: impl FnOnce(Option<&str>) -> Result<MarketDayQueryParams, E>,
    ) -> Result<Tagged, E> {
        let kept = self.price_views().current();
        let kept_as = format!("{}\0{}", format.key(), raw.unwrap_or(""));
        let key = PageKey { list: List::MarketPrices, query: &kept_as };
        if let Some(page) = kept.pages.get(key) {
            return Ok(page);
        }
        let query = parse(raw)?;
        let made = match format {
            PriceFormat::Csv => self.market_csv(&kept, &query.filter).await?,
            PriceFormat::Json => self.market_page(&kept, &query).await?,
        };
        kept.pages.put(key, made.clone());
        Ok(made)
    }

    /// One page of the market for `query`, as JSON: cut from the day
    /// kept, or read from the store.
    async fn market_page(&self, kept: &Generation, query: &MarketDayQueryParams) -> Result<Tagged, ReadError> {
        let filter = &query.filter;
        let after = self.resume_after(filter, query.page.cursor.as_deref())?;
        let limit = query.page.limit.get();
        let mut data = match self.market_day(kept, filter.date).await? {
            Some(day) => {
                let start = after
                    .as_ref()
                    .map_or(0, |k| day.partition_point(|b| (b.isin.as_str(), b.series) <= (k.isin.as_str(), k.series)));
                day[start..].iter().filter(|b| filter.matches(b)).take(limit + 1).cloned().collect()
            }
            None => {
                let after_ref = after.as_ref().map(|k| (&k.isin, k.series));
                self.store().market_page(filter.date, filter.series, after_ref, limit + 1).await?
            }
        };
        let (has_more, next_cursor) = cut(&mut data, limit, |last| self.cursor_after(filter, &MarketKey::of(last)));
        let page = MarketDay { date: filter.date, data, has_more, next_cursor };
        Ok(Tagged::hashed(page.to_json()))
    }

    /// The whole market of `filter`'s day, as CSV.
    async fn market_csv(&self, kept: &Generation, filter: &MarketDayFilter) -> Result<Tagged, ReadError> {
        let bars: Vec<Bar> = match self.market_day(kept, filter.date).await? {
            Some(day) => day.iter().filter(|b| filter.matches(b)).cloned().collect(),
            None => {
                let day = self.store().day_bars(filter.date).await?;
                day.bars
                    .iter()
                    .filter(|b| filter.series.is_none_or(|s| b.series == s))
                    .map(|b| b.bar(day.date))
                    .collect()
            }
        };
        Ok(csv(&bars))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_round_trip() {
        for (isin, series) in [("INE592B01016", "EQ"), ("INE592B01024", "B")] {
            let key = MarketKey { isin: Isin::parse(isin).unwrap(), series: Series::parse(series).unwrap() };
            assert_eq!(MarketDayFilter::key_of(&MarketDayFilter::key_bytes(&key)).unwrap(), key);
        }
        for bad in [&b""[..], b"INE592B01016", b"INE592B01017EQ", b"INE592B01016EQX", b"INE592B01016E-"] {
            assert_eq!(MarketDayFilter::key_of(bad), Err(CursorError::Forged), "{bad:?}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config { cases: 256, failure_persistence: None, ..Default::default() })]

        /// Whatever bytes a sealed position holds, reading it never panics.
        #[test]
        fn any_position_bytes_read_without_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40)) {
            let _ = MarketDayFilter::key_of(&bytes);
        }
    }

    fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    /// A bar of TTL's old ISIN closing at `close` rupees.
    fn bar(date: &str, close: i64) -> Bar {
        mds_testkit::fixtures::flat_bar(date, "INE592B01016", &close.to_string(), 10)
    }

    /// An action of TTL's old ISIN.
    fn action(ex: &str, action: mds_domain::actions::Action) -> CorporateAction {
        let isin = Isin::parse("INE592B01016").unwrap();
        CorporateAction {
            id: mds_domain::actions::ActionId::of(&isin, day(ex), &action),
            isin,
            symbol: mds_domain::Ticker::parse("TTL").unwrap(),
            ex_date: day(ex),
            record_date: None,
            purpose: String::new(),
            sources: vec![mds_domain::Exchange::Nse],
            factor: action.factor(),
            action,
        }
    }

    /// The bars of a cut, adjusted, and the adjustments applied.
    fn cut_of(
        lineage: &Lineage,
        from: NaiveDate,
        to: NaiveDate,
        adjust: Adjust,
        last: NaiveDate,
    ) -> (Vec<Bar>, Vec<Adjustment>) {
        let cut = lineage.cut(from, to, adjust, last);
        (cut.adjusted(), cut.applied)
    }

    #[test]
    fn a_series_is_cut_and_adjusted_by_the_actions_gone_ex() {
        use mds_domain::actions::{Action, Dividend, FaceValueChange};
        let split = |ex| {
            let f = FaceValueChange { face_value_from: Some(10.0), face_value_to: Some(1.0), new_isin: None };
            action(ex, Action::Split { split: f })
        };
        let dividend =
            |ex, amount| action(ex, Action::Dividend { dividend: Dividend { amount: Some(amount), kind: None } });
        let bars = vec![bar("2025-02-10", 150), bar("2025-02-11", 145), bar("2025-02-12", 14), bar("2025-02-13", 15)];
        let actions = [
            split("2025-02-10"),         // before every bar: adjusts none
            dividend("2025-02-11", 3.0), // the close before it: 150, so 0.98
            split("2025-02-12"),
            dividend("2025-02-14", 1.5),   // after the last day loaded: adjusts nothing yet
            dividend("2025-02-12", 500.0), // not below the close: no factor
        ];
        let isin = Isin::parse("INE592B01016").unwrap();
        let lineage = Lineage::new(bars, &actions, std::slice::from_ref(&isin));
        assert_eq!(lineage.adjustments.len(), 4, "the dividend above the close has no factor");
        let last = day("2025-02-13");
        let (cut, applied) = cut_of(&lineage, day("2025-02-10"), last, Adjust::Total, last);
        let ex: Vec<String> = applied.iter().map(|a| format!("{} {}", a.ex_date, a.factor)).collect();
        assert_eq!(ex, ["2025-02-11 0.98", "2025-02-12 0.1"]);
        let closes: Vec<String> = cut.iter().map(|b| b.close.to_string()).collect();
        assert_eq!(closes, ["14.70", "14.50", "14.00", "15.00"]);
        let (cut, applied) = cut_of(&lineage, day("2025-02-10"), last, Adjust::Split, last);
        assert_eq!(applied.len(), 1);
        assert_eq!(cut[0].close.to_string(), "15.00");
        let (cut, applied) = cut_of(&lineage, day("2025-02-12"), last, Adjust::Total, last);
        assert!(applied.is_empty() && cut.len() == 2, "no action goes ex after the first bar of the cut");
        let (cut, applied) = cut_of(&lineage, day("2025-02-10"), day("2025-02-11"), Adjust::Unadjusted, last);
        assert!(applied.is_empty());
        assert_eq!(cut.iter().map(|b| b.close.to_string()).collect::<Vec<_>>(), ["150.00", "145.00"]);
        let (_, applied) = cut_of(&lineage, day("2025-02-10"), last, Adjust::Total, day("2025-02-14"));
        assert_eq!(applied.len(), 3, "once the day is loaded, the dividend of 2025-02-14 adjusts");
    }

    #[test]
    fn views_follow_both_generations() {
        let views = PriceViews::new(1 << 20);
        views.follow(1, 1);
        let before = views.current();
        views.follow(1, 1);
        assert!(Arc::ptr_eq(&before, &views.current()), "same generations: kept");
        views.follow(1, 2);
        assert!(!Arc::ptr_eq(&before, &views.current()), "an actions import: dropped");
        let actions_moved = views.current();
        views.follow(2, 2);
        assert!(!Arc::ptr_eq(&actions_moved, &views.current()), "a prices import: dropped");
    }
}
