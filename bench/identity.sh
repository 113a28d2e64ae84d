#!/usr/bin/env bash
# Identity over time on a million companies (issue 26): what `as_of` list
# pages, histories and symbol lookups cost, on the history set of
# bench/gen_companies.py (seed 42: the 2024 and 2026 NSE-shaped lists and the
# change files, 10% of companies with 1-5 events, 1% splits), imported as
# `mds demo` imports the real files.
#
# - `as_of` pages against the made first page of the list without it, both
#   on a node keeping no page (MDS_PAGE_CACHE_MIB=0, so every request makes
#   its page): the first page as of a day between the snapshots, a filtered
#   one, and a deep one (the cursor of the 2,000th page of 200). Then each at
#   moderate load (wrk -c2) for its p99.
# - `GET /v1/companies/{isin}/history` of a split's successor and
#   `GET /v1/symbols/{symbol}?exchange=nse` of a changed symbol, each
#   against a baseline serving the same bytes
#   (crates/mds-catalog/examples/baseline.rs): made on every request (the
#   node keeping no page) and kept (a second node with its page cache);
#   then, three times, the server CPU per request of the made node and of
#   the baseline (user + system time over a wrk run; their ratio is what
#   the throughput ratio tends to on a saturated machine).
# ABBA-alternated, median of ROUNDS, every ratio within this run.
#
# Usage: bench/identity.sh [ROUNDS=3] [SECONDS=5] [CONNECTIONS=16] [N=1000000]
# Needs: cargo, python3, curl, wrk (installed with apt-get when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}; SECS=${2:-5}; CONNS=${3:-16}; N=${4:-1000000}
. bench/lib.sh
release_bench_setup
echo "# bench/identity.sh $ROUNDS $SECS $CONNS $N on $(date -u +%F) at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"

python3 bench/gen_companies.py history "$N" 42 "$WORK/data"
export MDS_DATABASE_URL="sqlite://$WORK/identity.db?mode=rwc"
$BIN migrate >/dev/null
t0=$(date +%s)
$BIN import exchanges --as-of 2024-01-31 --nse "$WORK/data/EQUITY_L_2024-01-31.csv" >/dev/null
$BIN import exchanges --as-of 2026-05-17 --nse "$WORK/data/EQUITY_L_2026-05-17.csv" >/dev/null
$BIN import nse-changes --symbols "$WORK/data/symbolchange.csv" --names "$WORK/data/namechange.csv" >/dev/null
echo "imported in $(( $(date +%s) - t0 )) s"
$BIN tiers set bench --rate-limit-per-minute 1000000000 --monthly-quota 1000000000000 >/dev/null
$BIN accounts create bench >/dev/null
KEY=$($BIN keys create --account bench --tier bench 2>/dev/null | tail -n 1); export KEY
get() { curl -sf -H "Authorization: Bearer $KEY" "http://127.0.0.1:$1$2"; }

port=18321; bport=18322
MDS_PAGE_CACHE_MIB=0 $BIN serve --listen 127.0.0.1:$port 2>>"$WORK/serve.log" & pid=$!
printf 'time to ready: %.2f s\n' "$(ready_wait $port)"
echo "peak RSS (VmHWM) of mds serve after ready: $(awk '/VmHWM/ {printf "%.0f MiB", $2/1024}' /proc/$pid/status)"

echo; echo "## as_of list pages, pages made"
day=2025-06-30
cursor=$(python3 - $port "$KEY" $day <<'PY'
import http.client, json, sys
port, key, day = sys.argv[1:]
c = http.client.HTTPConnection("127.0.0.1", int(port))
cur = None
for _ in range(2000):
    c.request("GET", "/v1/companies?limit=200&as_of=" + day + ("&cursor=" + cur if cur else ""),
              headers={"Authorization": "Bearer " + key})
    cur = json.loads(c.getresponse().read())["next_cursor"]
print(cur)
PY
)
list=/v1/companies?limit=50
first="/v1/companies?limit=50&as_of=$day"
filtered="/v1/companies?limit=50&as_of=$day&exchange=nse&status=any"
deep="/v1/companies?limit=50&as_of=$day&cursor=$cursor"
for p in "$list" "$first" "$filtered" "$deep"; do echo "bytes of $p: $(get $port "$p" | wc -c)"; done
side_by_side "list first page | as_of first page" $port "$list" $port "$first"
side_by_side "list first page | as_of filtered page" $port "$list" $port "$filtered"
side_by_side "list first page | as_of deep page" $port "$list" $port "$deep"
echo "moderate load (wrk -c2 ${SECS}s): req/s p50_ms p99_ms"
for p in "$list" "$first" "$filtered" "$deep"; do echo "  $p: $(run_wrk $port "$p" 2 "$SECS")"; done

echo; echo "## history and symbol lookups against a baseline serving their bytes"
successor=$(get $port "/v1/companies?limit=1&status=superseded" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["isin"])')
successor=$(get $port "/v1/companies/$successor" | python3 -c 'import json,sys; print(json.load(sys.stdin)["superseded_by"])')
symbol=$(python3 -c 'import csv,sys; print(next(csv.reader(open(sys.argv[1])))[2])' "$WORK/data/symbolchange.csv")
# Made on every request (the node above, keeping nothing: what a lookup
# not asked before costs), and kept (a node as it serves, with its page
# cache: a lookup asked again is served as bytes).
kport=18323
$BIN serve --listen 127.0.0.1:$kport 2>>"$WORK/serve.log" & kpid=$!
ready_wait $kport >/dev/null
for route in "history /v1/companies/$successor/history" "symbol /v1/symbols/$symbol?exchange=nse"; do
  read -r name path <<<"$route"
  curl -sf -D "$WORK/$name.h" -H "Authorization: Bearer $KEY" "http://127.0.0.1:$port$path" >"$WORK/$name.json"
  echo "$name: $path, $(stat -c %s "$WORK/$name.json") bytes"
  "$EX/baseline" 127.0.0.1:$bport "$WORK/$name.json" "$WORK/$name.h" & bpid=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$bport/" >/dev/null && break; sleep 0.05; done
  versus "$name made" $port $bport "$path"
  versus "$name kept" $kport $bport "$path"
  for i in 1 2 3; do
    a=$(cpu_per_request $port $pid "$path" "$CONNS" "$SECS"); b=$(cpu_per_request $bport $bpid "$path" "$CONNS" "$SECS")
    printf '%s made, server CPU per request: %s µs | baseline %s µs | ratio %.3f\n' "$name" "$a" "$b" "$(echo "$b / $a" | bc -l)"
  done
  kill $bpid; wait $bpid 2>/dev/null || true
done
kill -TERM $pid $kpid; wait $pid $kpid 2>/dev/null || true
echo; echo "# done at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"
