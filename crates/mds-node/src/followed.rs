//! [`Followed`]: values read from the store, kept by key while a store
//! generation the node follows stays where it was, read on every request
//! without a lock held across an `await`.
//!
//! Dropped whole when the generation moves (the reload task calls
//! [`Followed::follow`]). A value read from the store before a drop, or
//! before its key was forgotten, is not kept ([`Followed::epoch`]).
//! Bounded by a total weight (each value's, given when it is kept): when the
//! next value would pass it, the map starts over.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{PoisonError, RwLock, RwLockReadGuard};

/// Values of type `V` by key `K`, for store generation `G`.
#[derive(Debug)]
pub struct Followed<G, K, V> {
    inner: RwLock<Inner<G, K, V>>,
    max_weight: usize,
}

#[derive(Debug)]
struct Inner<G, K, V> {
    /// The generation the values are at least as new as; `None` before the
    /// first [`Followed::follow`].
    generation: Option<G>,
    /// Bumped by every drop and every key forgotten.
    epoch: u64,
    weight: usize,
    values: HashMap<K, (V, usize)>,
}

/// Where a read of the store began, counted in drops and forgets: taken
/// before reading a value, which is kept only if nothing was dropped or
/// forgotten in between.
#[derive(Debug, Clone, Copy)]
pub struct Epoch(u64);

impl<G: PartialEq, K: Eq + Hash, V: Clone> Followed<G, K, V> {
    /// Keeps values up to a total weight of `max_weight`.
    pub fn new(max_weight: usize) -> Self {
        let inner = Inner { generation: None, epoch: 0, weight: 0, values: HashMap::new() };
        Followed { inner: RwLock::new(inner), max_weight }
    }

    /// The value kept under `key`, if any.
    pub fn get<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        self.read().values.get(key).map(|(v, _)| v.clone())
    }

    /// To take before reading a value from the store, for [`Self::put`].
    pub fn epoch(&self) -> Epoch {
        Epoch(self.read().epoch)
    }

    /// Whether a generation has been followed yet.
    pub fn following(&self) -> bool {
        self.read().generation.is_some()
    }

    /// Keeps `value` (of `weight`) under `key`, unless something was
    /// dropped or forgotten since `epoch` was taken (the value may predate
    /// it).
    pub fn put(&self, epoch: Epoch, key: K, value: V, weight: usize) {
        let mut inner = self.write();
        if inner.epoch != epoch.0 {
            return;
        }
        if inner.weight + weight > self.max_weight {
            inner.drop_all();
        }
        inner.weight += weight;
        if let Some((_, old)) = inner.values.insert(key, (value, weight)) {
            inner.weight -= old;
        }
    }

    /// Drops the value kept under `key`; a read begun before is not kept.
    pub fn forget<Q: Hash + Eq + ?Sized>(&self, key: &Q)
    where
        K: Borrow<Q>,
    {
        let mut inner = self.write();
        if let Some((_, weight)) = inner.values.remove(key) {
            inner.weight -= weight;
        }
        inner.epoch += 1;
    }

    /// Follows the store's generation: a different one drops every value.
    pub fn follow(&self, generation: G) {
        if self.read().generation.as_ref() == Some(&generation) {
            return;
        }
        let mut inner = self.write();
        if inner.generation.as_ref() != Some(&generation) {
            inner.drop_all();
            inner.generation = Some(generation);
        }
    }

    /// How many values are kept.
    pub fn len(&self) -> usize {
        self.read().values.len()
    }

    /// Whether none are.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn read(&self) -> RwLockReadGuard<'_, Inner<G, K, V>> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Inner<G, K, V>> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<G, K, V> Inner<G, K, V> {
    fn drop_all(&mut self) {
        self.values.clear();
        self.weight = 0;
        self.epoch += 1;
    }
}
