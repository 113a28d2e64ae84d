#!/usr/bin/env bash
# What traces cost a data route (API.md 16, `--otlp-endpoint`). Two nodes
# on one demo store, both at MDS_LOG=warn: one without traces, one sending a
# span per request to an OTLP/HTTP receiver on loopback (scripts/otlp_check.py
# receive --discard: takes each batch and throws it away); traces on against
# off on a kept page (the cheapest request, where a span weighs most),
# ABBA-alternated, median of ROUNDS (bench/lib.sh, side_by_side). Then the
# exporter's counters: spans the receiver took and spans dropped.
#
# Usage: bench/trace-cost.sh [ROUNDS=3] [SECONDS=5] [CONNECTIONS=16]
# Needs: cargo, curl, python3, wrk (installed with apt-get when missing).
# MDS_BIN names an mds binary to use instead of building the release one.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}; SECS=${2:-5}; CONNS=${3:-16}
. bench/lib.sh
demo_bench_setup "bench/trace-cost.sh $ROUNDS $SECS $CONNS"
mkdir "$WORK/otlp"
python3 scripts/otlp_check.py receive "$WORK/otlp" --discard &
for _ in $(seq 1 100); do [[ -s "$WORK/otlp/port" ]] && break; sleep 0.1; done
path="/v1/companies?limit=50"
$BIN serve --listen 127.0.0.1:18421 --otlp-endpoint "http://127.0.0.1:$(cat "$WORK/otlp/port")" 2>"$WORK/on.log" &
$BIN serve --listen 127.0.0.1:18422 2>"$WORK/off.log" &
for p in 18421 18422; do ready_wait $p >/dev/null; done
side_by_side "kept page, traces (on | off)" 18421 "$path" 18422 "$path"
sleep 2
metric() { curl -sf http://127.0.0.1:18421/metrics | awk -v m="$1" '$1 == m {print $2}'; }
echo "spans exported: $(metric mds_trace_spans_exported_total), dropped: $(metric mds_trace_spans_dropped_total)"
