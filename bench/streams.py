"""Open event streams against a running node: memory per stream and the time
from a commit to its delivery on every stream (bench/streams.sh runs this).

Usage: streams.py PORT PID KEYS_FILE STREAMS EVENTS IMPORT_CMD...
Opens STREAMS streams (two per key of KEYS_FILE) on PORT, reads the server's
RSS (PID) before and after, then EVENTS times runs IMPORT_CMD (which commits
one new article; `{n}` in it is replaced by the round) and records, for
every stream, the time from just before the command started to the event's
frame (an upper bound of commit-to-delivery: it includes the process's
start and its read of the file) and from the command's exit (a lower bound:
the commit is before the exit).
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


class Stream:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.seen: dict[str, float] = {}

    async def pump(self) -> None:
        buf = b""
        while True:
            chunk = await self.reader.read(65536)
            if not chunk:
                return
            buf += chunk
            while b"\n\n" in buf:
                frame, buf = buf.split(b"\n\n", 1)
                for line in frame.split(b"\n"):
                    if line.startswith(b"id: "):
                        self.seen[line[4:].decode()] = time.monotonic()


async def open_stream(port: int, key: str) -> Stream:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    req = f"GET /v1/events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n\r\n"
    writer.write(req.encode())
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        body = await reader.read(2048)
        raise RuntimeError(head.decode(errors="replace").splitlines()[0] + ": " + body.decode(errors="replace"))
    # Chunked transfer: frames arrive wrapped in chunk sizes, which the
    # frame parser skips (they never start with "id: ").
    return Stream(reader, writer)


async def main() -> None:
    port, pid, keys_file, n, events = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    cmd = sys.argv[6:]
    keys = [k.strip() for k in open(keys_file) if k.strip()]
    before = rss_kib(pid)
    streams: list[Stream] = []
    for i in range(0, n, 100):
        batch = [open_stream(port, keys[(j // 2) % len(keys)]) for j in range(i, min(n, i + 100))]
        streams.extend(await asyncio.gather(*batch))
    await asyncio.sleep(2)
    after = rss_kib(pid)
    print(f"streams open: {len(streams)}; server RSS {before} KiB before, {after} KiB after: "
          f"{(after - before) * 1024 / len(streams):.0f} bytes per stream")
    pumps = [asyncio.create_task(s.pump()) for s in streams]
    lat: list[float] = []
    # From the import process's exit (its commit is before it): a lower bound.
    after_exit: list[float] = []
    for r in range(events):
        known = {k for s in streams for k in s.seen}
        t0 = time.monotonic()
        subprocess.run([a.replace("{n}", str(r)) for a in cmd], check=True, stdout=subprocess.DEVNULL)
        t1 = time.monotonic()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            fresh = [set(s.seen) - known for s in streams]
            if all(fresh):
                break
            await asyncio.sleep(0.01)
        for s in streams:
            new = [t for k, t in s.seen.items() if k not in known]
            lat.extend(t - t0 for t in new) if new else lat.append(float("inf"))
            after_exit.extend(max(0.0, t - t1) for t in new)
    lat.sort()
    missed = sum(1 for x in lat if x == float("inf"))
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000  # noqa: E731
    print(f"deliveries: {len(lat)} ({missed} missed within 5 s); commit-to-frame p50 {p(0.5):.0f} ms, "
          f"p99 {p(0.99):.0f} ms, max {p(1.0):.0f} ms (from before the import started)")
    after_exit.sort()
    q = lambda v: after_exit[min(len(after_exit) - 1, int(v * len(after_exit)))] * 1000  # noqa: E731
    print(f"from the import's exit (a lower bound): p50 {q(0.5):.0f} ms, p99 {q(0.99):.0f} ms, max {q(1.0):.0f} ms")
    print(f"median per round: {statistics.median(lat) * 1000:.0f} ms")
    for t in pumps:
        t.cancel()


asyncio.run(main())
