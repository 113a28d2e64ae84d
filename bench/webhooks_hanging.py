"""Webhook first-attempt latency with hanging receivers (bench/webhooks-hanging.sh
runs this).

Usage: webhooks_hanging.py PORT PID KEYS_FILE ENDPOINTS HANG EVENTS GAP OK_PORT HANG_PORT ARRIVALS WORK IMPORT_CMD...

Creates ENDPOINTS endpoints (ten per key of KEYS_FILE, the most an account
may have) on the node at PORT, all pointing at the answering receivers on
OK_PORT (`/hook/N`). Two phases of EVENTS one-article imports GAP seconds
apart (IMPORT_CMD, `{f}` replaced by the file): the baseline, every
receiver answering; then HANG of the endpoints (one in ten) moved to the
receivers on HANG_PORT that never answer. ARRIVALS is the receivers' log
(`ok|hang PATH WEBHOOK-ID UNIX_SECONDS` per request). For each event and
endpoint, the first attempt's latency is its arrival less the import
process's exit (a lower bound of commit-to-attempt: the commit is before
the exit) and less its start (an upper bound); for the hanging endpoints,
the lateness of the retry of their first event (due 10 s of timeout plus
5 s after the first attempt). PID is the node's: the CPU time it used in
each phase (user + system) is printed too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request


def call(port: int, key: str, method: str, path: str, body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method)
    req.add_header("Authorization", f"Bearer {key}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=30) as r:
        raw = r.read()
    return json.loads(raw) if raw else {}


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else float("nan")


def figures(xs: list[float]) -> str:
    return f"p50 {pct(xs, 50) * 1000:.0f} ms, p99 {pct(xs, 99) * 1000:.0f} ms, max {max(xs) * 1000:.0f} ms" if xs else "none"


def cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def arrivals(path: str) -> list[tuple[str, str, str, float]]:
    out = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 4:
                out.append((parts[0], parts[1], parts[2], float(parts[3])))
    return out


def main() -> None:
    port, pid, keys_file, endpoints, hang, events, gap = (
        int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]),
        float(sys.argv[7]))
    ok_port, hang_port, log, work, cmd = int(sys.argv[8]), int(sys.argv[9]), sys.argv[10], sys.argv[11], sys.argv[12:]
    keys = [k.strip() for k in open(keys_file) if k.strip()]
    ids = []
    for n in range(endpoints):
        made = call(port, keys[n // 10], "POST", "/v1/webhooks",
                    {"url": f"http://127.0.0.1:{ok_port}/hook/{n}", "types": ["article.published"]})
        ids.append(made["id"])
    hanging = set(range(0, endpoints, max(1, endpoints // hang))[:hang]) if hang else set()

    imports: dict[str, tuple[str, float, float]] = {}  # slug -> (phase, start, exit)

    cpu: dict[str, float] = {}

    def phase(name: str) -> float:
        began = time.time()
        cpu0 = cpu_s(pid)
        for i in range(events):
            slug = f"bench-hang-{name}-{i}"
            f = f"{work}/{slug}.jsonl"
            with open(f, "w") as out:
                out.write(json.dumps({"slug": slug, "headline": f"Bench {name} {i}"}) + "\n")
            t0 = time.time()
            subprocess.run([c.replace("{f}", f) for c in cmd], check=True, stdout=subprocess.DEVNULL)
            imports[slug] = (name, t0, time.time())
            time.sleep(gap)
        cpu[name] = cpu_s(pid) - cpu0
        return began

    phase("baseline")
    time.sleep(2)
    for n in sorted(hanging):
        call(port, keys[n // 10], "PATCH", f"/v1/webhooks/{ids[n]}", {"url": f"http://127.0.0.1:{hang_port}/hook/{n}"})
    began = phase("hanging")
    # Long enough for the first event's retry at the hanging receivers (10 s
    # of timeout, then 5 s) and its lateness to show.
    time.sleep(max(0.0, began + 20 - time.time()))

    # The events' ids, by slug.
    event_of: dict[str, tuple[str, float, float]] = {}
    page = call(port, keys[0], "GET", "/v1/events?types=article.published&limit=200")
    for e in page["data"]:
        if e["data"]["slug"] in imports:
            event_of[e["id"]] = imports[e["data"]["slug"]]
    first: dict[tuple[str, str], float] = {}
    second: dict[tuple[str, str], float] = {}
    for kind, path, wid, at in arrivals(log):
        k = (path, wid)
        if k not in first:
            first[k] = at
        elif k not in second:
            second[k] = at
    hang_paths = {f"/hook/{n}" for n in hanging}
    p99 = {}
    for name in ("baseline", "hanging"):
        lo, hi, missing = [], [], 0
        evs = sorted(i for i, v in event_of.items() if v[0] == name)
        for wid in evs:
            _, t0, t1 = event_of[wid]
            for n in range(endpoints):
                path = f"/hook/{n}"
                if name == "hanging" and path in hang_paths:
                    continue
                at = first.get((path, wid))
                if at is None:
                    missing += 1
                    continue
                lo.append(at - t1)
                hi.append(at - t0)
        p99[name] = pct(lo, 99)
        healthy = endpoints - (len(hanging) if name == "hanging" else 0)
        print(f"{name}: first attempts at the {healthy} answering endpoints, {len(lo)} of {healthy * len(evs)} "
              f"({missing} missing); from the import's exit: {figures(lo)}; from its start: {figures(hi)}; "
              f"the node used {cpu[name]:.2f} CPU s over the phase's {events} events")
    print(f"p99 from the import's exit, with {len(hanging)} hanging / with none: {p99['hanging'] / p99['baseline']:.2f}")
    evs = sorted(i for i, v in event_of.items() if v[0] == "hanging")
    if hanging and evs:
        wid = evs[0]
        _, t0, t1 = event_of[wid]
        lo = [first[(p, wid)] - t1 for p in hang_paths if (p, wid) in first]
        late = [second[(p, wid)] - first[(p, wid)] - 15 for p in hang_paths if (p, wid) in second]
        print(f"hanging: first attempts of the first event at the {len(hanging)} hanging endpoints, {len(lo)} seen; "
              f"from the import's exit: {figures(lo)}")
        print(f"hanging: their retries (due 10 s + 5 s after the first attempt), {len(late)} seen; lateness: {figures(late)}")


if __name__ == "__main__":
    main()
