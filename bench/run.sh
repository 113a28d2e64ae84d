#!/usr/bin/env bash
# GET /v1/companies at three sizes: the demo set (data/demo via `mds import
# exchanges`), ~113k real ISINs (from the casparser ISIN list in
# ../shared/data/pypi, turned into a companies CSV in a temp dir) and a
# deterministic synthetic 1,000,000-company CSV (bench/gen_companies.py, seed
# 42). For each: time from start to /readyz, peak RSS (VmHWM), throughput of
# the first page (limit=50, authenticated, limits on) against a baseline server
# answering the identical bytes (body and headers, bar Date) with no work
# (crates/mds-catalog/examples/baseline.rs), and a deep-cursor page against
# the first page: once on the node as it serves (a page asked for again is
# kept, --page-cache-mib) and once on a second node keeping none (every page
# made). Then p50/p99 latency of searches and filter combinations at
# moderate load (wrk -c2) on the node keeping none. For the demo
# set also GET /v1/news/{slug} (data/demo/news.jsonl imported), GET
# /v1/usage and the first page of GET /v1/news (pages kept, and pages made
# on the node keeping none), each against a baseline answering its
# identical bytes. Also
# the in-process catalog build time and page costs (examples/catalog_bench.rs),
# the import's time, and a cold start (the catalog snapshot deleted: the node
# builds the catalog from the rows): its time to ready and peak RSS.
# For the demo set also the kept first page on a node with --redis (at
# $REDIS, default redis://127.0.0.1:6379; skipped when none answers)
# against the node without. The baseline is nginx with 2 workers serving the
# identical bytes (BASELINE=hyper: the example server instead; see lib.sh).
# The set `news` is bench/news-list.sh with the same rounds, seconds and
# connections: 500 distinct /v1/news?isin=…&limit=20 pages, every one made,
# with 100,000 articles in the store, against nginx serving one of them.
# Every ratio is measured within this run, ABBA-alternated, median of ROUNDS.
#
# Usage: bench/run.sh [ROUNDS=5] [SECONDS=8] [CONNECTIONS=16] [SETS="demo real 1m news"]
# With WORKERS=n in the environment, mds and the baselines alike run n tokio
# worker threads (TOKIO_WORKER_THREADS); unset, tokio's default: one per core.
# Needs: cargo, python3, curl, wrk and nginx (installed with apt-get when
# missing).
# Nothing is written outside a temp dir (removed at exit) and target/ (or
# $CARGO_TARGET_DIR, which is honoured).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}; SECS=${2:-8}; CONNS=${3:-16}; SETS=${4:-"demo real 1m news"}
if [[ -n ${WORKERS:-} ]]; then export TOKIO_WORKER_THREADS=$WORKERS; fi
CASPARSER=${CASPARSER:-../shared/data/pypi/casparser_isin_2026.6.9_equity_shares.csv.gz}
REDIS=${REDIS:-redis://127.0.0.1:6379}
. bench/lib.sh
release_bench_setup
echo "# bench/run.sh $ROUNDS $SECS $CONNS \"$SETS\"${WORKERS:+ (WORKERS=$WORKERS)} on $(date -u +%F) at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"

# The first page against the baseline, and a deep page (the last of a full
# walk) against the first page, on the mds at `port`: ABBA-alternated, median
# of ROUNDS.
first_and_deep() { # label port bport first deep
  local label=$1 port=$2 bport=$3 first=$4 deep=$5 i
  run_wrk $port "$first" "$CONNS" 2 >/dev/null; run_wrk $bport "$first" "$CONNS" 2 >/dev/null # warm-up
  local r=() b=() d=() rb=() rd=() a x y
  for i in $(seq 1 "$ROUNDS"); do
    if (( i % 2 )); then
      a=$(run_wrk $port "$first" "$CONNS" "$SECS"); sleep 1; x=$(run_wrk $bport "$first" "$CONNS" "$SECS"); sleep 1
      y=$(run_wrk $port "$deep" "$CONNS" "$SECS")
    else
      y=$(run_wrk $port "$deep" "$CONNS" "$SECS"); sleep 1; x=$(run_wrk $bport "$first" "$CONNS" "$SECS"); sleep 1
      a=$(run_wrk $port "$first" "$CONNS" "$SECS")
    fi
    sleep 1
    set -- $a; r+=("$1"); local ap50=$2 ap99=$3
    set -- $x; b+=("$1"); set -- $y; d+=("$1")
    rb+=("$(echo "${r[-1]} / ${b[-1]}" | bc -l)"); rd+=("$(echo "${r[-1]} / ${d[-1]}" | bc -l)")
    printf '%s round %d: first page %s req/s (p50 %s ms, p99 %s ms) | baseline %s | deep %s (p50 %s, p99 %s) | mds/baseline %.3f | first/deep %.3f\n' \
      "$label" "$i" "${r[-1]}" "$ap50" "$ap99" "$x" "${d[-1]}" "$(echo $y | cut -d' ' -f2)" "$(echo $y | cut -d' ' -f3)" "${rb[-1]}" "${rd[-1]}"
  done
  printf '%s median: first page %s req/s, baseline %s, deep %s; mds/baseline %.3f; deep page cost / first page cost %.3f\n' \
    "$label" "$(median "${r[@]}")" "$(median "${b[@]}")" "$(median "${d[@]}")" "$(median "${rb[@]}")" "$(median "${rd[@]}")"
}

bench_set() { # name
  local name=$1 db="$WORK/$1.db" port=18301 bport=18302 nport=18303 uport=18304 cport=18305 rport=18306 csv=""
  export MDS_DATABASE_URL="sqlite://$db?mode=rwc"
  $BIN migrate >/dev/null
  case $name in
    demo) $BIN import exchanges --nse data/demo/nse_EQUITY_L_2024-01.csv --bse data/demo/bse_Equity_2024-01.csv --as-of 2024-01-30 \
            --mcap data/demo/nse_mcap_2024-03-28.csv >/dev/null 2>&1
          $BIN import news data/demo/news.jsonl >/dev/null ;;
    real) csv=$WORK/real.csv; python3 bench/gen_companies.py casparser "$CASPARSER" "$csv" ;;
    1m)   csv=$WORK/1m.csv; python3 bench/gen_companies.py synthetic 1000000 42 "$csv" ;;
  esac
  if [[ -n $csv ]]; then
    # The import upserts, then builds the catalog and saves its snapshot.
    local t0; t0=$(date +%s.%N)
    $BIN import companies "$csv" >/dev/null
    printf 'import (upsert, catalog build, snapshot save): %.1f s\n' "$(echo "$(date +%s.%N) - $t0" | bc -l)"
  fi
  $BIN tiers set bench --rate-limit-per-minute 1000000000 --monthly-quota 1000000000000 >/dev/null
  $BIN accounts create bench >/dev/null
  KEY=$($BIN keys create --account bench --tier bench 2>/dev/null | tail -n 1)
  echo; echo "## $name"
  if [[ -n $csv ]]; then
    echo "csv: $(stat -c %s "$csv") bytes"
    echo "catalog in-process (examples/catalog_bench):"; "$EX/catalog_bench" "$csv" | sed 's/^/  /'
  fi
  $BIN serve --listen 127.0.0.1:$port 2>"$WORK/$name.log" & local pid=$!
  printf 'time to ready (catalog from the snapshot the import saved): %.2f s\n' "$(ready_wait $port)"
  local first=/v1/companies?limit=50
  curl -sf -D "$WORK/body.h" -H "Authorization: Bearer $KEY" "http://127.0.0.1:$port$first" >"$WORK/body.json"
  echo "first page: $(stat -c %s "$WORK/body.json") bytes, $(grep -o '"isin"' "$WORK/body.json" | wc -l) rows"
  baseline $bport "$WORK/body.json" "$WORK/body.h"; local bpid=$BASELINE_PID
  read -r pages _ cur < <(walk_list $port /v1/companies "")
  local deep="/v1/companies?limit=50&cursor=$cur"
  echo "deep cursor: after a walk of $pages pages of 200"
  first_and_deep "pages kept" $port $bport "$first" "$deep"
  # The same with the page cache off: every page made, as for a query not
  # asked before.
  MDS_PAGE_CACHE_MIB=0 $BIN serve --listen 127.0.0.1:$cport 2>>"$WORK/$name.log" & local cpid=$!
  ready_wait $cport >/dev/null
  first_and_deep "pages made" $cport $bport "$first" "$deep"
  # Against the node that keeps no page, so that every request makes its
  # page: what a query not asked before costs. The last term is the slowest
  # first page of examples/catalog_bench's 20,000 random terms on 1M rows.
  echo "filters and searches at moderate load, pages made (wrk -c2, ${SECS}s each): req/s p50_ms p99_ms"
  for q in "search=ta" "search=zq" "search=ltd" "search=india" "search=limited" "search=nestl%C3%A9" \
           "search=%E0%A4%AD%E0%A4%BE" "search=ab&exchange=nse&market_cap=small_cap" "industry=Banks" \
           "industry=Banks&exchange=bse&market_cap=large_cap" "letter=m&exchange=nse" "market_cap=mid_cap" \
           "ticker=M%26M" "search=suj&letter=s&industry=Steel" "search=ia%20i"; do
    echo "  $q: $(run_wrk $cport "/v1/companies?limit=50&$q" 2 "$SECS")"
  done
  # A search, made on every request, against the baseline serving its bytes.
  local search="/v1/companies?limit=50&search=bank"
  curl -sf -D "$WORK/search.h" -H "Authorization: Bearer $KEY" "http://127.0.0.1:$cport$search" >"$WORK/search.json"
  baseline $nport "$WORK/search.json" "$WORK/search.h"; local spid=$BASELINE_PID
  echo "search=bank: $(stat -c %s "$WORK/search.json") bytes, $(grep -o '"isin"' "$WORK/search.json" | wc -l) rows"
  versus "search=bank, pages made" $cport $nport "$search"
  kill $spid; wait $spid 2>/dev/null || true
  if [[ $name == demo ]]; then
    # One article (the first of the file) and the key's usage, each against a
    # baseline serving the bytes mds answered. /v1/usage counts requests into
    # its body ("requests": N), so mds's body changes as it is measured; the
    # baseline serves the body captured here, once (the same size give or
    # take a digit or two).
    local slug news=/v1/news/ usage=/v1/usage
    slug=$(head -n 1 data/demo/news.jsonl | python3 -c 'import json, sys; print(json.load(sys.stdin)["slug"])')
    news+=$slug
    curl -sf -D "$WORK/news.h" -H "Authorization: Bearer $KEY" "http://127.0.0.1:$port$news" >"$WORK/news.json"
    curl -sf -D "$WORK/usage.h" -H "Authorization: Bearer $KEY" "http://127.0.0.1:$port$usage" >"$WORK/usage.json"
    baseline $nport "$WORK/news.json" "$WORK/news.h"; local npid=$BASELINE_PID
    baseline $uport "$WORK/usage.json" "$WORK/usage.h"; local upid=$BASELINE_PID
    echo "news article: $(stat -c %s "$WORK/news.json") bytes; usage: $(stat -c %s "$WORK/usage.json") bytes"
    versus news $port $nport "$news"
    versus usage $port $uport "$usage"
    kill $npid $upid; wait $npid 2>/dev/null || true; wait $upid 2>/dev/null || true
    # The news list: its first page (the default limit, 50 articles without
    # their body) against a baseline serving the bytes mds answered, on the
    # node that keeps pages (a hot page costs no store read) and on the one
    # that keeps none (every request reads the store).
    local list=/v1/news
    curl -sf -D "$WORK/list.h" -H "Authorization: Bearer $KEY" "http://127.0.0.1:$port$list" >"$WORK/list.json"
    baseline $nport "$WORK/list.json" "$WORK/list.h"; npid=$BASELINE_PID
    echo "news list first page: $(stat -c %s "$WORK/list.json") bytes, $(grep -o '"slug"' "$WORK/list.json" | wc -l) articles"
    versus "news list, pages kept" $port $nport "$list"
    versus "news list, pages made" $cport $nport "$list"
    kill $npid; wait $npid 2>/dev/null || true
    # The same kept page on a node sharing its limits through Redis
    # (leases, the usage mirror) against this node, which limits alone.
    if redis-cli -u "$REDIS" ping >/dev/null 2>&1; then
      MDS_REDIS_URL=$REDIS $BIN serve --listen 127.0.0.1:$rport 2>>"$WORK/$name.log" & local rpid=$!
      ready_wait $rport >/dev/null
      side_by_side "pages kept (--redis | alone)" $rport "$first" $port "$first"
      kill -TERM $rpid; wait $rpid 2>/dev/null || true
    else
      echo "pages kept, --redis: skipped (no Redis at $REDIS)"
    fi
  fi
  kill -TERM $cpid; wait $cpid 2>/dev/null || true
  echo "peak RSS (VmHWM) of mds serve: $(awk '/VmHWM/ {printf "%.0f MiB", $2/1024}' /proc/$pid/status)"
  kill $bpid; kill -TERM $pid; wait $pid 2>/dev/null || true; wait $bpid 2>/dev/null || true
  # A cold start: the snapshot removed, so the node builds the catalog from
  # the rows (and saves the snapshot again).
  python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("DELETE FROM catalog_snapshot_chunks"); c.commit()' "$db"
  $BIN serve --listen 127.0.0.1:$port 2>>"$WORK/$name.log" & pid=$!
  printf 'time to ready without a snapshot (builds it): %.2f s; ' "$(ready_wait $port)"
  echo "peak RSS $(awk '/VmHWM/ {printf "%.0f MiB", $2/1024}' /proc/$pid/status)"
  kill -TERM $pid; wait $pid 2>/dev/null || true
  rm -f "$db"* "${csv:-/nonexistent}"
}

for s in $SETS; do
  if [[ $s == news ]]; then echo; bash bench/news-list.sh "$ROUNDS" "$SECS" "$CONNS" 100000; else bench_set "$s"; fi
done
echo; echo "# done at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"
