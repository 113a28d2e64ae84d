//! What a request called out to (the store, Redis), gathered for its
//! trace (API.md 16: a request's span has child spans for its store and
//! Redis calls).
//!
//! The envelope runs a traced request's future in [`scoped`]; the store's
//! and the limiter's call sites wrap each call in [`record`], which notes
//! its system, operation, start, end and outcome while a scope is current
//! on the thread polling it, and does nothing more than a thread-local
//! read otherwise (an untraced request, a background task). What a call
//! spawns onto another task is not in its request's scope.
//!
//! Standard library only: the scope is a thread-local set around each poll
//! of the request's future, as a task-local is.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// One call a request made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The system called, as OpenTelemetry's `db.system` names it:
    /// `sqlite`, `postgresql`, `redis`.
    pub system: &'static str,
    /// The operation: the store's method (`action_page`), or the Redis
    /// command (`EVALSHA`).
    pub operation: &'static str,
    /// Start, nanoseconds since the Unix epoch.
    pub start_ns: u64,
    /// End, nanoseconds since the Unix epoch.
    pub end_ns: u64,
    /// Whether it failed.
    pub error: bool,
}

/// The most calls one request's scope keeps; later ones are not noted (a
/// request that reads the store in a loop still makes one bounded trace).
pub const MAX_CALLS: usize = 64;

thread_local! {
    /// The calls of the scope being polled on this thread, if any.
    static CURRENT: RefCell<Option<Vec<Call>>> = const { RefCell::new(None) };
}

/// A future run with a scope of its own: the calls recorded while it is
/// polled are its.
pub struct Scoped<F: Future> {
    inner: Pin<Box<F>>,
    calls: Option<Vec<Call>>,
}

/// Runs `fut` in a scope of its own; its calls are read, from inside it,
/// by [`take`].
pub fn scoped<F: Future>(fut: F) -> Scoped<F> {
    Scoped { inner: Box::pin(fut), calls: Some(Vec::new()) }
}

impl<F: Future> Future for Scoped<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        let outer = CURRENT.replace(this.calls.take());
        let out = this.inner.as_mut().poll(cx);
        this.calls = CURRENT.replace(outer);
        out
    }
}

/// Whether a scope is current.
fn in_scope() -> bool {
    CURRENT.with_borrow(Option::is_some)
}

/// Takes the calls noted so far in the current scope (none outside one).
pub fn take() -> Vec<Call> {
    CURRENT.with_borrow_mut(|c| c.as_mut().map(std::mem::take).unwrap_or_default())
}

/// Runs the call `fut` to `system`, noting it (`operation`, its times,
/// whether it returned an error) in the current scope, if any.
pub async fn record<T, E, F>(system: &'static str, operation: &'static str, fut: F) -> Result<T, E>
where
    F: Future<Output = Result<T, E>>,
{
    if !in_scope() {
        return fut.await;
    }
    let start_ns = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let started = Instant::now();
    let out = fut.await;
    let end_ns = start_ns + started.elapsed().as_nanos() as u64;
    let call = Call { system, operation, start_ns, end_ns, error: out.is_err() };
    CURRENT.with_borrow_mut(|c| {
        if let Some(calls) = c.as_mut().filter(|c| c.len() < MAX_CALLS) {
            calls.push(call);
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Polls `fut` to its end on this thread (no runtime needed: nothing
    /// here waits).
    fn block_on<F: Future>(fut: F) -> F::Output {
        let mut fut = Box::pin(fut);
        let mut cx = Context::from_waker(std::task::Waker::noop());
        loop {
            if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
                return v;
            }
        }
    }

    /// A future that is pending once, then ready: a call that waits.
    struct Yield(bool);
    impl Future for Yield {
        type Output = Result<(), ()>;
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            if std::mem::replace(&mut self.0, true) {
                Poll::Ready(Ok(()))
            } else {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        }
    }

    #[test]
    fn calls_are_noted_in_their_scope_only() {
        let outside = block_on(async {
            record("sqlite", "ping", Yield(false)).await.unwrap();
            take()
        });
        assert!(outside.is_empty(), "no scope, nothing noted");

        let calls = block_on(scoped(async {
            record("sqlite", "ping", Yield(false)).await.unwrap();
            let _: Result<(), &str> = record("redis", "EVALSHA", async { Err("down") }).await;
            // A scope inside keeps its calls apart, and the outer one is
            // current again after it.
            let inner = scoped(async {
                record("postgresql", "usage", Yield(false)).await.unwrap();
                take()
            })
            .await;
            assert_eq!(inner.len(), 1);
            take()
        }));
        assert_eq!(
            calls.iter().map(|c| (c.system, c.operation, c.error)).collect::<Vec<_>>(),
            [("sqlite", "ping", false), ("redis", "EVALSHA", true)]
        );
        assert!(calls.iter().all(|c| c.end_ns >= c.start_ns && c.start_ns > 0));
        assert!(block_on(async { take() }).is_empty(), "the scope ended with its future");
    }

    #[test]
    fn a_scope_keeps_at_most_max_calls() {
        let calls = block_on(scoped(async {
            for _ in 0..MAX_CALLS + 5 {
                record("sqlite", "ping", async { Ok::<(), ()>(()) }).await.unwrap();
            }
            take()
        }));
        assert_eq!(calls.len(), MAX_CALLS);
    }
}
