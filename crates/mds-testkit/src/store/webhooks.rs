//! Suite functions for webhook endpoints ([`WebhookStore`](mds_store::WebhookStore)):
//! the per-account limit, the delivery cursor (new endpoints see only later
//! events, filters skip, one event in flight, retries, give-up, replay),
//! leases (one claimant at a time; a lapsed lease is taken over; a
//! finish without the lease changes nothing), runs (several events
//! claimed at once, recorded in order up to the first failure) and pings.

use chrono::Duration;
use mds_domain::{Actor, EventFilter, EventId, EventType};
use mds_store::{DeliveryOutcome, NewWebhook, WebhookAttempt, WebhookPatch};

use super::*;

/// A new endpoint `id` of `account` with `filter`, at `now`.
fn new_hook(id: &str, account: &str, filter: EventFilter, now: DateTime<Utc>) -> NewWebhook {
    NewWebhook {
        id: id.to_owned(),
        account: account_name(account),
        url: format!("https://hooks.example/{id}"),
        description: Some("test".to_owned()),
        filter,
        secret: "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0".to_owned(),
        now,
    }
}

/// A migrated store with account `acme` and its endpoint `we_a`, which
/// receives `article.published` only, created at [`t0`] (returned).
async fn articles_hook(store: &dyn Store) -> DateTime<Utc> {
    migrated(store).await;
    create_accounts(store, &["acme"]).await;
    let now = t0();
    let filter = EventFilter { types: vec![EventType::ArticlePublished], ..EventFilter::default() };
    store.create_webhook(&new_hook("we_a", "acme", filter, now), 10).await.expect("create");
    now
}

/// An attempt at `event` answered `status`.
fn tried(event: EventId, attempt: u32, status: u16, now: DateTime<Utc>) -> WebhookAttempt {
    WebhookAttempt { event_id: event, attempt, attempted_at: now, status: Some(status), error: None, duration_ms: 3 }
}

/// Endpoints are per account, at most `max`; a new one starts after the
/// latest event; updates, rotation and delete; an unknown id is `None`.
pub async fn webhook_endpoints_are_per_account_and_limited(store: &dyn Store) {
    migrated(store).await;
    create_accounts(store, &["acme", "other"]).await;
    store.upsert_articles(&[bare_article("before")]).await.expect("articles");
    let now = t0();
    let a = store.create_webhook(&new_hook("we_a", "acme", EventFilter::default(), now), 2).await.expect("create");
    assert!(a.delivered_through > EventId(0), "starts after the events already in the log");
    assert_eq!(a.attempt, 0);
    store.create_webhook(&new_hook("we_b", "acme", EventFilter::default(), now), 2).await.expect("second");
    let third = store.create_webhook(&new_hook("we_c", "acme", EventFilter::default(), now), 2).await;
    assert!(matches!(third, Err(StoreError::Conflict(_))), "{third:?}");
    store.create_webhook(&new_hook("we_d", "other", EventFilter::default(), now), 2).await.expect("other account");
    let unknown = store.create_webhook(&new_hook("we_e", "nobody", EventFilter::default(), now), 2).await;
    assert!(matches!(unknown, Err(StoreError::NotFound(_))), "{unknown:?}");
    let mine: Vec<String> =
        store.webhooks(Some(&account_name("acme"))).await.unwrap().into_iter().map(|e| e.id).collect();
    assert_eq!(mine, ["we_a", "we_b"]);
    assert_eq!(store.webhooks(None).await.unwrap().len(), 3);

    let filter = EventFilter { types: vec![EventType::CompanyChanged], ..EventFilter::default() };
    let patch = WebhookPatch { description: Some(None), filter: Some(filter.clone()), ..WebhookPatch::default() };
    let later = now + Duration::seconds(5);
    let b = store.update_webhook("we_b", &patch, later).await.unwrap().expect("updated");
    assert_eq!((b.description, b.filter, b.updated_at), (None, filter, later));
    let r = store.rotate_webhook_secret("we_b", "whsec_bmV3", later + Duration::days(1), later).await.unwrap();
    let r = r.expect("rotated");
    assert_eq!(r.secret, "whsec_bmV3");
    assert_eq!(r.old_secret.map(|o| o.0), Some(b.secret));
    assert!(store.update_webhook("we_nope", &patch, later).await.unwrap().is_none());
    assert!(store.delete_webhook("we_b").await.unwrap());
    assert!(!store.delete_webhook("we_b").await.unwrap());
    assert!(store.webhook("we_b").await.unwrap().is_none());
}

/// The cursor: one event in flight, claimed by one owner at a time; a
/// failure reschedules it; a success moves past it; the filter skips what
/// it refuses; give-up moves on; replay goes back; a finish without the
/// lease changes nothing; a lapsed lease is taken over.
pub async fn webhook_deliveries_follow_the_cursor(store: &dyn Store) {
    let now = articles_hook(store).await;
    let lease = now + Duration::seconds(30);
    assert!(store.claim_webhook_deliveries("n1", now, lease, 10, 1).await.unwrap().is_empty(), "nothing yet");

    store.upsert_articles(&[bare_article("one")]).await.unwrap();
    store.upsert_articles(&[bare_article("one"), bare_article("two")]).await.unwrap(); // unchanged, published
    let mut changed = bare_article("one");
    changed.headline = "Changed".into();
    store.upsert_articles(&[changed]).await.unwrap(); // article.updated: filtered out
    store.upsert_articles(&[bare_article("three")]).await.unwrap();
    assert_eq!(store.webhooks_pending().await.unwrap(), 1);

    let claimed = store.claim_webhook_deliveries("n1", now, lease, 10, 1).await.unwrap();
    assert_eq!(claimed.len(), 1);
    let first = claimed[0].events[0].clone();
    assert_eq!(first.kind, EventType::ArticlePublished);
    assert!(store.claim_webhook_deliveries("n2", now, lease, 10, 1).await.unwrap().is_empty(), "leased");

    // A failure: retried later, by whoever claims then.
    let retry_at = now + Duration::seconds(5);
    let ok = store
        .finish_webhook_deliveries("n1", "we_a", &[(tried(first.id, 1, 500, now), DeliveryOutcome::Retry(retry_at))])
        .await
        .unwrap();
    assert!(ok);
    assert!(store.claim_webhook_deliveries("n2", now, lease, 10, 1).await.unwrap().is_empty(), "not due");
    let later = retry_at + Duration::seconds(1);
    let again = store.claim_webhook_deliveries("n2", later, later + Duration::seconds(30), 10, 1).await.unwrap();
    assert_eq!((again[0].events[0].id, again[0].endpoint.attempt), (first.id, 1));
    assert!(again[0].endpoint.failing_since.is_some());
    // n1 no longer holds it.
    assert!(
        !store
            .finish_webhook_deliveries("n1", "we_a", &[(tried(first.id, 2, 200, later), DeliveryOutcome::Delivered)])
            .await
            .unwrap()
    );
    assert!(
        store
            .finish_webhook_deliveries("n2", "we_a", &[(tried(first.id, 2, 200, later), DeliveryOutcome::Delivered)])
            .await
            .unwrap()
    );
    let ep = store.webhook("we_a").await.unwrap().unwrap();
    assert_eq!((ep.delivered_through, ep.attempt, ep.failing_since), (first.id, 0, None));

    // The next published one (the update in between is filtered out).
    let next = store.claim_webhook_deliveries("n1", later, later + Duration::seconds(30), 10, 1).await.unwrap();
    let second = next[0].events[0].clone();
    assert!(second.id > first.id);
    assert_eq!(second.data["slug"], "two");
    // A node that dies: its lease lapses and another takes over.
    let lapsed = later + Duration::seconds(31);
    let taken = store.claim_webhook_deliveries("n2", lapsed, lapsed + Duration::seconds(30), 10, 1).await.unwrap();
    assert_eq!(taken[0].events[0].id, second.id);
    assert!(
        store
            .finish_webhook_deliveries("n2", "we_a", &[(tried(second.id, 8, 500, lapsed), DeliveryOutcome::GiveUp)])
            .await
            .unwrap()
    );
    let third = store.claim_webhook_deliveries("n1", lapsed, lapsed + Duration::seconds(30), 10, 1).await.unwrap();
    assert_eq!(third[0].events[0].data["slug"], "three");
    assert!(
        store
            .finish_webhook_deliveries(
                "n1",
                "we_a",
                &[(tried(third[0].events[0].id, 1, 204, lapsed), DeliveryOutcome::Delivered)]
            )
            .await
            .unwrap()
    );
    assert!(store.claim_webhook_deliveries("n1", lapsed, lapsed, 10, 1).await.unwrap().is_empty());
    assert_eq!(store.webhooks_pending().await.unwrap(), 0);

    // Attempts, newest first.
    let attempts = store.webhook_attempts("we_a", 10).await.unwrap();
    let statuses: Vec<Option<u16>> = attempts.iter().map(|a| a.status).collect();
    assert_eq!(statuses, [Some(204), Some(500), Some(200), Some(500)]);

    // Replay from the first: all three again, in order.
    store.replay_webhook("we_a", EventId(first.id.number() - 1)).await.unwrap().expect("replayed");
    let mut seen = Vec::new();
    for _ in 0..3 {
        let c = store.claim_webhook_deliveries("n1", lapsed, lapsed + Duration::seconds(30), 10, 1).await.unwrap();
        let id = c[0].events[0].id;
        seen.push(c[0].events[0].data["slug"].as_str().unwrap().to_owned());
        store
            .finish_webhook_deliveries("n1", "we_a", &[(tried(id, 1, 200, lapsed), DeliveryOutcome::Delivered)])
            .await
            .unwrap();
    }
    assert_eq!(seen, ["one", "two", "three"]);
}

/// A run: the next events the filter admits, in id order, up to the run
/// asked for; its attempts are applied in order (a failure schedules the
/// retry of its own event, the ones before it are delivered) and the lease
/// is released; an attempt at an event no longer in flight ends the run.
pub async fn webhook_runs_are_claimed_and_recorded_in_order(store: &dyn Store) {
    let now = articles_hook(store).await;
    let slugs = ["r1", "r2", "r3", "r4", "r5"];
    for slug in slugs {
        store.upsert_articles(&[bare_article(slug)]).await.unwrap();
    }
    let lease = now + Duration::seconds(30);
    let claimed = store.claim_webhook_deliveries("n1", now, lease, 10, 3).await.unwrap();
    let run = &claimed[0].events;
    let got: Vec<&str> = run.iter().map(|e| e.data["slug"].as_str().unwrap()).collect();
    assert_eq!(got, ["r1", "r2", "r3"]);
    assert!(store.claim_webhook_deliveries("n2", now, lease, 10, 3).await.unwrap().is_empty(), "leased");

    let retry_at = now + Duration::seconds(5);
    let attempts = [
        (tried(run[0].id, 1, 200, now), DeliveryOutcome::Delivered),
        (tried(run[1].id, 1, 204, now), DeliveryOutcome::Delivered),
        (tried(run[2].id, 1, 503, now), DeliveryOutcome::Retry(retry_at)),
    ];
    assert!(store.finish_webhook_deliveries("n1", "we_a", &attempts).await.unwrap());
    let ep = store.webhook("we_a").await.unwrap().unwrap();
    assert_eq!((ep.delivered_through, ep.attempt, ep.next_attempt_at), (run[1].id, 1, Some(retry_at)));
    let statuses: Vec<Option<u16>> =
        store.webhook_attempts("we_a", 10).await.unwrap().iter().map(|a| a.status).collect();
    assert_eq!(statuses, [Some(503), Some(204), Some(200)], "newest first");
    // The same attempts again: their events are no longer in flight.
    assert!(!store.finish_webhook_deliveries("n1", "we_a", &attempts[..2]).await.unwrap());

    // Released: due at the retry, the run starts at the failed event.
    let later = retry_at + Duration::seconds(1);
    let again = store.claim_webhook_deliveries("n2", later, later + Duration::seconds(30), 10, 10).await.unwrap();
    let got: Vec<&str> = again[0].events.iter().map(|e| e.data["slug"].as_str().unwrap()).collect();
    assert_eq!((got.as_slice(), again[0].endpoint.attempt), (["r3", "r4", "r5"].as_slice(), 1));
    let rest: Vec<_> =
        again[0].events.iter().map(|e| (tried(e.id, 1, 200, later), DeliveryOutcome::Delivered)).collect();
    assert!(store.finish_webhook_deliveries("n2", "we_a", &rest).await.unwrap());
    assert_eq!(store.webhooks_pending().await.unwrap(), 0);

    // Delivered, then given up (failing since that attempt), then a 410.
    for slug in ["r6", "r7", "r8"] {
        store.upsert_articles(&[bare_article(slug)]).await.unwrap();
    }
    let run = store.claim_webhook_deliveries("n1", later, later + Duration::seconds(30), 10, 10).await.unwrap();
    let ids: Vec<EventId> = run[0].events.iter().map(|e| e.id).collect();
    let gave_up = later + Duration::seconds(2);
    let attempts = [
        (tried(ids[0], 1, 200, later), DeliveryOutcome::Delivered),
        (tried(ids[1], 8, 500, gave_up), DeliveryOutcome::GiveUp),
        (tried(ids[2], 1, 410, gave_up), DeliveryOutcome::Disable("gone".into())),
    ];
    assert!(store.finish_webhook_deliveries("n1", "we_a", &attempts).await.unwrap());
    let ep = store.webhook("we_a").await.unwrap().unwrap();
    assert_eq!((ep.delivered_through, ep.attempt, ep.next_attempt_at), (ids[1], 0, None));
    assert_eq!((ep.failing_since, ep.disabled.map(|d| d.1)), (Some(gave_up), Some("gone".to_owned())));
}

/// A ping goes to its endpoint only, not to the log; disabling (audited)
/// stops deliveries; re-enabling resumes them.
pub async fn webhook_pings_and_disabling(store: &dyn Store) {
    migrated(store).await;
    create_accounts(store, &["acme"]).await;
    let now = t0();
    store.create_webhook(&new_hook("we_a", "acme", EventFilter::default(), now), 10).await.unwrap();
    store.create_webhook(&new_hook("we_b", "acme", EventFilter::default(), now), 10).await.unwrap();
    let ping = store.ping_webhook("we_a", now).await.unwrap().expect("pinged");
    assert!(store.ping_webhook("we_nope", now).await.unwrap().is_none());
    assert!(store.event_page(EventId(0), &EventFilter::default(), 100).await.unwrap().events.is_empty());
    let lease = now + Duration::seconds(30);
    let claimed = store.claim_webhook_deliveries("n1", now, lease, 10, 1).await.unwrap();
    assert_eq!(claimed.len(), 1, "we_b gets no ping");
    assert_eq!(
        (claimed[0].endpoint.id.as_str(), claimed[0].events[0].id, claimed[0].events[0].kind),
        ("we_a", ping, EventType::Ping)
    );
    store
        .finish_webhook_deliveries("n1", "we_a", &[(tried(ping, 1, 410, now), DeliveryOutcome::Disable("410".into()))])
        .await
        .unwrap();
    assert!(store.webhook("we_a").await.unwrap().unwrap().disabled.is_some());
    assert!(store.claim_webhook_deliveries("n1", now, lease, 10, 1).await.unwrap().is_empty(), "disabled");
    let on = WebhookPatch { enabled: Some(true), ..WebhookPatch::default() };
    store.update_webhook("we_a", &on, now).await.unwrap();
    assert_eq!(store.claim_webhook_deliveries("n1", now, lease, 10, 1).await.unwrap()[0].events[0].id, ping, "again");

    let actor = Actor::Cli;
    let off = store.audited_disable_webhook("we_b", "abuse", &actor, now).await.unwrap().expect("disabled");
    assert_eq!(off.disabled.map(|d| d.1).as_deref(), Some("abuse"));
    let log = store.audit_log(None, 10).await.unwrap();
    assert_eq!(log[0].action, "webhook.disable");
}
