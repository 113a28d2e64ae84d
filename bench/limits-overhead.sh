#!/usr/bin/env bash
# Cost of rate limiting and metering on GET /v1/companies?limit=50: the same
# release binary and data, served twice (limits on, and --no-limits), driven
# alternately by wrk over loopback. Prints each round and the median ratio,
# of throughput and of the CPU time each server spent per request (read from
# /proc: less disturbed than throughput by other work on a shared machine).
#
# Usage: bench/limits-overhead.sh [ROUNDS=5] [SECONDS=10] [CONNECTIONS=16]
# MDS_BIN=path/to/mds measures that binary instead of building this tree's
# (e.g. an older build, for a before/after comparison).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
ROUNDS=${1:-5}; SECS=${2:-10}; CONNS=${3:-16}
need_wrk
release_mds
bench_workdir
export MDS_DATABASE_URL="sqlite://$WORK/bench.db?mode=rwc" MDS_LOG=warn
bench_store "$BIN" --mcap data/demo/nse_mcap_2024-03-28.csv
$BIN serve --listen 127.0.0.1:18181 2>"$WORK/on.log" &
PID_18181=$!
$BIN serve --listen 127.0.0.1:18182 --no-limits 2>"$WORK/off.log" &
PID_18182=$!
for port in 18181 18182; do
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
done
URL=/v1/companies?limit=50
TCK=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }   # utime + stime, in ticks
# One wrk run against the server on port $1: "req/s µs-of-server-CPU-per-request".
rps() {
  local pid=PID_$1 c0 c1 out
  c0=$(cpu "${!pid}")
  out=$(wrk -t1 -c"$CONNS" -d"${SECS}s" -H "Authorization: Bearer $KEY" "http://127.0.0.1:$1$URL")
  c1=$(cpu "${!pid}")
  echo "$(echo "$out" | awk '/Requests\/sec/ {print $2}')" \
    "$(echo "($c1 - $c0) * 1000000 / $TCK / $(echo "$out" | awk '/requests in/ {print $1}')" | bc -l)"
}
rps 18181 >/dev/null; rps 18182 >/dev/null   # warm-up
on=(); off=(); ratios=(); cpu_ratios=()
for r in $(seq 1 "$ROUNDS"); do
  # ABBA: alternate which server goes first, with a pause between runs, so
  # neither always inherits the other's closing connections.
  if (( r % 2 )); then a=$(rps 18181); sleep 2; b=$(rps 18182); else b=$(rps 18182); sleep 2; a=$(rps 18181); fi
  sleep 2
  read -r a a_cpu <<<"$a"; read -r b b_cpu <<<"$b"
  on+=("$a"); off+=("$b"); ratios+=("$(echo "$a / $b" | bc -l)"); cpu_ratios+=("$(echo "$a_cpu / $b_cpu" | bc -l)")
  printf 'round %d: limits on %s req/s (%.2f µs CPU/req), off %s req/s (%.2f µs CPU/req), ratio %.3f, CPU ratio %.3f\n' \
    "$r" "$a" "$a_cpu" "$b" "$b_cpu" "${ratios[-1]}" "${cpu_ratios[-1]}"
done
printf 'median: on %s req/s, off %s req/s, ratio on/off %.3f (overhead %.1f%%)\n' \
  "$(median "${on[@]}")" "$(median "${off[@]}")" "$(median "${ratios[@]}")" "$(echo "(1 - $(median "${ratios[@]}")) * 100" | bc -l)"
printf 'median CPU per request, on/off: %.3f (%.1f%% more with limits on)\n' \
  "$(median "${cpu_ratios[@]}")" "$(echo "($(median "${cpu_ratios[@]}") - 1) * 100" | bc -l)"
# The limited server metered what it admitted: stop it (SIGTERM flushes) and
# show that the store has the counts.
kill -TERM %1; wait %1 2>/dev/null || true
curl -s -H "Authorization: Bearer $KEY" http://127.0.0.1:18182/v1/usage | grep -o '"current_month":{[^}]*}' || true
