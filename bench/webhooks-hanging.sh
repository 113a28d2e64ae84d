#!/usr/bin/env bash
# One endpoint never delays another (issue 40, contract 11.5): ENDPOINTS
# webhook endpoints (ten per account) on one node, each first attempt's
# latency from its event's commit, with every receiver answering (the
# baseline) and then with HANG of them (one in ten) hanging until the
# node's 10 s timeout; EVENTS one-article imports by another process per
# phase, GAP seconds apart; and the lateness of the hanging endpoints'
# retries. Receivers: the `webhook_receivers` example, on loopback.
#
# Usage: bench/webhooks-hanging.sh [ENDPOINTS=1000] [HANG=100] [EVENTS=5] [GAP=3]
# MDS_BIN=path/to/mds measures that binary instead of this tree's release
# build. SQLite store in a temp dir, loopback only; about a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
ENDPOINTS=${1:-1000}; HANG=${2:-100}; EVENTS=${3:-5}; GAP=${4:-3}
. bench/lib.sh
cargo build --release --quiet -p mds-catalog --example webhook_receivers
TARGET=${CARGO_TARGET_DIR:-$PWD/target}
if [[ -n "${MDS_BIN:-}" ]]; then BIN=$MDS_BIN; else cargo build --release --quiet --bin mds; BIN=$TARGET/release/mds; fi
bench_workdir
ulimit -n "$(ulimit -Hn)"  # a socket per receiver on both sides
export MDS_DATABASE_URL="sqlite://$WORK/bench.db?mode=rwc" MDS_LOG=warn
bench_store "$BIN"
KEYS=$WORK/keys.txt
seq 1 $(( (ENDPOINTS + 9) / 10 )) | xargs -P 4 -I{} sh -c \
  "$BIN accounts create hooks-{} >/dev/null && $BIN keys create --account hooks-{} --tier bench 2>/dev/null | tail -n 1" > "$KEYS"
echo "# bench/webhooks-hanging.sh $ENDPOINTS $HANG $EVENTS $GAP on $(date -u +%F) at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"
"$TARGET/release/examples/webhook_receivers" 127.0.0.1:18502 127.0.0.1:18503 >"$WORK/arrivals.txt" &
$BIN serve --listen 127.0.0.1:18501 --webhooks-allow-private --key-lookups-per-second 100000 2>"$WORK/serve.log" &
PID=$!
ready_wait 18501 >/dev/null
python3 bench/webhooks_hanging.py 18501 "$PID" "$KEYS" "$ENDPOINTS" "$HANG" "$EVENTS" "$GAP" 18502 18503 \
  "$WORK/arrivals.txt" "$WORK" "$BIN" import news '{f}' || { tail -5 "$WORK/serve.log"; exit 1; }
