//! `mds events`: the event stream in a terminal (`tail`) and forwarded,
//! signed, to a local receiver (`listen --forward-to`, as `stripe listen`
//! does), through [`mds_client`]'s stream, which resumes after a dropped
//! connection with `Last-Event-ID`. While the key's two streams are taken
//! (`429 too_many_streams`), both say so and wait for a free place, trying
//! again with a growing wait ([`Following`]). The key comes from
//! `MDS_API_KEY`, the base URL from `MDS_BASE_URL`, as for `mds get`.

use std::pin::Pin;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Subcommand};
use mds_client::{Event, EventFilters as _, EventStreamRequest, Stream};
use mds_domain::ErrorCode;

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
    /// Only these types, comma-separated (article.published, article.updated, company.changed,
    /// corporate_action.added, corporate_action.changed, corporate_action.removed, prices.published).
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
    /// The stream request these arguments ask for, after `since` (else
    /// their own `--since`).
    fn request(&self, client: &mds_client::Client, since: Option<&str>) -> EventStreamRequest {
        let mut r = client.event_stream();
        if let Some(s) = since.or(self.since.as_deref()) {
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
/// stream for another reason than its two places taken: a one-line reason
/// and a non-zero exit).
pub(crate) async fn run(command: EventsCommand) -> anyhow::Result<()> {
    let client = super::get::client()?;
    match command {
        EventsCommand::Tail(args) => {
            let mut events = Following::new(client, args);
            loop {
                let e = events.next().await?;
                outln!("{}", serde_json::to_string(&e).expect("an event serialises"))?;
            }
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
            let mut events = Following::new(client, stream);
            loop {
                let e = events.next().await?;
                let status = forward(&http, &forward_to, &secret, &e).await;
                outln!("{} {} -> {status}", e.id, e.kind)?;
            }
        }
    }
}

/// The longest wait between tries for a free stream place (the service's
/// `Retry-After` for one: a place held by a node that died comes back
/// within its lease).
const MOST_WAIT: Duration = Duration::from_secs(15);

/// The stream followed, through refusals for want of a free place: the
/// client's stream resumes after dropped connections by itself, and ends
/// with an error the service answered; `too_many_streams` is waited out
/// (said on stderr), then the stream is opened again after the last event
/// seen.
struct Following {
    client: mds_client::Client,
    args: StreamArgs,
    /// The last event received.
    last: Option<String>,
    stream: Option<Pin<Box<dyn Stream<Item = mds_client::Result<Event>> + Send>>>,
    /// Refusals in a row.
    refused: u32,
}

impl Following {
    fn new(client: mds_client::Client, args: StreamArgs) -> Self {
        Following { client, args, last: None, stream: None, refused: 0 }
    }

    /// The next event; an error the service answered other than
    /// `too_many_streams` ends it.
    async fn next(&mut self) -> anyhow::Result<Event> {
        loop {
            let stream = match &mut self.stream {
                Some(s) => s,
                None => {
                    let req = self.args.request(&self.client, self.last.as_deref());
                    self.stream.insert(Box::pin(req.follow()))
                }
            };
            let item = std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await;
            match item {
                Some(Ok(e)) => {
                    self.refused = 0;
                    self.last = Some(e.id.to_string());
                    return Ok(e);
                }
                Some(Err(e)) if e.code() == Some(ErrorCode::TooManyStreams) => {
                    self.stream = None;
                    self.refused += 1;
                    let wait = Duration::from_secs(1u64 << (self.refused - 1).min(4)).min(MOST_WAIT);
                    eprintln!("Waiting for a free stream place: {e}; trying again in {} s", wait.as_secs());
                    tokio::time::sleep(wait).await;
                }
                Some(Err(e)) => return Err(e.into()),
                None => self.stream = None,
            }
        }
    }
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
        // With its causes (the connection refused, the name unknown...).
        Err(err) => format!("error: {:#}", anyhow::Error::new(err)),
    }
}
