#!/usr/bin/env bash
# What the usage mirror costs (--redis mirrors each node's unflushed counts
# into Redis every 50 ms, so a node that never returns loses at most that
# much of its traffic). The same release binary on one SQLite store and one
# Redis, served twice, with the mirror and with --no-usage-mirror, driven
# alternately by wrk over loopback (GET /v1/companies?limit=1, a counted
# request whose page is kept: the request path at its cheapest, so the
# metering shows most): req/s and p99 ratios (ABBA, median of ROUNDS), then
# the Redis commands the mirror adds per second and per admitted request
# (INFO commandstats).
#
# Usage: bench/usage-mirror.sh [ROUNDS=5] [SECONDS=10] [CONNECTIONS=64]
# Needs redis-server on 127.0.0.1:6379 (MDS_BENCH_REDIS to use another).
# MDS_BIN=path/to/mds measures that binary instead of this tree's build.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}; SECS=${2:-10}; CONNS=${3:-64}
REDIS=${MDS_BENCH_REDIS:-redis://127.0.0.1:6379}
if [[ -n "${MDS_BIN:-}" ]]; then BIN=$MDS_BIN; else cargo build --release --quiet --bin mds; BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/mds; fi
. bench/lib.sh
need_wrk
bench_workdir
export MDS_DATABASE_URL="sqlite://$WORK/bench.db?mode=rwc" MDS_LOG=warn
bench_store "$BIN"
echo "# bench/usage-mirror.sh $ROUNDS $SECS $CONNS on $(date -u +%F) at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"
$BIN serve --listen 127.0.0.1:18291 --redis "$REDIS" 2>"$WORK/mirror.log" &
$BIN serve --listen 127.0.0.1:18292 --redis "$REDIS" --no-usage-mirror 2>"$WORK/plain.log" &
for port in 18291 18292; do ready_wait $port >/dev/null; done
URL='/v1/companies?limit=1'

echo "== req/s and p99: mirror | no mirror =="
side_by_side "mirror | no mirror" 18291 "$URL" 18292 "$URL"

rcli() { redis-cli -u "$REDIS" "$@"; }
scripts() { rcli INFO commandstats | awk -F'[:=,]' '/^cmdstat_(evalsha|eval|sadd|smembers):/ {n += $3} END {print n+0}'; }
per_second() { # label port
  rcli CONFIG RESETSTAT >/dev/null
  local out n c; out=$(wrk -t1 -c"$CONNS" -d"${SECS}s" -H "Authorization: Bearer $KEY" "http://127.0.0.1:$2$URL")
  n=$(echo "$out" | awk '/requests in/ {print $1}'); c=$(scripts)
  printf '%s: %s answered in %s s; %s scripts and sets (%.1f a second, %.4f per request; both nodes, the idle one too)\n' \
    "$1" "$n" "$SECS" "$c" "$(echo "$c / $SECS" | bc -l)" "$(echo "$c / $n" | bc -l)"
}
echo "== Redis scripts under load (INFO commandstats) =="
per_second "mirror" 18291
per_second "no mirror" 18292
echo "# done at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"
