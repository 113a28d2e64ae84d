//! Corporate actions (contract 13.3): a company's actions with its lineage
//! (`GET /v1/companies/{isin}/actions`, [`Node::company_actions`]) and the
//! calendar's keyset pages (`GET /v1/actions`, [`Node::page`]),
//! both read from the store ([`mds_store::ActionStore`]) and kept.
//!
//! What an answer holds is a function of the store's actions and the query
//! (and, for a company's, of the catalog its lineage is read from), so an
//! answer made once is kept by its raw query, as the news list's pages are,
//! until the store's `actions` generation moves (an import that stored or
//! changed an action): the pages are kept per generation by the same
//! [`NewsPages`](crate::news_list::NewsPages) the news list keeps its pages in, followed by the node's
//! reload task. Both are kept under the catalog's `companies` generation
//! too, since a company's lineage and every page's factors (the ISINs a
//! close is looked for under) come from there.
//!
//! Lineage: the ISINs a company superseded are the `from` of the
//! `isin_changed` events that name it as `to` (contract 10, as its
//! detail's `supersedes`), followed back as far as they go.
//!
//! Each body is tagged with the digest of its bytes, so a page whose rows
//! did not change keeps its tag across imports and is the same on every
//! node. A calendar cursor is the last row's ex-date and id sealed with the
//! node's cursor codec under the scope `actions` and the filters'
//! canonical form, so it is refused with other filters, on another list,
//! or altered.

use std::collections::HashMap;

use chrono::NaiveDate;
use mds_catalog::CursorError;
use mds_domain::action_query::{ActionCalendarFilter, ActionCalendarQueryParams, ActionKey, CompanyActionsParams};
use mds_domain::action_query::{CompanyActions, calendar_order};
use mds_domain::actions::{ActionId, ActionType, CorporateAction};
use mds_domain::price_query::{close_before, factor_of};
use mds_domain::{Isin, Page};
use mds_store::ActionFilter;

use crate::catalog::CatalogVersion;
use crate::error::ReadError;
use crate::keyset::{Keyset, cut};
use crate::lists::{KeptList, Shelf, per_catalog};
use crate::node::Node;
use crate::pages::{List, PageKey};
use crate::tagged::Tagged;

/// At most this many ISINs are followed back through `isin_changed`
/// (against a cycle in damaged data; real chains hold two or three).
const MAX_LINEAGE: usize = 64;

/// The calendar's cursors: the scope `actions`, and a position sealed as
/// the ex-date's days from 0001-01-01 (i32, big-endian), then the id.
impl Keyset for ActionCalendarFilter {
    const LIST: &'static [u8] = b"actions";
    type Key = ActionKey;

    fn key_bytes(key: &ActionKey) -> Vec<u8> {
        let mut out = Vec::with_capacity(4 + key.id.as_str().len());
        out.extend_from_slice(&chrono::Datelike::num_days_from_ce(&key.ex_date).to_be_bytes());
        out.extend_from_slice(key.id.as_str().as_bytes());
        out
    }

    fn key_of(bytes: &[u8]) -> Result<ActionKey, CursorError> {
        let (days, id) = bytes.split_first_chunk::<4>().ok_or(CursorError::Forged)?;
        let ex_date = NaiveDate::from_num_days_from_ce_opt(i32::from_be_bytes(*days)).ok_or(CursorError::Forged)?;
        let id = std::str::from_utf8(id).ok().and_then(|s| ActionId::parse(s).ok()).ok_or(CursorError::Forged)?;
        Ok(ActionKey { ex_date, id })
    }

    fn canonical(&self) -> String {
        ActionCalendarFilter::canonical(self)
    }
}

/// The generation the actions routes' pages are kept under: the store's
/// `actions` and `prices` generations together, since a dividend's or
/// rights issue's `factor` is read from the closes loaded.
pub(crate) fn kept_generation(actions: i64, prices: i64) -> i64 {
    actions.wrapping_shl(32) ^ prices
}

/// The store's filter of the calendar's.
fn store_filter(f: &ActionCalendarFilter) -> ActionFilter {
    ActionFilter { action_type: f.action_type, from: f.ex_date_from, to: f.ex_date_to, source: f.exchange }
}

/// The calendar's pages ([`Node::page`]): read from the store and kept
/// for the `actions` generation followed when they were looked for.
impl KeptList for ActionCalendarQueryParams {
    const LIST: List = List::Actions;
    const SHELF: Shelf = Shelf::Actions;

    async fn make(&self, node: &Node, _: &CatalogVersion, _: Option<i64>) -> Result<(Tagged, bool), ReadError> {
        Ok((node.make_calendar_page(self).await?, true))
    }
}

impl Node {
    /// One page of the calendar for `query`: its JSON (a [`Page`] of
    /// [`CorporateAction`](mds_domain::actions::CorporateAction)) tagged
    /// with its digest.
    async fn make_calendar_page(&self, query: &ActionCalendarQueryParams) -> Result<Tagged, ReadError> {
        let filter = &query.filter;
        let after = self.resume_after(filter, query.page.cursor.as_deref())?;
        let limit = query.page.limit.get();
        let after_ref = after.as_ref().map(|k| (k.ex_date, &k.id));
        let mut data = self.store().action_page(&store_filter(filter), after_ref, limit + 1).await?;
        let (has_more, next_cursor) = cut(&mut data, limit, |last| self.cursor_after(filter, &ActionKey::of(last)));
        self.with_factors(&mut data).await?;
        debug_assert!(data.windows(2).all(|w| calendar_order(&ActionKey::of(&w[0]), &ActionKey::of(&w[1])).is_lt()));
        let page = Page::new(data, next_cursor, has_more);
        Ok(Tagged::hashed(serde_json::to_vec(&page).expect("a page of actions serializes")))
    }

    /// The actions of the company with `isin` asked with the query string
    /// `raw` (`V1CompanyActions`): kept, or parsed by `parse` and read from
    /// the store (and kept). `None` when the catalog has no such company.
    /// A bad query is refused before an unknown ISIN is.
    pub async fn company_actions<E: From<ReadError>>(
        &self,
        isin: &Isin,
        raw: Option<&str>,
        parse: impl FnOnce(Option<&str>) -> Result<CompanyActionsParams, E>,
    ) -> Result<Option<Tagged>, E> {
        let catalog = self.catalog_version();
        let kept_as = per_catalog(&catalog, &[isin.as_str(), raw.unwrap_or("")]);
        let key = PageKey { list: List::CompanyActions, query: &kept_as };
        let (_, pages) = self.action_pages().current();
        if let Some(kept) = pages.get(key) {
            return Ok(Some(kept));
        }
        let params = parse(raw)?;
        let Some(isins) = isins_of(&catalog, isin, params.lineage()) else { return Ok(None) };
        drop(catalog);
        let filter = ActionFilter { action_type: params.action_type, from: params.from, to: params.to, source: None };
        let mut data = self.store().actions_of(&isins, &filter).await.map_err(ReadError::from)?;
        self.with_factors(&mut data).await?;
        let body = CompanyActions { isin: isin.clone(), data };
        let made = Tagged::hashed(serde_json::to_vec(&body).expect("a company's actions serialize"));
        pages.put(key, made.clone());
        Ok(Some(made))
    }
}

impl Node {
    /// Gives each dividend and rights issue of `data` its `factor` (contract
    /// 13.2): from the last close before its ex-date of the security it
    /// concerns (its ISIN and those its ISIN changes link it to, by the
    /// catalog), by the rule the price routes adjust with
    /// ([`mds_domain::price_query::factor_of`], [`close_before`]); left
    /// `null` where no such close is loaded. One read of the bars of the
    /// ISINs concerned, up to the day before the latest ex-date.
    async fn with_factors(&self, data: &mut [CorporateAction]) -> Result<(), ReadError> {
        let wants = |a: &CorporateAction| {
            a.factor.is_none() && matches!(a.action.action_type(), ActionType::Dividend | ActionType::Rights)
        };
        let Some(last_ex) = data.iter().filter(|a| wants(a)).map(|a| a.ex_date).max() else { return Ok(()) };
        let Some(until) = last_ex.pred_opt() else { return Ok(()) };
        let catalog = self.catalog_version();
        let mut security: HashMap<Isin, Vec<Isin>> = HashMap::new();
        for a in data.iter().filter(|a| wants(a)) {
            security.entry(a.isin.clone()).or_insert_with(|| linked(&catalog, &a.isin));
        }
        drop(catalog);
        let mut isins: Vec<Isin> = security.values().flatten().cloned().collect();
        isins.sort_unstable();
        isins.dedup();
        let bars = self.store().bars_of(&isins, NaiveDate::MIN, until).await?;
        if bars.is_empty() {
            return Ok(());
        }
        for a in data.iter_mut().filter(|a| wants(a)) {
            let of = &security[&a.isin];
            a.factor = factor_of(a, || close_before(&bars, of, a.ex_date));
        }
        Ok(())
    }
}

/// The ISINs of one security: `isin`, those it superseded ([`lineage`])
/// and those that superseded it, followed forward.
fn linked(catalog: &mds_catalog::Catalog, isin: &Isin) -> Vec<Isin> {
    let mut out = lineage(catalog, isin);
    let mut at = isin.clone();
    while out.len() < MAX_LINEAGE {
        let Some(history) = catalog.history(&at) else { break };
        let (Some(next), _) = mds_domain::identity::links(&at, &history.events) else { break };
        if out.contains(&next) {
            break;
        }
        out.push(next.clone());
        at = next;
    }
    out
}

/// `isin` and the ISINs it superseded, followed back through their
/// `isin_changed` events in `catalog` as far as they go: `isin` first, then
/// each predecessor once.
pub(crate) fn lineage(catalog: &mds_catalog::Catalog, isin: &Isin) -> Vec<Isin> {
    let mut out = vec![isin.clone()];
    let mut next = 0;
    while next < out.len() && out.len() < MAX_LINEAGE {
        let own = out[next].clone();
        next += 1;
        let Some(history) = catalog.history(&own) else { continue };
        let (_, supersedes) = mds_domain::identity::links(&own, &history.events);
        for p in supersedes {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// The ISINs a company's answer reads: `isin`'s [`lineage`] in `catalog`,
/// or `isin` alone without `with_lineage`; `None` when the catalog has no
/// such company.
pub(crate) fn isins_of(catalog: &mds_catalog::Catalog, isin: &Isin, with_lineage: bool) -> Option<Vec<Isin>> {
    catalog.find_isin(isin.as_str())?;
    Some(if with_lineage { lineage(catalog, isin) } else { vec![isin.clone()] })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_round_trip() {
        for (d, id) in [("2024-05-15", "ca_3e236550eac0f194"), ("0001-01-01", "ca_0000000000000000")] {
            let key = ActionKey { ex_date: d.parse().unwrap(), id: ActionId::parse(id).unwrap() };
            assert_eq!(ActionCalendarFilter::key_of(&ActionCalendarFilter::key_bytes(&key)).unwrap(), key);
        }
        for bad in [&b""[..], b"\x00\x00", b"\x00\x0b\x25\x00ca_12", b"\x00\x0b\x25\x00ca_3E236550EAC0F194"] {
            assert_eq!(ActionCalendarFilter::key_of(bad), Err(CursorError::Forged), "{bad:?}");
        }
        let mut far = i32::MAX.to_be_bytes().to_vec();
        far.extend_from_slice(b"ca_3e236550eac0f194");
        assert_eq!(ActionCalendarFilter::key_of(&far), Err(CursorError::Forged), "a day chrono cannot hold");
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config { cases: 256, failure_persistence: None, ..Default::default() })]

        /// Whatever bytes a sealed position holds, reading it never panics.
        #[test]
        fn any_position_bytes_read_without_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40)) {
            let _ = ActionCalendarFilter::key_of(&bytes);
        }
    }
}
