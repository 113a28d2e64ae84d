//! The one clock of a node, injectable so tests can stand at 23:59:59.999
//! on the last day of a month, or step the wall clock back: limits and
//! billing months read it (`mds_limits::clock` re-exports it), and so does
//! the store, which dates what it writes by the clock it was opened with
//! (`mds_store::open_with_clock`).
//!
//! Two clocks, for two jobs: the wall clock ([`Clock::now`]) says which
//! billing month a request falls in; the monotonic clock
//! ([`Clock::elapsed`]) measures the per-minute limit, so a step of the
//! wall clock (NTP, a VM migration) neither refuses every recent caller
//! (a step back) nor refills every allowance (a step forward).

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

/// A source of the current instant and of elapsed time.
pub trait Clock: Send + Sync + std::fmt::Debug + 'static {
    /// Now, on the wall clock (for billing months, and the times the store
    /// writes).
    fn now(&self) -> DateTime<Utc>;

    /// Time elapsed since a fixed origin (the process's first call), on a
    /// clock that never steps (for rates).
    fn elapsed(&self) -> Duration;
}

/// The system clocks.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }

    fn elapsed(&self) -> Duration {
        static ORIGIN: OnceLock<Instant> = OnceLock::new();
        ORIGIN.get_or_init(Instant::now).elapsed()
    }
}

/// Clocks that stand still until set or advanced (for tests).
#[derive(Debug)]
pub struct ManualClock(Mutex<(DateTime<Utc>, Duration)>);

impl ManualClock {
    /// Clocks at `t` (and at the monotonic origin).
    pub fn new(t: DateTime<Utc>) -> Self {
        ManualClock(Mutex::new((t, Duration::ZERO)))
    }

    /// Time passes until `t`: both clocks move forward by the same span.
    /// An earlier `t` is a step back of the wall clock alone, as
    /// [`ManualClock::step`].
    pub fn set(&self, t: DateTime<Utc>) {
        let mut c = self.0.lock().expect("not poisoned");
        if let Ok(forward) = (t - c.0).to_std() {
            c.1 += forward;
        }
        c.0 = t;
    }

    /// The wall clock is stepped to `t` (NTP, a VM migration); no time
    /// passes on the monotonic clock.
    pub fn step(&self, t: DateTime<Utc>) {
        self.0.lock().expect("not poisoned").0 = t;
    }

    /// Time passes: both clocks move forward by `d`.
    pub fn advance(&self, d: chrono::Duration) {
        let mut c = self.0.lock().expect("not poisoned");
        c.0 += d;
        c.1 += d.to_std().unwrap_or_default();
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        self.0.lock().expect("not poisoned").0
    }

    fn elapsed(&self) -> Duration {
        self.0.lock().expect("not poisoned").1
    }
}
