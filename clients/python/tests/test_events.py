"""Events (contract 11): the log and the stream against a real `mds demo`,
changes made while a stream is open with `mds import news`, the typed errors,
the SSE parser, and `verify_webhook` against the Standard Webhooks example."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import itertools
import json
import logging
import queue
import threading
import time
import uuid
from base64 import b64decode, b64encode
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from typing import Any

import httpx
import pytest

from mds_client import (
    AsyncClient,
    AuthenticationError,
    Client,
    Event,
    EventPage,
    EventsExpiredError,
    ExpiredError,
    InvalidRequestError,
    RateLimitError,
    RetryPolicy,
    TooManyStreamsError,
    WebhookVerificationError,
    verify_webhook,
)
from mds_client._stream import SseParser

from .conftest import Server, key_maker, running_demo

PUBLISHED = "article.published"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A demo of this module's own: the articles it imports would change
    what the other modules count."""
    with running_demo(tmp_path_factory.mktemp("mds-events")) as server:
        yield server


@pytest.fixture(scope="module")
def make_key(server: Server) -> Callable[..., str]:
    return key_maker(server)


def import_article(server: Server, **fields: Any) -> str:
    """Imports one new article with `mds import news`; its slug."""
    slug = f"client-events-{uuid.uuid4().hex[:12]}"
    article = {"slug": slug, "headline": f"Events test {slug}", "tags": ["client-test"], **fields}
    path = server.workdir / f"{slug}.jsonl"
    path.write_text(json.dumps(article) + "\n")
    server.mds("import", "news", str(path))
    return slug


def reading(events: Iterator[Event]) -> Callable[[float], Event]:
    """Starts reading the stream's next event on a thread; call the result
    with the seconds to wait for it (the test fails after them)."""
    out: queue.Queue[Event | BaseException] = queue.Queue()

    def read() -> None:
        try:
            out.put(next(events))
        except BaseException as exc:  # handed to the test
            out.put(exc)

    threading.Thread(target=read, daemon=True).start()

    def get(seconds: float) -> Event:
        try:
            got = out.get(timeout=seconds)
        except queue.Empty:
            pytest.fail(f"no event within {seconds} s")
        if isinstance(got, BaseException):
            raise got
        return got

    return get


def next_within(events: Iterator[Event], seconds: float) -> Event:
    """The stream's next event; fails after ``seconds``."""
    return reading(events)(seconds)


def last_id(client: Client, **filters: Any) -> str:
    """The id of the newest event of the log (with ``filters``)."""
    events = client.events.all(limit=200, **filters)
    assert events, "the demo's log is empty"
    return events[-1].id


# --- the log ---------------------------------------------------------------


def test_log_walk_equals_its_pages(client: Client) -> None:
    walked = client.events.all(limit=200)
    pages: list[EventPage] = []
    cursor = None
    while True:
        page = client.events(limit=200, cursor=cursor)
        pages.append(page)
        if not page.has_more:
            break
        cursor = page.next_cursor
    assert len(pages) > 1 and pages[-1].next_cursor is None
    assert [e.id for e in walked] == [e.id for p in pages for e in p.data]
    ids = [int(e.id.removeprefix("evt_"), 16) for e in walked]
    assert ids == sorted(set(ids)), "ids increase"
    assert {e.type for e in walked} >= {PUBLISHED, "company.changed"}
    first = walked[0]
    assert first.created_at.tzinfo is not None and isinstance(first.data, dict)
    assert pages[0].remaining is not None and pages[0].request_id

    # since: what came after an event, oldest first
    after = client.events.all(since=walked[-5].id)
    assert [e.id for e in after] == [e.id for e in walked[-4:]]


def test_log_filters(client: Client) -> None:
    articles = client.events.all(types=[PUBLISHED], limit=200)
    assert articles and all(e.type == PUBLISHED for e in articles)
    assert client.events.all(types=PUBLISHED) == articles  # a str as the comma list
    article = articles[0].article
    assert article is not None and article.slug and article.body is None

    isin = "INE002A01018"  # Reliance: a company event and articles
    about = client.events.all(isin=isin)
    assert about and {e.type for e in about} >= {PUBLISHED, "company.changed"}
    for e in about:
        got = e.data["company"]["isin"] if e.type == "company.changed" else e.data["isin"]
        assert got == isin

    tagged = client.events.all(tag="earnings", types=[PUBLISHED, "article.updated"])
    assert tagged and all("earnings" in e.data["tags"] for e in tagged)


def test_log_bad_since_is_a_typed_400(client: Client) -> None:
    with pytest.raises(InvalidRequestError) as info:
        client.events(since="evt_zz")
    assert info.value.status == 400 and info.value.code == "invalid_cursor"
    assert info.value.param == "since"
    with pytest.raises(InvalidRequestError, match="invalid_cursor"):
        client.events(cursor="not-a-cursor")


def test_log_async_and_dataframe(server: Server, api_key: str) -> None:
    async def main() -> tuple[list[Event], EventPage]:
        async with AsyncClient(api_key=api_key, base_url=server.base_url) as c:
            every = await c.events.all(types=[PUBLISHED])
            page = await c.events(types=[PUBLISHED], limit=3)
            return every, page

    every, page = asyncio.run(main())
    assert page.data == every[:3] and page.has_more
    df = page.to_pandas()
    assert list(df.columns) == ["id", "type", "created_at", "data"] and len(df) == 3
    assert str(df["created_at"].dtype) == "datetime64[ns, UTC]"


# --- the stream ------------------------------------------------------------


def test_stream_receives_an_import(client: Client, server: Server) -> None:
    # Without a position, the stream starts at the next event committed.
    events = client.stream_events(types=[PUBLISHED])
    first = reading(events)
    time.sleep(3)  # the stream is open well before the import commits
    slug = import_article(server)
    got = first(30)
    assert got.type == PUBLISHED and got.data["slug"] == slug
    assert got.article is not None and got.article.tags == ["client-test"]
    assert got.id == last_id(client, types=[PUBLISHED])
    events.close()


def test_stream_resumes_from_an_id_in_order(
    client: Client, server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "mds_client")
    log = client.events.all(types=[PUBLISHED])
    assert len(log) >= 5
    events = client.stream_events(since=log[-5].id, types=[PUBLISHED], silence=1.0)
    got = [next_within(events, 30) for _ in range(4)]
    assert [e.id for e in got] == [e.id for e in log[-4:]]
    # silent for longer than `silence`: it reconnects after the last event
    # received (Last-Event-ID), and the next change comes once, in order
    new_event = reading(events)
    time.sleep(2.5)
    slug = import_article(server)
    new = new_event(30)
    assert new.data["slug"] == slug and int(new.id[4:], 16) > int(log[-1].id[4:], 16)
    assert f"failed: ReadTimeout; resuming after {log[-1].id}" in caplog.text
    events.close()


def test_stream_async(server: Server, api_key: str, client: Client) -> None:
    since = client.events.all(types=[PUBLISHED])[-3].id

    async def main() -> list[Event]:
        async with AsyncClient(api_key=api_key, base_url=server.base_url) as c:
            stream = c.stream_events(since, types=[PUBLISHED])
            got = [e async for e in _take(stream, 2)]
            await stream.aclose()
            return got

    got = asyncio.run(asyncio.wait_for(main(), 30))
    assert [e.id for e in got] == [e.id for e in client.events.all(since=since, types=[PUBLISHED])]


async def _take(stream: Any, n: int) -> Any:
    async for e in stream:
        yield e
        n -= 1
        if n == 0:
            return


def test_stream_errors_end_it(client: Client, make_key: Callable[..., str], server: Server) -> None:
    with pytest.raises(InvalidRequestError) as info:
        next(client.stream_events(since="evt_zz"))
    assert info.value.code == "invalid_cursor"

    # at most 2 open streams per key: the third is a typed 429, not retried
    key = make_key("pro")
    with Client(api_key=key, base_url=server.base_url) as c:
        since = client.events.all(types=[PUBLISHED])[-2].id
        open_ = [c.stream_events(since, types=[PUBLISHED]) for _ in range(2)]
        for s in open_:
            assert next_within(s, 30)  # both connected, each past its first event
        with pytest.raises(TooManyStreamsError) as too_many:
            next(c.stream_events())
        err = too_many.value
        assert isinstance(err, RateLimitError) and err.status == 429
        assert err.code == "too_many_streams" and err.violated_policies == ["streams"]
        for s in open_:
            s.close()


def test_errors_of_the_event_routes_with_a_fake() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        code, status = (
            ("events_expired", 410)
            if request.url.path == "/v1/events"
            else ("too_many_streams", 429)
        )
        body = {"code": code, "status": status, "detail": "d", "request_id": "r"}
        return httpx.Response(status, json=body, headers={"Retry-After": "1"})

    c = Client(api_key="k", base_url="http://fake", transport=httpx.MockTransport(handler))
    with pytest.raises(EventsExpiredError) as info:
        c.events(since="evt_0000000000000001")
    assert isinstance(info.value, ExpiredError) and info.value.status == 410
    with pytest.raises(TooManyStreamsError):
        next(c.stream_events())


def test_event_action_reads_each_corporate_action_event() -> None:
    action = {
        "id": "ca_0123456789abcdef", "isin": "INE476A01014", "symbol": "CANBK", "type": "split",
        "ex_date": "2024-05-15", "record_date": None, "purpose": "Face Value Split",
        "sources": ["nse"], "factor": 0.2,
        "split": {"face_value_from": 10, "face_value_to": 2, "new_isin": None},
    }  # fmt: skip
    event = {"id": "evt_0000000000000001", "created_at": "2026-01-01T00:00:00Z"}
    added = Event.from_json({**event, "type": "corporate_action.added", "data": action})
    gone = {"action": action, "replaced_by": ["ca_1"]}
    removed = Event.from_json({**event, "type": "corporate_action.removed", "data": gone})
    assert added.action is not None and removed.action == added.action
    assert added.action.id == "ca_0123456789abcdef" and added.action.type == "split"
    assert removed.data["replaced_by"] == ["ca_1"]
    assert Event.from_json({**event, "type": "company.changed", "data": {}}).action is None


def test_sse_parser() -> None:
    frames = (
        ": keep-alive\n\n"
        'id: evt_1\nevent: ping\ndata: {"a":\ndata: 1}\n\n'
        "id: evt_2\r\nevent: x\r\ndata:{}\r\n\r\n"
        "data: tail"
    )
    for size in (1, 2, 7, len(frames)):
        parser = SseParser()
        got = [d for i in range(0, len(frames), size) for d in parser.feed(frames[i : i + size])]
        assert got == ['{"a":\n1}', "{}"], size
    assert parser.feed("\n\n") == ["tail"]


# --- verify_webhook --------------------------------------------------------

# The Standard Webhooks specification's published example.
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
MSG_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
TIMESTAMP = 1614265330
BODY = '{"test": 2432232314}'
SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def sign(secret: str, msg_id: str, ts: int, body: str) -> str:
    """Signs as the service does (independent of the code under test)."""
    key = b64decode(secret.removeprefix("whsec_"))
    mac = hmac.new(key, f"{msg_id}.{ts}.{body}".encode(), hashlib.sha256).digest()
    return "v1," + b64encode(mac).decode()


def headers(**overrides: str | None) -> dict[str, str]:
    h: dict[str, str | None] = {
        "webhook-id": MSG_ID,
        "webhook-timestamp": str(TIMESTAMP),
        "webhook-signature": SIGNATURE,
    }
    h.update({k.replace("_", "-"): v for k, v in overrides.items()})
    return {k: v for k, v in h.items() if v is not None}


def refused(why: str, *args: Any, **kwargs: Any) -> None:
    with pytest.raises(WebhookVerificationError, match=why):
        verify_webhook(*args, **kwargs)


def test_verify_webhook_accepts_the_published_example() -> None:
    assert sign(SECRET, MSG_ID, TIMESTAMP, BODY) == SIGNATURE
    assert verify_webhook(SECRET, headers(), BODY, now=TIMESTAMP) == {"test": 2432232314}
    # bytes, httpx.Headers, upper-case names, a datetime, the secret without its prefix
    upper = {k.upper(): v for k, v in headers().items()}
    at = datetime.fromtimestamp(TIMESTAMP, tz=timezone.utc)
    assert verify_webhook(SECRET, upper, BODY.encode(), now=at)
    assert verify_webhook(SECRET, httpx.Headers(headers()), BODY, now=TIMESTAMP)
    assert verify_webhook(SECRET[6:], headers(), BODY, now=TIMESTAMP)


def test_verify_webhook_two_signatures_one_match() -> None:
    other = "whsec_" + b64encode(b"secret-of-a-rotated-endpoint").decode()
    both = f"{sign(other, MSG_ID, TIMESTAMP, BODY)} {SIGNATURE}"
    assert verify_webhook(SECRET, headers(webhook_signature=both), BODY, now=TIMESTAMP)
    assert verify_webhook(other, headers(webhook_signature=both), BODY, now=TIMESTAMP)
    noise = f"v2,{SIGNATURE[3:]} v1,!!! v1 {SIGNATURE}"
    assert verify_webhook(SECRET, headers(webhook_signature=noise), BODY, now=TIMESTAMP)


def test_verify_webhook_refuses() -> None:
    now = TIMESTAMP
    refused("no signature matches", SECRET, headers(), '{"test": 2432232315}', now=now)
    refused("no signature", SECRET, headers(webhook_id="msg_other"), BODY, now=now)
    refused("no signature", SECRET, headers(webhook_timestamp=str(now + 1)), BODY, now=now)
    refused("no signature", "whsec_c2VjcmV0", headers(), BODY, now=now)
    for sig in ("v1,", "v1,dawfeoifkpqwoekfpqoekf", SIGNATURE[:8], f"v2,{SIGNATURE[3:]}"):
        refused("no signature", SECRET, headers(webhook_signature=sig), BODY, now=now)
    # more than 5 minutes off, either way; the clock by default
    refused("too old", SECRET, headers(), BODY, now=now + 301)
    refused("in the future", SECRET, headers(), BODY, now=now - 301)
    assert verify_webhook(SECRET, headers(), BODY, now=now + 299)
    refused("too old", SECRET, headers(), BODY)
    fresh = int(time.time())
    sig = sign(SECRET, MSG_ID, fresh, BODY)
    assert verify_webhook(
        SECRET, headers(webhook_timestamp=str(fresh), webhook_signature=sig), BODY
    )
    # missing or malformed headers and secrets
    for name in ("webhook-id", "webhook-timestamp", "webhook-signature"):
        refused(f"missing {name}", SECRET, headers(**{name.replace("-", "_"): None}), BODY)
    refused("not Unix seconds", SECRET, headers(webhook_timestamp="hello"), BODY, now=now)
    for secret in ("", "whsec_", "whsec_not base64!"):
        refused("secret", secret, headers(), BODY, now=now)
    sig = sign(SECRET, MSG_ID, now, "not json")
    refused("not JSON", SECRET, headers(webhook_signature=sig), "not json", now=now)


def test_closing_stops_a_stream(client: Client) -> None:
    since = client.events.all(types=[PUBLISHED])[-3].id
    with contextlib.closing(client.stream_events(since, types=[PUBLISHED])) as stream:
        got = list(itertools.islice(stream, 2))
    assert len(got) == 2


def test_stream_reconnects_with_last_event_id_with_a_fake() -> None:
    """503 is retried; a stream that ends is resumed after its last event
    (Last-Event-ID); another error ends it."""
    seen: list[tuple[str | None, str | None]] = []

    def frame(n: int) -> str:
        event = {"id": f"evt_{n:016x}", "type": "ping", "created_at": "2026-11-26T00:00:00Z"}
        return f"id: {event['id']}\nevent: ping\ndata: {json.dumps({**event, 'data': {}})}\n\n"

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((request.headers.get("last-event-id"), request.url.params.get("types")))
        calls = len(seen)
        if calls == 1:
            return httpx.Response(503, json={"code": "unavailable", "status": 503, "detail": "d"})
        events = {2: [1, 2], 3: [3]}.get(calls)  # each connection ends after its events
        if events is not None:
            body = ": keep-alive\n\n" + "".join(frame(n) for n in events)
            return httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})
        return httpx.Response(401, json={"code": "invalid_api_key", "status": 401, "detail": "d"})

    retry = RetryPolicy(backoff=0.01, max_delay=0.05)
    c = Client(
        api_key="k", base_url="http://fake", transport=httpx.MockTransport(handler), retry=retry
    )
    got: list[str] = []
    with pytest.raises(AuthenticationError):
        for e in c.stream_events("evt_0000000000000000", types=["ping", "article.published"]):
            got.append(e.id)
    assert got == [f"evt_{n:016x}" for n in (1, 2, 3)]
    types = "ping,article.published"
    assert seen == [
        ("evt_0000000000000000", types),  # 503: retried from the same position
        ("evt_0000000000000000", types),  # events 1 and 2, then the end
        ("evt_0000000000000002", types),  # resumed after 2: event 3
        ("evt_0000000000000003", types),  # resumed after 3: 401 ends it
    ]
