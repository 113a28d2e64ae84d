#!/usr/bin/env bash
# What the log costs a kept page (API.md 16; target: at `info` at most 5% of
# the throughput at `warn`). Three nodes on one demo store, each logging to
# its own file: MDS_LOG=info (text), MDS_LOG=info with MDS_LOG_FORMAT=json,
# and MDS_LOG=warn (no access log); each `info` node against the `warn` one,
# ABBA-alternated, median of ROUNDS (bench/lib.sh, side_by_side).
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
MDS_LOG=info $BIN serve --listen 127.0.0.1:18411 2>"$WORK/info.log" &
MDS_LOG=info MDS_LOG_FORMAT=json $BIN serve --listen 127.0.0.1:18412 2>"$WORK/json.log" &
MDS_LOG=warn $BIN serve --listen 127.0.0.1:18413 2>"$WORK/warn.log" &
for p in 18411 18412 18413; do ready_wait $p >/dev/null; done
side_by_side "kept page, info text (info | warn)" 18411 "$path" 18413 "$path"
side_by_side "kept page, info json (info | warn)" 18412 "$path" 18413 "$path"
for f in info json warn; do echo "$f log: $(wc -l <"$WORK/$f.log") lines"; done
echo "dropped (info, json): $(curl -sf http://127.0.0.1:18411/metrics | awk '/^mds_log_lines_dropped_total/ {print $2}'), $(curl -sf http://127.0.0.1:18412/metrics | awk '/^mds_log_lines_dropped_total/ {print $2}')"
