//! [`Node`]: what a serving node holds and shares between requests. The
//! company catalog is swapped whole when the store's companies change, so
//! readers never lock; keys are cached as they are seen and follow the
//! store's auth change log ([`crate::keys`]); served articles are
//! kept until the news generation moves ([`crate::article`]), and so are the
//! pages of the news list ([`crate::news_list`]). What a node holds is
//! reached through its accessors ([`Node::store`], [`Node::metrics`], …).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwapOption;
use mds_catalog::{Catalog, CursorCodec};
use mds_domain::ApiKey;
use mds_limits::{Ask, Charge, Decision, Limiter, Limits, Meter, SharedLimiter};
use mds_store::{Generations, KeyLookup, Store, StoreError, StoreResult};

use crate::article::ArticleCache;
use crate::catalog::{CatalogSlot, CatalogVersion};
use crate::config::NodeConfig;
use crate::events::EventHub;
use crate::keys::{Cached, KeyCache, KeyContext, Refresh};
use crate::metrics::{Event, Metrics};
use crate::news_index::NewsIndex;
use crate::news_list::NewsPages;
use crate::prices::PriceViews;
use crate::usage_cache::UsageCache;

/// The state of one node: the store, the views of it kept in memory, the
/// limiter and the metrics.
pub struct Node {
    store: Arc<dyn Store>,
    config: NodeConfig,
    cursors: CursorCodec,
    limiter: Limiter,
    shared: Option<SharedLimiter>,
    metrics: Metrics,
    articles: ArticleCache,
    news_pages: NewsPages,
    /// The actions routes' answers, kept per `actions` generation
    /// ([`crate::action_pages`]).
    action_pages: NewsPages,
    /// The price routes' answers and series, kept per `prices` and
    /// `actions` generation ([`crate::prices`]).
    price_views: PriceViews,
    news_index: ArcSwapOption<NewsIndex>,
    /// Held while the news index is refreshed, so a search waiting for the
    /// first index and the reload task do not build it twice.
    news_loading: tokio::sync::Mutex<()>,
    usage_kept: UsageCache,
    catalog: CatalogSlot,
    keys: KeyCache,
    events: EventHub,
    /// The companies generation the catalog was loaded at.
    catalog_at: Mutex<Option<i64>>,
    /// Why a background task stopped, if one did ([`crate::tasks`]).
    stopped: Mutex<Option<String>>,
}

impl Node {
    /// Loads everything a node serves from the store; `metrics` records
    /// what it does.
    pub async fn load(store: Arc<dyn Store>, config: NodeConfig, metrics: Metrics) -> StoreResult<Arc<Self>> {
        let secret = store.cursor_secret().await?;
        let meter = Arc::new(match &config.spill_dir {
            Some(dir) => recover_spill(&*store, dir, config.shared.as_ref()).await?,
            None => Meter::new(),
        });
        let shared = match &config.shared {
            Some(cfg) => Some(
                SharedLimiter::connect(cfg.clone(), meter.clone(), config.clock.clone())
                    .await
                    .map_err(|e| StoreError::Invalid(format!("redis: {e}")))?,
            ),
            None => None,
        };
        let node = Node {
            cursors: CursorCodec::new(&secret),
            limiter: Limiter::new(meter, config.clock.clone()),
            shared,
            metrics,
            articles: ArticleCache::default(),
            news_pages: NewsPages::new(config.page_cache_bytes),
            action_pages: NewsPages::new(config.page_cache_bytes),
            price_views: PriceViews::new(config.page_cache_bytes),
            news_index: ArcSwapOption::empty(),
            news_loading: tokio::sync::Mutex::new(()),
            usage_kept: UsageCache::default(),
            catalog: CatalogSlot::new(Arc::new(Catalog::default()), config.page_cache_bytes),
            keys: KeyCache::new(config.key_cache),
            events: EventHub::default(),
            catalog_at: Mutex::new(None),
            stopped: Mutex::new(None),
            store,
            config,
        };
        node.refresh_keys().await?;
        node.refresh_catalog().await?;
        Ok(Arc::new(node))
    }

    /// The durable store.
    pub fn store(&self) -> &dyn Store {
        &*self.store
    }

    /// The durable store, shared (for work that outlives a borrow of the
    /// node, such as a call run on another runtime).
    pub fn shared_store(&self) -> Arc<dyn Store> {
        self.store.clone()
    }

    /// The settings.
    pub fn config(&self) -> &NodeConfig {
        &self.config
    }

    /// What signs and checks pagination cursors (and sync tokens).
    pub fn cursors(&self) -> &CursorCodec {
        &self.cursors
    }

    /// Per-minute limits and monthly quotas; owns the meter.
    pub fn limiter(&self) -> &Limiter {
        &self.limiter
    }

    /// The same limits enforced across nodes through Redis, when configured.
    pub fn shared(&self) -> Option<&SharedLimiter> {
        self.shared.as_ref()
    }

    /// Prometheus metrics of this node.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Articles as served, until the news generation moves.
    pub(crate) fn articles(&self) -> &ArticleCache {
        &self.articles
    }

    /// News list pages as served, until the news generation moves.
    pub(crate) fn news_pages(&self) -> &NewsPages {
        &self.news_pages
    }

    /// The actions routes' answers as served, until the `actions`
    /// generation moves.
    pub(crate) fn action_pages(&self) -> &NewsPages {
        &self.action_pages
    }

    /// The price routes' answers and series as served, until the `prices`
    /// or `actions` generation moves.
    pub(crate) fn price_views(&self) -> &PriceViews {
        &self.price_views
    }

    /// The news list of the last news generation indexed, if any
    /// ([`crate::news_index`]).
    pub fn news_index(&self) -> Option<Arc<NewsIndex>> {
        self.news_index.load_full()
    }

    /// The lock a refresh of the news index holds.
    pub(crate) fn news_loading(&self) -> &tokio::sync::Mutex<()> {
        &self.news_loading
    }

    /// Keeps `index` as the news index.
    pub(crate) fn set_news_index(&self, index: Arc<NewsIndex>) {
        self.news_index.store(Some(index));
    }

    /// The store's usage figures as `/v1/usage` last read them, per key.
    pub(crate) fn usage_kept(&self) -> &UsageCache {
        &self.usage_kept
    }

    /// The node's feed of committed events to its open streams.
    pub fn events(&self) -> &EventHub {
        &self.events
    }

    /// The company catalog as of now.
    pub fn catalog(&self) -> arc_swap::Guard<Arc<CatalogVersion>> {
        self.catalog.load()
    }

    /// The company catalog as of now, held (to keep across an `await`).
    pub fn catalog_version(&self) -> Arc<CatalogVersion> {
        arc_swap::Guard::into_inner(self.catalog.load())
    }

    /// The context of a well-formed key if it is an active key (not
    /// revoked, not expired by the node's clock): from the key cache, else
    /// from one store lookup (budgeted, see
    /// [`crate::keys`]). `Err` when the key could not be checked (the
    /// answer is then `503`, never `401`).
    pub async fn authenticate(&self, key: &ApiKey) -> Result<Option<Arc<KeyContext>>, Unchecked> {
        let found = self.find_key(key).await?;
        let now = self.config.clock.now();
        Ok(found.filter(|ctx| ctx.expires_at.is_none_or(|e| now < e)))
    }

    /// [`Node::authenticate`] but for the expiry.
    async fn find_key(&self, key: &ApiKey) -> Result<Option<Arc<KeyContext>>, Unchecked> {
        match self.keys.get(key) {
            Cached::Found(ctx) => {
                self.metrics.event(Event::KeyCacheHit);
                return Ok(Some(ctx));
            }
            Cached::Refused => {
                self.metrics.event(Event::KeyCacheMiss);
                self.metrics.event(Event::KeyNegativeHit);
                return Ok(None);
            }
            Cached::Unknown => self.metrics.event(Event::KeyCacheMiss),
        }
        if !self.keys.take_lookup() {
            self.metrics.event(Event::KeyLookupThrottled);
            return Err(Unchecked::Throttled);
        }
        self.metrics.event(Event::KeyLookup);
        let asked = key.prefix_candidates();
        let found = self.store.key_lookup(&asked).await.map_err(Unchecked::Store)?;
        Ok(self.keys.learn(key, &asked, &found))
    }

    /// How many keys the node holds in its key cache.
    pub fn keys_held(&self) -> usize {
        self.keys.len()
    }

    /// Takes a request of `ctx` from its per-minute limit and, when it is
    /// [`Charge::Counted`] against the quota, reserves one request of the
    /// month (settled by the decision's ticket once the request is answered,
    /// and recorded in the daily ledger under its route). `None` when limits
    /// are off.
    pub async fn admit(&self, ctx: &KeyContext, charge: Charge) -> StoreResult<Option<Decision>> {
        self.metrics.tier_request(ctx.tier.name.as_str());
        if !self.config.limits {
            return Ok(None);
        }
        let limits =
            Limits { rate_limit_per_minute: ctx.tier.rate_limit_per_minute, monthly_quota: ctx.tier.monthly_quota };
        let ask = Ask { key: &ctx.prefix, limits, charge };
        let decision = match &self.shared {
            // Boxed: its future is kilobytes (a Redis call), which every
            // request's future would otherwise carry and copy.
            Some(shared) => Box::pin(shared.admit(&*self.store, ask)).await?,
            None => self.limiter.admit(&*self.store, ask).await?,
        };
        Ok(Some(decision))
    }

    /// Why a background task stopped, if one did: the node then follows the
    /// store no more (or writes no counts), so it is not ready.
    pub fn stopped_task(&self) -> Option<String> {
        self.stopped.lock().expect("not poisoned").clone()
    }

    /// Records that a background task stopped, and why.
    pub(crate) fn task_stopped(&self, why: String) {
        self.stopped.lock().expect("not poisoned").get_or_insert(why);
    }

    /// Requests counted but not yet written to the store.
    pub fn backlog(&self) -> u64 {
        self.limiter.meter().backlog()
    }

    /// Follows the store's auth generation: when it moved, applies what
    /// changed since the generation the key cache reflects (the held keys
    /// a change touched are read again; tiers and accounts whole when one
    /// of them changed; every held key when the node is behind the change
    /// log), and drops served articles and news list pages when the news
    /// generation moved (and the actions routes' answers when the actions
    /// generation did; the price routes' when the prices or actions
    /// generation did). The first call loads tiers and accounts. Returns
    /// whether keys, tiers or accounts were applied. Runs apart from the
    /// catalog's reload, so a key change never waits for a catalog being
    /// loaded.
    pub async fn refresh_keys(&self) -> StoreResult<bool> {
        let now = self.store.generations().await?;
        self.articles.follow(now.news);
        self.news_pages.follow(now.news);
        // A dividend's or rights issue's `factor` is read from the closes
        // loaded: the actions routes' pages follow both generations.
        self.action_pages.follow(crate::action_pages::kept_generation(now.actions, now.prices));
        self.price_views.follow(now.prices, now.actions);
        self.usage_kept.follow(now.usage, now.auth);
        let Some(applied) = self.keys.applied() else {
            let directory = self.store.auth_directory().await?;
            self.keys.load(&directory);
            self.metrics.event(Event::AuthReload);
            tracing::info!(
                generation = directory.generation,
                tiers = directory.tiers.len(),
                accounts = directory.accounts.len(),
                "tiers and accounts loaded; keys are read as they are seen"
            );
            return Ok(true);
        };
        if applied == now.auth {
            return Ok(false);
        }
        let changes = self.store.auth_changes(applied).await?;
        let directory = match changes.directory || !changes.complete {
            true => Some(self.store.auth_directory().await?),
            false => None,
        };
        let held = self.keys.held();
        let reread: Vec<&str> = match changes.complete {
            true => {
                let held: HashSet<&str> = held.iter().map(String::as_str).collect();
                changes.keys.iter().map(String::as_str).filter(|p| held.contains(p)).collect()
            }
            false => held.iter().map(String::as_str).collect(),
        };
        let found = match reread.is_empty() {
            true => KeyLookup::default(),
            false => {
                self.metrics.events(Event::KeyReread, reread.len() as u64);
                self.store.key_lookup(&reread).await?
            }
        };
        let reread_asked = reread.into_iter().map(str::to_owned).collect();
        if !changes.complete {
            tracing::info!(
                from = applied,
                to = changes.generation,
                keys = held.len(),
                "behind the auth change log; held keys read again"
            );
        }
        tracing::debug!(
            generation = changes.generation,
            keys = changes.keys.len(),
            directory = directory.is_some(),
            "auth changes applied"
        );
        self.keys.apply(&Refresh {
            generation: changes.generation,
            complete: changes.complete,
            changed: changes.keys,
            directory,
            reread_asked,
            reread: found,
        });
        self.metrics.event(Event::AuthReload);
        Ok(true)
    }

    /// Follows the store's companies generation: loads its catalog when it
    /// moved; returns whether it did.
    pub async fn refresh_catalog(&self) -> StoreResult<bool> {
        let Generations { companies, .. } = self.store.generations().await?;
        if *self.catalog_at.lock().expect("not poisoned") == Some(companies) {
            return Ok(false);
        }
        let t = std::time::Instant::now();
        let (catalog, source) = crate::catalog_load::load(&self.store, companies).await?;
        tracing::info!(
            generation = companies,
            companies = catalog.len(),
            source = source.as_str(),
            ms = t.elapsed().as_millis() as u64,
            "company catalog reloaded"
        );
        let nonces = self.store.generation_nonces().await?;
        self.catalog.store(catalog, companies, &nonces);
        *self.catalog_at.lock().expect("not poisoned") = Some(companies);
        self.metrics.event(Event::CatalogReload);
        Ok(true)
    }
}

/// Gives the store what the spill in `dir` holds that it may lack (batches
/// it has are deduplicated by id), then starts a meter spilling there.
/// With a usage mirror (`shared`), the earlier run's mirror is taken back
/// first, so no other node gives its counts to the store later; when
/// another node took it over already, the spill gives only what that node
/// did not take ([`mds_limits::mirror::after_takeover`]).
async fn recover_spill(
    store: &dyn Store,
    dir: &std::path::Path,
    shared: Option<&mds_limits::SharedConfig>,
) -> StoreResult<Meter> {
    use mds_limits::shared::{OwnMirror, own_mirror_done, take_own_mirror};
    let spill_err = |e: std::io::Error| StoreError::Invalid(format!("usage spill in {}: {e}", dir.display()));
    // Before the file is read: a second node on the directory stops here.
    let lock = mds_limits::spill::lock(dir).map_err(spill_err)?;
    let recovered = mds_limits::spill::recover_all(dir).map_err(spill_err)?;
    let mut batches = recovered.batches;
    let mirror = recovered.mirror.as_deref().and_then(|id| Some((shared.filter(|s| s.mirror)?, id)));
    if let Some((cfg, id)) = mirror {
        let taker = format!("{id}:restart");
        match take_own_mirror(cfg, id, &taker).await {
            Ok(OwnMirror::Back(taken) | OwnMirror::TakenBy(taken)) => {
                batches = mds_limits::mirror::after_takeover(batches, &taken, recovered.last_cut);
            }
            Err(e) => tracing::warn!(
                error = %e,
                "cannot take this node's earlier usage mirror back from Redis; a node that takes it over later may count its last counts twice"
            ),
        }
    }
    for batch in batches {
        let applied = store.apply_usage_batch(&batch).await?;
        let requests: u64 = batch.deltas.iter().map(|d| d.requests).sum();
        tracing::info!(batch = %batch.id, requests, fresh = applied.fresh, "usage spill recovered");
    }
    if let Some((cfg, id)) = mirror {
        if let Err(e) = own_mirror_done(cfg, id).await {
            tracing::warn!(error = %e, "cannot mark this node's earlier usage mirror done");
        }
    }
    Meter::with_spill(dir, lock).map_err(spill_err)
}

/// Why a key the node does not hold could not be checked: the answer is
/// `503`, never `401`, since the key may well be valid.
#[derive(Debug)]
pub enum Unchecked {
    /// The node's budget of key lookups is spent (a flood of unknown keys).
    Throttled,
    /// The store could not be read.
    Store(StoreError),
}
