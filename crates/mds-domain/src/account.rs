//! Accounts and tiers. A tier is data, not code: operators change and add
//! tiers; the store ships with [`DEFAULT_TIERS`].

use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Name of the tier whose limits apply to keys of an account that is not entitled.
pub const EVALUATION_TIER: &str = "evaluation";

/// The tiers a new store starts with: `(name, rate_limit_per_minute, monthly_quota)`.
pub const DEFAULT_TIERS: &[(&str, u32, u64)] = &[
    (EVALUATION_TIER, 10, 1_000),
    ("starter", 60, 50_000),
    ("pro", 600, 1_000_000),
    ("enterprise", 6_000, 50_000_000),
];

/// Parses an operator-given name: 1 to 64 characters of `[a-z0-9_-]`, starting
/// with a letter or digit.
fn parse_name(kind: &str, s: &str) -> Result<String, String> {
    let ok = !s.is_empty()
        && s.len() <= 64
        && s.as_bytes()[0].is_ascii_alphanumeric()
        && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    if ok {
        Ok(s.to_owned())
    } else {
        Err(format!(
            "{kind} name must be 1 to 64 characters of a-z, 0-9, '_' and '-', starting with a letter or digit (got {s:?})"
        ))
    }
}

macro_rules! name_type {
    ($(#[$m:meta])* $name:ident, $kind:literal) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// Parses a name.
            pub fn parse(s: &str) -> Result<Self, String> {
                parse_name($kind, s).map($name)
            }

            /// The name as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = String;
            fn try_from(s: String) -> Result<Self, String> {
                Self::parse(&s)
            }
        }

        impl From<$name> for String {
            fn from(n: $name) -> String {
                n.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

name_type!(
    /// Name of a tier (`evaluation`, `starter`, …).
    TierName, "tier"
);
name_type!(
    /// Name of an account.
    AccountName, "account"
);
name_type!(
    /// Name of an admin token (who made a change, in the audit log).
    AdminTokenName, "admin token"
);

impl TierName {
    /// The evaluation tier's name.
    pub fn evaluation() -> Self {
        TierName(EVALUATION_TIER.to_owned())
    }
}

/// A tier: its limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Tier {
    /// Tier name.
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "pro"))]
    pub name: TierName,
    /// Requests per rolling minute.
    pub rate_limit_per_minute: u32,
    /// Requests per calendar month (UTC).
    pub monthly_quota: u64,
}

/// The tier whose limits a key is held to (its *enforced* tier): the tier
/// it was issued on (`plan`) while its account is entitled and that tier
/// exists, else the evaluation tier. The one statement of the rule, for
/// whatever stands for a tier (a [`Tier`], a tier's quota history).
pub fn enforced_tier<T>(entitled: bool, plan: Option<T>, evaluation: T) -> T {
    match (entitled, plan) {
        (true, Some(plan)) => plan,
        _ => evaluation,
    }
}

impl Tier {
    /// The evaluation tier as the store ships it: what a node enforces for
    /// keys of unentitled accounts if the store has lost its own.
    pub fn default_evaluation() -> Tier {
        Self::defaults().swap_remove(0)
    }

    /// The default tiers, as [`Tier`] values.
    pub fn defaults() -> Vec<Tier> {
        DEFAULT_TIERS
            .iter()
            .map(|&(n, r, q)| Tier {
                name: TierName::parse(n).expect("default tier names are valid"),
                rate_limit_per_minute: r,
                monthly_quota: q,
            })
            .collect()
    }
}

/// An account: owns keys; its plan covers API access (`entitled`) or not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Account {
    /// Account name (unique).
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "acme"))]
    pub name: AccountName,
    /// Whether the plan covers API access.
    pub entitled: bool,
    /// When the account was created.
    #[serde(with = "crate::time::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_include_evaluation() {
        let d = Tier::defaults();
        assert_eq!(d.len(), 4);
        assert_eq!(d[0].name, TierName::evaluation());
        assert_eq!(Tier::default_evaluation(), d[0]);
    }

    #[test]
    fn enforced_tier_is_the_plan_only_while_entitled_and_known() {
        assert_eq!(enforced_tier(true, Some("pro"), "evaluation"), "pro");
        assert_eq!(enforced_tier(false, Some("pro"), "evaluation"), "evaluation");
        assert_eq!(enforced_tier(true, None, "evaluation"), "evaluation", "a plan tier that is gone");
        assert_eq!(enforced_tier(false, None, "evaluation"), "evaluation");
    }
}
