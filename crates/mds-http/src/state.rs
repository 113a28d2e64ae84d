//! [`AppState`]: what every handler shares. Cached views of the store (the
//! company catalog, the key index) are swapped whole when the store changes,
//! so readers never lock.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use arc_swap::ArcSwap;
use mds_catalog::{Catalog, CursorCodec};
use mds_store::{Store, StoreResult};

use crate::auth::AuthIndex;
use crate::config::HttpConfig;

/// The shared application.
pub struct App {
    /// The durable store.
    pub store: Arc<dyn Store>,
    /// Settings.
    pub config: HttpConfig,
    /// Signs and checks pagination cursors.
    pub cursors: CursorCodec,
    catalog: ArcSwap<Catalog>,
    auth: ArcSwap<AuthIndex>,
    generation: AtomicI64,
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
        let app = App {
            cursors: CursorCodec::new(&secret),
            catalog: ArcSwap::from_pointee(Catalog::default()),
            auth: ArcSwap::from_pointee(AuthIndex::default()),
            generation: AtomicI64::new(i64::MIN),
            store,
            config,
        };
        let state = AppState(Arc::new(app));
        state.refresh().await?;
        Ok(state)
    }

    /// The company catalog as of now.
    pub fn catalog(&self) -> arc_swap::Guard<Arc<Catalog>> {
        self.catalog.load()
    }

    /// The key index as of now.
    pub fn auth(&self) -> arc_swap::Guard<Arc<AuthIndex>> {
        self.auth.load()
    }

    /// Reloads the cached views if the store's generation moved; returns
    /// whether it did.
    pub async fn refresh(&self) -> StoreResult<bool> {
        let generation = self.store.generation().await?;
        if generation == self.generation.load(Ordering::Acquire) {
            return Ok(false);
        }
        // Read the data after the generation, so a change that lands in
        // between is picked up by the next poll rather than lost.
        let snapshot = self.store.auth_snapshot().await?;
        let companies = self.store.companies().await?;
        let catalog =
            tokio::task::spawn_blocking(move || Catalog::new(companies)).await.expect("catalog build does not panic");
        self.auth.store(Arc::new(AuthIndex::new(&snapshot)));
        self.catalog.store(Arc::new(catalog));
        self.generation.store(generation, Ordering::Release);
        tracing::info!(generation, companies = self.catalog().len(), keys = self.auth().len(), "cache reloaded");
        Ok(true)
    }
}
