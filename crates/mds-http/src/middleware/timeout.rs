//! A request that runs longer than the configured time gets
//! `503 unavailable` with `Retry-After` (the usual cause is a slow store),
//! and its work is dropped. A panic (a bug) is caught here too and answered
//! `500 internal`; the connection and the other requests carry on.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// Runs `fut` within `limit`, turning a timeout or a panic into its problem.
/// `fut` is pinned by the caller, so that it is not moved (copied) again.
pub async fn bound<F: Future<Output = Response>>(limit: Duration, mut fut: Pin<&mut F>) -> Response {
    let caught =
        std::future::poll_fn(move |cx| match std::panic::catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(panic) => Poll::Ready(Err(panic)),
        });
    match tokio::time::timeout(limit, caught).await {
        Ok(Ok(resp)) => resp,
        Ok(Err(panic)) => {
            ApiError::internal(&format_args!("request handler panicked: {}", message(&*panic))).into_response()
        }
        Err(_) => ApiError::timed_out(limit).into_response(),
    }
}

/// The panic's message, when it has one.
fn message(panic: &(dyn Any + Send)) -> &str {
    panic.downcast_ref::<&str>().copied().or_else(|| panic.downcast_ref::<String>().map(String::as_str)).unwrap_or("?")
}

#[cfg(test)]
mod tests {
    use std::pin::pin;

    use axum::http::StatusCode;
    use mds_domain::Problem;

    use super::*;

    fn code(resp: &Response) -> (StatusCode, String) {
        (resp.status(), resp.extensions().get::<Problem>().map(|p| p.code.clone()).unwrap_or_default())
    }

    #[tokio::test]
    async fn answers_come_through_timeouts_and_panics_become_problems() {
        let ok = pin!(async { StatusCode::OK.into_response() });
        assert_eq!(bound(Duration::from_secs(1), ok).await.status(), StatusCode::OK);
        let slow = pin!(async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            StatusCode::OK.into_response()
        });
        let resp = bound(Duration::from_millis(10), slow).await;
        assert_eq!(code(&resp), (StatusCode::SERVICE_UNAVAILABLE, "unavailable".to_owned()));
        assert!(resp.headers().contains_key(axum::http::header::RETRY_AFTER));
        let buggy = pin!(async {
            tokio::task::yield_now().await;
            panic!("a bug")
        });
        assert_eq!(
            code(&bound(Duration::from_secs(1), buggy).await),
            (StatusCode::INTERNAL_SERVER_ERROR, "internal".to_owned())
        );
    }
}
