"""Typed errors for each family, from the real server, and the key kept out of sight."""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable

import httpx
import pytest

from mds_client import (
    APIError,
    AuthenticationError,
    Client,
    InvalidRequestError,
    MdsError,
    NotFoundError,
    RateLimitError,
    RetryPolicy,
    TransportError,
    UnavailableError,
)

from .conftest import Server

NO_RETRY = RetryPolicy(max_retries=0)


def assert_problem(exc: APIError, status: int, code: str) -> None:
    assert exc.status == status and exc.code == code
    assert exc.detail and exc.request_id
    assert exc.problem["code"] == code and exc.problem["status"] == status
    assert exc.meta.status == status
    assert code in str(exc) and str(status) in str(exc)


def test_invalid_request(client: Client) -> None:
    with pytest.raises(InvalidRequestError) as info:
        client.companies(limit=0)
    assert_problem(info.value, 400, "invalid_parameter")
    assert info.value.param == "limit"

    with pytest.raises(InvalidRequestError) as info:
        client.companies(search="x")
    assert info.value.param == "search"

    with pytest.raises(InvalidRequestError) as info:
        client.companies(cursor="not-a-cursor")
    assert_problem(info.value, 400, "invalid_cursor")
    assert info.value.param == "cursor"

    # a cursor is bound to its filters
    cursor = client.companies(exchange="nse", limit=5).next_cursor
    with pytest.raises(InvalidRequestError, match="invalid_cursor"):
        client.companies(exchange="bse", cursor=cursor)


def test_not_found(client: Client) -> None:
    with pytest.raises(NotFoundError) as info:
        client.article("no-such-article-anywhere")
    assert_problem(info.value, 404, "not_found")


def test_article_is_typed(client: Client) -> None:
    slugs = [
        "reliance-industries-posts-steady-quarter-as-retail-and-telecom-offset-2026-01-01",
        "hdfc-bank-loan-book-grows-as-deposit-mobilisation-picks-up-2026-01-15",
    ]
    first = client.article(slugs[0])
    assert first.slug == slugs[0] and first.body and isinstance(first.tags, list)
    assert first.published_at is None or first.published_at.tzinfo is not None
    assert first.remaining is not None and first.reset is not None
    no_sub = client.article(slugs[1])
    assert no_sub.subheadline is None  # absent in the import, null on the wire, None here


def test_usage_is_typed(client: Client) -> None:
    client.companies(limit=1)
    usage = client.usage()
    assert usage.tier == "pro" and usage.entitled is True and usage.environment in ("live", "test")
    assert usage.rate_limit_per_minute == 600
    assert usage.current_month.period_start.tzinfo is not None
    assert usage.current_month.period_start.day == 1
    assert usage.current_month.quota == 1_000_000
    assert usage.history == []
    assert usage.remaining is not None and usage.meta.limit == 600


def test_authentication_errors_never_show_the_key(server: Server) -> None:
    bad = "mds_live_" + "A" * 32 + "abcdef"
    c = Client(api_key=bad, base_url=server.base_url, retry=NO_RETRY)
    with pytest.raises(AuthenticationError) as info:
        c.companies()
    assert_problem(info.value, 401, "invalid_api_key")
    for text in (str(info.value), repr(info.value), repr(c), str(c), str(info.value.problem)):
        assert bad not in text and "AAAAAAAA" not in text
    c.close()

    with pytest.raises(AuthenticationError) as info:
        Client(api_key="not-a-key", base_url=server.base_url).usage()
    assert info.value.code == "invalid_api_key"


def test_revoked_key(server: Server, make_key: Callable[..., str]) -> None:
    key = make_key("pro")
    c = Client(api_key=key, base_url=server.base_url)
    prefix = c.usage().key_prefix
    assert key.startswith(prefix) and len(prefix) < len(key)
    server.mds("keys", "revoke", prefix)
    import time

    deadline = time.monotonic() + 10
    while True:
        try:
            c.usage()
        except AuthenticationError as exc:
            assert key not in str(exc) and key not in repr(exc)
            break
        assert time.monotonic() < deadline, "revocation did not take effect"
        time.sleep(0.2)


def test_missing_key_and_environment(
    monkeypatch: pytest.MonkeyPatch, server: Server, api_key: str
) -> None:
    monkeypatch.delenv("MDS_API_KEY", raising=False)
    with pytest.raises(ValueError, match="MDS_API_KEY"):
        Client()
    monkeypatch.setenv("MDS_API_KEY", api_key)
    monkeypatch.setenv("MDS_BASE_URL", server.base_url)
    with Client() as c:
        assert c.base_url == server.base_url
        assert c.usage().tier == "pro"
        assert api_key not in repr(c)


def test_rate_limited_from_a_tiny_tier(server: Server, make_key: Callable[..., str]) -> None:
    key = make_key("tiny", rate_limit_per_minute=2, quota=1000)
    c = Client(api_key=key, base_url=server.base_url, retry=NO_RETRY)
    with pytest.raises(RateLimitError) as info:
        for _ in range(5):
            c.usage()
    exc = info.value
    assert_problem(exc, 429, "rate_limited")
    assert exc.retry_after is not None and exc.retry_after > 0
    assert exc.violated_policies == ["minute"]
    assert key not in str(exc)


def test_quota_exceeded_is_not_waited_for(server: Server, make_key: Callable[..., str]) -> None:
    key = make_key("onequota", rate_limit_per_minute=600, quota=1)
    c = Client(api_key=key, base_url=server.base_url, retry=RetryPolicy(max_retries=3, max_delay=5))
    c.companies(limit=1)
    with pytest.raises(RateLimitError) as info:
        c.companies(limit=1)
    assert info.value.code == "quota_exceeded"
    assert info.value.violated_policies == ["month"]
    assert info.value.retry_after is not None and info.value.retry_after > 5


def test_unavailable_is_typed() -> None:
    # A real 503 needs a store outage; this one route of the family uses a fake.
    body = {
        "type": "/problems/unavailable", "title": "Unavailable", "status": 503,
        "detail": "the store is unreachable", "code": "unavailable", "request_id": "r1",
    }  # fmt: skip

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, json=body, headers={"Retry-After": "1"})

    c = Client(
        api_key="k", base_url="http://fake", retry=NO_RETRY, transport=httpx.MockTransport(handler)
    )
    with pytest.raises(UnavailableError) as info:
        c.usage()
    assert_problem(info.value, 503, "unavailable")
    assert info.value.retry_after == 1


def test_transport_error_is_typed_and_keyless(caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    key = "mds_live_" + "Z" * 38
    c = Client(
        api_key=key,
        base_url=f"http://127.0.0.1:{port}",
        retry=RetryPolicy(max_retries=1, backoff=0.01),
    )
    with caplog.at_level(logging.DEBUG), pytest.raises(TransportError) as info:
        c.usage()
    assert isinstance(info.value, MdsError)
    assert key not in str(info.value) and key not in repr(info.value)
    assert info.value.__cause__ is None
    assert "retry 1/1" in caplog.text and key not in caplog.text


def test_unknown_parameter_and_key_in_query(client: Client, api_key: str) -> None:
    # Filters are typed, but a typo still reaches the server at run time, which names it.
    with pytest.raises(InvalidRequestError) as info:
        client.companies(industy="Banks")  # type: ignore[call-arg]
    assert_problem(info.value, 400, "unknown_parameter")
    assert info.value.param == "industy" and "industry" in info.value.detail

    # A key pasted into a filter is refused, and shown nowhere.
    with pytest.raises(InvalidRequestError) as info:
        client.companies(search=api_key)
    assert_problem(info.value, 400, "api_key_in_query")
    for text in (str(info.value), repr(info.value), str(info.value.problem)):
        assert api_key not in text
