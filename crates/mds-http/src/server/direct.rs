//! The event stream's connections, served without hyper.
//!
//! hyper keeps an 8 KiB read buffer and an 8 KiB header buffer for every
//! HTTP/1 connection for as long as it is open. A stream (`GET
//! /v1/events/stream`) is open for hours and only writes, so those 16 KiB
//! would be most of what each open stream costs. A connection whose first
//! bytes are a whole `GET /v1/events/stream` head is therefore served here:
//! the head is parsed from the socket's buffer without a copy held, the
//! request goes through the same service as any other (the envelope: key,
//! limits, access log, metrics), and the response is written as it comes,
//! its body chunked, with `Connection: close`: the connection serves that
//! one request.
//!
//! Anything else goes to hyper, with nothing taken from the socket: another
//! path, another method or version, a body, a head over [`HEAD_MAX`], or a
//! head not wholly arrived in the first bytes (a half-sent head is thus
//! still hyper's, under its header timeout). The connection's [`Watch`]
//! sees its bytes as hyper's do, so its idle timeout, eviction and the
//! server's stop apply the same way.

use std::future::poll_fn;
use std::io;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::{HeaderName, HeaderValue, Method, Request, Uri, Version, header};
use hyper::body::{Body as _, Buf};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

use super::Served;
use super::conn::{Expiry, Watch};
use crate::config::ServerConfig;

/// The start of the heads served here.
const PREFIX: &[u8] = b"GET /v1/events/stream";
/// The longest head looked at; a longer one is hyper's.
pub(crate) const HEAD_MAX: usize = 4096;
/// The most header lines a head served here may have.
const HEADERS_MAX: usize = 32;

/// A request head found whole at the start of a connection: the request,
/// and how many bytes of the socket it took.
pub(crate) struct Head {
    request: Request<Body>,
    len: usize,
}

/// Looks at the first bytes of `stream` (waiting for some) without taking
/// them: a [`Head`] when they are a whole head served here, else `None`.
pub(crate) async fn sniff(stream: &TcpStream) -> io::Result<Option<Head>> {
    let mut start = [0u8; PREFIX.len()];
    let n = stream.peek(&mut start).await?;
    if start[..n] != PREFIX[..n] || n < PREFIX.len() {
        return Ok(None);
    }
    let mut buf = vec![0u8; HEAD_MAX];
    let n = stream.peek(&mut buf).await?;
    Ok(parse(&buf[..n]))
}

/// The head at the start of `bytes`, when it is whole and served here.
fn parse(bytes: &[u8]) -> Option<Head> {
    let mut headers = [httparse::EMPTY_HEADER; HEADERS_MAX];
    let mut req = httparse::Request::new(&mut headers);
    let len = match req.parse(bytes) {
        Ok(httparse::Status::Complete(len)) => len,
        _ => return None,
    };
    if req.method != Some("GET") || req.version != Some(1) {
        return None;
    }
    let uri = Uri::try_from(req.path?).ok()?;
    let mut request = Request::builder().method(Method::GET).uri(uri).version(Version::HTTP_11);
    for h in req.headers.iter() {
        let name = HeaderName::from_bytes(h.name.as_bytes()).ok()?;
        let has_body = name == header::CONTENT_LENGTH && h.value != b"0" || name == header::TRANSFER_ENCODING;
        if has_body || name == header::EXPECT || name == header::UPGRADE {
            return None;
        }
        request = request.header(name, HeaderValue::from_bytes(h.value).ok()?);
    }
    Some(Head { request: request.body(Body::empty()).ok()?, len })
}

/// Serves the one request of `head` on `stream`, then closes it; returns
/// why the watchdog closed it, if it did.
pub(crate) async fn serve(
    mut stream: TcpStream,
    head: Head,
    mut app: Served,
    cfg: &ServerConfig,
    watch: &Arc<Watch>,
    mut stopping: watch::Receiver<bool>,
) -> Option<Expiry> {
    // Take the head's bytes, which are in the socket's buffer already.
    let mut taken = vec![0u8; head.len];
    if stream.read_exact(&mut taken).await.is_err() {
        return None;
    }
    drop(taken);
    watch.on_read();
    let in_flight = watch.begin();
    let response = tokio::select! {
        r = app.call(head.request) => match r { Ok(r) => r, Err(never) => match never {} },
        reason = watch.expiry(cfg) => return Some(reason),
    };
    drop(in_flight);
    let (parts, mut body) = response.into_parts();
    let length = body.size_hint().exact();
    let mut out = whole(Bytes::from(head_bytes(&parts, length)));
    let mut ended = false;
    let (mut rd, mut wr) = stream.split();
    let mut scratch = [0u8; 64];
    let expiry = watch.expiry(cfg);
    tokio::pin!(expiry);
    loop {
        tokio::select! {
            written = wr.write_buf(&mut out), if out.has_remaining() => match written {
                Ok(n) if n > 0 => watch.on_write(),
                _ => return None,
            },
            frame = poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)), if !out.has_remaining() && !ended => {
                match frame {
                    Some(Ok(frame)) => match frame.into_data() {
                        Ok(data) if data.is_empty() => {}
                        Ok(data) if length.is_some() => out = whole(data),
                        Ok(data) => out = chunk(data),
                        Err(_) => {}
                    },
                    Some(Err(_)) => return None,
                    None => {
                        ended = true;
                        if length.is_none() {
                            out = whole(Bytes::from_static(b"0\r\n\r\n"));
                        }
                    }
                }
            }
            // Nothing more is read from the client: its end (or an error)
            // ends the response; bytes it sends are dropped.
            read = rd.read(&mut scratch) => match read {
                Ok(0) | Err(_) => return None,
                Ok(_) => watch.on_read(),
            },
            reason = &mut expiry => return Some(reason),
            // The stream hears the stop itself and ends its body: go on
            // writing until it has.
            changed = stopping.changed(), if !*stopping.borrow() => if changed.is_err() { return None },
        }
        if ended && !out.has_remaining() {
            let _ = wr.shutdown().await;
            return None;
        }
    }
}

/// What is being written: up to three parts (a chunk's size line, its data,
/// its end).
type Out = bytes::buf::Chain<bytes::buf::Chain<Bytes, Bytes>, Bytes>;

/// `bytes` to write as they are.
fn whole(bytes: Bytes) -> Out {
    bytes.chain(Bytes::new()).chain(Bytes::new())
}

/// `data` as one chunk of a chunked body.
fn chunk(data: Bytes) -> Out {
    Bytes::from(format!("{:x}\r\n", data.len())).chain(data).chain(Bytes::from_static(b"\r\n"))
}

/// The status line and headers of `parts`, with `Date` (the system's time,
/// as hyper writes it on every other answer), `Connection:
/// close` and the body's framing: `Content-Length` when its `length` is
/// known, else `Transfer-Encoding: chunked`.
fn head_bytes(parts: &axum::http::response::Parts, length: Option<u64>) -> Vec<u8> {
    use std::io::Write;
    let mut out = Vec::with_capacity(512);
    let status = parts.status;
    let _ = write!(out, "HTTP/1.1 {} {}\r\n", status.as_str(), status.canonical_reason().unwrap_or(""));
    let _ = write!(out, "date: {}\r\nconnection: close\r\n", chrono::Utc::now().format("%a, %d %b %Y %H:%M:%S GMT"));
    match length {
        Some(n) => {
            let _ = write!(out, "content-length: {n}\r\n");
        }
        None => out.extend_from_slice(b"transfer-encoding: chunked\r\n"),
    }
    for (name, value) in &parts.headers {
        if name == header::CONTENT_LENGTH || name == header::TRANSFER_ENCODING || name == header::CONNECTION {
            continue;
        }
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Response;

    #[test]
    fn only_a_whole_get_of_the_stream_without_a_body_is_served_here() {
        let head = b"GET /v1/events/stream?since=5 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n\r\n";
        let ok = parse(&[&head[..], b"GET /"].concat()).unwrap();
        assert_eq!(ok.len, head.len());
        assert_eq!(ok.request.uri(), "/v1/events/stream?since=5");
        assert_eq!(ok.request.headers()["authorization"], "Bearer k");
        for refused in [
            &b"GET /v1/events/stream HTTP/1.1\r\nHost: x\r\n"[..],
            b"GET /v1/events/stream HTTP/1.0\r\n\r\n",
            b"POST /v1/events/stream HTTP/1.1\r\n\r\n",
            b"GET /v1/events/stream HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
            b"GET /v1/events/stream HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"GET /v1/events/stream HTTP/1.1\r\nExpect: 100-continue\r\n\r\n",
            b"GET /v1/events/stream HTTP/1.1\r\nBad Header: x\r\n\r\n",
        ] {
            assert!(parse(refused).is_none(), "{}", String::from_utf8_lossy(refused));
        }
    }

    #[test]
    fn a_head_has_its_framing_and_no_second_one() {
        let (parts, _) = Response::builder()
            .status(429)
            .header(header::CONTENT_TYPE, "application/problem+json")
            .header(header::CONTENT_LENGTH, "10")
            .body(())
            .unwrap()
            .into_parts();
        let text = String::from_utf8(head_bytes(&parts, Some(10))).unwrap();
        assert!(text.starts_with("HTTP/1.1 429 Too Many Requests\r\ndate: "), "{text}");
        assert!(
            text.contains(
                "\r\nconnection: close\r\ncontent-length: 10\r\ncontent-type: application/problem+json\r\n\r\n"
            )
        );
        assert_eq!(text.matches("content-length").count(), 1);
        let chunked = String::from_utf8(head_bytes(&parts, None)).unwrap();
        assert!(chunked.contains("transfer-encoding: chunked\r\n") && !chunked.contains("content-length"));
        let mut c = chunk(Bytes::from_static(b"data: {}\n\n"));
        assert_eq!(c.copy_to_bytes(c.remaining()), &b"a\r\ndata: {}\n\n\r\n"[..]);
    }
}
