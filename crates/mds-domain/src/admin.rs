//! The admin API's own values (contract section 9): admin tokens, who made
//! a change (the [`Actor`]) and the audit log's entries.
//!
//! An admin token follows the rules of API keys ([`crate::key`]): a scheme
//! (`mds_admin_`), 32 random base62 characters and a 6-character base62
//! CRC-32, so a mistyped token is refused without a store lookup and secret
//! scanners recognise one. Only its SHA-256 is stored; its first
//! [`ADMIN_TOKEN_PREFIX_LEN`] characters find it in the store. It is never
//! an API key: the schemes differ, so neither parses as the other.

use std::fmt;

use chrono::{DateTime, Utc};
use rand::Rng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::key::{BASE62, KEY_CHECKSUM_LEN, KEY_RANDOM_LEN, KeyHash, checksum};

/// The scheme that starts every admin token.
pub const ADMIN_TOKEN_SCHEME: &str = "mds_admin_";
/// Total length of an admin token.
pub const ADMIN_TOKEN_LEN: usize = ADMIN_TOKEN_SCHEME.len() + KEY_RANDOM_LEN + KEY_CHECKSUM_LEN;
/// Length of the prefix that finds a token in the store (the scheme and 8
/// random characters).
pub const ADMIN_TOKEN_PREFIX_LEN: usize = ADMIN_TOKEN_SCHEME.len() + 8;
/// The actor name of changes made with the CLI; no admin token may take it.
pub const CLI_ACTOR: &str = "cli";

/// An admin token in the clear. Its `Debug` shows only the prefix; it has
/// no `Display`.
#[derive(Clone, PartialEq, Eq)]
pub struct AdminToken(String);

/// Why a presented admin token is refused before any lookup (carries no
/// part of it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("malformed admin token")]
pub struct AdminTokenFormatError;

impl AdminToken {
    /// A new random token.
    pub fn generate() -> Self {
        let mut rng = rand::rngs::OsRng;
        let mut s = String::with_capacity(ADMIN_TOKEN_LEN);
        s.push_str(ADMIN_TOKEN_SCHEME);
        for _ in 0..KEY_RANDOM_LEN {
            s.push(BASE62[rng.gen_range(0..62)] as char);
        }
        s.extend(checksum(&s).map(char::from));
        AdminToken(s)
    }

    /// Parses a presented token: scheme, length, alphabet and checksum.
    pub fn parse(s: &str) -> Result<Self, AdminTokenFormatError> {
        let scheme = ADMIN_TOKEN_SCHEME.len();
        if !s.starts_with(ADMIN_TOKEN_SCHEME)
            || s.len() != ADMIN_TOKEN_LEN
            || !s.as_bytes()[scheme..].iter().all(u8::is_ascii_alphanumeric)
        {
            return Err(AdminTokenFormatError);
        }
        let (body, sum) = s.split_at(ADMIN_TOKEN_LEN - KEY_CHECKSUM_LEN);
        if checksum(body)[..].ct_eq(sum.as_bytes()).unwrap_u8() != 1 {
            return Err(AdminTokenFormatError);
        }
        Ok(AdminToken(s.to_owned()))
    }

    /// The first [`ADMIN_TOKEN_PREFIX_LEN`] characters.
    pub fn prefix(&self) -> &str {
        &self.0[..ADMIN_TOKEN_PREFIX_LEN]
    }

    /// SHA-256 of the whole token: what the store keeps.
    pub fn hash(&self) -> KeyHash {
        KeyHash(Sha256::digest(self.0.as_bytes()).into())
    }

    /// The token, for showing once at creation. Never log it.
    pub fn expose_secret(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for AdminToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AdminToken({}…)", self.prefix())
    }
}

/// Who made a change: the CLI (`cli`) or the admin token of that name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    /// An operator command.
    Cli,
    /// A request on the admin listener, by the token's name.
    Token(crate::AdminTokenName),
}

impl Actor {
    /// As the audit log writes it: `cli`, or the token's name.
    pub fn as_str(&self) -> &str {
        match self {
            Actor::Cli => CLI_ACTOR,
            Actor::Token(name) => name.as_str(),
        }
    }
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One entry of the audit log: a change made through the admin API or the
/// CLI, as recorded in the transaction of the change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditEntry {
    /// Position in the log (increasing with time); what cursors hold.
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub id: i64,
    /// When.
    #[serde(with = "crate::time::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub at: DateTime<Utc>,
    /// `cli`, or the name of the admin token.
    pub actor: String,
    /// What was done: `tier.create`, `tier.update`, `account.create`,
    /// `account.update`, `key.create`, `key.revoke`, `admin_token.create`,
    /// `admin_token.revoke`.
    pub action: String,
    /// What it was done to: `tier:pro`, `account:acme`,
    /// `key:mds_live_a1B2c3D4`, `admin_token:billing`.
    pub target: String,
    /// The record before (`null` when it did not exist).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>, required))]
    pub before: Option<serde_json::Value>,
    /// The record after.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>, required))]
    pub after: Option<serde_json::Value>,
}

/// A key as the admin API and `mds keys list --json` show it (never the
/// key itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct KeyView {
    /// The key's prefix, which names it (`mds_live_a1B2c3D4`).
    pub key_prefix: String,
    /// The account it belongs to.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub account: crate::AccountName,
    /// The tier it was issued on (`plan_tier`).
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub tier: crate::TierName,
    /// `live` or `test`.
    #[cfg_attr(feature = "openapi", schema(example = "live", pattern = "^(live|test)$"))]
    pub environment: String,
    /// When it was issued.
    #[serde(with = "crate::time::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: DateTime<Utc>,
    /// When it was revoked; `null` while it works.
    #[serde(with = "crate::time::rfc3339_opt")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime, required))]
    pub revoked_at: Option<DateTime<Utc>>,
    /// When it stops working (set at issue, or by a roll); `null` if it
    /// does not expire.
    #[serde(with = "crate::time::rfc3339_opt")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime, required))]
    pub expires_at: Option<DateTime<Utc>>,
}

/// What one key of an account did in a billing month, as billing reads it
/// (`GET /admin/v1/accounts/{name}/usage`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct KeyUsage {
    /// The key's prefix.
    pub key_prefix: String,
    /// The tier it was issued on.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub plan_tier: crate::TierName,
    /// `live` or `test`.
    pub environment: String,
    /// When it was revoked, if it was.
    #[serde(with = "crate::time::rfc3339_opt")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime, required))]
    pub revoked_at: Option<DateTime<Utc>>,
    /// The monthly quota in force: now for the current month, the one the
    /// month closed under for a past one.
    pub quota: u64,
    /// Requests counted against the quota in the month.
    pub requests: u64,
    /// `304 Not Modified` answers in the month (free).
    pub not_modified: u64,
    /// `requests` by route template, every data route present.
    pub by_route: std::collections::BTreeMap<String, u64>,
}

/// An account's usage in one billing month, key by key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AccountUsage {
    /// The account.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub account: crate::AccountName,
    /// Whether it is entitled now.
    pub entitled: bool,
    /// Midnight UTC on the 1st of the month.
    #[serde(with = "crate::time::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub period_start: DateTime<Utc>,
    /// Its keys that existed in the month (revoked ones included), by
    /// creation.
    pub data: Vec<KeyUsage>,
    /// Always false: every key is in `data`.
    pub has_more: bool,
    /// Always `null`.
    pub next_cursor: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_parse_back_and_typos_are_refused() {
        let t = AdminToken::generate();
        assert_eq!(t.expose_secret().len(), ADMIN_TOKEN_LEN);
        assert_eq!(AdminToken::parse(t.expose_secret()), Ok(t.clone()));
        assert!(t.prefix().starts_with("mds_admin_") && t.prefix().len() == 18);
        let mut typo = t.expose_secret().to_owned().into_bytes();
        typo[20] = if typo[20] == b'a' { b'b' } else { b'a' };
        assert!(AdminToken::parse(std::str::from_utf8(&typo).unwrap()).is_err());
        assert!(AdminToken::parse(&t.expose_secret()[..ADMIN_TOKEN_LEN - 1]).is_err());
        // An API key is no admin token, and the other way round.
        let key = crate::ApiKey::generate(crate::Environment::Live);
        assert!(AdminToken::parse(key.expose_secret()).is_err());
        assert!(crate::ApiKey::parse(t.expose_secret()).is_err());
        assert!(!format!("{t:?}").contains(&t.expose_secret()[20..]));
    }
}
