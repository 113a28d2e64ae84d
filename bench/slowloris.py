"""Half-sent requests against a running mds: /healthz latency while N
connections each hold half a request head, against /healthz latency with
none (the same server, the same run), and how long the server takes to drop
them. Loopback only; bounded in count and time.

Usage: python3 bench/slowloris.py PORT [N=300] [PROBES=200]
Prints one line of figures (milliseconds).
"""

import socket
import statistics
import sys
import time

port = int(sys.argv[1])
n = int(sys.argv[2]) if len(sys.argv) > 2 else 300
probes = int(sys.argv[3]) if len(sys.argv) > 3 else 200


def healthz_ms():
    t = time.perf_counter()
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: mds\r\nConnection: close\r\n\r\n")
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
    assert data.startswith(b"HTTP/1.1 200"), data[:60]
    return (time.perf_counter() - t) * 1000


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


quiet = [healthz_ms() for _ in range(probes)]
held = []
for _ in range(n):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: mds\r\n")
        s.setblocking(False)
        held.append(s)
    except OSError:
        pass
attacked = [healthz_ms() for _ in range(probes)]
start = time.time()
open_ = set(range(len(held)))
while open_ and time.time() - start < 60:
    for i in list(open_):
        try:
            if held[i].recv(100) == b"":
                open_.discard(i)
        except BlockingIOError:
            pass
        except OSError:
            open_.discard(i)
    time.sleep(0.05)
dropped_s = time.time() - start
print(
    f"half-sent={len(held)} healthz_quiet_p50={statistics.median(quiet):.2f} p99={pct(quiet, 0.99):.2f} "
    f"healthz_attacked_p50={statistics.median(attacked):.2f} p99={pct(attacked, 0.99):.2f} "
    f"ratio_p50={statistics.median(attacked) / statistics.median(quiet):.2f} "
    f"all_dropped_after_s={dropped_s:.1f} still_open={len(open_)}"
)
