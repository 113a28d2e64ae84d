"""Retries of 429 and 503 that honour Retry-After, with a cap and jitter."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import httpx
import pytest

from mds_client import Client, RateLimitError, RetryPolicy, UnavailableError

from .conftest import Server


def test_policy_honours_retry_after_with_jitter_and_cap() -> None:
    p = RetryPolicy(max_retries=3, backoff=0.5, max_delay=10, jitter=0.2)
    delays = [p.delay(1, 2.0) for _ in range(200)]
    assert all(d is not None and 2.0 <= d <= 2.4 for d in delays)
    assert len(set(delays)) > 1  # jittered
    assert p.delay(1, 11.0) is None  # longer than the cap: give up at once
    assert p.delay(4, 1.0) is None  # out of retries
    backoff = [p.delay(3, None) for _ in range(100)]
    assert all(d is not None and 1.0 <= d <= 2.0 for d in backoff)
    assert RetryPolicy(max_retries=0).delay(1, 1.0) is None


@pytest.mark.slow
def test_retry_after_a_real_429_from_a_tiny_tier(
    server: Server, make_key: Callable[..., str], caplog: pytest.LogCaptureFixture
) -> None:
    key = make_key("tiny", rate_limit_per_minute=2, quota=1000)
    impatient = Client(api_key=key, base_url=server.base_url, retry=RetryPolicy(max_retries=0))
    with pytest.raises(RateLimitError) as info:
        for _ in range(5):
            impatient.usage()
    retry_after = info.value.retry_after
    assert retry_after is not None and 0 < retry_after <= 60

    patient = Client(
        api_key=key,
        base_url=server.base_url,
        retry=RetryPolicy(max_retries=2, max_delay=65, jitter=0.05),
    )
    t0 = time.monotonic()
    with caplog.at_level(logging.INFO, logger="mds_client"):
        usage = patient.usage()
    waited = time.monotonic() - t0
    assert usage.tier == "tiny" and usage.rate_limit_per_minute == 2
    assert waited >= retry_after - 1.5
    assert "got 429; retry 1/2" in caplog.text
    assert key not in caplog.text
    assert usage.remaining is not None


def test_503_is_retried_and_retry_after_honoured() -> None:
    calls: list[float] = []
    problem = {
        "type": "/problems/unavailable", "title": "Unavailable", "status": 503,
        "detail": "the store is unreachable", "code": "unavailable", "request_id": "r",
    }  # fmt: skip
    usage = {
        "key_prefix": "mds_live_abc", "tier": "pro", "plan_tier": "pro", "entitled": True,
        "environment": "live", "rate_limit_per_minute": 600, "history": [],
        "current_month": {"period_start": "2026-11-01T00:00:00+00:00", "requests": 3,
                          "quota": 10, "remaining": 7},
    }  # fmt: skip

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(time.monotonic())
        if len(calls) < 3:
            return httpx.Response(503, json=problem, headers={"Retry-After": "0.2"})
        return httpx.Response(
            200, json=usage, headers={"X-RateLimit-Remaining": "5", "X-RateLimit-Reset": "12"}
        )

    c = Client(api_key="k", base_url="http://fake", transport=httpx.MockTransport(handler))
    got = c.usage()
    assert len(calls) == 3 and calls[1] - calls[0] >= 0.19
    assert got.remaining == 5 and got.reset == 12
    assert got.current_month.period_start.utcoffset() is not None

    calls.clear()
    c = Client(api_key="k", base_url="http://fake", retry=RetryPolicy(max_retries=1),
               transport=httpx.MockTransport(handler))  # fmt: skip
    with pytest.raises(UnavailableError):
        c.usage()
    assert len(calls) == 2


def test_async_client_retries_and_raises_typed_errors() -> None:
    import asyncio

    from mds_client import AsyncClient, NotFoundError

    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        if request.url.path == "/v1/news/gone":
            return httpx.Response(
                404,
                json={
                    "code": "not_found",
                    "status": 404,
                    "detail": "no such article",
                    "request_id": "q",
                },
            )
        if len(calls) == 1:
            return httpx.Response(
                429,
                json={
                    "code": "rate_limited",
                    "status": 429,
                    "detail": "slow down",
                    "violated_policies": ["minute"],
                },  # fmt: skip
                headers={"Retry-After": "0.1"},
            )
        page = {"data": [], "has_more": False, "next_cursor": None}
        return httpx.Response(200, json=page, headers={"X-RateLimit-Remaining": "3"})

    async def main() -> None:
        async with AsyncClient(
            api_key="k", base_url="http://fake", transport=httpx.MockTransport(handler)
        ) as ac:
            page = await ac.companies(limit=1)
            assert page.remaining == 3 and page.data == []
            assert repr(ac) == "AsyncClient(base_url='http://fake', api_key='***')"
            with pytest.raises(NotFoundError) as info:
                await ac.article("gone")
            assert info.value.request_id == "q"

    asyncio.run(main())
    assert calls == ["/v1/companies", "/v1/companies", "/v1/news/gone"]


class _Dropper:
    """A real loopback HTTP server that reads each request whole, counts it by
    method, then either closes the connection without an answer (``answer``
    None: the client cannot know whether the request was acted on) or sends
    ``answer`` (a status with a problem body and ``Retry-After: 0``)."""

    def __init__(self, answer: int | None) -> None:
        import socket
        import threading

        self.answer = answer
        self.seen: list[str] = []
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.base_url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        import json

        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                head, _, body = data.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(body) < length:
                    body += conn.recv(65536)
                self.seen.append(head.split(b" ", 1)[0].decode())
                if self.answer is not None:
                    code = "unavailable" if self.answer == 503 else "rate_limited"
                    problem = json.dumps(
                        {"code": code, "status": self.answer, "detail": "d", "request_id": "r"}
                    ).encode()
                    status = (
                        b"HTTP/1.1 %d X\r\nContent-Type: application/problem+json\r\n" % self.answer
                    )
                    conn.sendall(
                        status + b"Retry-After: 0\r\nConnection: close\r\n"
                        b"Content-Length: %d\r\n\r\n%s" % (len(problem), problem)
                    )

    def close(self) -> None:
        self._sock.close()


def test_a_post_that_may_have_been_acted_on_is_not_sent_again() -> None:
    from mds_client import TransportError

    policy = RetryPolicy(max_retries=2, backoff=0.01, max_delay=1)
    dropped = _Dropper(None)
    c = Client(api_key="k", base_url=dropped.base_url, retry=policy)
    with pytest.raises(TransportError, match="not retried: the service may have acted on it"):
        c.create_webhook("https://hooks.example/a")
    assert dropped.seen == ["POST"], "sent once: a second could make a second endpoint"
    with pytest.raises(TransportError):
        c.delete_webhook("we_1")
    assert dropped.seen == ["POST"] + ["DELETE"] * 3, "a DELETE is repeated: it sets a state"
    dropped.close()

    unavailable = _Dropper(503)
    c = Client(api_key="k", base_url=unavailable.base_url, retry=policy)
    with pytest.raises(UnavailableError):
        c.rotate_webhook_secret("we_1")
    assert unavailable.seen == ["POST"]
    unavailable.close()

    limited = _Dropper(429)
    c = Client(api_key="k", base_url=limited.base_url, retry=policy)
    with pytest.raises(RateLimitError):
        c.test_webhook("we_1")
    assert limited.seen == ["POST"] * 3, "a 429 is refused before any work: safe to send again"
    limited.close()


def test_a_post_that_never_connected_is_sent_again(caplog: pytest.LogCaptureFixture) -> None:
    import socket

    from mds_client import TransportError

    with socket.create_server(("127.0.0.1", 0)) as s:
        port = s.getsockname()[1]  # closed when the block ends: nothing listens there
    c = Client(
        api_key="k",
        base_url=f"http://127.0.0.1:{port}",
        retry=RetryPolicy(max_retries=1, backoff=0.01),
    )
    with caplog.at_level(logging.INFO, logger="mds_client"), pytest.raises(TransportError):
        c.create_webhook("https://hooks.example/a")
    assert "POST /v1/webhooks got ConnectError; retry 1/1" in caplog.text
