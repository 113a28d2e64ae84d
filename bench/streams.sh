#!/usr/bin/env bash
# Event streams at scale (issue 28): STREAMS open streams on one node (two
# per key, the most a key may hold) cost how much of the node's memory, and
# how long an event committed to the store takes to reach every one of them
# (p99 over EVENTS commits, each a one-article news import by another
# process: the streams' node learns of it only through the store).
#
# Usage: bench/streams.sh [STREAMS=5000] [EVENTS=10]
# MDS_BIN=path/to/mds measures that binary instead of this tree's release
# build. Uses a SQLite store in a temp dir, loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
STREAMS=${1:-5000}; EVENTS=${2:-10}
if [[ -n "${MDS_BIN:-}" ]]; then BIN=$MDS_BIN; else cargo build --release --quiet --bin mds; BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/mds; fi
. bench/lib.sh
bench_workdir
ulimit -n "$(ulimit -Hn)"  # 5,000 streams: as many descriptors on each side
export MDS_DATABASE_URL="sqlite://$WORK/bench.db?mode=rwc" MDS_LOG=${MDS_LOG:-warn}
bench_store "$BIN"
KEYS=$WORK/keys.txt
seq 1 $(( (STREAMS + 1) / 2 )) | xargs -P 4 -I{} sh -c "$BIN keys create --account bench --tier bench 2>/dev/null | tail -n 1" > "$KEYS"
echo "# bench/streams.sh $STREAMS $EVENTS on $(date -u +%F) at $(date -u +%T) UTC; $(wc -l < "$KEYS") keys; uptime:$(uptime | sed 's/.*load/ load/')"
# Its 2,500 keys are each new to the node: their first lookups must not be
# refused by the budget that guards the store from a flood of made-up keys.
$BIN serve --listen 127.0.0.1:18301 --max-connections 20000 --key-lookups-per-second 100000 2>"$WORK/serve.log" &
PID=$!
ready_wait 18301 >/dev/null
for n in $(seq 0 $((EVENTS - 1))); do
  printf '{"slug":"bench-stream-%s","headline":"Bench %s"}\n' "$n" "$n" > "$WORK/one-$n.jsonl"
done
python3 bench/streams.py 18301 "$PID" "$KEYS" "$STREAMS" "$EVENTS" "$BIN" import news "$WORK/one-{n}.jsonl" || { tail -5 "$WORK/serve.log"; exit 1; }
