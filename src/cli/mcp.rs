//! `mds mcp`: the MCP tools on stdio for a desktop agent (contract
//! section 12): newline-delimited JSON-RPC messages in on stdin, answers
//! out on stdout, one a line; logs on stderr. The protocol and the tools
//! are `mds_http::mcp`'s, the same as `POST /mcp`; a tool call's request
//! goes over HTTP to a running service at `MDS_BASE_URL` with the key in
//! `MDS_API_KEY`, so it is counted there exactly as that route.

use std::io::{BufRead, Write};
use std::time::Duration;

use anyhow::Context;
use mds_http::mcp::session;
use mds_http::mcp::tools::{Reply, Upstream};

/// How long a tool call's request may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Serves stdin until it closes.
pub(crate) async fn run() -> anyhow::Result<()> {
    let (key, base) = super::get::key_and_base()?;
    let http = reqwest::Client::builder()
        .timeout(TIMEOUT)
        .user_agent(concat!("mds-mcp/", env!("CARGO_PKG_VERSION")))
        .build()
        .context("cannot make the HTTP client")?;
    let upstream =
        Service { http, base: base.trim_end_matches('/').to_owned(), authorization: format!("Bearer {key}") };
    // Lines read on a thread of their own (blocking reads of stdin), one
    // message at a time: a tool call is answered before the next is read.
    let (tx, mut rx) = tokio::sync::mpsc::channel::<std::io::Result<String>>(1);
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            if tx.blocking_send(line).is_err() {
                break;
            }
        }
    });
    while let Some(line) = rx.recv().await {
        let line = line.context("cannot read stdin")?;
        if line.trim().is_empty() {
            continue;
        }
        if let Some(answer) = session::handle(line.as_bytes(), &upstream).await {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{answer}")?;
            out.flush()?;
        }
    }
    Ok(())
}

/// The running service a tool call's request goes to.
struct Service {
    http: reqwest::Client,
    base: String,
    /// `Bearer <key>`.
    authorization: String,
}

impl Upstream for Service {
    async fn get(&self, path_and_query: &str) -> Result<Reply, String> {
        let url = format!("{}{path_and_query}", self.base);
        // Without the URL: it holds the arguments, which may be large.
        let unreachable = |e: reqwest::Error| {
            let e = e.without_url();
            tracing::warn!(error = %e, "mds mcp: the service did not answer");
            format!("mds at {} did not answer ({e}); is MDS_BASE_URL right and the service up?", self.base)
        };
        let resp = self
            .http
            .get(&url)
            .header(reqwest::header::AUTHORIZATION, &self.authorization)
            .send()
            .await
            .map_err(unreachable)?;
        let status = resp.status().as_u16();
        let body = resp.bytes().await.map_err(unreachable)?;
        Ok(Reply { status, body: body.to_vec() })
    }
}
