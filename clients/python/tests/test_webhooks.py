"""Webhook endpoints (contract 11.2) against a real `mds demo`: create (the
secret shown once), list, get, update, rotate, test, attempts, replay,
delete; what is refused, typed; the sync and async clients alike."""

from __future__ import annotations

import asyncio

import pytest

from mds_client import AsyncClient, Client, InvalidRequestError, NotFoundError, WebhookEndpoint

from .conftest import Server

URL = "https://hooks.example.com/mds"


def test_endpoint_lifecycle(client: Client) -> None:
    created = client.create_webhook(
        URL, types=["article.published"], tickers=["RELIANCE"], description="pytest"
    )
    assert created.id.startswith("we_") and created.url == URL
    assert created.secret is not None and created.secret.startswith("whsec_")
    assert created.secret not in repr(created), "the secret stays out of repr"
    assert created.types == ["article.published"] and created.tickers == ["RELIANCE"]
    assert created.status == "enabled" and created.description == "pytest"

    listed = client.webhooks()
    assert [e.id for e in listed] == [created.id] and listed[0].secret is None
    got = client.webhook(created.id)
    assert got.id == created.id and got.secret is None and got.request_id

    updated = client.update_webhook(created.id, description="renamed", tags=["results"])
    assert updated.description == "renamed" and updated.tags == ["results"]
    assert updated.types == ["article.published"], "fields not given are kept"

    rotated = client.rotate_webhook_secret(created.id, expires_in=60)
    assert rotated.secret is not None and rotated.secret.startswith("whsec_")
    assert rotated.secret != created.secret

    ping = client.test_webhook(created.id)
    assert ping.startswith("evt_")
    attempts = client.webhook_attempts(created.id)
    assert all(a.event_id.startswith("evt_") for a in attempts)

    since = client.events(limit=1).data[0].id
    replayed = client.replay_webhook(created.id, since)
    assert isinstance(replayed, WebhookEndpoint) and replayed.id == created.id

    client.delete_webhook(created.id)
    with pytest.raises(NotFoundError):
        client.webhook(created.id)
    assert client.webhooks() == []


def test_refusals_are_typed(client: Client) -> None:
    with pytest.raises(InvalidRequestError) as info:
        client.create_webhook("http://hooks.example.com/mds")  # https only
    assert info.value.status == 400 and info.value.param == "url"
    with pytest.raises(InvalidRequestError):
        client.create_webhook("https://127.0.0.1/mds")  # loopback
    with pytest.raises(NotFoundError):
        client.webhook("we_nosuchendpoint")


def test_async(server: Server, api_key: str) -> None:
    async def main() -> tuple[WebhookEndpoint, list[WebhookEndpoint], list[WebhookEndpoint]]:
        async with AsyncClient(api_key=api_key, base_url=server.base_url) as c:
            created = await c.create_webhook(URL, isins=["INE002A01018"])
            listed = await c.webhooks()
            await c.delete_webhook(created.id)
            return created, listed, await c.webhooks()

    created, listed, after = asyncio.run(main())
    assert created.isins == ["INE002A01018"] and [e.id for e in listed] == [created.id]
    assert after == []
