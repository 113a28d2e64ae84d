//! The operations on tiers, accounts, keys and admin tokens, as the
//! operator CLI (`mds tiers|accounts|keys|admin-tokens`) and the admin API
//! (`/admin/v1/...`) both run them: each change a method of [`Audited`] (the
//! store, the actor and the instant), recorded in the audit log under its
//! [`Actor`] by the store, in the transaction of the change (contract
//! section 9); each read a function.
//!
//! Errors say which input was wrong ([`AdminError::Invalid`] names the
//! field), so the CLI prints a sentence and the admin API a problem naming
//! the field.

use chrono::{DateTime, Utc};
use mds_domain::admin::CLI_ACTOR;
use mds_domain::{
    Account, AccountName, Actor, AdminToken, AdminTokenName, ApiKey, Environment, KeyPrefix, Tier, TierName,
};
use mds_store::{AdminTokenRecord, KeyRecord, RolledKey, Store, StoreError};

use crate::issue::{draw_key, no_free_prefix, with_free_prefix};
use mds_limits::clock::{Clock, SystemClock};

mod lists;
mod operator;

pub use lists::{PageAsk, accounts_page, audit_page, cursor_codec, keys_page, tiers_page};
pub use operator::Operator;

/// How many new keys (or tokens) are drawn when the prefix of the last one
/// is taken.
const PREFIX_TRIES: usize = 5;

/// Why an operation was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// An input is wrong: `param` names it (a body field, a flag).
    #[error("{detail}")]
    Invalid {
        /// The field.
        param: &'static str,
        /// A sentence saying what is wrong.
        detail: String,
    },
    /// What the operation is about does not exist (the path's account, key
    /// or token).
    #[error("{0}")]
    NotFound(String),
    /// It exists already (an account name, an admin token name).
    #[error("{0}")]
    Conflict(String),
    /// A list's `cursor` was not issued by this service for that list and
    /// its filters, or was altered (`400 invalid_cursor`).
    #[error("{0}")]
    InvalidCursor(String),
    /// The store failed.
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for AdminError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound(m) => AdminError::NotFound(m),
            StoreError::Conflict(m) => AdminError::Conflict(m),
            e => AdminError::Store(e),
        }
    }
}

/// The result of an operation.
pub type AdminResult<T> = Result<T, AdminError>;

fn invalid(param: &'static str, detail: impl Into<String>) -> AdminError {
    AdminError::Invalid { param, detail: detail.into() }
}

/// An audited change's context: the store it is made in, the actor the
/// audit log names and the instant it records (the node's clock on the
/// admin API, the wall clock in the CLI). Each operation is a method.
#[derive(Clone, Copy)]
pub struct Audited<'a> {
    /// The store.
    pub store: &'a dyn Store,
    /// Who makes the change.
    pub actor: &'a Actor,
    /// When.
    pub now: DateTime<Utc>,
}

impl std::fmt::Debug for Audited<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Audited").field("actor", self.actor).field("now", &self.now).finish_non_exhaustive()
    }
}

impl<'a> Audited<'a> {
    /// A change the operator CLI makes now, on the system clock (its actor
    /// is [`Actor::Cli`]).
    pub fn cli(store: &'a dyn Store) -> Self {
        Audited { store, actor: &Actor::Cli, now: SystemClock.now() }
    }

    /// Creates a tier (both limits required) or changes one (a limit left out
    /// keeps its value); returns the tier as set and whether it was created.
    pub async fn set_tier(
        self,
        name: TierName,
        rate_limit_per_minute: Option<u32>,
        monthly_quota: Option<u64>,
    ) -> AdminResult<(Tier, bool)> {
        let Audited { store, actor, now } = self;
        if rate_limit_per_minute == Some(0) {
            return Err(invalid("rate_limit_per_minute", "rate_limit_per_minute must be at least 1"));
        }
        if monthly_quota == Some(0) {
            return Err(invalid("monthly_quota", "monthly_quota must be at least 1"));
        }
        let existing = store.tiers().await?.into_iter().find(|t| t.name == name);
        let tier = match (existing, rate_limit_per_minute, monthly_quota) {
            (Some(t), r, q) => Tier {
                rate_limit_per_minute: r.unwrap_or(t.rate_limit_per_minute),
                monthly_quota: q.unwrap_or(t.monthly_quota),
                name,
            },
            (None, Some(r), Some(q)) => Tier { name, rate_limit_per_minute: r, monthly_quota: q },
            (None, r, _) => {
                let param = if r.is_none() { "rate_limit_per_minute" } else { "monthly_quota" };
                return Err(invalid(
                    param,
                    format!(
                        "tier {name:?} does not exist; to create it give both rate_limit_per_minute and monthly_quota"
                    ),
                ));
            }
        };
        let created = store.audited_set_tier(&tier, actor, now).await?;
        Ok((tier, created))
    }

    /// Creates an account (entitled); `Conflict` if the name is taken.
    pub async fn create_account(self, name: &AccountName) -> AdminResult<Account> {
        let Audited { store, actor, now } = self;
        Ok(store.audited_create_account(name, actor, now).await?)
    }

    /// Sets an account's entitlement; `NotFound` if there is no such account.
    pub async fn set_entitled(self, name: &AccountName, entitled: bool) -> AdminResult<Account> {
        let Audited { store, actor, now } = self;
        Ok(store.audited_set_account_entitled(name, entitled, actor, now).await?)
    }

    /// Issues a key for `account` on `tier`: stores its hash and returns the
    /// key (the only time it exists in the clear) with its record; it stops
    /// working at `expires_at`, if given. An unknown account or tier is
    /// `Invalid` naming `account` or `tier`; an expiry not in the future,
    /// `expires_at`.
    pub async fn issue_key(
        self,
        account: &AccountName,
        tier: &TierName,
        environment: Environment,
        expires_at: Option<DateTime<Utc>>,
    ) -> AdminResult<(ApiKey, KeyRecord)> {
        let Audited { store, actor, now } = self;
        if expires_at.is_some_and(|e| e <= now) {
            return Err(invalid("expires_at", "expires_at must be in the future"));
        }
        if !store.accounts().await?.iter().any(|a| &a.name == account) {
            return Err(invalid("account", format!("no account named \"{account}\"")));
        }
        if !store.tiers().await?.iter().any(|t| &t.name == tier) {
            return Err(invalid("tier", format!("no tier named \"{tier}\"")));
        }
        draw_key(account, tier, environment, now, expires_at, |new| async move {
            store.audited_create_key(&new, actor).await
        })
        .await
        .map_err(from_draw)
    }

    /// Rolls the key `prefix` (as Stripe's key roll): a new key on its
    /// account, tier and environment, returned in the clear (the only time)
    /// with both records, while the old one keeps working for `overlap` more
    /// (`0`: it stops now; never past an expiry it had). `NotFound` for no such
    /// key; `Conflict` for a revoked or expired one; a negative overlap is
    /// `Invalid` naming `expires_in`.
    pub async fn roll_key(self, prefix: &KeyPrefix, overlap: chrono::Duration) -> AdminResult<(ApiKey, RolledKey)> {
        let Audited { store, actor, now } = self;
        if overlap < chrono::Duration::zero() {
            return Err(invalid("expires_in", "expires_in must be 0 or more seconds"));
        }
        let no_key = || AdminError::NotFound(format!("no key with prefix \"{prefix}\""));
        let environment = Environment::of_key(prefix.as_str()).ok_or_else(no_key)?;
        with_free_prefix(environment, |new, hash| async move {
            store.audited_roll_key(prefix, (&new, hash), actor, now, now + overlap).await
        })
        .await
        .map_err(from_draw)
    }

    /// Revokes a key; returns it and whether this call revoked it (false: it
    /// was revoked before). `NotFound` if there is no such key.
    pub async fn revoke_key(self, prefix: &KeyPrefix) -> AdminResult<(KeyRecord, bool)> {
        let Audited { store, actor, now } = self;
        Ok(store.audited_revoke_key(prefix, actor, now).await?)
    }

    /// Makes an admin token named `name`: stores its hash and returns the token
    /// (the only time it exists in the clear). The name `cli` is reserved (the
    /// audit log's actor for the CLI); a name held by a token not revoked is
    /// `Conflict`.
    pub async fn create_admin_token(self, name: &AdminTokenName) -> AdminResult<(AdminToken, AdminTokenRecord)> {
        let Audited { store, actor, now } = self;
        if name.as_str() == CLI_ACTOR {
            return Err(invalid(
                "name",
                format!("\"{CLI_ACTOR}\" names the CLI in the audit log; choose another name"),
            ));
        }
        let mut last = None;
        for _ in 0..PREFIX_TRIES {
            let token = AdminToken::generate();
            let record = AdminTokenRecord {
                name: name.clone(),
                prefix: token.prefix().to_owned(),
                hash: token.hash(),
                created_at: now,
                revoked_at: None,
            };
            match store.create_admin_token(&record, actor).await {
                Ok(stored) => return Ok((token, stored)),
                // The name taken is final; a prefix drawn twice is drawn again.
                Err(StoreError::Conflict(m)) if m.contains("prefix") => last = Some(m),
                Err(e) => return Err(e.into()),
            }
        }
        Err(AdminError::Conflict(last.unwrap_or_default()))
    }

    /// Revokes the admin token of that name (refused on every admin request
    /// from then on); `NotFound` if none not revoked has it.
    pub async fn revoke_admin_token(self, name: &AdminTokenName) -> AdminResult<AdminTokenRecord> {
        let Audited { store, actor, now } = self;
        Ok(store.revoke_admin_token(name, actor, now).await?)
    }
}

/// One account; `NotFound` if there is none of that name.
pub async fn account(store: &dyn Store, name: &AccountName) -> AdminResult<Account> {
    store
        .accounts()
        .await?
        .into_iter()
        .find(|a| &a.name == name)
        .ok_or_else(|| AdminError::NotFound(format!("no account named \"{name}\"")))
}

/// An error of [`with_free_prefix`]: running out of prefixes is the
/// store's failure, not a conflict of the caller's making.
fn from_draw(e: StoreError) -> AdminError {
    match e {
        StoreError::Conflict(m) if m == no_free_prefix() => AdminError::Store(StoreError::Conflict(m)),
        e => e.into(),
    }
}

/// One key by prefix; `NotFound` if there is none.
pub async fn key(store: &dyn Store, prefix: &KeyPrefix) -> AdminResult<KeyRecord> {
    store.key(prefix).await?.ok_or_else(|| AdminError::NotFound(format!("no key with prefix \"{prefix}\"")))
}

/// Every admin token, revoked ones included, oldest first.
pub async fn admin_tokens(store: &dyn Store) -> AdminResult<Vec<AdminTokenRecord>> {
    Ok(store.admin_tokens().await?)
}

/// The admin token a request presents, checked: the token's record when it
/// is well formed, stored, not revoked and its hash matches (compared in
/// constant time); `None` otherwise. A malformed token costs no lookup.
pub async fn authenticate_admin(store: &dyn Store, presented: &str) -> Result<Option<AdminTokenRecord>, StoreError> {
    let Ok(token) = AdminToken::parse(presented) else { return Ok(None) };
    let found = store.admin_token(token.prefix()).await?;
    Ok(found.filter(|r| r.hash == token.hash() && r.revoked_at.is_none()))
}

/// An account's usage in `period`, key by key (`GET
/// /admin/v1/accounts/{name}/usage`): each key's daily ledger as this node
/// knows it (the store's and what it has not flushed), summed over the
/// month, every route of `routes` (the data routes) in `by_route`, with the
/// quota in force. `NotFound` for an unknown account.
pub async fn account_usage(
    node: &crate::Node,
    name: &AccountName,
    period: &mds_domain::daily::DailyPeriod,
    routes: &[&str],
) -> AdminResult<mds_domain::admin::AccountUsage> {
    use mds_domain::admin::{AccountUsage, KeyUsage};
    use mds_domain::daily::V1UsageDaily;
    let account = account(node.store(), name).await?;
    let keys = node.store().keys(Some(name)).await?;
    let now = node.config().clock.now();
    let end = period.month.next().start();
    let mut data = Vec::new();
    for k in keys.iter().filter(|k| k.created_at < end) {
        let read = node.store().usage_days(&k.prefix, period.first(), period.last);
        let (stored, unflushed) = node.limiter().meter().read_with_unflushed(&k.prefix, read).await;
        let stored = stored?;
        let history = node.store().quota_history(&k.prefix).await?;
        let quota = if period.current { history.quota_at(now) } else { history.quota_for(period.month) };
        let daily = V1UsageDaily::assemble(
            k.prefix.as_str().to_owned(),
            period,
            quota,
            routes,
            stored.iter().chain(&unflushed),
        );
        let mut by_route = std::collections::BTreeMap::new();
        let mut not_modified = 0;
        for d in &daily.days {
            not_modified += d.not_modified;
            for (route, n) in &d.by_route {
                *by_route.entry(route.clone()).or_default() += n;
            }
        }
        data.push(KeyUsage {
            key_prefix: daily.key_prefix,
            plan_tier: k.tier.clone(),
            environment: k.environment.as_str().to_owned(),
            revoked_at: k.revoked_at,
            quota,
            requests: daily.requests,
            not_modified,
            by_route,
        });
    }
    Ok(AccountUsage {
        account: account.name,
        entitled: account.entitled,
        period_start: period.month.start(),
        data,
        has_more: false,
        next_cursor: None,
    })
}
