#!/usr/bin/env bash
# GET /v1/news?isin=…&limit=20 with 100,000 articles in the store (N, from
# bench/gen_news.py, seed 42, 2,000 ISINs): 500 distinct pages asked round
# and round (bench/paths.lua) of a node keeping no page (MDS_PAGE_CACHE_MIB=0,
# so every request makes its page), against a baseline answering one such
# page's bytes (nginx, 2 workers; BASELINE=hyper: the example server, see
# lib.sh). With BASELINE_BIN,
# an older mds binary is measured the same way in the same run, on a store
# it imported itself, its first page compared with this one's (before and
# after). ABBA-alternated, median of ROUNDS. Also the node's time to get
# its news index (loaded from the snapshot the import saved, or built, as
# its log line says) and its peak RSS. The nodes write no access log line
# (only warnings and the index's own line), as bench/run.sh's nodes and
# nginx (access_log off).
#
# Usage: bench/news-list.sh [ROUNDS=3] [SECONDS=5] [CONNECTIONS=64] [N=100000]
# Needs: cargo, python3, curl, wrk and nginx (installed with apt-get when
# missing).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}; SECS=${2:-5}; CONNS=${3:-64}; N=${4:-100000}
. bench/lib.sh
release_bench_setup
echo "# bench/news-list.sh $ROUNDS $SECS $CONNS $N on $(date -u +%F) at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"
export MDS_DATABASE_URL="sqlite://$WORK/news.db?mode=rwc"
$BIN migrate >/dev/null
python3 bench/gen_news.py "$N" 42 "$WORK/news.jsonl"
$BIN import news "$WORK/news.jsonl" >/dev/null
$BIN tiers set bench --rate-limit-per-minute 1000000000 --monthly-quota 1000000000000 >/dev/null
$BIN accounts create bench >/dev/null
KEY=$($BIN keys create --account bench --tier bench 2>/dev/null | tail -n 1); export KEY
python3 - "$WORK/news.jsonl" > "$WORK/paths" <<'PY'
import json, sys
isins = []
for line in open(sys.argv[1]):
    i = json.loads(line)["isin"]
    if i not in isins:
        isins.append(i)
    if len(isins) == 500:
        break
for i in isins:
    print("/v1/news?isin=%s&limit=20" % i)
PY
export PATHS_FILE=$WORK/paths
paths_wrk() { # port [key] → req/s p50 p99
  local out; out=$(KEY=${2:-$KEY} wrk -t1 -c"$CONNS" -d"${SECS}s" --latency -s bench/paths.lua "http://127.0.0.1:$1")
  echo "$(echo "$out" | awk '/Requests\/sec/ {print $2}') $(echo "$out" | awk '$1=="50%" {print $2}' | ms) $(echo "$out" | awk '$1=="99%" {print $2}' | ms)"
}
serve() { # binary port: starts a node keeping no page; its pid in $SERVED
  MDS_PAGE_CACHE_MIB=0 MDS_LOG=warn,mds_node::news_index=info,mds_node::news_load=info "$1" serve --listen 127.0.0.1:"$2" >>"$WORK/serve-$2.log" 2>&1 &
  SERVED=$!
}
PORT=18401; BPORT=18402; OPORT=18403
serve "$BIN" $PORT; PID=$SERVED; t=$(ready_wait $PORT)
printf 'time to ready: %.2f s\n' "$t"
for _ in $(seq 1 600); do grep -Eq "news index (built|loaded)" "$WORK/serve-$PORT.log" && break; sleep 0.1; done
grep -E "news index (built|loaded)" "$WORK/serve-$PORT.log" | tail -n 1 | sed -E 's/^.*(news index (built|loaded))/\1/'
first=$(head -n 1 "$WORK/paths")
curl -sf -D "$WORK/page.h" -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT$first" >"$WORK/page.json"
echo "a page: $(stat -c %s "$WORK/page.json") bytes, $(grep -o '"slug"' "$WORK/page.json" | wc -l) articles"
baseline $BPORT "$WORK/page.json" "$WORK/page.h"; BPID=$BASELINE_PID
OPID=""
if [[ -n ${BASELINE_BIN:-} ]]; then
  # A store of its own, imported by the older binary: a binary refuses a
  # schema newer than it knows.
  export MDS_DATABASE_URL="sqlite://$WORK/news-old.db?mode=rwc"
  "$BASELINE_BIN" migrate >/dev/null
  "$BASELINE_BIN" import news "$WORK/news.jsonl" >/dev/null
  "$BASELINE_BIN" tiers set bench --rate-limit-per-minute 1000000000 --monthly-quota 1000000000000 >/dev/null
  "$BASELINE_BIN" accounts create bench >/dev/null
  OKEY=$("$BASELINE_BIN" keys create --account bench --tier bench 2>/dev/null | tail -n 1)
  serve "$BASELINE_BIN" $OPORT; OPID=$SERVED; ready_wait $OPORT >/dev/null
  for _ in $(seq 1 600); do grep -Eq "news index (built|loaded)" "$WORK/serve-$OPORT.log" && break; sleep 0.1; done
  # The same rows (the cursor is sealed with each store's own secret).
  curl -sf -H "Authorization: Bearer $OKEY" "http://127.0.0.1:$OPORT$first" >"$WORK/page-old.json"
  python3 -c 'import json, sys; a, b = (json.load(open(f))["data"] for f in sys.argv[1:]); sys.exit(a != b)' \
    "$WORK/page.json" "$WORK/page-old.json" || echo "the older binary's page shows other rows"
fi
paths_wrk $PORT >/dev/null; run_wrk $BPORT / "$CONNS" 2 >/dev/null
r=(); b=(); o=(); q=(); qo=()
for i in $(seq 1 "$ROUNDS"); do
  if (( i % 2 )); then a=$(paths_wrk $PORT); sleep 1; x=$(run_wrk $BPORT / "$CONNS" "$SECS")
  else x=$(run_wrk $BPORT / "$CONNS" "$SECS"); sleep 1; a=$(paths_wrk $PORT); fi
  r+=("${a%% *}"); b+=("${x%% *}"); q+=("$(echo "${r[-1]} / ${b[-1]}" | bc -l)")
  line=$(printf 'round %d: mds %s (p50 %s ms, p99 %s ms) | baseline %s | mds/baseline %.3f' "$i" "${r[-1]}" \
    "$(echo $a | cut -d' ' -f2)" "$(echo $a | cut -d' ' -f3)" "${b[-1]}" "${q[-1]}")
  if [[ -n $OPID ]]; then
    sleep 1; y=$(paths_wrk $OPORT "$OKEY"); o+=("${y%% *}"); qo+=("$(echo "${o[-1]} / ${b[-1]}" | bc -l)")
    line+=$(printf ' | older binary %s (p99 %s ms), older/baseline %.3f' "${o[-1]}" "$(echo $y | cut -d' ' -f3)" "${qo[-1]}")
  fi
  echo "$line"; sleep 1
done
printf 'median: mds %s req/s, baseline %s; mds/baseline %.3f' "$(median "${r[@]}")" "$(median "${b[@]}")" "$(median "${q[@]}")"
[[ -n $OPID ]] && printf '; older binary %s req/s, older/baseline %.3f' "$(median "${o[@]}")" "$(median "${qo[@]}")"
echo
echo "peak RSS (VmHWM) of mds serve: $(awk '/VmHWM/ {printf "%.0f MiB", $2/1024}' /proc/$PID/status)"
kill $BPID $PID ${OPID:-} 2>/dev/null; wait 2>/dev/null || true
echo "# done at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"
