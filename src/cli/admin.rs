//! `mds tiers`, `mds accounts`, `mds keys`, `mds admin-tokens`: the
//! operator's view of who may call the API (and the admin API) and within
//! which limits. Each command runs the operation of `mds_node::admin` that
//! the admin API runs too, recorded in the audit log as made by `cli`.

use std::sync::Arc;

use anyhow::Context;
use chrono::{DateTime, Utc};
use clap::Subcommand;
use mds_domain::time::{format_utc, parse_rfc3339};
use mds_domain::{AccountName, AdminTokenName, Environment, KeyPrefix, TierName};
use mds_node::admin::{self as ops, AdminError, Audited};
use mds_store::{KeyRecord, Store};

/// `mds tiers …`
#[derive(Debug, Subcommand)]
pub(crate) enum TiersCommand {
    /// List tiers.
    List {
        /// Print JSON Lines instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Create a tier, or change its limits (takes effect on serving nodes within a second).
    Set {
        /// Tier name.
        #[arg(value_parser = TierName::parse)]
        name: TierName,
        /// Requests per rolling minute (required for a new tier).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        rate_limit_per_minute: Option<u32>,
        /// Requests per calendar month, UTC (required for a new tier).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        monthly_quota: Option<u64>,
    },
}

/// `mds accounts …`
#[derive(Debug, Subcommand)]
pub(crate) enum AccountsCommand {
    /// Create an account (entitled).
    Create {
        /// Account name.
        #[arg(value_parser = AccountName::parse)]
        name: AccountName,
    },
    /// Change an account's entitlement.
    Set {
        /// Account name.
        #[arg(value_parser = AccountName::parse)]
        name: AccountName,
        /// Whether the account's plan covers API access.
        #[arg(long, action = clap::ArgAction::Set, value_parser = clap::value_parser!(bool))]
        entitled: bool,
    },
    /// List accounts.
    List {
        /// Print JSON Lines instead of a table.
        #[arg(long)]
        json: bool,
    },
}

/// `mds keys …`
#[derive(Debug, Subcommand)]
pub(crate) enum KeysCommand {
    /// Issue a key; the key alone is printed on the last line of stdout.
    Create {
        /// Owning account.
        #[arg(long, value_parser = AccountName::parse)]
        account: AccountName,
        /// Tier the key is issued on.
        #[arg(long, value_parser = TierName::parse)]
        tier: TierName,
        /// `live` or `test`.
        #[arg(long, default_value = "live", value_parser = Environment::parse)]
        environment: Environment,
        /// When the key stops working (RFC 3339, e.g. 2027-01-01T00:00:00Z);
        /// never if not given.
        #[arg(long, value_parser = parse_rfc3339)]
        expires_at: Option<DateTime<Utc>>,
        /// Print a JSON object instead.
        #[arg(long)]
        json: bool,
    },
    /// Roll a key: issue a new one on the same account and tier (printed on
    /// the last line of stdout) and let the old one work for the overlap
    /// window only.
    Roll {
        /// The key's prefix (17 characters; 12 for a key issued before).
        #[arg(value_parser = KeyPrefix::parse)]
        prefix: KeyPrefix,
        /// Seconds the old key keeps working (0: it stops at once).
        #[arg(long, default_value_t = 86_400, value_parser = clap::value_parser!(u32).range(0..=31_536_000))]
        expires_in: u32,
        /// Print a JSON object instead.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a key by its prefix (refused by every node within a second).
    Revoke {
        /// The key's prefix, as `mds keys list` shows it (17 characters; 12 for a key issued before).
        #[arg(value_parser = KeyPrefix::parse)]
        prefix: KeyPrefix,
    },
    /// List keys (never the keys themselves: prefixes).
    List {
        /// Only this account's keys.
        #[arg(long, value_parser = AccountName::parse)]
        account: Option<AccountName>,
        /// Print JSON Lines instead of a table.
        #[arg(long)]
        json: bool,
    },
}

/// `mds admin-tokens …`
#[derive(Debug, Subcommand)]
pub(crate) enum AdminTokensCommand {
    /// Make an admin token for the admin listener (`serve --admin-listen`);
    /// the token alone is printed on the last line of stdout, only now.
    Create {
        /// Token name (who made a change, in the audit log).
        #[arg(value_parser = AdminTokenName::parse)]
        name: AdminTokenName,
    },
    /// Revoke the admin token of that name (refused at once).
    Revoke {
        /// Token name.
        #[arg(value_parser = AdminTokenName::parse)]
        name: AdminTokenName,
    },
    /// List admin tokens (names and prefixes, never the tokens).
    List {
        /// Print JSON Lines instead of a table.
        #[arg(long)]
        json: bool,
    },
}

/// Runs an `admin-tokens` command.
pub(crate) async fn admin_tokens(store: &Arc<dyn Store>, cmd: AdminTokensCommand) -> anyhow::Result<()> {
    match cmd {
        AdminTokensCommand::Create { name } => {
            let (token, record) = Audited::cli(&**store).create_admin_token(&name).await?;
            eprintln!("created admin token {name} ({}…); it is shown only now:", record.prefix);
            outln!("{}", token.expose_secret())?;
        }
        AdminTokensCommand::Revoke { name } => {
            let t = Audited::cli(&**store).revoke_admin_token(&name).await?;
            outln!("revoked admin token {} ({}…)", t.name, t.prefix)?;
        }
        AdminTokensCommand::List { json } => {
            let rows = ops::admin_tokens(&**store)
                .await?
                .iter()
                .map(|t| {
                    let revoked = t.revoked_at.as_ref().map(format_utc);
                    (
                        serde_json::json!({
                            "name": t.name,
                            "prefix": t.prefix,
                            "created_at": format_utc(&t.created_at),
                            "revoked_at": revoked,
                        }),
                        vec![
                            t.name.to_string(),
                            t.prefix.clone(),
                            format_utc(&t.created_at),
                            revoked.clone().unwrap_or_else(|| "-".into()),
                        ],
                    )
                })
                .collect();
            print_rows(json, &["NAME", "PREFIX", "CREATED_AT", "REVOKED_AT"], rows)?;
        }
    }
    Ok(())
}

/// Every item of an admin list: its pages, as the admin API serves them,
/// followed from the first to the last (`page` gets the cursor of the
/// next one).
async fn every<T, F, Fut>(mut page: F) -> Result<Vec<T>, AdminError>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: std::future::Future<Output = Result<mds_domain::Page<T>, AdminError>>,
{
    let (mut all, mut cursor) = (Vec::new(), None);
    loop {
        let p = page(cursor.take()).await?;
        all.extend(p.data);
        match p.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(all),
        }
    }
}

/// Runs a `tiers` command.
pub(crate) async fn tiers(store: &Arc<dyn Store>, cmd: TiersCommand) -> anyhow::Result<()> {
    match cmd {
        TiersCommand::List { json } => {
            let (codec, store) = (&ops::cursor_codec(&**store).await?, &**store);
            let tiers =
                every(|c| async move { ops::tiers_page(store, ops::PageAsk::largest(codec, c.as_deref())).await })
                    .await?;
            let rows = tiers
                .iter()
                .map(|t| {
                    (
                        serde_json::json!({"name": t.name, "rate_limit_per_minute": t.rate_limit_per_minute, "monthly_quota": t.monthly_quota}),
                        vec![t.name.to_string(), t.rate_limit_per_minute.to_string(), t.monthly_quota.to_string()],
                    )
                })
                .collect();
            print_rows(json, &["NAME", "RATE_LIMIT_PER_MINUTE", "MONTHLY_QUOTA"], rows)?;
        }
        TiersCommand::Set { name, rate_limit_per_minute, monthly_quota } => {
            let set = Audited::cli(&**store).set_tier(name, rate_limit_per_minute, monthly_quota);
            let (tier, created) = set.await.map_err(|e| match e {
                AdminError::Invalid { detail, .. } => anyhow::anyhow!(
                    "{}",
                    detail.replace(
                        "rate_limit_per_minute and monthly_quota",
                        "--rate-limit-per-minute and --monthly-quota"
                    )
                ),
                e => e.into(),
            })?;
            outln!(
                "{} tier {}: {} requests/minute, {} requests/month",
                if created { "created" } else { "updated" },
                tier.name,
                tier.rate_limit_per_minute,
                tier.monthly_quota
            )?;
        }
    }
    Ok(())
}

/// Runs an `accounts` command.
pub(crate) async fn accounts(store: &Arc<dyn Store>, cmd: AccountsCommand) -> anyhow::Result<()> {
    match cmd {
        AccountsCommand::Create { name } => {
            let a = Audited::cli(&**store).create_account(&name).await?;
            outln!("created account {} (entitled)", a.name)?;
        }
        AccountsCommand::Set { name, entitled } => {
            let a = Audited::cli(&**store).set_entitled(&name, entitled).await?;
            let what = if a.entitled {
                "entitled: its keys use their own tiers"
            } else {
                "not entitled: its keys are held to the evaluation tier"
            };
            outln!("account {} is {what}", a.name)?;
        }
        AccountsCommand::List { json } => {
            let (codec, store) = (&ops::cursor_codec(&**store).await?, &**store);
            let rows =
                every(|c| async move { ops::accounts_page(store, ops::PageAsk::largest(codec, c.as_deref())).await })
                    .await?
                    .iter()
                    .map(|a| {
                        (
                            serde_json::to_value(a).expect("serialises"),
                            vec![a.name.to_string(), a.entitled.to_string(), format_utc(&a.created_at)],
                        )
                    })
                    .collect();
            print_rows(json, &["NAME", "ENTITLED", "CREATED_AT"], rows)?;
        }
    }
    Ok(())
}

/// Runs a `keys` command.
pub(crate) async fn keys(store: &Arc<dyn Store>, cmd: KeysCommand) -> anyhow::Result<()> {
    match cmd {
        KeysCommand::Create { account, tier, environment, expires_at, json } => {
            let (key, _) = Audited::cli(&**store).issue_key(&account, &tier, environment, expires_at).await?;
            if json {
                let v = serde_json::json!({
                    "key": key.expose_secret(),
                    "key_prefix": key.prefix().as_str(),
                    "account": account,
                    "tier": tier,
                    "environment": environment.as_str(),
                    "expires_at": expires_at.as_ref().map(format_utc),
                });
                outln!("{v}")?;
            } else {
                eprintln!(
                    "created key {} for account {account} on tier {tier} ({environment}); it is shown only now:",
                    key.prefix()
                );
                outln!("{}", key.expose_secret())?;
            }
        }
        KeysCommand::Roll { prefix, expires_in, json } => {
            let overlap = chrono::Duration::seconds(i64::from(expires_in));
            let (key, rolled) = Audited::cli(&**store).roll_key(&prefix, overlap).await?;
            let until = rolled.old.expires_at.as_ref().map(format_utc).unwrap_or_default();
            if json {
                let mut v = key_row(&rolled.new).0;
                v["key"] = key.expose_secret().into();
                v["rolled_key_prefix"] = rolled.old.prefix.as_str().into();
                v["rolled_key_expires_at"] = until.into();
                outln!("{v}")?;
            } else {
                eprintln!(
                    "rolled key {}: it works until {until}; the new key {} is shown only now:",
                    rolled.old.prefix, rolled.new.prefix
                );
                outln!("{}", key.expose_secret())?;
            }
        }
        KeysCommand::Revoke { prefix } => {
            let (k, revoked) = Audited::cli(&**store).revoke_key(&prefix).await.map_err(|e| match e {
                AdminError::NotFound(_) => anyhow::anyhow!("no key with prefix {prefix}"),
                e => e.into(),
            })?;
            match k.revoked_at.filter(|_| !revoked) {
                Some(at) => outln!("key {} was already revoked at {}", k.prefix, format_utc(&at))?,
                None => outln!("revoked key {} of account {}", k.prefix, k.account)?,
            }
        }
        KeysCommand::List { account, json } => {
            let (codec, store) = (&ops::cursor_codec(&**store).await?, &**store);
            let account = account.as_ref();
            let keys =
                every(
                    |c| async move { ops::keys_page(store, account, ops::PageAsk::largest(codec, c.as_deref())).await },
                )
                .await
                .context("cannot list keys")?;
            let rows = keys.iter().map(key_row).collect();
            print_rows(
                json,
                &["PREFIX", "ACCOUNT", "TIER", "ENVIRONMENT", "CREATED_AT", "REVOKED_AT", "EXPIRES_AT"],
                rows,
            )?;
        }
    }
    Ok(())
}

fn key_row(k: &KeyRecord) -> (serde_json::Value, Vec<String>) {
    let revoked = k.revoked_at.as_ref().map(format_utc);
    let expires = k.expires_at.as_ref().map(format_utc);
    (
        serde_json::json!({
            "key_prefix": k.prefix.as_str(),
            "account": k.account,
            "tier": k.tier,
            "environment": k.environment.as_str(),
            "created_at": format_utc(&k.created_at),
            "revoked_at": revoked,
            "expires_at": expires,
        }),
        vec![
            k.prefix.to_string(),
            k.account.to_string(),
            k.tier.to_string(),
            k.environment.to_string(),
            format_utc(&k.created_at),
            revoked.unwrap_or_else(|| "-".into()),
            expires.unwrap_or_else(|| "-".into()),
        ],
    )
}

/// Prints rows as JSON Lines or as an aligned table.
fn print_rows(json: bool, header: &[&str], rows: Vec<(serde_json::Value, Vec<String>)>) -> std::io::Result<()> {
    if json {
        for (v, _) in rows {
            outln!("{v}")?;
        }
        return Ok(());
    }
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for (_, cells) in &rows {
        for (w, c) in widths.iter_mut().zip(cells) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let parts: Vec<String> = cells.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
        outln!("{}", parts.join("  ").trim_end())
    };
    line(header.to_vec())?;
    for (_, cells) in &rows {
        line(cells.iter().map(String::as_str).collect())?;
    }
    Ok(())
}
