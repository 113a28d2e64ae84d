//! The Redis connection of a [`SharedLimiter`], made on first use, every
//! call within its timeout; falling back to local limits on an error, and
//! trying Redis again at most once per probe interval meanwhile.

use std::future::Future;
use std::sync::PoisonError;
use std::sync::atomic::Ordering;
use std::time::Instant;

use mds_domain::calls;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{ErrorKind, RedisError};

use super::SharedLimiter;
use super::stats::Count;

/// A Redis connection (shared, multiplexed, reconnecting by itself).
#[derive(Clone)]
pub(super) struct Conn(pub(super) ConnectionManager);

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ConnectionManager")
    }
}

impl SharedLimiter {
    /// Whether this request goes to Redis: always when healthy; while
    /// degraded, one request per probe interval.
    pub(super) fn should_try_redis(&self) -> bool {
        if !self.is_degraded() {
            return true;
        }
        let mut next = self.next_probe.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        if now >= *next {
            *next = now + self.config.probe_interval;
            true
        } else {
            false
        }
    }

    pub(super) fn fell_back(&self, e: &RedisError) {
        self.counters.bump(Count::RedisErrors);
        *self.next_probe.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now() + self.config.probe_interval;
        if !self.degraded.swap(true, Ordering::Relaxed) {
            self.counters.bump(Count::Fallbacks);
            tracing::warn!(
                error = %e,
                nodes = self.config.nodes,
                "Redis unavailable: limiting locally, each node allowing 1/{} of the per-minute limit and checking the quota against its own count",
                self.config.nodes
            );
        }
    }

    pub(super) fn came_back(&self) {
        if self.degraded.swap(false, Ordering::Relaxed) {
            tracing::info!("Redis is back: limits are shared across nodes again");
        }
    }

    /// While degraded, tries Redis (a `PING`) once per probe interval, so
    /// the node goes back to it when Redis returns, not only when a
    /// request happens to probe: a burst after an outage is then limited
    /// through Redis, not by each node alone. Whether it is degraded after.
    pub(super) async fn probe(&self) -> bool {
        if self.is_degraded() && self.should_try_redis() {
            let ping = async {
                let mut conn = self.connection().await?;
                self.timed("PING", redis::cmd("PING").query_async::<String>(&mut conn)).await
            };
            match ping.await {
                Ok(_) => self.came_back(),
                Err(e) => self.fell_back(&e),
            }
        }
        self.is_degraded()
    }

    /// The connection, made on first use (or after a failed start).
    pub(super) async fn connection(&self) -> Result<ConnectionManager, RedisError> {
        if let Some(c) = self.conn.lock().unwrap_or_else(PoisonError::into_inner).clone() {
            return Ok(c.0);
        }
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(self.config.timeout)
            .set_response_timeout(self.config.timeout)
            .set_number_of_retries(1)
            .set_max_delay(100);
        let c = self.timed("connect", ConnectionManager::new_with_config(self.client.clone(), config)).await?;
        let mut slot = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(slot.get_or_insert(Conn(c)).0.clone())
    }

    /// `fut`, the Redis command `op`, within the timeout, a timeout being a
    /// Redis error like any other; noted for the trace of the request that
    /// made it ([`calls::record`]).
    pub(super) async fn timed<T>(
        &self,
        op: &'static str,
        fut: impl Future<Output = Result<T, RedisError>>,
    ) -> Result<T, RedisError> {
        calls::record("redis", op, async {
            match tokio::time::timeout(self.config.timeout, fut).await {
                Ok(r) => r,
                Err(_) => Err(RedisError::from((ErrorKind::IoError, "Redis did not answer in time"))),
            }
        })
        .await
    }
}
