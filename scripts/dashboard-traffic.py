"""Traffic for scripts/prometheus-check.sh: a steady mix of calls against a
running mds, so that every panel of deploy/grafana/mds-dashboard.json has
something to show. Loopback only; bounded in time; Python 3 standard library.

Usage: python3 scripts/dashboard-traffic.py BASE SECONDS MODE KEY SLOW_KEY QUOTA_KEY
  BASE       http://127.0.0.1:PORT of the node
  MODE       `check`: also a flood of made-up keys, beyond the node's key
             lookup budget (503s, mds_key_lookups_throttled_total);
             `healthy`: what a healthy node sees (callers' mistakes and
             limits included, no flood)
  KEY        a key on a tier with room for the whole run (the catalog reads)
  SLOW_KEY   a key on a tier of 10 a minute (refused: rate_limited)
  QUOTA_KEY  a key on a tier with a tiny monthly quota (refused: quota_exceeded)

Prints the answers by status on one line, and exits 1 if one of the
statuses the dashboard's error panels need (400, 401, 404, 429; and 503 in
`check` mode) never came.
"""

import collections
import http.client
import json
import random
import secrets
import string
import sys
import threading
import time
import urllib.parse
import zlib

base, seconds, mode, key, slow_key, quota_key = sys.argv[1:7]
seconds = float(seconds)
url = urllib.parse.urlsplit(base)
statuses = collections.Counter()
lock = threading.Lock()
deadline = time.monotonic() + seconds
BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase


def made_up_key():
    """A well-formed key that was never issued (the checksum is right, as
    crates/mds-domain/src/key.rs makes it), so the node looks it up."""
    body = "mds_live_" + "".join(secrets.choice(BASE62) for _ in range(32))
    n = zlib.crc32(body.encode())
    sum_ = ""
    for _ in range(6):
        sum_ = BASE62[n % 62] + sum_
        n //= 62
    return body + sum_


class Caller:
    """One keep-alive connection, reopened when the node closes it."""

    def __init__(self):
        self.conn = None

    def get(self, path, bearer=None):
        headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
        for attempt in (0, 1):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
                self.conn.request("GET", path, headers=headers)
                resp = self.conn.getresponse()
                body = resp.read()
                with lock:
                    statuses[resp.status] += 1
                return resp.status, body
            except (OSError, http.client.HTTPException):
                self.conn = None
                if attempt:
                    with lock:
                        statuses["error"] += 1
        return None, b""


def paced(per_second, step):
    """Calls step() per_second times a second until the deadline."""
    period = 1.0 / per_second
    nxt = time.monotonic()
    while time.monotonic() < deadline:
        step()
        nxt += period
        time.sleep(max(0.0, nxt - time.monotonic()))


def catalog_reader(isins, slugs, per_second):
    c = Caller()
    paths = [f"/v1/companies?limit={n}" for n in (5, 10, 20, 50)]
    paths += ["/v1/companies?letter=r&limit=10", "/v1/news?limit=3", "/v1/usage"]
    paths += [f"/v1/companies/{i}" for i in isins[:5]] + [f"/v1/news/{s}" for s in slugs[:2]]
    rnd = random.Random()
    paced(per_second, lambda: c.get(rnd.choice(paths), key))


def mistakes(per_second):
    """Callers' mistakes: no key, a bad parameter, an unknown company, an
    unknown route, a key with a typo (refused before any lookup)."""
    c = Caller()
    calls = [
        ("/v1/companies", None),
        ("/v1/companies?limit=x", key),
        ("/v1/companies/INE000000000", key),
        ("/v1/nothing-here", key),
        ("/v1/companies", key[:-1] + ("A" if key[-1] != "A" else "B")),
    ]
    i = iter(range(10**9))
    paced(per_second, lambda: c.get(*calls[next(i) % len(calls)]))


def limited(bearer, per_second):
    c = Caller()
    paced(per_second, lambda: c.get("/v1/companies?limit=5", bearer))


def unknown_keys(per_second):
    c = Caller()
    paced(per_second, lambda: c.get("/v1/companies?limit=5", made_up_key()))


def main():
    c = Caller()
    _, body = c.get("/v1/companies?limit=20", key)
    isins = [row["isin"] for row in json.loads(body)["data"]]
    _, body = c.get("/v1/news?limit=5", key)
    slugs = [row["slug"] for row in json.loads(body)["data"]]
    workers = [
        (catalog_reader, (isins, slugs, 40)),
        (catalog_reader, (isins, slugs, 40)),
        (mistakes, (5,)),
        (limited, (slow_key, 2)),
        (limited, (quota_key, 2)),
        # A few made-up keys a second: looked up, refused 401.
        (unknown_keys, (1,)),
    ]
    if mode == "check":
        # Beyond the node's lookup budget: 503 and the throttled counter.
        workers.append((unknown_keys, (15,)))
    threads = [threading.Thread(target=f, args=a, daemon=True) for f, a in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("traffic: answers by status: " + json.dumps(dict(sorted(statuses.items(), key=str))))
    need = {400, 401, 404, 429} | ({503} if mode == "check" else set())
    missing = sorted(need - set(statuses))
    if missing:
        print(f"traffic: no answer with status {missing}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
