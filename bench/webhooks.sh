#!/usr/bin/env bash
# Webhook throughput (issue 28): an import of EVENTS articles (one
# `article.published` each) with 10 endpoints subscribed to everything,
# delivered to a local receiver (the `webhook_sink` example, 204 to every
# POST): seconds from the import's start until every one of the
# EVENTS x 10 attempts has arrived, the duplicates, and how much the node's
# data requests slow down meanwhile: `wrk` on /v1/companies for SECS
# seconds while deliveries run, against the same run before the import and
# after the deliveries (the baseline: their mean), as a ratio.
#
# Usage: bench/webhooks.sh [EVENTS=10000] [SECS=5] [CONNS=4]
# MDS_BIN=path/to/mds measures that binary instead of this tree's release
# build. SQLite store in a temp dir, loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
EVENTS=${1:-10000}; SECS=${2:-5}; CONNS=${3:-4}
. bench/lib.sh
need_wrk
cargo build --release --quiet -p mds-catalog --example webhook_sink
TARGET=${CARGO_TARGET_DIR:-$PWD/target}
if [[ -n "${MDS_BIN:-}" ]]; then BIN=$MDS_BIN; else cargo build --release --quiet --bin mds; BIN=$TARGET/release/mds; fi
bench_workdir
export MDS_DATABASE_URL="sqlite://$WORK/bench.db?mode=rwc" MDS_LOG=warn
bench_store "$BIN"
TOTAL=$((EVENTS * 10))
python3 bench/gen_news.py "$EVENTS" 7 "$WORK/news.jsonl"
echo "# bench/webhooks.sh $EVENTS $SECS $CONNS on $(date -u +%F) at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"

# The receiver stands for another machine: it runs niced, so that it takes
# what CPU the node leaves rather than the node's.
nice -n 19 "$TARGET/release/examples/webhook_sink" 127.0.0.1:18402 1000 "$TOTAL" >"$WORK/sink.out" &
$BIN serve --listen 127.0.0.1:18401 --webhooks-allow-private 2>"$WORK/serve.log" &
PID=$!
# CPU seconds (user + system) the node has used.
cpu() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$PID/stat"; }
ready_wait 18401 >/dev/null
for n in $(seq 0 9); do
  curl -sf -X POST -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
    -d "{\"url\":\"http://127.0.0.1:18402/hook/$n\"}" http://127.0.0.1:18401/v1/webhooks >/dev/null
done
DATA=/v1/companies?limit=100
run_wrk 18401 "$DATA" "$CONNS" 2 >/dev/null # warm-up
before=$(run_wrk 18401 "$DATA" "$CONNS" "$SECS")

t0=$(date +%s.%N); cpu0=$(cpu)
$BIN import news "$WORK/news.jsonl" >/dev/null 2>"$WORK/import.err" || { cat "$WORK/import.err"; exit 1; }
imported=$(date +%s.%N)
# While deliveries run (from the first thousand on).
for _ in $(seq 1 6000); do grep -q '^at 1000 ' "$WORK/sink.out" && break; sleep 0.05; done
during=$(run_wrk 18401 "$DATA" "$CONNS" "$SECS")
busy_end=$(date +%s.%N)
for _ in $(seq 1 6000); do grep -q '^duplicates' "$WORK/sink.out" && break; sleep 0.1; done
grep -q '^duplicates' "$WORK/sink.out" || { echo "not every attempt arrived in 600 s:"; cat "$WORK/sink.out"; exit 1; }
done_at=$(awk -v t="$TOTAL" '$1=="at" && $2==t {print $3}' "$WORK/sink.out")
cpu1=$(cpu)
after=$(run_wrk 18401 "$DATA" "$CONNS" "$SECS")

printf 'import of %d articles: %.1f s\n' "$EVENTS" "$(echo "$imported - $t0" | bc -l)"
printf 'all %d attempts delivered %.1f s after the import began (%s); the node used %.1f CPU s meanwhile, wrk run included\n' \
  "$TOTAL" "$(echo "$done_at - $t0" | bc -l)" "$(grep '^duplicates' "$WORK/sink.out")" "$(echo "$cpu1 - $cpu0" | bc -l)"
(( $(echo "$busy_end < $done_at" | bc -l) )) || echo "(deliveries ended before the busy wrk run did: it measured partly idle)"
base=$(echo "(${before%% *} + ${after%% *}) / 2" | bc -l)
printf 'data requests (%s, %d conns, %d s): idle before %s req/s (p99 %s ms), during %s req/s (p99 %s ms), idle after %s req/s (p99 %s ms)\n' \
  "$DATA" "$CONNS" "$SECS" "${before%% *}" "$(echo $before | cut -d' ' -f3)" "${during%% *}" "$(echo $during | cut -d' ' -f3)" \
  "${after%% *}" "$(echo $after | cut -d' ' -f3)"
printf 'during / idle: %.3f\n' "$(echo "${during%% *} / $base" | bc -l)"
