"""Keys at scale (issue 13), driven by bench/keys-scale.sh.

For each key count N: a SQLite store with account `acme` and N real keys
(the real format: scheme, 32 base62, CRC-32 in base62; SHA-256 stored),
written straight into `api_keys` in one transaction; then a release
`mds serve` on it, and:

- ready: seconds from start to /readyz 200, and VmRSS once ready;
- first requests: the latency of requests by keys the node has never seen
  (each one store lookup), against the same keys again (held), sequential,
  p50/p99 of each and the ratio;
- change: `mds keys revoke` of a held key, the time from its return until
  the node answers 401, and the store reads the node made for it
  (`mds_key_rereads_total` + `mds_key_lookups_total`, from /metrics);
- RSS after the first requests (the keys then held).

Usage: keys_scale.py BIN N [N ...]   (prints one line per measure)
"""

import hashlib
import http.client
import os
import secrets
import sqlite3
import subprocess
import sys
import tempfile
import time
import zlib

B62 = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
SAMPLE = 1000


def key() -> str:
    body = "mds_live_" + "".join(chr(B62[secrets.randbelow(62)]) for _ in range(32))
    n = zlib.crc32(body.encode())
    tail = bytearray(b"0" * 6)
    for i in range(5, -1, -1):
        tail[i] = B62[n % 62]
        n //= 62
    return body + tail.decode()


def fill(db: str, n: int, tier: str = "pro") -> list:
    conn = sqlite3.connect(db)
    (account,) = conn.execute("SELECT id FROM accounts WHERE name = 'acme'").fetchone()
    sample = []
    rows = []
    seen = set()
    while len(rows) < n:
        k = key()
        if k[:17] in seen:
            continue
        seen.add(k[:17])
        if len(sample) < max(2 * SAMPLE + 1, n if n <= 100_000 else 0):
            sample.append(k)
        rows.append((k[:17], hashlib.sha256(k.encode()).hexdigest(), account, tier, "live", "2026-11-01T00:00:00+00:00"))
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO api_keys (prefix, hash_hex, account_id, tier, environment, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        rows,
    )
    conn.commit()
    conn.close()
    return sample


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def get(conn: http.client.HTTPConnection, path: str, k: str = None) -> int:
    conn.request("GET", path, headers={"Authorization": f"Bearer {k}"} if k else {})
    r = conn.getresponse()
    r.read()
    return r.status


def metric(port: int, name: str) -> int:
    c = http.client.HTTPConnection("127.0.0.1", port)
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    c.close()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return int(float(line.split()[1]))
    return 0


def pct(xs: list, p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def timed(conn, keys: list) -> list:
    out = []
    for k in keys:
        t = time.perf_counter()
        assert get(conn, "/v1/companies?limit=1", k) == 200
        out.append((time.perf_counter() - t) * 1000)
    return out


def one(binary: str, n: int, port: int) -> None:
    work = tempfile.mkdtemp()
    db = os.path.join(work, "mds.db")
    env = dict(os.environ, MDS_LOG="warn", MDS_DATABASE_URL=db)
    subprocess.run([binary, "migrate"], env=env, check=True, capture_output=True)
    subprocess.run([binary, "accounts", "create", "acme"], env=env, check=True, capture_output=True)
    t = time.time()
    sample = fill(db, n)
    fill_s = time.time() - t
    t0 = time.time()
    # The lookup budget raised out of the way: this measures what a lookup
    # costs, not the budget (tests/suite/http_keys.rs holds the budget).
    srv = subprocess.Popen(
        [binary, "serve", "--listen", f"127.0.0.1:{port}", "--key-lookups-per-second", "1000000"],
        env=env,
        stderr=subprocess.DEVNULL,
    )
    try:
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", port)
                if get(c, "/readyz") == 200:
                    break
            except OSError:
                pass
            time.sleep(0.005)
        ready = time.time() - t0
        rss0 = rss_mib(srv.pid)
        print(f"N={n}: store filled in {fill_s:.1f} s; ready in {ready:.3f} s; RSS {rss0:.1f} MiB")
        conn = http.client.HTTPConnection("127.0.0.1", port)
        first = timed(conn, sample[:SAMPLE])
        held = timed(conn, sample[:SAMPLE])
        print(
            f"N={n}: first request of a key not held p50 {pct(first, .5):.3f} ms p99 {pct(first, .99):.3f} ms; "
            f"held p50 {pct(held, .5):.3f} ms p99 {pct(held, .99):.3f} ms; p99 ratio {pct(first, .99) / pct(held, .99):.2f}"
        )
        print(f"N={n}: RSS with {SAMPLE} keys held {rss_mib(srv.pid):.1f} MiB")
        # A key change: revoke a held key.
        victim = sample[0]
        reads0 = metric(port, "mds_key_rereads_total") + metric(port, "mds_key_lookups_total")
        subprocess.run([binary, "keys", "revoke", victim[:17]], env=env, check=True, capture_output=True)
        t = time.perf_counter()
        while get(conn, "/v1/companies?limit=1", victim) != 401:
            time.sleep(0.002)
        reach = (time.perf_counter() - t) * 1000
        reads = metric(port, "mds_key_rereads_total") + metric(port, "mds_key_lookups_total") - reads0
        print(f"N={n}: a revocation reached the node in {reach:.0f} ms; store reads of keys for it: {reads}")
    finally:
        srv.terminate()
        srv.wait()
        subprocess.run(["rm", "-rf", work])


def keys_file(args: list) -> None:
    """`keys PATH N [DB TIER]`: N made-up keys to PATH, or, with DB (a
    store with account `acme`), N real keys of TIER stored there and
    written to PATH."""
    path, n = args[0], int(args[1])
    ks = fill(args[2], n, args[3]) if len(args) > 2 else [key() for _ in range(n)]
    with open(path, "w") as f:
        f.write("\n".join(ks[:n]) + "\n")


def main() -> None:
    if sys.argv[1] == "keys":
        keys_file(sys.argv[2:])
        return
    binary = sys.argv[1]
    for i, n in enumerate(int(a) for a in sys.argv[2:]):
        one(binary, n, 18700 + i)


if __name__ == "__main__":
    main()
