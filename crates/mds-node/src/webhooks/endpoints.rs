//! The webhook routes' operations, each a method on [`Node`] acting for
//! one account: an endpoint of another account is as unknown as one that
//! does not exist.

use chrono::Duration;
use mds_domain::{AccountName, EventFilter, EventId, EventType, Isin};
use mds_store::{NewWebhook, StoreError, WebhookAttempt, WebhookEndpoint, WebhookPatch};
use rand::RngCore;

use super::{signing, ssrf};
use crate::node::Node;

/// The most endpoints an account may have.
pub const MAX_ENDPOINTS: usize = 10;

/// The longest URL an endpoint may have.
const MAX_URL: usize = 2048;

/// The longest description.
const MAX_DESCRIPTION: usize = 500;

/// The attempts `GET /v1/webhooks/{id}/attempts` shows.
const ATTEMPTS_SHOWN: usize = 50;

/// The longest a rotated-out secret may keep signing (30 days).
pub const MAX_EXPIRES_IN: u64 = 30 * 86_400;

/// An endpoint as its owner names it: the calling key's account and the
/// endpoint's id (an endpoint of another account is not found).
#[derive(Debug, Clone)]
pub struct Owned {
    /// The calling key's account.
    pub account: AccountName,
    /// The endpoint's id (`we_…`).
    pub id: String,
}

/// Why a webhook operation failed.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// The input field `param` is not acceptable.
    #[error("{detail}")]
    Invalid {
        /// The field.
        param: &'static str,
        /// Why.
        detail: String,
    },
    /// No such endpoint for this account.
    #[error("no webhook endpoint with this id")]
    NotFound,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl WebhookError {
    fn invalid(param: &'static str, detail: impl Into<String>) -> Self {
        WebhookError::Invalid { param, detail: detail.into() }
    }
}

/// What a create or update gives (each `None` is left as it is; on create
/// `url` is required).
#[derive(Debug, Clone, Default)]
pub struct EndpointInput {
    /// The URL.
    pub url: Option<String>,
    /// The description (`Some(None)` removes it).
    pub description: Option<Option<String>>,
    /// Event types, as on the wire.
    pub types: Option<Vec<String>>,
    /// ISINs.
    pub isins: Option<Vec<String>>,
    /// Tickers (any case).
    pub tickers: Option<Vec<String>>,
    /// Tags.
    pub tags: Option<Vec<String>>,
    /// `true` to enable (after it was disabled), `false` to disable.
    pub enabled: Option<bool>,
}

impl EndpointInput {
    /// The filter it gives, if it gives any list, on top of `base`.
    fn filter(&self, base: &EventFilter) -> Result<Option<EventFilter>, WebhookError> {
        if self.types.is_none() && self.isins.is_none() && self.tickers.is_none() && self.tags.is_none() {
            return Ok(None);
        }
        let sized = |param: &'static str, l: &Option<Vec<String>>| -> Result<(), WebhookError> {
            match l {
                Some(v) if v.len() > EventFilter::MAX_VALUES => {
                    Err(WebhookError::invalid(param, format!("{param} has at most {} values", EventFilter::MAX_VALUES)))
                }
                _ => Ok(()),
            }
        };
        sized("types", &self.types)?;
        sized("isins", &self.isins)?;
        sized("tickers", &self.tickers)?;
        sized("tags", &self.tags)?;
        let mut f = base.clone();
        if let Some(types) = &self.types {
            f.types = types
                .iter()
                .map(|t| t.parse::<EventType>().map_err(|e| WebhookError::invalid("types", e.to_string())))
                .collect::<Result<_, _>>()?;
            f.types.sort();
            f.types.dedup();
        }
        if let Some(isins) = &self.isins {
            f.isins = isins
                .iter()
                .map(|i| Isin::parse(i).map_err(|e| WebhookError::invalid("isins", e.to_string())))
                .collect::<Result<_, _>>()?;
        }
        if let Some(tickers) = &self.tickers {
            if tickers.iter().any(|t| t.chars().count() > 200) {
                return Err(WebhookError::invalid("tickers", "a ticker has at most 200 characters"));
            }
            f.tickers = tickers.iter().map(|t| t.to_ascii_uppercase()).collect();
        }
        if let Some(tags) = &self.tags {
            if tags.iter().any(|t| t.chars().count() > 200) {
                return Err(WebhookError::invalid("tags", "a tag has at most 200 characters"));
            }
            f.tags.clone_from(tags);
        }
        Ok(Some(f))
    }

    /// The URL, checked: its own rules, then (unless `allow_private`) the
    /// addresses its name resolves to now.
    async fn url(&self, allow_private: bool) -> Result<Option<String>, WebhookError> {
        let Some(url) = &self.url else { return Ok(None) };
        if url.chars().count() > MAX_URL {
            return Err(WebhookError::invalid("url", format!("url has at most {MAX_URL} characters")));
        }
        let parsed = ssrf::check_url(url, allow_private).map_err(|e| WebhookError::invalid("url", e))?;
        if !allow_private {
            ssrf::check_resolved(&parsed, ssrf::system_lookup).await.map_err(|e| WebhookError::invalid("url", e))?;
        }
        Ok(Some(url.clone()))
    }

    /// The description, checked.
    fn description(&self) -> Result<Option<Option<String>>, WebhookError> {
        match &self.description {
            Some(Some(d)) if d.chars().count() > MAX_DESCRIPTION => Err(WebhookError::invalid(
                "description",
                format!("description has at most {MAX_DESCRIPTION} characters"),
            )),
            d => Ok(d.clone()),
        }
    }
}

/// A new endpoint id: `we_` and 24 random hex digits.
fn new_id() -> String {
    let mut b = [0u8; 12];
    rand::thread_rng().fill_bytes(&mut b);
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("we_{hex}")
}

impl Node {
    fn allow_private(&self) -> bool {
        self.config().webhooks.allow_private
    }

    /// The endpoint if it is its owner's.
    pub async fn webhook_of(&self, it: &Owned) -> Result<WebhookEndpoint, WebhookError> {
        match self.store().webhook(&it.id).await? {
            Some(e) if e.account == it.account => Ok(e),
            _ => Err(WebhookError::NotFound),
        }
    }

    /// `POST /v1/webhooks`: a new endpoint of `account` (with its secret).
    pub async fn create_webhook(
        &self,
        account: &AccountName,
        input: &EndpointInput,
    ) -> Result<WebhookEndpoint, WebhookError> {
        let url =
            input.url(self.allow_private()).await?.ok_or_else(|| WebhookError::invalid("url", "url is required"))?;
        let new = NewWebhook {
            id: new_id(),
            account: account.clone(),
            url,
            description: input.description()?.flatten(),
            filter: input.filter(&EventFilter::default())?.unwrap_or_default(),
            secret: signing::new_secret(),
            now: self.config().clock.now(),
        };
        match self.store().create_webhook(&new, MAX_ENDPOINTS).await {
            Err(StoreError::Conflict(m)) => Err(WebhookError::invalid("url", m)),
            r => Ok(r?),
        }
    }

    /// `GET /v1/webhooks`: `account`'s endpoints, oldest first.
    pub async fn webhooks_of(&self, account: &AccountName) -> Result<Vec<WebhookEndpoint>, WebhookError> {
        Ok(self.store().webhooks(Some(account)).await?)
    }

    /// `PATCH /v1/webhooks/{id}`.
    pub async fn update_webhook(&self, it: &Owned, input: &EndpointInput) -> Result<WebhookEndpoint, WebhookError> {
        let before = self.webhook_of(it).await?;
        let patch = WebhookPatch {
            url: input.url(self.allow_private()).await?,
            description: input.description()?,
            filter: input.filter(&before.filter)?,
            enabled: input.enabled,
        };
        let now = self.config().clock.now();
        self.store().update_webhook(&it.id, &patch, now).await?.ok_or(WebhookError::NotFound)
    }

    /// `DELETE /v1/webhooks/{id}`.
    pub async fn delete_webhook(&self, it: &Owned) -> Result<(), WebhookError> {
        self.webhook_of(it).await?;
        self.store().delete_webhook(&it.id).await?;
        Ok(())
    }

    /// `POST /v1/webhooks/{id}/rotate-secret`: a new secret, the current
    /// one signing beside it for `expires_in` seconds.
    pub async fn rotate_webhook_secret(&self, it: &Owned, expires_in: u64) -> Result<WebhookEndpoint, WebhookError> {
        self.webhook_of(it).await?;
        let now = self.config().clock.now();
        let secs = i64::try_from(expires_in.min(MAX_EXPIRES_IN)).unwrap_or(0);
        let until = now + Duration::seconds(secs);
        let secret = signing::new_secret();
        self.store().rotate_webhook_secret(&it.id, &secret, until, now).await?.ok_or(WebhookError::NotFound)
    }

    /// `POST /v1/webhooks/{id}/test`: a `ping` for this endpoint; its id.
    pub async fn test_webhook(&self, it: &Owned) -> Result<EventId, WebhookError> {
        self.webhook_of(it).await?;
        let now = self.config().clock.now();
        self.store().ping_webhook(&it.id, now).await?.ok_or(WebhookError::NotFound)
    }

    /// `GET /v1/webhooks/{id}/attempts`: the latest attempts, newest first.
    pub async fn webhook_attempts(&self, it: &Owned) -> Result<Vec<WebhookAttempt>, WebhookError> {
        self.webhook_of(it).await?;
        Ok(self.store().webhook_attempts(&it.id, ATTEMPTS_SHOWN).await?)
    }

    /// `POST /v1/webhooks/{id}/replay`: what matched after `since` is sent
    /// again, in order.
    pub async fn replay_webhook(&self, it: &Owned, since: EventId) -> Result<WebhookEndpoint, WebhookError> {
        self.webhook_of(it).await?;
        self.store().replay_webhook(&it.id, since).await?.ok_or(WebhookError::NotFound)
    }
}
