#!/usr/bin/env bash
# The market routes against nginx serving the same bytes (issues 42 and 43):
# a company's corporate actions (with its lineage), the actions calendar, a
# one-year split-adjusted price series (~250 bars) and the whole market on
# a day, each on a node that keeps pages and on one that keeps none (every
# page made), ABBA-alternated, median of ROUNDS (lib.sh's `versus`).
#
# The store is the demo's (`mds demo` loads the repository's lists, change
# files, the four corporate-action files and the two price archives of
# data/), with a `bench` key too large to refuse. Access logs are on for
# both sides unless ACCESS_LOGS=off (lib.sh says how).
#
# Usage: bench/market.sh [ROUNDS=3] [SECONDS=5] [CONNECTIONS=64]
# (64 connections: the issues' targets are measured as the other list
# routes' are, `bench/run.sh 3 5 64`.)
# MDS_BIN: the binary to measure (else this tree's release build).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}; SECS=${2:-5}; CONNS=${3:-64}
. bench/lib.sh
need_wrk
release_mds
bench_workdir
bench_logs
echo "# bench/market.sh $ROUNDS $SECS $CONNS ($BIN, access logs $ACCESS_LOGS) on $(date -u +%F) at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"

db=$WORK/mds.db
port=18401 cport=18402 bport=18403
# The demo loads its data, then serves: stop it once it does.
t0=$(date +%s.%N)
"$BIN" --database "$db" demo --listen 127.0.0.1:$port >"$WORK/demo.out" 2>"$WORK/demo.err" & demo=$!
for _ in $(seq 1 3000); do
  grep -q '^Serving on http://' "$WORK/demo.out" 2>/dev/null && break
  kill -0 $demo 2>/dev/null || { cat "$WORK/demo.err" >&2; exit 1; }
  sleep 0.1
done
printf 'demo loaded and serving: %.1f s\n' "$(echo "$(date +%s.%N) - $t0" | bc -l)"
kill -TERM $demo; wait $demo 2>/dev/null || true

export MDS_DATABASE_URL="sqlite://$db"
"$BIN" tiers set bench --rate-limit-per-minute 1000000000 --monthly-quota 1000000000000 >/dev/null
"$BIN" accounts create bench >/dev/null
KEY=$("$BIN" keys create --account bench --tier bench 2>/dev/null | tail -n 1)

"$BIN" serve --listen 127.0.0.1:$port 2>"$WORK/kept.log" & pid=$!
printf 'time to ready: %.2f s\n' "$(ready_wait $port)"
MDS_PAGE_CACHE_MIB=0 "$BIN" serve --listen 127.0.0.1:$cport 2>"$WORK/made.log" & cpid=$!
ready_wait $cport >/dev/null

# BAJFINANCE today (its lineage holds the ISIN before the split of
# 2025-06-16); RELIANCE's last year of the symbol-keyed archive.
for path in \
  "/v1/companies/INE296A01032/actions" \
  "/v1/actions?ex_date_from=2025-01-01" \
  "/v1/companies/INE002A01018/prices?adjust=split&from=2025-08-21&to=2026-08-21" \
  "/v1/prices?date=2026-08-21"; do
  curl -sf -D "$WORK/h" -H "Authorization: Bearer $KEY" "http://127.0.0.1:$port$path" >"$WORK/body"
  echo; echo "## $path: $(stat -c %s "$WORK/body") bytes"
  baseline $bport "$WORK/body" "$WORK/h"; bpid=$BASELINE_PID
  versus "pages kept" $port $bport "$path"
  versus "pages made" $cport $bport "$path"
  kill $bpid; wait $bpid 2>/dev/null || true
done
echo
echo "peak RSS (VmHWM) of the node keeping pages: $(awk '/VmHWM/ {printf "%.0f MiB", $2/1024}' /proc/$pid/status)"
kill -TERM $pid $cpid; wait $pid 2>/dev/null || true; wait $cpid 2>/dev/null || true
echo "access-log lines written: mds $(cat "$WORK"/kept.log "$WORK"/made.log | grep -c '"request"\|request method=' || true)"
echo "# done at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"
