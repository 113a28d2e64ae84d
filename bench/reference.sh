#!/usr/bin/env bash
# The reference-data routes on a million companies (bench/gen_companies.py,
# seed 42): what the details cost in memory, and what GET
# /v1/companies/{isin} and GET /v1/companies/changes cost in time.
#
# - Memory: the same million companies without and with every detail
#   column (`synthetic` and `detailed`): the catalog's sections
#   (examples/catalog_bench) and the serving node's peak RSS (VmHWM) after
#   ready and a request of each route. The bytes the details add per company
#   are the catalog sections that hold them and the change feed's orders.
# - Time, on the detailed set (ABBA-alternated, median of ROUNDS, ratios
#   within this run): one company's detail against a baseline serving its
#   bytes; the first page of the change feed and a deep one (the last of a
#   full walk) against the first page of the list, pages made (page cache
#   off) and pages kept; then, after an import changing 100 companies, the
#   delta `since` the token of the full walk at moderate load (wrk -c2),
#   pages made.
#
# Usage: bench/reference.sh [ROUNDS=3] [SECONDS=5] [CONNECTIONS=16] [N=1000000]
# With PARTS=time in the environment, the memory part is skipped (the
# detailed set is still generated and imported).
# Needs: cargo, python3, curl, wrk (installed with apt-get when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}; SECS=${2:-5}; CONNS=${3:-16}; N=${4:-1000000}
. bench/lib.sh
release_bench_setup
echo "# bench/reference.sh $ROUNDS $SECS $CONNS $N on $(date -u +%F) at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"

# A store with the companies of `csv`, a bench key in $KEY.
store() { # name csv
  export MDS_DATABASE_URL="sqlite://$WORK/$1.db?mode=rwc"
  $BIN migrate >/dev/null
  $BIN import companies "$2" >/dev/null
  $BIN tiers set bench --rate-limit-per-minute 1000000000 --monthly-quota 1000000000000 >/dev/null
  $BIN accounts create bench >/dev/null
  KEY=$($BIN keys create --account bench --tier bench 2>/dev/null | tail -n 1)
}
get() { curl -sf -H "Authorization: Bearer $KEY" "http://127.0.0.1:$1$2"; }
hwm() { awk '/VmHWM/ {printf "%.1f", $2/1024}' "/proc/$1/status"; }

PARTS=${PARTS:-"memory time"}
echo; echo "## memory: the same $N companies without and with details"
declare -A RSS
kinds="synthetic detailed"; [[ $PARTS == *memory* ]] || kinds=detailed
for kind in $kinds; do
  csv=$WORK/$kind.csv
  python3 bench/gen_companies.py "$kind" "$N" 42 "$csv"
  echo "$kind csv: $(stat -c %s "$csv") bytes"
  echo "$kind catalog: $("$EX/catalog_bench" "$csv" | grep '^catalog ')"
  store "$kind" "$csv"
  $BIN serve --listen 127.0.0.1:18311 2>>"$WORK/serve.log" & pid=$!
  ready_wait 18311 >/dev/null
  isin=$(get 18311 "/v1/companies?limit=1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["isin"])')
  get 18311 "/v1/companies/$isin" >/dev/null; get 18311 "/v1/companies/changes?limit=200" >/dev/null
  RSS[$kind]=$(hwm $pid)
  echo "$kind serving: peak RSS ${RSS[$kind]} MiB"
  kill -TERM $pid; wait $pid 2>/dev/null || true
  [[ $kind == synthetic ]] && rm -f "$WORK/synthetic.db"* "$csv"
done
if [[ $PARTS == *memory* ]]; then
  printf 'peak RSS with details - without: %.1f MiB = %.1f bytes per company\n' \
    "$(echo "${RSS[detailed]} - ${RSS[synthetic]}" | bc -l)" "$(echo "(${RSS[detailed]} - ${RSS[synthetic]}) * 1048576 / $N" | bc -l)"
fi

echo; echo "## time, on the detailed set"
export MDS_DATABASE_URL="sqlite://$WORK/detailed.db?mode=rwc"
port=18311; cport=18312; bport=18313
$BIN serve --listen 127.0.0.1:$port 2>>"$WORK/serve.log" & pid=$!
MDS_PAGE_CACHE_MIB=0 $BIN serve --listen 127.0.0.1:$cport 2>>"$WORK/serve.log" & cpid=$!
ready_wait $port >/dev/null; ready_wait $cport >/dev/null
isin=$(get $port "/v1/companies?limit=1&exchange=nse" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["isin"])')
detail=/v1/companies/$isin
curl -sf -D "$WORK/detail.h" -H "Authorization: Bearer $KEY" "http://127.0.0.1:$port$detail" >"$WORK/detail.json"
echo "detail: $(stat -c %s "$WORK/detail.json") bytes"
"$EX/baseline" 127.0.0.1:$bport "$WORK/detail.json" "$WORK/detail.h" & bpid=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$bport/" >/dev/null && break; sleep 0.05; done
versus "company detail" $cport $bport "$detail"
kill $bpid; wait $bpid 2>/dev/null || true

read -r pages token cur < <(walk_list $port /v1/companies/changes "")
echo "full walk of the change feed: $pages pages of 200"
list=/v1/companies?limit=50; first=/v1/companies/changes?limit=50; deep="/v1/companies/changes?limit=50&cursor=$cur"
echo "bytes: list page $(get $port "$list" | wc -c), changes page $(get $port "$first" | wc -c)"
side_by_side "pages made: list first page | changes first page" $cport "$list" $cport "$first"
side_by_side "pages made: changes first page | changes deep page" $cport "$first" $cport "$deep"
side_by_side "pages kept: list first page | changes deep page" $port "$list" $port "$deep"

# 100 companies changed (renamed) by an import, then the delta since the token.
python3 - "$WORK/detailed.csv" "$WORK/changed.csv" <<'PY'
import csv, sys
with open(sys.argv[1], newline="") as f, open(sys.argv[2], "w", newline="") as o:
    r, w = csv.reader(f), csv.writer(o)
    w.writerow(next(r))
    for k, row in enumerate(r):
        if k % 10000 == 7:
            row[2] += " (renamed)"
            w.writerow(row)
PY
$BIN import companies "$WORK/changed.csv"
t0=$(date +%s.%N)
until [[ $(get $cport "/v1/companies/changes?limit=200&since=$token" | grep -o '"isin"' | wc -l) == 100 ]]; do sleep 0.05; done
printf 'the 100 changes reached the node %.2f s after the import returned\n' "$(echo "$(date +%s.%N) - $t0" | bc -l)"
echo "delta since the token (100 of $N changed), pages made, wrk -c2 ${SECS}s: req/s p50_ms p99_ms"
echo "  limit=200: $(run_wrk $cport "/v1/companies/changes?limit=200&since=$token" 2 "$SECS")"
echo "  limit=50:  $(run_wrk $cport "/v1/companies/changes?limit=50&since=$token" 2 "$SECS")"
echo "  list first page, for scale: $(run_wrk $cport "$list" 2 "$SECS")"
kill -TERM $pid $cpid; wait $pid 2>/dev/null || true; wait $cpid 2>/dev/null || true
echo; echo "# done at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"
