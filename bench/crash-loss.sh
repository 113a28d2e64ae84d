#!/usr/bin/env bash
# What a crash loses: drive GET /v1/companies?limit=1 with wrk, SIGKILL the
# server in the middle of the load at a random phase of its 1 s flush
# interval, and compare what wrk saw answered (every answer was counted
# before it was sent) with the usage the store kept. A small negative loss
# is requests in flight at the kill, counted by the server but never seen
# answered by wrk.
#
# Default: one node on SQLite, restarted after each kill. With SPILL=1 it
# runs with --spill-dir (the restart gives back what it had not flushed).
# With NEVER=1 the killed node never returns: two nodes with --redis on one
# SQLite file and a private redis-server, wrk on the first; it is killed
# and a new node (a new id) takes its place, the usage is read on the
# second after 3 s (the survivor takes the dead node's usage mirror over).
# Rounds alternate the mirror on and off (--no-usage-mirror), so one run
# gives both.
#
# Usage: [SPILL=1 | NEVER=1] bench/crash-loss.sh [ROUNDS=3] [SECONDS=5]
# Needs wrk (installed with apt-get when missing), bc, and with NEVER=1
# redis-server. MDS_BIN=path/to/mds measures that binary instead of this
# tree's build.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
ROUNDS=${1:-3}; SECS=${2:-5}
need_wrk
if [[ -n "${MDS_BIN:-}" ]]; then BIN=$MDS_BIN; else cargo build --release --quiet --bin mds; BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/mds; fi
bench_workdir
export MDS_DATABASE_URL="sqlite://$WORK/crash.db?mode=rwc" MDS_LOG=warn
bench_store "$BIN"
PORT=18191
EXTRA=(); [ "${SPILL:-0}" = 1 ] && EXTRA=(--spill-dir "$WORK/spill")
if [ "${NEVER:-0}" = 1 ]; then
  RPORT=18379
  redis-server --port $RPORT --save '' --appendonly no >"$WORK/redis.log" 2>&1 &
  for _ in $(seq 1 100); do redis-cli -p $RPORT ping >/dev/null 2>&1 && break; sleep 0.05; done
  EXTRA=(--redis "redis://127.0.0.1:$RPORT" --nodes 2)
fi
serve() { # port [args]: starts a node, its pid in $PID
  local port=$1; shift
  $BIN serve --listen 127.0.0.1:$port "${EXTRA[@]}" "$@" 2>>"$WORK/serve.log" & PID=$!
  for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && return; sleep 0.05; done
  echo "server did not start" >&2; exit 1
}
used() { curl -s -H "Authorization: Bearer $KEY" "http://127.0.0.1:$1/v1/usage" | sed -E 's/.*"current_month":\{[^}]*"requests":([0-9]+).*/\1/'; }
# Load on $PORT, then SIGKILL $PID at a random phase of the flush interval;
# sets $sent and $rate.
load_and_kill() {
  wrk -t1 -c16 -d"$((SECS + 2))s" -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT/v1/companies?limit=1" >"$WORK/wrk.txt" &
  local wrk=$!
  sleep "$SECS.$(printf '%03d' $((RANDOM % 1000)))"
  kill -9 "$PID"; wait "$PID" 2>/dev/null || true
  wait "$wrk" || true
  sent=$(awk '/requests in/ {print $1}' "$WORK/wrk.txt")
  rate=$(echo "$sent / $SECS" | bc -l)
}
report() { # label kept
  local lost=$((sent - $2))
  printf '%s: answered %d (%.0f req/s), kept %d, lost %d = %.0f ms of traffic\n' \
    "$1" "$sent" "$rate" "$2" "$lost" "$(echo "1000 * $lost / $rate" | bc -l)"
}
echo "# bench/crash-loss.sh $ROUNDS $SECS (SPILL=${SPILL:-0} NEVER=${NEVER:-0}) on $(date -u +%F) at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"
if [ "${NEVER:-0}" = 1 ]; then
  for r in $(seq 1 "$ROUNDS"); do
    for mirror in on off; do
      flag=(); [ $mirror = off ] && flag=(--no-usage-mirror)
      serve $((PORT + 1)) "${flag[@]}"; SURVIVOR=$PID
      serve $PORT "${flag[@]}"
      total=$(used $((PORT + 1)))
      load_and_kill
      sleep 3
      now=$(used $((PORT + 1)))
      report "round $r, mirror $mirror, the node never returns" $((now - total))
      kill "$SURVIVOR"; wait "$SURVIVOR" 2>/dev/null || true
    done
  done
  exit 0
fi
serve $PORT
total=$(used $PORT)
for r in $(seq 1 "$ROUNDS"); do
  load_and_kill
  serve $PORT
  now=$(used $PORT)
  report "round $r" $((now - total)); total=$now
done
