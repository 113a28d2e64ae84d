//! The `webhook-signature` header of a delivery: one signature per live
//! secret, space-separated. How a signature is made is
//! [`mds_domain::webhook`]'s, the one definition the clients' verifiers
//! share.

use mds_domain::webhook;

/// A new secret (`whsec_` and the base64 of 32 random bytes).
pub fn new_secret() -> String {
    webhook::new_secret()
}

/// The `webhook-signature` header value for `secrets` (the current one
/// first): message `id` sent at `timestamp` (Unix seconds) with `body`. A
/// secret that is not `whsec_` and base64 (none the service makes) signs
/// nothing.
pub fn header(secrets: &[&str], id: &str, timestamp: i64, body: &[u8]) -> String {
    secrets.iter().filter_map(|s| webhook::sign(s, id, timestamp, body).ok()).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_secrets_sign_twice_in_order() {
        let (a, b) = (new_secret(), new_secret());
        let h = header(&[&a, &b], "evt_0000000000000001", 1, b"{}");
        let sigs: Vec<&str> = h.split(' ').collect();
        assert_eq!(
            sigs,
            [
                webhook::sign(&a, "evt_0000000000000001", 1, b"{}").unwrap(),
                webhook::sign(&b, "evt_0000000000000001", 1, b"{}").unwrap()
            ]
        );
    }
}
