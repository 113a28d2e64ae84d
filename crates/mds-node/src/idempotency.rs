//! `Idempotency-Key` on the admin API's `POST`s (contract section 9, as
//! Stripe's): the same key and request within 24 h get the first answer and
//! do nothing again; the same key with another request is refused. Claims
//! live in the store, so they hold across nodes and restarts.
//!
//! A key is scoped to the admin token that sent it. The store holds neither
//! the key nor the answer in the clear: the claim is named by a SHA-256 of
//! the token's name and the key, and the answer (which for `POST
//! /admin/v1/keys` holds the new API key) is encrypted with a keystream
//! derived from the Idempotency-Key itself (SHA-256 in counter mode), which
//! only the client holds: only a retry with the key reads it back.

use chrono::{DateTime, Utc};
use mds_domain::Actor;
use mds_store::{IdempotencyClaim, Store, StoreError};
use sha2::{Digest, Sha256};

/// The longest `Idempotency-Key` taken, in bytes.
pub const MAX_IDEMPOTENCY_KEY_LEN: usize = 255;

/// What to do with a `POST` that carries an `Idempotency-Key`.
#[derive(Debug, PartialEq, Eq)]
pub enum Claim {
    /// Run it, then [`complete`] (or [`release`] on a `5xx`) the claim.
    Run(ClaimedKey),
    /// Answer what the first request answered.
    Replay {
        /// Its status.
        status: u16,
        /// Its body.
        body: Vec<u8>,
    },
    /// The key was used with another request: `409 idempotency_conflict`.
    OtherRequest,
    /// The first request with the key is still running.
    Running,
}

/// A key this request has claimed in the store (named there by a hash),
/// with the keystream that seals its answer: to [`complete`] with the
/// answer or [`release`].
#[derive(Debug, PartialEq, Eq)]
pub struct ClaimedKey {
    name: String,
    stream: [u8; 32],
}

/// Whether `key` is an acceptable `Idempotency-Key`: 1 to 255 visible ASCII
/// characters.
pub fn valid_key(key: &str) -> bool {
    !key.is_empty() && key.len() <= MAX_IDEMPOTENCY_KEY_LEN && key.bytes().all(|b| b.is_ascii_graphic())
}

fn sha(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_be_bytes());
        h.update(p);
    }
    h.finalize().into()
}

/// XORs `data` with the keystream of `stream` (SHA-256 in counter mode).
fn apply_stream(stream: &[u8; 32], data: &mut [u8]) {
    for (i, chunk) in data.chunks_mut(32).enumerate() {
        let block = sha(&[b"mds-idempotency-stream", stream, &(i as u64).to_be_bytes()]);
        for (b, k) in chunk.iter_mut().zip(block) {
            *b ^= k;
        }
    }
}

/// Claims `key` of `actor` for the request `method path` with `body` at
/// `now` (the node's clock: claims are kept [`mds_store::IDEMPOTENCY_TTL`]
/// from then).
pub async fn claim(
    store: &dyn Store,
    actor: &Actor,
    key: &str,
    method: &str,
    path: &str,
    body: &[u8],
    now: DateTime<Utc>,
) -> Result<Claim, StoreError> {
    let name = mds_domain::hex::encode(&sha(&[b"mds-idempotency-name", actor.as_str().as_bytes(), key.as_bytes()]));
    let fingerprint =
        mds_domain::hex::encode(&sha(&[b"mds-idempotency-request", method.as_bytes(), path.as_bytes(), body]));
    let stream = sha(&[b"mds-idempotency-key", actor.as_str().as_bytes(), key.as_bytes()]);
    Ok(match store.idempotency_claim(&name, &fingerprint, now).await? {
        IdempotencyClaim::Claimed => Claim::Run(ClaimedKey { name, stream }),
        IdempotencyClaim::OtherRequest => Claim::OtherRequest,
        IdempotencyClaim::Running => Claim::Running,
        IdempotencyClaim::Done { status, body } => {
            let mut bytes = mds_domain::hex::decode(&body)
                .ok_or_else(|| StoreError::Invalid("a stored idempotent answer is not hex".into()))?;
            apply_stream(&stream, &mut bytes);
            Claim::Replay { status, body: bytes }
        }
    })
}

/// Stores the answer of a claimed request, encrypted.
pub async fn complete(store: &dyn Store, claimed: &ClaimedKey, status: u16, body: &[u8]) -> Result<(), StoreError> {
    let mut sealed = body.to_vec();
    apply_stream(&claimed.stream, &mut sealed);
    store.idempotency_complete(&claimed.name, status, &mds_domain::hex::encode(&sealed)).await
}

/// Forgets a claimed request that failed, so a retry runs it.
pub async fn release(store: &dyn Store, claimed: &ClaimedKey) -> Result<(), StoreError> {
    store.idempotency_release(&claimed.name).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_round_trips_and_hides_the_body() {
        let stream = sha(&[b"k"]);
        let body = br#"{"key":"mds_live_abcdefgh"}"#.repeat(3);
        let mut sealed = body.clone();
        apply_stream(&stream, &mut sealed);
        assert!(!sealed.windows(8).any(|w| w == b"mds_live"));
        apply_stream(&stream, &mut sealed);
        assert_eq!(sealed, body);
        assert!(valid_key("a-uuid-1") && !valid_key("") && !valid_key("with space") && !valid_key(&"x".repeat(256)));
    }
}
