//! The per-minute limit as a GCRA (generic cell rate algorithm).
//!
//! A key with a limit of `L` per minute may send `L` requests at once, then
//! one every `60 s / L`: the allowance refills continuously, so there is no
//! window edge at which two windows' worth can be sent back to back. The
//! state is one instant per key, the theoretical arrival time (TAT).

/// The period of the limit, in nanoseconds.
pub const PERIOD_NS: i64 = 60_000_000_000;

/// The outcome of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcraState {
    /// Whether the request may go ahead.
    pub allowed: bool,
    /// Requests left right now (after this one, if allowed).
    pub remaining: u32,
    /// Nanoseconds until the allowance is full again.
    pub reset_ns: i64,
    /// When refused: nanoseconds until one request is allowed.
    pub retry_after_ns: i64,
    /// The TAT to store if the request is admitted.
    pub new_tat_ns: i64,
}

/// Checks one request at `now_ns` (nanoseconds since the epoch) against
/// `limit` per minute, given the stored TAT (`None` for a key not seen yet).
/// Pure: the caller stores `new_tat_ns` when it admits. Exact for every
/// limit up to `u32::MAX` (the interval is at least 13 ns).
pub fn check(tat_ns: Option<i64>, now_ns: i64, limit: u32) -> GcraState {
    let limit = i64::from(limit.max(1));
    let t = (PERIOD_NS / limit).max(1); // emission interval
    let tau = PERIOD_NS - t; // burst tolerance
    let tat = tat_ns.map_or(now_ns, |x| x.max(now_ns));
    if tat - now_ns > tau {
        return GcraState {
            allowed: false,
            remaining: 0,
            reset_ns: tat - now_ns,
            retry_after_ns: tat - now_ns - tau,
            new_tat_ns: tat,
        };
    }
    let new_tat = tat + t;
    let used = (new_tat - now_ns + t - 1) / t; // ceil
    GcraState {
        allowed: true,
        remaining: (limit - used).clamp(0, limit) as u32,
        reset_ns: new_tat - now_ns,
        retry_after_ns: 0,
        new_tat_ns: new_tat,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    /// Admits requests at `times` (ms), returns which were allowed.
    fn run(limit: u32, times: &[i64]) -> Vec<bool> {
        let mut tat = None;
        times
            .iter()
            .map(|&now| {
                let s = check(tat, now * MS, limit);
                if s.allowed {
                    tat = Some(s.new_tat_ns);
                }
                s.allowed
            })
            .collect()
    }

    #[test]
    fn a_full_minute_at_once_then_one_per_interval() {
        let r = run(60, &vec![0; 61]);
        assert_eq!(r.iter().filter(|a| **a).count(), 60);
        assert!(!r[60]);
        // One second later (60/min = one per second) one more.
        let mut tat = None;
        for _ in 0..60 {
            tat = Some(check(tat, 0, 60).new_tat_ns);
        }
        assert!(!check(tat, 999 * MS, 60).allowed);
        assert!(check(tat, 1000 * MS, 60).allowed);
    }

    #[test]
    fn no_double_burst_at_a_window_edge() {
        // 60 at 59.9 s, then as many as possible at 60.1 s: a fixed window
        // would allow 60 more; GCRA allows what 0.2 s refilled.
        let mut times = vec![59_900; 60];
        times.extend(vec![60_100; 60]);
        let r = run(60, &times);
        assert_eq!(r[..60].iter().filter(|a| **a).count(), 60);
        assert_eq!(r[60..].iter().filter(|a| **a).count(), 0);
    }

    #[test]
    fn any_rolling_minute_holds_at_most_two_limits_minus_one_and_steady_rate_holds() {
        // Sending as fast as allowed for 10 minutes admits L at once then L per minute.
        let times: Vec<i64> = (0..600_000).step_by(100).collect();
        let r = run(30, &times);
        let admitted = r.iter().filter(|a| **a).count();
        assert_eq!(admitted, 30 + 30 * 10 - 1);
    }

    #[test]
    fn remaining_reset_and_retry_after() {
        let s = check(None, 0, 10);
        assert!(s.allowed);
        assert_eq!(s.remaining, 9);
        assert_eq!(s.reset_ns, 6_000 * MS);
        let mut tat = None;
        for _ in 0..10 {
            tat = Some(check(tat, 0, 10).new_tat_ns);
        }
        let s = check(tat, 0, 10);
        assert!(!s.allowed);
        assert_eq!(s.remaining, 0);
        assert_eq!(s.retry_after_ns, 6_000 * MS);
        assert_eq!(s.reset_ns, 60_000 * MS);
    }

    #[test]
    fn huge_limits_work() {
        // A tier an operator sets to "unlimited" must not break the limiter.
        for limit in [1_000_000_000, u32::MAX] {
            let mut tat = None;
            for _ in 0..1000 {
                let s = check(tat, 1_700_000_000_000 * MS, limit);
                assert!(s.allowed);
                tat = Some(s.new_tat_ns);
            }
        }
        let s = check(None, 0, u32::MAX);
        assert_eq!(s.remaining, u32::MAX - 1);
    }
}
