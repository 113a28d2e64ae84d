#!/usr/bin/env bash
# Where one request's work goes: the release mds under callgrind (valgrind)
# on the demo store, counting the instructions of N keep-alive requests of
# each kind (the counters zeroed after a warm-up and dumped after the N),
# then callgrind_annotate's inclusive table per kind. Instruction counts do
# not depend on the machine's load, unlike req/s, so this is the profile to
# compare across runs; PERF=1 adds `perf record -g` of a wrk run of the
# kept page and `perf report`'s top entries (timing, so load-dependent).
#
# Usage: bench/profile.sh [N=2000] [OUT=bench/out/profile]
# MDS_BIN names the binary (default: a release build of this tree).
# Needs: valgrind (callgrind_control, callgrind_annotate), python3; PERF=1:
# perf and wrk. Installs valgrind with apt-get when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-2000}; OUT=${2:-bench/out/profile}
. bench/lib.sh
command -v valgrind >/dev/null || { apt-get install -y valgrind >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y valgrind >/dev/null; }; }
if [[ -z ${MDS_BIN:-} ]]; then cargo build --release --quiet --bin mds; MDS_BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/mds; fi
bench_workdir
mkdir -p "$OUT"; rm -f "$OUT"/callgrind.*
export MDS_LOG=warn MDS_DATABASE_URL="sqlite://$WORK/mds.db?mode=rwc"
echo "# bench/profile.sh $N on $(date -u +%F) at $(date -u +%T) UTC, $MDS_BIN; uptime:$(uptime | sed 's/.*load/ load/')"
bench_store "$MDS_BIN"
"$MDS_BIN" import news data/demo/news.jsonl >/dev/null
port=$((20000 + RANDOM % 20000))
# Requests counted per kind: the page kept (its second and later asks),
# the usage report, a company's detail, an article, a made news page.
slug=$(head -n 1 data/demo/news.jsonl | python3 -c 'import json, sys; print(json.load(sys.stdin)["slug"])')
isin=$(python3 -c 'import csv, sys; r = next(csv.DictReader(open(sys.argv[1]))); print(next(v for k, v in r.items() if "ISIN" in k).strip())' data/demo/nse_EQUITY_L_2024-01.csv)
profiled() { # [ENV=VALUE ...]: starts mds serve under callgrind, its pid in $VG, once it is ready
  env "$@" valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.%p" --dump-instr=no --collect-atstart=yes \
    "$MDS_BIN" serve --listen "127.0.0.1:$port" >"$WORK/serve.log" 2>&1 &
  VG=$!
  for _ in $(seq 1 600); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.5; done
}
ask() { # path count: COUNT keep-alive GETs of PATH, every answer checked to be 200
  python3 - "$port" "$1" "$2" "$KEY" <<'PY'
import http.client, sys
port, path, n, key = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
for _ in range(n):
    c.request("GET", path, headers={"Authorization": f"Bearer {key}"})
    r = c.getresponse(); r.read()
    if r.status != 200:
        sys.exit(f"{path}: {r.status}")
PY
}
measure() { # KIND:PATH ...: the counters of N requests of each, dumped under KIND
  local kind name path
  for kind in "$@"; do
    name=${kind%%:*}; path=${kind#*:}
    ask "$path" 50 # warm-up: the page is made (and kept, if pages are kept), the key cached
    callgrind_control -z "$VG" >/dev/null
    ask "$path" "$N"
    callgrind_control -d "$name" "$VG" >/dev/null
  done
  kill -INT "$VG" 2>/dev/null || true; wait "$VG" 2>/dev/null || true
}
profiled
measure "kept:/v1/companies?limit=50" "usage:/v1/usage" "detail:/v1/companies/$isin" "article:/v1/news/$slug"
# A made news page (20 rows from the node's news index): a node keeping no
# page, once its index is held.
profiled MDS_PAGE_CACHE_MIB=0 MDS_LOG=warn,mds_node::news_index=info,mds_node::news_load=info
for _ in $(seq 1 600); do grep -Eq "news index (built|loaded)" "$WORK/serve.log" && break; sleep 0.5; done
measure "news-made:/v1/news?limit=20"
for f in "$OUT"/callgrind.*.*; do
  name=$(sed -n 's/^desc: Trigger: \(dump \)\{0,1\}//p' "$f")
  total=$(awk '/^(summary|totals):/ {print $2; exit}' "$f")
  [[ -n $name && -n $total ]] || continue
  printf '%s: %s instructions in %s requests, %d per request\n' "$name" "$total" "$N" "$((total / N))"
  callgrind_annotate --inclusive=yes --threshold=90 --auto=no "$f" 2>/dev/null | sed -n '/Ir.*file:function/,$p' | head -70 > "$OUT/$name.txt"
done
if [[ ${PERF:-0} == 1 ]]; then
  need_wrk
  "$MDS_BIN" serve --listen "127.0.0.1:$port" >"$WORK/serve2.log" 2>&1 & P=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
  perf record -g -o "$OUT/perf.data" -p "$P" -- sleep 5 >/dev/null 2>&1 &
  wrk -t1 -c16 -d5s -H "Authorization: Bearer $KEY" "http://127.0.0.1:$port/v1/companies?limit=50" >/dev/null
  wait %perf 2>/dev/null || sleep 1
  perf report -i "$OUT/perf.data" --no-children --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -30 > "$OUT/perf-kept.txt"
  kill "$P"
fi
echo "tables in $OUT/"
