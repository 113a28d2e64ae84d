//! Middleware of the request path. [`envelope`] is the outermost service of
//! both listeners (on the admin routes it runs what
//! [`crate::admin::envelope`] says) and runs, in order: [`request_id`], [`access_log`]
//! and [`trace`], [`head`], [`timeout`] (and panics), on the keyed `/v1` routes [`guard`]
//! ([`crate::auth`], [`crate::ratelimit`], `304`s of [`etag`]), then
//! compression (tower-http) and the router; on the way out
//! [`etag::tag_encoding`] and [`problem`].

pub mod access_log;
pub mod envelope;
pub mod etag;
pub mod guard;
pub mod head;
pub mod problem;
pub mod request_id;
pub mod timeout;
pub mod trace;
