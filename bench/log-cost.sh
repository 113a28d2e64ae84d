#!/usr/bin/env bash
# What the log costs a kept page (API.md 16; target: at `info` at most 5% of
# the throughput at `warn`). Three nodes on one demo store, each logging to
# its own file: MDS_LOG=info (text), MDS_LOG=info with MDS_LOG_FORMAT=json,
# and MDS_LOG=warn (no access log); each `info` node against the `warn` one,
# ABBA-alternated, median of ROUNDS (bench/lib.sh, side_by_side). Then the
# same pairs by CPU time a request (user + system of every thread of the
# node, the access log's writer too, from /proc/PID/stat over a wrk run:
# bench/lib.sh, cpu_per_request): what the throughput ratio tends to on a
# saturated machine, and steadier than req/s on a shared one.
#
# Usage: bench/log-cost.sh [ROUNDS=3] [SECONDS=5] [CONNECTIONS=16]
# Needs: cargo, curl, wrk (installed with apt-get when missing). MDS_BIN
# names an mds binary to use instead of building the release one.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}; SECS=${2:-5}; CONNS=${3:-16}
. bench/lib.sh
demo_bench_setup "bench/log-cost.sh $ROUNDS $SECS $CONNS"
path="/v1/companies?limit=50"
MDS_LOG=info $BIN serve --listen 127.0.0.1:18411 2>"$WORK/info.log" & P_INFO=$!
MDS_LOG=info MDS_LOG_FORMAT=json $BIN serve --listen 127.0.0.1:18412 2>"$WORK/json.log" & P_JSON=$!
MDS_LOG=warn $BIN serve --listen 127.0.0.1:18413 2>"$WORK/warn.log" & P_WARN=$!
for p in 18411 18412 18413; do ready_wait $p >/dev/null; done
side_by_side "kept page, info text (info | warn)" 18411 "$path" 18413 "$path"
side_by_side "kept page, info json (info | warn)" 18412 "$path" 18413 "$path"
# CPU µs a request, ABBA-alternated, median of ROUNDS; ratio info / warn
# (1.05: logging costs 5% more CPU a request).
cpu_pair() { # label port pid bport bpid
  local r=() b=() q=() a x i
  for i in $(seq 1 "$ROUNDS"); do
    if (( i % 2 )); then
      a=$(cpu_per_request "$2" "$3" "$path" "$CONNS" "$SECS"); x=$(cpu_per_request "$4" "$5" "$path" "$CONNS" "$SECS")
    else
      x=$(cpu_per_request "$4" "$5" "$path" "$CONNS" "$SECS"); a=$(cpu_per_request "$2" "$3" "$path" "$CONNS" "$SECS")
    fi
    r+=("$a"); b+=("$x"); q+=("$(echo "$a / $x" | bc -l)")
    printf '%s round %d: %s | %s µs CPU a request | ratio %.3f\n' "$1" "$i" "$a" "$x" "${q[-1]}"
  done
  printf '%s median: %s µs against %s; ratio %.3f\n' "$1" "$(median "${r[@]}")" "$(median "${b[@]}")" "$(median "${q[@]}")"
}
cpu_pair "CPU a request, info text (info | warn)" 18411 $P_INFO 18413 $P_WARN
cpu_pair "CPU a request, info json (info | warn)" 18412 $P_JSON 18413 $P_WARN
for f in info json warn; do echo "$f log: $(wc -l <"$WORK/$f.log") lines"; done
echo "dropped (info, json): $(curl -sf http://127.0.0.1:18411/metrics | awk '/^mds_log_lines_dropped_total/ {print $2}'), $(curl -sf http://127.0.0.1:18412/metrics | awk '/^mds_log_lines_dropped_total/ {print $2}')"
