//! The clock limits and billing months are read from, injectable so tests
//! can stand at 23:59:59.999 on the last day of a month.

use std::sync::Mutex;

use chrono::{DateTime, Utc};

/// A source of the current instant.
pub trait Clock: Send + Sync + std::fmt::Debug + 'static {
    /// Now.
    fn now(&self) -> DateTime<Utc>;
}

/// The system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that stands still until it is set or advanced (for tests).
#[derive(Debug)]
pub struct ManualClock(Mutex<DateTime<Utc>>);

impl ManualClock {
    /// A clock at `t`.
    pub fn new(t: DateTime<Utc>) -> Self {
        ManualClock(Mutex::new(t))
    }

    /// Moves the clock to `t`.
    pub fn set(&self, t: DateTime<Utc>) {
        *self.0.lock().expect("not poisoned") = t;
    }

    /// Moves the clock forward.
    pub fn advance(&self, d: chrono::Duration) {
        *self.0.lock().expect("not poisoned") += d;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().expect("not poisoned")
    }
}
