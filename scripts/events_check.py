"""Events (API.md section 11) through clients from outside the project,
against a real `mds demo` started with `--webhooks-allow-private` (so a
receiver on loopback may be reached over http):

- Webhook deliveries verified by the Standard Webhooks reference library
  (`standardwebhooks` from PyPI): a `ping` from `POST /v1/webhooks/{id}/test`
  arrives signed; after a rotation both the new and the old secret verify
  the next delivery (the old one signs beside the new for `expires_in`);
  a body changed by one byte does not verify.
- The stream through an EventSource client (`sseclient-py`): resumed with
  `Last-Event-ID`, it carries the log's next events in order, with their
  ids and types; a third stream of the key is `429 too_many_streams` and is
  not counted in `/v1/usage` (11.5).
- `GET /v1/events` answers `Cache-Control: private, no-cache` (11.5).

Reads MDS_BASE_URL and MDS_API_KEY; exits non-zero with the reason on the
first check that fails.
"""

from __future__ import annotations

import http.server
import json
import os
import queue
import threading
import time
import urllib.error
import urllib.request
from typing import Any

import requests
import sseclient  # type: ignore[import-untyped]
from standardwebhooks import Webhook, WebhookVerificationError  # type: ignore[import-untyped]

BASE = os.environ["MDS_BASE_URL"]
KEY = os.environ["MDS_API_KEY"]
AUTH = {"Authorization": f"Bearer {KEY}"}

Delivery = tuple[dict[str, str], bytes]
received: queue.Queue[Delivery] = queue.Queue()


class Receiver(http.server.BaseHTTPRequestHandler):
    """A webhook receiver: queues each POST's headers and body, answers 204."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        received.put(({k.lower(): v for k, v in self.headers.items()}, body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


def api(method: str, path: str, body: Any = None) -> tuple[int, dict[str, str], Any]:
    """One request to mds: its status, headers and JSON body (or None)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(BASE + path, data=data, method=method, headers=AUTH)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            raw = r.read()
            return r.status, dict(r.headers), json.loads(raw) if raw else None
    except urllib.error.HTTPError as e:
        raw = e.read()
        return e.code, dict(e.headers), json.loads(raw) if raw else None


def check(ok: bool, what: str) -> None:
    if not ok:
        raise SystemExit(f"FAILED: {what}")
    print(f"ok: {what}")


def next_ping(event_id: str) -> Delivery:
    """The delivery of event `event_id` (others, such as retries, skipped)."""
    deadline = time.monotonic() + 10
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise SystemExit(f"FAILED: no delivery of {event_id} within 10 s")
        headers, body = received.get(timeout=left)
        if (
            json.loads(body).get("id") == event_id
            or headers.get("webhook-id") == event_id
        ):
            return headers, body


def webhooks() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    status, _, created = api("POST", "/v1/webhooks", {"url": url})
    # Never print the body: it holds the endpoint's secret.
    check(status == 201, f"endpoint created for {url} ({status})")
    hook, old_secret = created["id"], created["secret"]
    try:
        status, _, sent = api("POST", f"/v1/webhooks/{hook}/test", {})
        check(status == 202 or status == 200, f"test ping queued ({status})")
        headers, body = next_ping(sent["event_id"])
        payload = Webhook(old_secret).verify(body, headers)
        check(
            payload["type"] == "ping",
            "the reference library verifies a delivery and reads its body",
        )
        try:
            Webhook(old_secret).verify(body.replace(b"ping", b"pong", 1), headers)
        except WebhookVerificationError:
            check(True, "a body changed by one byte does not verify")
        else:
            check(False, "a body changed by one byte does not verify")

        status, _, rotated = api(
            "POST", f"/v1/webhooks/{hook}/rotate-secret", {"expires_in": 60}
        )
        check(status == 200 and rotated["secret"] != old_secret, "the secret rotated")
        status, _, sent = api("POST", f"/v1/webhooks/{hook}/test", {})
        headers, body = next_ping(sent["event_id"])
        Webhook(rotated["secret"]).verify(body, headers)
        Webhook(old_secret).verify(body, headers)
        check(
            True, "after a rotation, the new and the old secret both verify a delivery"
        )
    finally:
        api("DELETE", f"/v1/webhooks/{hook}")
        server.shutdown()


def requests_this_month() -> int:
    status, _, usage = api("GET", "/v1/usage")
    check(status == 200, "usage read")
    return int(usage["current_month"]["requests"])


def stream() -> None:
    status, headers, page = api("GET", "/v1/events?limit=5")
    check(status == 200 and len(page["data"]) >= 3, "the log holds events")
    cc = {k.lower(): v for k, v in headers.items()}.get("cache-control")
    check(cc == "private, no-cache", f"GET /v1/events: Cache-Control {cc!r}")
    first, expected = page["data"][0], page["data"][1:3]

    def open_stream(last_event_id: str | None) -> requests.Response:
        h = {**AUTH, "Accept": "text/event-stream"}
        if last_event_id:
            h["Last-Event-ID"] = last_event_id
        return requests.get(
            f"{BASE}/v1/events/stream", headers=h, stream=True, timeout=10
        )

    one = open_stream(first["id"])
    check(one.status_code == 200, f"stream opened ({one.status_code})")
    events = sseclient.SSEClient(one).events()
    got = []
    for ev in events:
        got.append((ev.id, ev.event, json.loads(ev.data)["id"]))
        if len(got) == len(expected):
            break
    want = [(e["id"], e["type"], e["id"]) for e in expected]
    check(
        got == want,
        f"resumed with Last-Event-ID, the stream carries the next events in order: {got}",
    )

    two = open_stream(None)
    check(two.status_code == 200, "a second stream of the key opens")
    before = requests_this_month()
    third = open_stream(None)
    problem = third.json()
    check(
        third.status_code == 429 and problem.get("code") == "too_many_streams",
        f"a third stream is 429 too_many_streams ({third.status_code} {problem.get('code')})",
    )
    check(
        "retry-after" in {k.lower() for k in third.headers}, "the 429 says Retry-After"
    )
    after = requests_this_month()
    # `/v1/usage` itself is free (section 3): only the streams count.
    check(after == before, f"the refused stream is not counted ({before} then {after})")
    one.close()
    two.close()


if __name__ == "__main__":
    webhooks()
    stream()
    print("all events checks passed")
