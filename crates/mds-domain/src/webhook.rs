//! Webhook signatures (contract 11.2, the Standard Webhooks scheme): the
//! one definition of how a delivery is signed ([`sign`]) and checked
//! ([`verify`]), which the server signs with and the Rust client's
//! `verify_webhook` checks with.
//!
//! A secret is `whsec_` and the base64 of its key bytes; a signature is
//! `v1,` and the base64 of HMAC-SHA256 of `"{id}.{timestamp}.{body}"` keyed
//! by those bytes; a delivery's `webhook-signature` header holds one or
//! more, space-separated (two while a rotated secret still signs).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The prefix of a secret.
pub const SECRET_PREFIX: &str = "whsec_";
/// The most a delivery's timestamp may be off the receiver's clock.
pub const TOLERANCE_SECS: i64 = 5 * 60;
/// The header carrying the event id.
pub const ID_HEADER: &str = "webhook-id";
/// The header carrying the Unix time of the attempt.
pub const TIMESTAMP_HEADER: &str = "webhook-timestamp";
/// The header carrying the signatures.
pub const SIGNATURE_HEADER: &str = "webhook-signature";

/// Why a delivery is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The secret is not `whsec_` and base64.
    #[error("the secret is not a webhook secret (whsec_ and base64)")]
    BadSecret,
    /// A header is missing or not text.
    #[error("the {0} header is missing")]
    MissingHeader(&'static str),
    /// The timestamp is not a number, or too far from now.
    #[error("the webhook-timestamp is not within 5 minutes of now")]
    Timestamp,
    /// No signature matches.
    #[error("no webhook-signature matches the body")]
    Signature,
}

/// The key bytes of a secret (`whsec_` and base64).
pub fn secret_bytes(secret: &str) -> Result<Vec<u8>, VerifyError> {
    let b64 = secret.strip_prefix(SECRET_PREFIX).ok_or(VerifyError::BadSecret)?;
    STANDARD.decode(b64).map_err(|_| VerifyError::BadSecret)
}

/// A new secret: `whsec_` and the base64 of 32 random bytes.
pub fn new_secret() -> String {
    let bytes: [u8; 32] = rand::random();
    format!("{SECRET_PREFIX}{}", STANDARD.encode(bytes))
}

/// The signature (`v1,…`) of the delivery `id` at `timestamp` (Unix
/// seconds) of `body` under `secret`.
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Result<String, VerifyError> {
    let mut mac = Hmac::<Sha256>::new_from_slice(&secret_bytes(secret)?).expect("HMAC takes any key length");
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    Ok(format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes())))
}

/// Checks a delivery: `header(name)` gives its header values, `body` its
/// bytes, `now` the receiver's Unix time. Passes when the timestamp is
/// within [`TOLERANCE_SECS`] of `now` and one of the signatures is that of
/// `secret` (compared in constant time).
pub fn verify<'a>(
    secret: &str,
    header: impl Fn(&str) -> Option<&'a str>,
    body: &[u8],
    now: i64,
) -> Result<(), VerifyError> {
    let id = header(ID_HEADER).ok_or(VerifyError::MissingHeader(ID_HEADER))?;
    let ts = header(TIMESTAMP_HEADER).ok_or(VerifyError::MissingHeader(TIMESTAMP_HEADER))?;
    let sigs = header(SIGNATURE_HEADER).ok_or(VerifyError::MissingHeader(SIGNATURE_HEADER))?;
    let ts: i64 = ts.trim().parse().map_err(|_| VerifyError::Timestamp)?;
    if (now - ts).abs() > TOLERANCE_SECS {
        return Err(VerifyError::Timestamp);
    }
    let expected = sign(secret, id, ts, body)?;
    let matches = sigs
        .split(' ')
        .filter(|s| s.starts_with("v1,"))
        .any(|s| subtle::ConstantTimeEq::ct_eq(s.as_bytes(), expected.as_bytes()).into());
    if matches { Ok(()) } else { Err(VerifyError::Signature) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference vector of the Standard Webhooks specification.
    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const TS: i64 = 1614265330;
    const BODY: &[u8] = br#"{"test": 2432232314}"#;
    const SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    fn headers<'a>(sigs: &'a str, ts: &'a str) -> impl Fn(&str) -> Option<&'a str> {
        move |name| match name {
            ID_HEADER => Some(ID),
            TIMESTAMP_HEADER => Some(ts),
            SIGNATURE_HEADER => Some(sigs),
            _ => None,
        }
    }

    #[test]
    fn the_reference_vector_signs_and_verifies() {
        assert_eq!(sign(SECRET, ID, TS, BODY).unwrap(), SIGNATURE);
        let ts = TS.to_string();
        assert_eq!(verify(SECRET, headers(SIGNATURE, &ts), BODY, TS + 10), Ok(()));
        let two = format!("v1,AAAA {SIGNATURE}");
        assert_eq!(verify(SECRET, headers(&two, &ts), BODY, TS), Ok(()), "any of several");
    }

    #[test]
    fn tampering_and_stale_deliveries_are_refused() {
        let ts = TS.to_string();
        assert_eq!(verify(SECRET, headers(SIGNATURE, &ts), b"{}", TS), Err(VerifyError::Signature));
        assert_eq!(verify(SECRET, headers(SIGNATURE, &ts), BODY, TS + 301), Err(VerifyError::Timestamp));
        assert_eq!(verify(SECRET, headers(SIGNATURE, &ts), BODY, TS - 301), Err(VerifyError::Timestamp));
        assert_eq!(verify(SECRET, headers(SIGNATURE, "soon"), BODY, TS), Err(VerifyError::Timestamp));
        let other = new_secret();
        assert_eq!(verify(&other, headers(SIGNATURE, &ts), BODY, TS), Err(VerifyError::Signature));
        assert_eq!(verify("nope", headers(SIGNATURE, &ts), BODY, TS), Err(VerifyError::BadSecret));
        assert!(secret_bytes(&new_secret()).unwrap().len() >= 24);
    }
}
