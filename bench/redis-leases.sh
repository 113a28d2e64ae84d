#!/usr/bin/env bash
# Limits shared through Redis, at the speed of local ones? The same release
# binary and store served twice, without Redis and with --redis, driven
# alternately by wrk over loopback (GET /v1/companies?limit=50, page kept):
# req/s and p99 ratios, then Redis commands per admitted request, counted
# with INFO commandstats, for a key whose limit the run cannot reach and for
# a key of 600/min held at its limit (1 s and 2 s leases).
#
# Usage: bench/redis-leases.sh [ROUNDS=5] [SECONDS=10] [CONNECTIONS=64]
# Needs redis-server on 127.0.0.1:6379 (MDS_BENCH_REDIS to use another).
# MDS_BIN=path/to/mds measures that binary instead of this tree's build.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}; SECS=${2:-10}; CONNS=${3:-64}
REDIS=${MDS_BENCH_REDIS:-redis://127.0.0.1:6379}
if [[ -n "${MDS_BIN:-}" ]]; then BIN=$MDS_BIN; else cargo build --release --quiet; BIN=$PWD/target/release/mds; fi
. bench/lib.sh
need_wrk
bench_workdir
export MDS_DATABASE_URL="sqlite://$WORK/bench.db?mode=rwc" MDS_LOG=warn
$BIN migrate >/dev/null
$BIN import exchanges --nse data/demo/nse_EQUITY_L_2024-01.csv --bse data/demo/bse_Equity_2024-01.csv \
  --mcap data/demo/nse_mcap_2024-03-28.csv >/dev/null 2>&1
$BIN tiers set bench --rate-limit-per-minute 1000000000 --monthly-quota 1000000000000 >/dev/null
$BIN tiers set six --rate-limit-per-minute 600 --monthly-quota 1000000000000 >/dev/null
$BIN accounts create bench >/dev/null
KEY=$($BIN keys create --account bench --tier bench 2>/dev/null | tail -n 1)
SIX=$($BIN keys create --account bench --tier six 2>/dev/null | tail -n 1)
$BIN serve --listen 127.0.0.1:18191 2>"$WORK/local.log" &
$BIN serve --listen 127.0.0.1:18192 --redis "$REDIS" 2>"$WORK/redis.log" &
$BIN serve --listen 127.0.0.1:18193 --redis "$REDIS" --lease-ttl-ms 2000 2>"$WORK/redis2.log" &
for port in 18191 18192 18193; do ready_wait $port >/dev/null; done
URL='/v1/companies?limit=50'

echo "== req/s and p99: --redis | without Redis (key limit out of reach) =="
side_by_side "with Redis | without" 18192 "$URL" 18191 "$URL"

rcli() { redis-cli -u "$REDIS" "$@"; }
# Since the last CONFIG RESETSTAT: "sent run", the commands the nodes sent
# (scripts, EVALSHA/EVAL, and any plain command) and every command Redis ran,
# the scripts' inner calls included (INFO commandstats counts both).
commands() {
  rcli INFO commandstats | awk -F'[:=,]' '
    /^cmdstat_/ && $1 != "cmdstat_info" && $1 != "cmdstat_config" {
      all += $3; if ($1 == "cmdstat_evalsha" || $1 == "cmdstat_eval") sent += $3
    }
    END {print sent+0, all+0}'
}
# wrk on port with key for SECS: "requests admitted" (2xx/3xx).
admitted() {
  local out; out=$(wrk -t1 -c"$CONNS" -d"${SECS}s" -H "Authorization: Bearer $2" "http://127.0.0.1:$1$URL")
  local all bad; all=$(echo "$out" | awk '/requests in/ {print $1}'); bad=$(echo "$out" | awk '/Non-2xx/ {print $5}')
  echo $(( all - ${bad:-0} ))
}
per_request() { # label port key
  admitted "$2" "$3" >/dev/null   # warm-up: the leases grow to their size
  rcli CONFIG RESETSTAT >/dev/null
  local n c sent all; n=$(admitted "$2" "$3"); c=$(commands); sent=${c% *}; all=${c#* }
  printf '%s: %s admitted; %s scripts sent (%.4f per admitted request); %s commands run with their inner calls (%.4f per admitted)\n' \
    "$1" "$n" "$sent" "$(echo "$sent / $n" | bc -l)" "$all" "$(echo "$all / $n" | bc -l)"
}
echo "== Redis commands per admitted request (INFO commandstats) =="
per_request "limit out of reach, 1 s leases" 18192 "$KEY"
per_request "600/min at its limit, 1 s leases" 18192 "$SIX"
per_request "600/min at its limit, 2 s leases" 18193 "$SIX"
