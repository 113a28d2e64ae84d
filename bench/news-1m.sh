#!/usr/bin/env bash
# News at 1,000,000 articles (issue 27): `mds import news` of N articles
# (bench/gen_news.py, seed 42) into an empty SQLite store, its wall time and
# peak RSS (VmHWM, via /usr/bin/time -v; the import ends by building the
# news index and saving its snapshot in the store); then `mds serve` on that
# store: the time to /readyz, the time until the node holds its news index
# (loaded from that snapshot, "news index loaded", or built from the
# articles, "news index built"; the node makes news pages from memory from
# then on, before, from the store), which of the two, the index's own log
# line (articles, bytes, ms), and the node's RSS (VmRSS) and peak RSS
# (VmHWM) once the index is held and a news page was served.
#
# With BASELINE_BIN (an older `mds` binary), the same serve is measured with
# it on the same store in the same run, for ratios; the import is this
# build's.
#
# Usage: bench/news-1m.sh [N=1000000]
#   NEWS_FILE: an existing gen_news.py file of N articles to use (making one
#   of 1M articles takes minutes and 2.9 GB).
# Needs: cargo, python3, curl, /usr/bin/time (installed with apt-get when
# missing).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
. bench/lib.sh
[[ -x /usr/bin/time ]] || { apt-get install -y time >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y time >/dev/null; }; }
if [[ -z "${MDS_BIN:-}" ]]; then
  cargo build --release --quiet --bin mds
  MDS_BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/mds
fi
bench_workdir
echo "# bench/news-1m.sh $N on $(date -u +%F) at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"
FILE=${NEWS_FILE:-$WORK/news.jsonl}
[[ -n ${NEWS_FILE:-} ]] || python3 bench/gen_news.py "$N" 42 "$FILE"
echo "file: $(wc -l <"$FILE") articles, $(du -m "$FILE" | cut -f1) MB"
export MDS_DATABASE_URL="sqlite://$WORK/news.db?mode=rwc"
MDS_LOG=warn "$MDS_BIN" migrate >/dev/null
out=$(MDS_LOG=warn /usr/bin/time -v "$MDS_BIN" import news "$FILE" 2>&1 >/dev/null)
printf 'import: peak RSS %d MiB, wall %s\n' \
  $(($(echo "$out" | awk -F: '/Maximum resident set size/ {gsub(/ /,"",$2); print $2}') / 1024)) \
  "$(echo "$out" | awk '/Elapsed \(wall clock\)/ {print $NF}')"
echo "store: $(du -m "$WORK/news.db" | cut -f1) MB"
"$MDS_BIN" tiers set bench --rate-limit-per-minute 1000000000 --monthly-quota 1000000000000 >/dev/null
"$MDS_BIN" accounts create bench >/dev/null
KEY=$("$MDS_BIN" keys create --account bench --tier bench 2>/dev/null | tail -n 1)
page=$(python3 -c 'import json,sys; print("/v1/news?isin=%s&limit=20" % json.loads(open(sys.argv[1]).readline())["isin"])' "$FILE")

measure() { # label binary port
  local log="$WORK/serve-$3.log" t0 pid ready held how
  # The store was just written, so it is in the OS page cache: a warm
  # restart, not a cold boot.
  t0=$(date +%s.%N)
  MDS_LOG=info "$2" serve --listen 127.0.0.1:"$3" >"$log" 2>&1 & pid=$!
  for _ in $(seq 1 3000); do curl -sf "http://127.0.0.1:$3/readyz" >/dev/null && break; sleep 0.01; done
  ready=$(echo "$(date +%s.%N) - $t0" | bc -l)
  for _ in $(seq 1 12000); do grep -Eq "news index (built|loaded)" "$log" && break; sleep 0.01; done
  held=$(echo "$(date +%s.%N) - $t0" | bc -l)
  how=$(grep -Eo "news index (built|loaded)" "$log" | tail -n 1 | cut -d' ' -f3)
  curl -sf -H "Authorization: Bearer $KEY" "http://127.0.0.1:$3$page" >"$WORK/page-$3.json"
  printf '%s: ready (/readyz) %.2f s, news index %s %.2f s after start; %s\n' "$1" "$ready" "${how:-not held}" "$held" \
    "$(grep -E "news index (built|loaded)" "$log" | tail -n 1 | sed -E 's/^.*news index (built|loaded)/index:/')"
  printf '%s: RSS %s, peak RSS %s (a page of %s bytes served)\n' "$1" \
    "$(awk '/VmRSS/ {printf "%.0f MiB", $2/1024}' /proc/$pid/status)" \
    "$(awk '/VmHWM/ {printf "%.0f MiB", $2/1024}' /proc/$pid/status)" "$(stat -c %s "$WORK/page-$3.json")"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  HELD=$held
}
measure "this build" "$MDS_BIN" 18411; mine=$HELD
if [[ -n ${BASELINE_BIN:-} ]]; then
  measure "baseline $(basename "$(dirname "$BASELINE_BIN")")" "$BASELINE_BIN" 18412
  cmp -s "$WORK/page-18411.json" "$WORK/page-18412.json" && echo "the page: the same bytes from both" \
    || echo "the page: DIFFERENT bytes"
  printf 'time to the index held, this build / baseline: %.3f\n' "$(echo "$mine / $HELD" | bc -l)"
fi
echo "# done at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"
