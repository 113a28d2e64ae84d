//! One article (`GET /v1/news/{slug}`, [`Node::article`]) and
//! [`ArticleCache`]: the articles a node has served, as served, read on
//! every request without a lock held across an `await` and dropped when the
//! store's news generation moves (the reload task follows it).

use mds_domain::Slug;
use mds_store::StoreResult;

use crate::followed::{Epoch, Followed};
use crate::node::Node;
use crate::tagged::Tagged;

impl Node {
    /// The article with `slug` as served (JSON tagged with its digest), if
    /// there is one: kept, or read from the store (and kept).
    pub async fn article(&self, slug: &Slug) -> StoreResult<Option<Tagged>> {
        let articles = self.articles();
        if let Some(kept) = articles.get(slug.as_str()) {
            return Ok(Some(kept));
        }
        let epoch = articles.epoch();
        let Some(article) = self.store().article(slug).await? else { return Ok(None) };
        let served = Tagged::hashed(serde_json::to_vec(&article).expect("an article serializes"));
        articles.put(epoch, slug.as_str(), served.clone());
        Ok(Some(served))
    }
}

/// The articles this node has served, by slug, so that a popular one
/// is read from the store once, not on every request.
///
/// Dropped whole when the store's news generation moves (the reload task
/// calls [`ArticleCache::follow`]), so an import is served within a reload
/// interval, like the catalog. A read from the store that began before a
/// drop is not kept ([`ArticleCache::epoch`]). Bounded: when the next
/// article would pass [`ArticleCache::MAX_BYTES`], the cache starts over.
/// Only found articles are kept: a miss (`404`) asks the store each time.
#[derive(Debug)]
pub struct ArticleCache {
    articles: Followed<i64, Box<str>, Tagged>,
}

impl Default for ArticleCache {
    fn default() -> Self {
        ArticleCache { articles: Followed::new(Self::MAX_BYTES) }
    }
}

impl ArticleCache {
    /// The most article JSON held, in bytes.
    pub const MAX_BYTES: usize = 64 * 1024 * 1024;

    /// The served article with `slug`, if held.
    pub fn get(&self, slug: &str) -> Option<Tagged> {
        self.articles.get(slug)
    }

    /// To take before reading an article from the store, for [`Self::put`].
    pub fn epoch(&self) -> Epoch {
        self.articles.epoch()
    }

    /// Keeps `article` under `slug`, unless the cache was dropped since
    /// `epoch` was taken (the article may predate the drop).
    pub fn put(&self, epoch: Epoch, slug: &str, article: Tagged) {
        let size = slug.len() + article.body.len();
        self.articles.put(epoch, slug.into(), article, size);
    }

    /// Follows the store's news generation: a different one drops every
    /// article held.
    pub fn follow(&self, generation: i64) {
        self.articles.follow(generation);
    }

    /// How many articles are held.
    pub fn len(&self) -> usize {
        self.articles.len()
    }

    /// Whether none are.
    pub fn is_empty(&self) -> bool {
        self.articles.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn article(n: usize) -> Tagged {
        Tagged::hashed(vec![b'x'; n])
    }

    #[test]
    fn articles_follow_the_generation() {
        let cache = ArticleCache::default();
        cache.follow(1);
        let t = cache.epoch();
        cache.put(t, "a", article(10));
        assert_eq!(cache.get("a").unwrap().body.len(), 10);
        cache.follow(1);
        assert!(cache.get("a").is_some(), "same generation: kept");
        cache.follow(2);
        assert!(cache.get("a").is_none(), "an import: dropped");
        // A read that began before the drop is not kept.
        cache.put(t, "a", article(10));
        assert!(cache.is_empty());
        cache.put(cache.epoch(), "a", article(10));
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn articles_are_bounded() {
        let cache = ArticleCache::default();
        let big = ArticleCache::MAX_BYTES / 3;
        cache.put(cache.epoch(), "a", article(big));
        cache.put(cache.epoch(), "a", article(big));
        cache.put(cache.epoch(), "b", article(big));
        assert_eq!(cache.len(), 2, "replacing does not count twice");
        cache.put(cache.epoch(), "c", article(big));
        assert_eq!(cache.len(), 1, "over the bound: started over");
        assert!(cache.get("c").is_some());
    }
}
