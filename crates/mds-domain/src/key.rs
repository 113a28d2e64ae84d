//! API keys: format, checksum, prefix and hash.
//!
//! A key is `mds_live_` or `mds_test_`, then 32 random base62 characters, then
//! a 6-character base62 CRC-32 of everything before it. The checksum lets a
//! mistyped or truncated key be refused without a store lookup, and lets
//! secret scanners recognise a leaked key. Only the SHA-256 of the whole key
//! is stored; the first [`KEY_PREFIX_LEN`] characters (the scheme and 8
//! random characters: unique with overwhelming probability at a hundred
//! million keys) identify it to people. Keys issued before were identified
//! by their first [`LEGACY_KEY_PREFIX_LEN`] characters and keep that prefix.

use std::fmt;

use rand::Rng;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Length of the random part.
pub const KEY_RANDOM_LEN: usize = 32;
/// Length of the checksum.
pub const KEY_CHECKSUM_LEN: usize = 6;
/// Length of `mds_live_` / `mds_test_`.
pub const KEY_SCHEME_LEN: usize = 9;
/// Total key length.
pub const KEY_LEN: usize = KEY_SCHEME_LEN + KEY_RANDOM_LEN + KEY_CHECKSUM_LEN;
/// Length of the key prefix that identifies a key to people.
pub const KEY_PREFIX_LEN: usize = 17;
/// Length of the prefix of keys issued before prefixes grew to
/// [`KEY_PREFIX_LEN`]; those keys keep it.
pub const LEGACY_KEY_PREFIX_LEN: usize = 12;

pub(crate) const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The environment of a key; it follows the key's prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Environment {
    /// `mds_live_`
    Live,
    /// `mds_test_`
    Test,
}

impl Environment {
    /// The wire value, `live` or `test`.
    pub fn as_str(self) -> &'static str {
        match self {
            Environment::Live => "live",
            Environment::Test => "test",
        }
    }

    /// Both environments.
    pub const ALL: [Environment; 2] = [Environment::Live, Environment::Test];

    /// The environment whose scheme starts `value`, if one does.
    pub fn of_key(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| value.starts_with(e.scheme()))
    }

    /// The key scheme that starts every key of this environment.
    pub fn scheme(self) -> &'static str {
        match self {
            Environment::Live => "mds_live_",
            Environment::Test => "mds_test_",
        }
    }

    /// Parses `live` or `test`.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "live" => Ok(Environment::Live),
            "test" => Ok(Environment::Test),
            _ => Err(format!("environment must be live or test (got {s:?})")),
        }
    }
}

impl fmt::Display for Environment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a value looks like an mds key (used to refuse keys in query strings).
pub fn looks_like_key(value: &str) -> bool {
    Environment::of_key(value).is_some()
}

/// A full API key. Its `Debug` shows only the prefix; it has no `Display`, so
/// it cannot end up in a log line by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey {
    secret: String,
    environment: Environment,
}

/// Why a presented key is refused before any lookup. Deliberately carries no
/// part of the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("malformed API key")]
pub struct KeyFormatError;

impl ApiKey {
    /// Makes a new random key for `environment`.
    pub fn generate(environment: Environment) -> Self {
        let mut rng = rand::rngs::OsRng;
        let mut s = String::with_capacity(KEY_LEN);
        s.push_str(environment.scheme());
        for _ in 0..KEY_RANDOM_LEN {
            s.push(BASE62[rng.gen_range(0..62)] as char);
        }
        s.extend(checksum(&s).map(char::from));
        ApiKey { secret: s, environment }
    }

    /// Parses a presented key: scheme, length, alphabet and checksum.
    pub fn parse(s: &str) -> Result<Self, KeyFormatError> {
        let environment = Environment::of_key(s).ok_or(KeyFormatError)?;
        if s.len() != KEY_LEN || !s.as_bytes()[KEY_SCHEME_LEN..].iter().all(u8::is_ascii_alphanumeric) {
            return Err(KeyFormatError);
        }
        let (body, sum) = s.split_at(KEY_LEN - KEY_CHECKSUM_LEN);
        if checksum(body)[..].ct_eq(sum.as_bytes()).unwrap_u8() != 1 {
            return Err(KeyFormatError);
        }
        Ok(ApiKey { secret: s.to_owned(), environment })
    }

    /// The environment the key's scheme names.
    pub fn environment(&self) -> Environment {
        self.environment
    }

    /// The first [`KEY_PREFIX_LEN`] characters.
    pub fn prefix(&self) -> KeyPrefix {
        KeyPrefix(self.prefix_str().to_owned())
    }

    /// The first [`KEY_PREFIX_LEN`] characters, borrowed (for lookups).
    pub fn prefix_str(&self) -> &str {
        &self.secret[..KEY_PREFIX_LEN]
    }

    /// The prefixes this key may be stored under, most likely first: its
    /// [`KEY_PREFIX_LEN`] prefix (keys issued now), then its
    /// [`LEGACY_KEY_PREFIX_LEN`] one (keys issued before).
    pub fn prefix_candidates(&self) -> [&str; 2] {
        [&self.secret[..KEY_PREFIX_LEN], &self.secret[..LEGACY_KEY_PREFIX_LEN]]
    }

    /// SHA-256 of the whole key: what the store keeps.
    pub fn hash(&self) -> KeyHash {
        KeyHash(Sha256::digest(self.secret.as_bytes()).into())
    }

    /// The full key, for showing once at creation. Never log it.
    pub fn expose_secret(&self) -> &str {
        &self.secret
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ApiKey({}…)", &self.secret[..KEY_PREFIX_LEN])
    }
}

/// The 6-character base62 CRC-32 of `body` that ends every key (and admin
/// token).
pub(crate) fn checksum(body: &str) -> [u8; KEY_CHECKSUM_LEN] {
    let mut n = crc32fast::hash(body.as_bytes()) as u64;
    let mut out = [b'0'; KEY_CHECKSUM_LEN];
    for slot in out.iter_mut().rev() {
        *slot = BASE62[(n % 62) as usize];
        n /= 62;
    }
    // 62^6 > 2^32, so the whole CRC fits.
    out
}

/// The public identifier of a key: its first 17 characters
/// (`mds_live_a1B2c3D4`), or 12 for a key issued before (`mds_live_a1B`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyPrefix(String);

impl KeyPrefix {
    /// Parses a prefix given by an operator.
    pub fn parse(s: &str) -> Result<Self, String> {
        let ok = (s.len() == KEY_PREFIX_LEN || s.len() == LEGACY_KEY_PREFIX_LEN)
            && looks_like_key(s)
            && s.as_bytes()[KEY_SCHEME_LEN..].iter().all(u8::is_ascii_alphanumeric);
        if ok {
            Ok(KeyPrefix(s.to_owned()))
        } else {
            Err(format!(
                "a key prefix is the first {KEY_PREFIX_LEN} characters of a key, like mds_live_a1B2c3D4 (or {LEGACY_KEY_PREFIX_LEN} for a key issued before, like mds_live_a1B) (got {:?})",
                s.chars().take(KEY_PREFIX_LEN).collect::<String>()
            ))
        }
    }

    /// The prefix as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for KeyPrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// SHA-256 of a key. Compared in constant time.
#[derive(Clone, Copy)]
pub struct KeyHash(pub [u8; 32]);

impl KeyHash {
    /// Lower-case hex, as stored.
    pub fn to_hex(&self) -> String {
        crate::hex::encode(&self.0)
    }

    /// Parses lower- or upper-case hex of 32 bytes.
    pub fn from_hex(s: &str) -> Option<Self> {
        crate::hex::decode(s)?.try_into().ok().map(KeyHash)
    }
}

impl PartialEq for KeyHash {
    fn eq(&self, other: &Self) -> bool {
        self.0.ct_eq(&other.0).into()
    }
}

impl Eq for KeyHash {}

impl fmt::Debug for KeyHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KeyHash(…)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_parse_back() {
        for env in [Environment::Live, Environment::Test] {
            let k = ApiKey::generate(env);
            assert_eq!(k.expose_secret().len(), KEY_LEN);
            let p = ApiKey::parse(k.expose_secret()).unwrap();
            assert_eq!(p.environment(), env);
            assert_eq!(p.prefix().as_str(), &k.expose_secret()[..17]);
            assert!(p.prefix().as_str().starts_with(env.scheme()));
            assert_eq!(p.hash(), k.hash());
        }
    }

    #[test]
    fn typos_and_truncations_fail_the_checksum() {
        let k = ApiKey::generate(Environment::Live);
        let s = k.expose_secret();
        assert!(ApiKey::parse(&s[..s.len() - 1]).is_err());
        for i in KEY_SCHEME_LEN..s.len() {
            let mut b = s.as_bytes().to_vec();
            b[i] = if b[i] == b'a' { b'b' } else { b'a' };
            let typo = String::from_utf8(b).unwrap();
            assert!(ApiKey::parse(&typo).is_err(), "typo at {i} accepted");
        }
        assert!(ApiKey::parse("mds_prod_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa").is_err());
        assert!(ApiKey::parse("").is_err());
    }

    #[test]
    fn debug_never_shows_the_secret() {
        let k = ApiKey::generate(Environment::Test);
        let d = format!("{k:?}");
        assert!(!d.contains(&k.expose_secret()[17..]));
    }

    #[test]
    fn hash_hex_round_trips() {
        let h = ApiKey::generate(Environment::Live).hash();
        assert_eq!(KeyHash::from_hex(&h.to_hex()).unwrap(), h);
        assert!(KeyHash::from_hex("zz").is_none());
    }

    #[test]
    fn prefixes() {
        assert!(KeyPrefix::parse("mds_live_a1B2c3D4").is_ok());
        assert!(KeyPrefix::parse("mds_live_a1B").is_ok(), "a key issued before keeps its prefix");
        assert!(KeyPrefix::parse("mds_live_a1").is_err());
        assert!(KeyPrefix::parse("mds_live_a1B2c3D4e").is_err());
        assert!(KeyPrefix::parse("mds_live_a1B2c").is_err());
        assert!(KeyPrefix::parse("xyz_live_a1B").is_err());
        let k = ApiKey::generate(Environment::Live);
        assert_eq!(k.prefix_candidates(), [&k.expose_secret()[..17], &k.expose_secret()[..12]]);
    }
}
