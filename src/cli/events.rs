//! `mds events`: the event stream in a terminal (`tail`) and forwarded,
//! signed, to a local receiver (`listen --forward-to`, as `stripe listen`
//! does), through [`mds_client`]'s stream, which resumes after a dropped
//! connection with `Last-Event-ID`. The key comes from `MDS_API_KEY`, the
//! base URL from `MDS_BASE_URL`, as for `mds get`.

use std::pin::pin;

use anyhow::Context;
use clap::{Args, Subcommand};
use mds_client::{Event, EventFilters as _, EventStreamRequest};

/// The `mds events` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum EventsCommand {
    /// Follow the event stream: one JSON line per event, as committed.
    Tail(StreamArgs),
    /// Follow the event stream and POST each event to a local URL, signed
    /// as a webhook delivery (Standard Webhooks headers) with a secret
    /// printed at start (or given with --secret).
    Listen {
        /// Where to POST each event (http or https, e.g. a local receiver).
        #[arg(long, value_name = "URL")]
        forward_to: reqwest::Url,
        /// The signing secret (whsec_…); a new one is made and printed
        /// without it.
        #[arg(long, env = "MDS_WEBHOOK_SECRET", hide_env_values = true)]
        secret: Option<String>,
        /// Which events, and from where.
        #[command(flatten)]
        stream: StreamArgs,
    },
}

/// The stream's filters and position.
#[derive(Debug, Args)]
pub(crate) struct StreamArgs {
    /// Resume after this event id (evt_…); without it, from the next event.
    #[arg(long, value_name = "EVENT_ID")]
    since: Option<String>,
    /// Only these types, comma-separated (article.published, article.updated, company.changed).
    #[arg(long, value_name = "TYPES")]
    types: Option<String>,
    /// Only events about the company with this ISIN.
    #[arg(long)]
    isin: Option<String>,
    /// Only events about the company with this ticker.
    #[arg(long)]
    ticker: Option<String>,
    /// Only article events carrying this tag.
    #[arg(long)]
    tag: Option<String>,
}

impl StreamArgs {
    /// The stream request these arguments ask for.
    fn request(&self, client: &mds_client::Client) -> EventStreamRequest {
        let mut r = client.event_stream();
        if let Some(s) = &self.since {
            r = r.since(s);
        }
        if let Some(t) = &self.types {
            let types: Vec<&str> = t.split(',').map(str::trim).collect();
            r = r.types(&types);
        }
        if let Some(v) = &self.isin {
            r = r.isin(v.clone());
        }
        if let Some(v) = &self.ticker {
            r = r.ticker(v.clone());
        }
        if let Some(v) = &self.tag {
            r = r.tag(v.clone());
        }
        r
    }
}

/// Runs `mds events …` until interrupted (or the service refuses the
/// stream: a one-line reason and a non-zero exit).
pub(crate) async fn run(command: EventsCommand) -> anyhow::Result<()> {
    let client = super::get::client()?;
    match command {
        EventsCommand::Tail(args) => {
            let mut events = pin!(args.request(&client).follow());
            while let Some(e) = next(&mut events).await {
                outln!("{}", serde_json::to_string(&e?).expect("an event serialises"))?;
            }
            Ok(())
        }
        EventsCommand::Listen { forward_to, secret, stream } => {
            let secret = match secret {
                Some(s) => {
                    mds_domain::webhook::secret_bytes(&s).context("--secret is not a webhook secret (whsec_…)")?;
                    s
                }
                None => mds_domain::webhook::new_secret(),
            };
            eprintln!("Forwarding events to {forward_to}; your webhook signing secret is {secret}");
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(std::time::Duration::from_secs(10))
                .build()?;
            let mut events = pin!(stream.request(&client).follow());
            while let Some(e) = next(&mut events).await {
                let e = e?;
                let status = forward(&http, &forward_to, &secret, &e).await;
                outln!("{} {} -> {status}", e.id, e.kind)?;
            }
            Ok(())
        }
    }
}

/// The next item of a pinned stream.
async fn next<S: mds_client::Stream + Unpin>(s: &mut S) -> Option<S::Item> {
    std::future::poll_fn(|cx| std::pin::Pin::new(&mut *s).poll_next(cx)).await
}

/// POSTs `e` to `url` signed with `secret`; the answer's status, or why
/// there was none.
async fn forward(http: &reqwest::Client, url: &reqwest::Url, secret: &str, e: &Event) -> String {
    let body = serde_json::to_vec(e).expect("an event serialises");
    let id = e.id.to_string();
    let ts = chrono::Utc::now().timestamp();
    let signature = mds_domain::webhook::sign(secret, &id, ts, &body).expect("the secret was checked");
    let sent = http
        .post(url.clone())
        .header(mds_domain::webhook::ID_HEADER, &id)
        .header(mds_domain::webhook::TIMESTAMP_HEADER, ts.to_string())
        .header(mds_domain::webhook::SIGNATURE_HEADER, signature)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body)
        .send()
        .await;
    match sent {
        Ok(r) => r.status().as_u16().to_string(),
        Err(err) => format!("error: {err}"),
    }
}
