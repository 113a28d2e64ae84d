//! Secrets and signatures of the Standard Webhooks scheme: a secret is
//! `whsec_` and the base64 of random bytes; a signature is `v1,` and the
//! base64 of the HMAC-SHA256 of `"{id}.{timestamp}.{body}"` keyed by the
//! secret's decoded bytes.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

/// The prefix of every secret.
pub const SECRET_PREFIX: &str = "whsec_";

/// Random bytes in a new secret (the contract asks for at least 24).
const SECRET_BYTES: usize = 32;

/// A new secret.
pub fn new_secret() -> String {
    let mut bytes = [0u8; SECRET_BYTES];
    rand::thread_rng().fill_bytes(&mut bytes);
    format!("{SECRET_PREFIX}{}", STANDARD.encode(bytes))
}

/// The key bytes of `secret` (the base64 after `whsec_`; a secret without
/// the prefix is read as base64 too).
fn key(secret: &str) -> Vec<u8> {
    let b64 = secret.strip_prefix(SECRET_PREFIX).unwrap_or(secret);
    STANDARD.decode(b64).unwrap_or_else(|_| b64.as_bytes().to_vec())
}

/// The signature `v1,…` of `body` sent as message `id` at `timestamp`
/// (Unix seconds), with `secret`.
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(&key(secret)).expect("HMAC takes a key of any length");
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

/// The `webhook-signature` header value: one signature per live secret,
/// space-separated.
pub fn header(secrets: &[&str], id: &str, timestamp: i64, body: &[u8]) -> String {
    secrets.iter().map(|s| sign(s, id, timestamp, body)).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference vector of the Standard Webhooks specification.
    #[test]
    fn signs_the_reference_vector() {
        let sig = sign(
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            br#"{"test": 2432232314}"#,
        );
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn secrets_have_the_prefix_and_enough_bytes() {
        let s = new_secret();
        assert!(s.starts_with(SECRET_PREFIX));
        assert!(key(&s).len() >= 24);
        assert_ne!(s, new_secret());
    }
}
