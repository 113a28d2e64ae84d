//! [`Node`]: what a serving node holds and shares between requests. Cached
//! views of the store (the company catalog, the key index) are swapped whole
//! when the store changes, so readers never lock; served news articles are
//! kept until the news generation moves ([`crate::news`]), and so are the
//! pages of the news list ([`crate::news_list`]).

use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use mds_catalog::{Catalog, CursorCodec};
use mds_domain::ApiKey;
use mds_limits::{Charge, Decision, Limiter, Limits, Meter, SharedLimiter};
use mds_store::{Generations, Store, StoreError, StoreResult};

use crate::catalog::{CatalogSlot, CatalogVersion};
use crate::config::NodeConfig;
use crate::keys::{AuthIndex, KeyContext};
use crate::metrics::{Event, Metrics};
use crate::news::NewsCache;
use crate::news_list::NewsPages;

/// The state of one node: the store, the views of it kept in memory, the
/// limiter and the metrics.
pub struct Node {
    /// The durable store.
    pub store: Arc<dyn Store>,
    /// Settings.
    pub config: NodeConfig,
    /// Signs and checks pagination cursors.
    pub cursors: CursorCodec,
    /// Per-minute limits and monthly quotas; owns the meter.
    pub limiter: Limiter,
    /// The same limits enforced across nodes through Redis, when configured.
    pub shared: Option<SharedLimiter>,
    /// Prometheus metrics of this node.
    pub metrics: Metrics,
    /// News articles as served, until the news generation moves.
    pub news: NewsCache,
    /// News list pages as served, until the news generation moves.
    pub news_pages: NewsPages,
    catalog: CatalogSlot,
    auth: ArcSwap<AuthIndex>,
    /// The auth generation the key index was loaded at (`None` before the
    /// first load).
    keys_at: Mutex<Option<i64>>,
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
        let meter = Arc::new(Meter::new());
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
            news: NewsCache::default(),
            news_pages: NewsPages::new(config.page_cache_bytes),
            catalog: CatalogSlot::new(Arc::new(Catalog::default()), config.page_cache_bytes),
            auth: ArcSwap::from_pointee(AuthIndex::default()),
            keys_at: Mutex::new(None),
            catalog_at: Mutex::new(None),
            stopped: Mutex::new(None),
            store,
            config,
        };
        node.refresh_keys().await?;
        node.refresh_catalog().await?;
        Ok(Arc::new(node))
    }

    /// The company catalog as of now.
    pub fn catalog(&self) -> arc_swap::Guard<Arc<CatalogVersion>> {
        self.catalog.load()
    }

    /// The context of a well-formed key, if it is known and not revoked.
    pub fn authenticate(&self, key: &ApiKey) -> Option<Arc<KeyContext>> {
        let found = self.auth.load().authenticate(key);
        self.metrics.event(if found.is_some() { Event::KeyCacheHit } else { Event::KeyCacheMiss });
        found
    }

    /// Takes a request of `ctx` from its per-minute limit and, when it is
    /// [`Charge::Counted`] against the quota, reserves one request of the
    /// month (settled by the decision's ticket once the request is answered,
    /// and recorded in the daily ledger under its route). `None` when limits
    /// are off.
    pub async fn admit(&self, ctx: &KeyContext, charge: Charge) -> StoreResult<Option<Decision>> {
        if !self.config.limits {
            return Ok(None);
        }
        let limits =
            Limits { rate_limit_per_minute: ctx.tier.rate_limit_per_minute, monthly_quota: ctx.tier.monthly_quota };
        let decision = match &self.shared {
            // Boxed: its future is kilobytes (a Redis call), which every
            // request's future would otherwise carry and copy.
            Some(shared) => Box::pin(shared.admit(&*self.store, &ctx.prefix, limits, charge)).await?,
            None => self.limiter.admit(&*self.store, &ctx.prefix, limits, charge).await?,
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

    /// Follows the store's auth generation: reloads the key index when it
    /// moved (and drops served news and news list pages when the news
    /// generation did); returns
    /// whether the keys were reloaded. Runs apart from the catalog's reload,
    /// so a key change never waits for a catalog being loaded.
    pub async fn refresh_keys(&self) -> StoreResult<bool> {
        let now = self.store.generations().await?;
        self.news.follow(now.news);
        self.news_pages.follow(now.news);
        if *self.keys_at.lock().expect("not poisoned") == Some(now.auth) {
            return Ok(false);
        }
        // Read the data after the generation, so a change that lands in
        // between is picked up by the next poll rather than lost.
        let snapshot = self.store.auth_snapshot().await?;
        self.auth.store(Arc::new(AuthIndex::new(&snapshot)));
        *self.keys_at.lock().expect("not poisoned") = Some(now.auth);
        self.metrics.event(Event::AuthReload);
        tracing::info!(generation = now.auth, keys = snapshot.keys.len(), "keys and tiers reloaded");
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
        self.catalog.store(catalog, companies);
        *self.catalog_at.lock().expect("not poisoned") = Some(companies);
        self.metrics.event(Event::CatalogReload);
        Ok(true)
    }
}
