//! The admin API's operations on a node ([`Node::operator`]): the
//! operations of [`crate::admin`] and [`crate::idempotency`] run on the
//! node's store, at the node's clock, so the admin listener's controllers
//! call the node as the public ones do and never its store.

use mds_domain::{Account, AccountName, Actor, AuditEntry, KeyPrefix, Page, Tier};
use mds_store::{AdminTokenRecord, KeyRecord, StoreError, StoreResult, WebhookEndpoint};

use super::{AdminResult, Audited, PageAsk, lists};
use crate::Node;
use crate::idempotency::{self, Claim, ClaimedKey};

/// A node's admin operations (see the module).
#[derive(Clone, Copy)]
pub struct Operator<'a> {
    node: &'a Node,
}

impl std::fmt::Debug for Operator<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Operator").finish_non_exhaustive()
    }
}

impl Node {
    /// The admin API's operations on this node.
    pub fn operator(&self) -> Operator<'_> {
        Operator { node: self }
    }
}

impl<'a> Operator<'a> {
    /// The context of a change `actor` makes now (the node's clock).
    pub fn audited(self, actor: &'a Actor) -> Audited<'a> {
        Audited { store: self.node.store(), actor, now: self.node.config().clock.now() }
    }

    /// The admin token `presented` names, if it is one and not revoked.
    pub async fn authenticate(self, presented: &str) -> Result<Option<AdminTokenRecord>, StoreError> {
        super::authenticate_admin(self.node.store(), presented).await
    }

    /// A page of the tiers.
    pub async fn tiers_page(self, ask: PageAsk<'_>) -> AdminResult<Page<Tier>> {
        lists::tiers_page(self.node.store(), ask).await
    }

    /// A page of the accounts.
    pub async fn accounts_page(self, ask: PageAsk<'_>) -> AdminResult<Page<Account>> {
        lists::accounts_page(self.node.store(), ask).await
    }

    /// The account `name`.
    pub async fn account(self, name: &AccountName) -> AdminResult<Account> {
        super::account(self.node.store(), name).await
    }

    /// A page of the keys (of `account` if given).
    pub async fn keys_page(self, account: Option<&AccountName>, ask: PageAsk<'_>) -> AdminResult<Page<KeyRecord>> {
        lists::keys_page(self.node.store(), account, ask).await
    }

    /// The key record of `prefix`.
    pub async fn key(self, prefix: &KeyPrefix) -> AdminResult<KeyRecord> {
        super::key(self.node.store(), prefix).await
    }

    /// A page of the audit log.
    pub async fn audit_page(self, ask: PageAsk<'_>) -> AdminResult<Page<AuditEntry>> {
        lists::audit_page(self.node.store(), ask).await
    }

    /// The webhook endpoints (of `account` if given).
    pub async fn webhooks(self, account: Option<&AccountName>) -> StoreResult<Vec<WebhookEndpoint>> {
        self.node.store().webhooks(account).await
    }

    /// Disables the endpoint `id` for `reason`, audited under `actor`; `None`
    /// when there is no such endpoint.
    pub async fn disable_webhook(self, id: &str, reason: &str, actor: &Actor) -> StoreResult<Option<WebhookEndpoint>> {
        let now = self.node.config().clock.now();
        self.node.store().audited_disable_webhook(id, reason, actor, now).await
    }

    /// Claims the `Idempotency-Key` `key` of `actor` for the request
    /// `method path` with `body`, now ([`idempotency::claim`]).
    pub async fn claim(
        self,
        actor: &Actor,
        key: &str,
        method: &str,
        path: &str,
        body: &[u8],
    ) -> Result<Claim, StoreError> {
        let now = self.node.config().clock.now();
        idempotency::claim(self.node.store(), actor, key, method, path, body, now).await
    }

    /// Stores the answer of a claimed request ([`idempotency::complete`]).
    pub async fn complete(self, claimed: &ClaimedKey, status: u16, body: &[u8]) -> Result<(), StoreError> {
        idempotency::complete(self.node.store(), claimed, status, body).await
    }

    /// Forgets a claimed request that failed ([`idempotency::release`]).
    pub async fn release(self, claimed: &ClaimedKey) -> Result<(), StoreError> {
        idempotency::release(self.node.store(), claimed).await
    }
}
