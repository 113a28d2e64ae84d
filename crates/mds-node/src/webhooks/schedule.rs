//! What an attempt leads to (contract 11.2): a `2xx` is delivered; `410`
//! disables the endpoint; anything else (another status, a timeout, a
//! refused address) is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and
//! 10 h, then given up; an endpoint failing everything for 3 days is
//! disabled.

use chrono::{DateTime, Duration, Utc};
use mds_store::DeliveryOutcome;

/// The waits before each retry, in order: attempt `n` (from 1) failing is
/// retried after the `n`-th; the attempt after the last wait is the last.
pub const RETRY_DELAYS: [Duration; 7] = [
    Duration::seconds(5),
    Duration::minutes(5),
    Duration::minutes(30),
    Duration::hours(2),
    Duration::hours(5),
    Duration::hours(10),
    Duration::hours(10),
];

/// How long an endpoint may fail everything before it is disabled.
pub const DISABLE_AFTER: Duration = Duration::days(3);

/// Why an endpoint answering `410` is disabled.
pub const GONE: &str = "the endpoint answered 410 Gone";

/// Why an endpoint failing for 3 days is disabled.
pub const FAILING: &str = "every delivery failed for 3 days";

/// The outcome of attempt number `attempt` (from 1), answered `status`
/// (`None`: no answer), at `now`, for an endpoint failing since
/// `failing_since`.
pub fn outcome(
    status: Option<u16>,
    attempt: u32,
    failing_since: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> DeliveryOutcome {
    match status {
        Some(s) if (200..300).contains(&s) => return DeliveryOutcome::Delivered,
        Some(410) => return DeliveryOutcome::Disable(GONE.into()),
        _ => {}
    }
    if failing_since.is_some_and(|t| now - t >= DISABLE_AFTER) {
        return DeliveryOutcome::Disable(FAILING.into());
    }
    let index = usize::try_from(attempt).unwrap_or(usize::MAX).saturating_sub(1);
    match RETRY_DELAYS.get(index) {
        Some(wait) => DeliveryOutcome::Retry(now + *wait),
        None => DeliveryOutcome::GiveUp,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_the_schedule_then_gives_up() {
        let now = Utc::now();
        assert_eq!(outcome(Some(204), 3, Some(now), now), DeliveryOutcome::Delivered);
        assert_eq!(outcome(Some(410), 1, None, now), DeliveryOutcome::Disable(GONE.into()));
        assert_eq!(outcome(Some(500), 1, None, now), DeliveryOutcome::Retry(now + Duration::seconds(5)));
        assert_eq!(outcome(None, 7, Some(now), now), DeliveryOutcome::Retry(now + Duration::hours(10)));
        assert_eq!(outcome(Some(301), 8, Some(now), now), DeliveryOutcome::GiveUp);
        let long_ago = now - Duration::days(3);
        assert_eq!(outcome(Some(500), 2, Some(long_ago), now), DeliveryOutcome::Disable(FAILING.into()));
    }
}
