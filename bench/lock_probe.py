#!/usr/bin/env python3
"""A writer that keeps asking a SQLite database for its write lock, for bench/import-lock.sh.

  lock_probe.py DB   until SIGTERM (or SIGINT): BEGIN IMMEDIATE, ROLLBACK, sleep 10 ms, again

Each attempt waits as long as another connection holds the write lock (busy
timeout 600 s, so it never gives up), which is what a `mds keys revoke` run at
that moment would wait (it gives up after 5 s). The database must exist (with
its tables): start the probe after mds made it. On SIGTERM it prints one line: the attempts, and the
longest and the total wait in seconds. The lock it takes itself is held for
microseconds, and it writes nothing.
"""
import signal, sqlite3, sys, time

stop = False


def on_term(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)
signal.signal(signal.SIGINT, on_term)
conn = sqlite3.connect(sys.argv[1], timeout=600, isolation_level=None)
attempts, longest, total = 0, 0.0, 0.0
while not stop:
    t = time.monotonic()
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("ROLLBACK")
    waited = time.monotonic() - t
    attempts, longest, total = attempts + 1, max(longest, waited), total + waited
    time.sleep(0.01)
print("attempts %d longest_wait %.3f total_wait %.3f" % (attempts, longest, total), flush=True)
