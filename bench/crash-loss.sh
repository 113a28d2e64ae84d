#!/usr/bin/env bash
# What a crash loses: drive GET /v1/companies?limit=1 with wrk, SIGKILL the
# server in the middle of the load at a random phase of its 1 s flush
# interval, restart it, and compare what wrk saw answered (every answer was
# counted before it was sent) with the usage the store kept. With SPILL=1
# the server runs with --spill-dir (a restart gives back what it had not
# flushed); a small negative loss is then requests in flight at the kill,
# counted by the server but never seen answered by wrk.
#
# Usage: [SPILL=1] bench/crash-loss.sh [ROUNDS=3] [SECONDS=5]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
ROUNDS=${1:-3}; SECS=${2:-5}
need_wrk
cargo build --release --quiet
BIN=$PWD/target/release/mds
bench_workdir
export MDS_DATABASE_URL="sqlite://$WORK/crash.db?mode=rwc" MDS_LOG=warn
$BIN import exchanges --nse data/demo/nse_EQUITY_L_2024-01.csv --bse data/demo/bse_Equity_2024-01.csv >/dev/null 2>&1
$BIN tiers set bench --rate-limit-per-minute 1000000000 --monthly-quota 1000000000000 >/dev/null
$BIN accounts create bench >/dev/null
KEY=$($BIN keys create --account bench --tier bench 2>/dev/null | tail -n 1)
PORT=18191
SPILL_ARGS=(); [ "${SPILL:-0}" = 1 ] && SPILL_ARGS=(--spill-dir "$WORK/spill")
serve() { $BIN serve --listen 127.0.0.1:$PORT "${SPILL_ARGS[@]}" 2>>"$WORK/serve.log" & PID=$!; for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && return; sleep 0.05; done; echo "server did not start" >&2; exit 1; }
used() { curl -s -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT/v1/usage" | sed -E 's/.*"current_month":\{[^}]*"requests":([0-9]+).*/\1/'; }
serve
total=$(used)
for r in $(seq 1 "$ROUNDS"); do
  wrk -t1 -c16 -d"$((SECS + 2))s" -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT/v1/companies?limit=1" >"$WORK/wrk.txt" &
  WRK=$!
  sleep "$SECS.$(printf '%03d' $((RANDOM % 1000)))"
  kill -9 "$PID"; wait "$PID" 2>/dev/null || true
  wait "$WRK" || true
  out=$(cat "$WORK/wrk.txt")
  sent=$(echo "$out" | awk '/requests in/ {print $1}')
  rate=$(echo "$sent / $SECS" | bc -l)
  serve
  now=$(used)
  kept=$((now - total)); lost=$((sent - kept)); total=$now
  printf 'round %d: answered %d (%.0f req/s), kept %d, lost %d = %.2f s of traffic\n' \
    "$r" "$sent" "$rate" "$kept" "$lost" "$(echo "$lost / $rate" | bc -l)"
done
