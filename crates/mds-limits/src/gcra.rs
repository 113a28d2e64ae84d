//! The per-minute limit as a GCRA (generic cell rate algorithm).
//!
//! A key with a limit of `L` per minute may send `L` requests at once, then
//! one every `60 s / L`: the allowance refills continuously, so there is no
//! window edge at which two windows' worth can be sent back to back. The
//! state is one instant per key, the theoretical arrival time (TAT).

/// The period of the limit, in milliseconds.
pub const PERIOD_MS: i64 = 60_000;

/// The outcome of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcraState {
    /// Whether the request may go ahead.
    pub allowed: bool,
    /// Requests left right now (after this one, if allowed).
    pub remaining: u32,
    /// Milliseconds until the allowance is full again.
    pub reset_ms: i64,
    /// When refused: milliseconds until one request is allowed.
    pub retry_after_ms: i64,
    /// The TAT to store if the request is admitted.
    pub new_tat_ms: i64,
}

/// Checks one request at `now_ms` against `limit` per minute, given the stored
/// TAT (`None` for a key not seen yet). Pure: the caller stores `new_tat_ms`
/// when it admits.
pub fn check(tat_ms: Option<i64>, now_ms: i64, limit: u32) -> GcraState {
    let limit = limit.max(1) as i64;
    // Work in microseconds so that 60 s / L stays exact enough for any L.
    let t = PERIOD_MS * 1000 / limit; // emission interval, µs
    let tau = PERIOD_MS * 1000 - t; // burst tolerance, µs
    let now = now_ms * 1000;
    let tat = tat_ms.map_or(now, |x| (x * 1000).max(now));
    let remaining_after = |tat_after: i64| -> u32 {
        let used = (tat_after - now + t - 1) / t; // ceil
        (limit - used).clamp(0, limit) as u32
    };
    if tat - now > tau {
        let retry = tat - now - tau;
        return GcraState {
            allowed: false,
            remaining: 0,
            reset_ms: (tat - now + 999) / 1000,
            retry_after_ms: (retry + 999) / 1000,
            new_tat_ms: tat / 1000,
        };
    }
    let new_tat = tat + t;
    GcraState {
        allowed: true,
        remaining: remaining_after(new_tat),
        reset_ms: (new_tat - now + 999) / 1000,
        retry_after_ms: 0,
        new_tat_ms: (new_tat + 999) / 1000,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Admits requests at `times` (ms), returns which were allowed.
    fn run(limit: u32, times: &[i64]) -> Vec<bool> {
        let mut tat = None;
        times
            .iter()
            .map(|&now| {
                let s = check(tat, now, limit);
                if s.allowed {
                    tat = Some(s.new_tat_ms);
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
            tat = Some(check(tat, 0, 60).new_tat_ms);
        }
        assert!(!check(tat, 999, 60).allowed);
        assert!(check(tat, 1000, 60).allowed);
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
        assert_eq!(s.reset_ms, 6_000);
        let mut tat = None;
        for _ in 0..10 {
            tat = Some(check(tat, 0, 10).new_tat_ms);
        }
        let s = check(tat, 0, 10);
        assert!(!s.allowed);
        assert_eq!(s.remaining, 0);
        assert_eq!(s.retry_after_ms, 6_000);
        assert_eq!(s.reset_ms, 60_000);
    }
}
