#!/usr/bin/env bash
# Cost of rate limiting and metering on GET /v1/companies?limit=50: the same
# release binary and data, served twice (limits on, and --no-limits), driven
# alternately by wrk over loopback. Prints each round and the median ratio.
#
# Usage: bench/limits-overhead.sh [ROUNDS=5] [SECONDS=10] [CONNECTIONS=16]
# MDS_BIN=path/to/mds measures that binary instead of building this tree's
# (e.g. an older build, for a before/after comparison).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}; SECS=${2:-10}; CONNS=${3:-16}
command -v wrk >/dev/null || { apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }; }
if [[ -n "${MDS_BIN:-}" ]]; then
  BIN=$MDS_BIN
else
  cargo build --release --quiet
  BIN=$PWD/target/release/mds
fi
WORK=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT
export MDS_DATABASE_URL="sqlite://$WORK/bench.db?mode=rwc" MDS_LOG=warn
$BIN import exchanges --nse data/demo/nse_EQUITY_L_2024-01.csv --bse data/demo/bse_Equity_2024-01.csv \
  --mcap data/demo/nse_mcap_2024-03-28.csv >/dev/null 2>&1
# A tier whose limits the benchmark cannot reach: we measure the cost of
# checking and counting, not of refusing.
$BIN tiers set bench --rate-limit-per-minute 1000000000 --monthly-quota 1000000000000 >/dev/null
$BIN accounts create bench >/dev/null
KEY=$($BIN keys create --account bench --tier bench 2>/dev/null | tail -n 1)
$BIN serve --listen 127.0.0.1:18181 2>"$WORK/on.log" &
$BIN serve --listen 127.0.0.1:18182 --no-limits 2>"$WORK/off.log" &
for port in 18181 18182; do
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
done
URL=/v1/companies?limit=50
rps() { wrk -t1 -c"$CONNS" -d"${SECS}s" -H "Authorization: Bearer $KEY" "http://127.0.0.1:$1$URL" | awk '/Requests\/sec/ {print $2}'; }
rps 18181 >/dev/null; rps 18182 >/dev/null   # warm-up
on=(); off=(); ratios=()
for r in $(seq 1 "$ROUNDS"); do
  # ABBA: alternate which server goes first, with a pause between runs, so
  # neither always inherits the other's closing connections.
  if (( r % 2 )); then a=$(rps 18181); sleep 2; b=$(rps 18182); else b=$(rps 18182); sleep 2; a=$(rps 18181); fi
  sleep 2
  on+=("$a"); off+=("$b"); ratios+=("$(echo "$a / $b" | bc -l)")
  printf 'round %d: limits on %s req/s, off %s req/s, ratio %.3f\n' "$r" "$a" "$b" "${ratios[-1]}"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
printf 'median: on %s req/s, off %s req/s, ratio on/off %.3f (overhead %.1f%%)\n' \
  "$(median "${on[@]}")" "$(median "${off[@]}")" "$(median "${ratios[@]}")" "$(echo "(1 - $(median "${ratios[@]}")) * 100" | bc -l)"
# The limited server metered what it admitted: stop it (SIGTERM flushes) and
# show that the store has the counts.
kill -TERM %1; wait %1 2>/dev/null || true
curl -s -H "Authorization: Bearer $KEY" http://127.0.0.1:18182/v1/usage | grep -o '"current_month":{[^}]*}' || true
