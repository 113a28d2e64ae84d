//! [`AppState`]: what every handler shares. Cached views of the store (the
//! company catalog, the key index) are swapped whole when the store changes,
//! so readers never lock; served news articles are kept until the news
//! generation moves ([`crate::views`]).

use std::sync::Arc;

use arc_swap::ArcSwap;
use mds_catalog::{Catalog, CursorCodec};
use mds_limits::{Limiter, Meter, SharedLimiter};
use mds_store::{Generations, Store, StoreResult};
use std::sync::Mutex;

use axum::http::HeaderValue;

use crate::auth::AuthIndex;
use crate::config::HttpConfig;
use crate::metrics::{Event, Metrics};
use crate::views::{CatalogSlot, CatalogVersion, NewsCache};

/// The shared application.
pub struct App {
    /// The durable store.
    pub store: Arc<dyn Store>,
    /// Settings.
    pub config: HttpConfig,
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
    /// `Cache-Control` of company and news responses (`private, max-age=N`),
    /// made once.
    pub private_caching: HeaderValue,
    catalog: CatalogSlot,
    auth: ArcSwap<AuthIndex>,
    /// The generations the cached views were loaded at (`None` before the first load).
    loaded: Mutex<Option<Generations>>,
}

/// Cheap-to-clone handle on the [`App`] (axum state).
#[derive(Clone)]
pub struct AppState(pub Arc<App>);

impl std::ops::Deref for AppState {
    type Target = App;
    fn deref(&self) -> &App {
        &self.0
    }
}

impl AppState {
    /// Loads everything a node serves from the store.
    pub async fn load(store: Arc<dyn Store>, config: HttpConfig) -> StoreResult<Self> {
        let secret = store.cursor_secret().await?;
        let meter = Arc::new(Meter::new());
        let shared = match &config.shared {
            Some(cfg) => Some(
                SharedLimiter::connect(cfg.clone(), meter.clone(), config.clock.clone())
                    .await
                    .map_err(|e| mds_store::StoreError::Invalid(format!("redis: {e}")))?,
            ),
            None => None,
        };
        let app = App {
            cursors: CursorCodec::new(&secret),
            limiter: Limiter::new(meter, config.clock.clone()),
            shared,
            metrics: Metrics::default(),
            news: NewsCache::default(),
            private_caching: HeaderValue::from_str(&format!("private, max-age={}", config.cache_max_age.as_secs()))
                .expect("ASCII"),
            catalog: CatalogSlot::new(Arc::new(Catalog::default()), config.page_cache_bytes),
            auth: ArcSwap::from_pointee(AuthIndex::default()),
            loaded: Mutex::new(None),
            store,
            config,
        };
        let state = AppState(Arc::new(app));
        state.refresh().await?;
        Ok(state)
    }

    /// The company catalog as of now.
    pub fn catalog(&self) -> arc_swap::Guard<Arc<CatalogVersion>> {
        self.catalog.load()
    }

    /// The generations the cached views were last loaded at.
    pub fn generations(&self) -> Option<Generations> {
        *self.loaded.lock().expect("not poisoned")
    }

    /// The key index as of now.
    pub fn auth(&self) -> arc_swap::Guard<Arc<AuthIndex>> {
        self.auth.load()
    }

    /// Reloads the cached views whose generation moved; returns whether any did.
    pub async fn refresh(&self) -> StoreResult<bool> {
        let now = self.store.generations().await?;
        let before = *self.loaded.lock().expect("not poisoned");
        if before == Some(now) {
            return Ok(false);
        }
        // Read the data after the generations, so a change that lands in
        // between is picked up by the next poll rather than lost.
        if before.is_none_or(|b| b.auth != now.auth) {
            let snapshot = self.store.auth_snapshot().await?;
            self.auth.store(Arc::new(AuthIndex::new(&snapshot)));
            self.metrics.event(Event::AuthReload);
            tracing::info!(generation = now.auth, keys = snapshot.keys.len(), "keys and tiers reloaded");
        }
        if before.is_none_or(|b| b.companies != now.companies) {
            let t = std::time::Instant::now();
            let (catalog, source) = crate::catalog_load::load(&self.store, now.companies).await?;
            tracing::info!(
                generation = now.companies,
                companies = catalog.len(),
                source = source.as_str(),
                ms = t.elapsed().as_millis() as u64,
                "company catalog reloaded"
            );
            self.catalog.store(catalog);
            self.metrics.event(Event::CatalogReload);
        }
        *self.loaded.lock().expect("not poisoned") = Some(now);
        Ok(true)
    }
}
