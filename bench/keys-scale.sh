#!/usr/bin/env bash
# Keys at scale (issue 13): a release `mds serve` on SQLite stores holding
# 100 (the baseline), 10,000 and 1,000,000 keys: time to ready and RSS,
# the first request of keys the node has never seen against the same keys
# held, and a revocation's time to reach the node with the store reads it
# cost. See bench/keys_scale.py.
#
# Then a flood of made-up keys beside a held key's traffic (see `flood`).
#
# Usage: bench/keys-scale.sh [N ...]   (default: 100 10000 1000000)
#        bench/keys-scale.sh flood [ROUNDS=3] [SECONDS=10] [CONNECTIONS=16]
#        bench/keys-scale.sh hot OLD_BIN [ROUNDS=5] [SECONDS=10] [CONNECTIONS=16]
#          (a hot key's throughput on /v1/companies?limit=50, page kept,
#          this tree's build against OLD_BIN, e.g. a build of the commit
#          before the key cache, each on its own store of the demo data)
# Needs: cargo, python3, wrk (installed with apt-get when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
release_mds
# The flood (sourced by bench/keys-scale.sh with BIN set): a held key's
# throughput and p99 (wrk, $CONNS connections) while a second wrk sends
# other keys as fast as it can: (a) one other held key (the load alone),
# (b) made-up well-formed keys (the load plus what unknown keys cost:
# lookups within the node's budget of 500/s, then 503). ABBA rounds; the
# node's store lookups per second during (b) from /metrics.
flood() {
  local work db port=18790 a=() b=() pa=() pb=() rates=() i x y l0 l1 sp which
  need_wrk
  work=$(mktemp -d); db=$work/mds.db
  MDS_DATABASE_URL=$db MDS_LOG=warn "$BIN" migrate >/dev/null
  MDS_DATABASE_URL=$db MDS_LOG=warn "$BIN" accounts create acme >/dev/null
  MDS_DATABASE_URL=$db MDS_LOG=warn "$BIN" tiers set bench --rate-limit-per-minute 1000000000 --monthly-quota 1000000000000 >/dev/null
  python3 bench/keys_scale.py keys "$work/held.txt" 2 "$db" bench
  python3 bench/keys_scale.py keys "$work/madeup.txt" 200000
  KEY=$(sed -n 1p "$work/held.txt"); sed -n 2p "$work/held.txt" >"$work/other.txt"
  MDS_DATABASE_URL=$db MDS_LOG=warn "$BIN" serve --listen 127.0.0.1:$port 2>/dev/null &
  local pid=$!
  ready_wait $port >/dev/null
  lookups() { curl -s http://127.0.0.1:$port/metrics | awk '$1=="mds_key_lookups_total" {print $2}'; }
  second() { KEYS_FILE=$1 wrk -t1 -c"$CONNS" -d"$SECS"s -s bench/keys_flood.lua "http://127.0.0.1:$port/" >/dev/null; }
  run_wrk $port "/v1/companies?limit=1" "$CONNS" 2 >/dev/null
  for i in $(seq 1 "$ROUNDS"); do
    for which in $( ((i % 2)) && echo "held madeup" || echo "madeup held"); do
      if [[ $which == held ]]; then
        second "$work/other.txt" & sp=$!; x=$(run_wrk $port "/v1/companies?limit=1" "$CONNS" "$SECS"); wait $sp
        a+=("${x%% *}"); pa+=("$(echo "$x" | cut -d' ' -f3)")
      else
        l0=$(lookups); second "$work/madeup.txt" & sp=$!; y=$(run_wrk $port "/v1/companies?limit=1" "$CONNS" "$SECS"); wait $sp; l1=$(lookups)
        b+=("${y%% *}"); pb+=("$(echo "$y" | cut -d' ' -f3)"); rates+=("$(echo "($l1 - $l0) / $SECS" | bc -l)")
      fi
      sleep 1
    done
    printf 'flood round %d: held key %s req/s (p99 %s ms) beside another held key | %s req/s (p99 %s ms) beside made-up keys, store lookups %.0f/s\n' \
      "$i" "${a[-1]}" "${pa[-1]}" "${b[-1]}" "${pb[-1]}" "${rates[-1]}"
  done
  printf 'flood median: held key %s req/s beside made-up keys against %s beside another held key, ratio %.3f; p99 %s ms against %s ms, ratio %.2f; store lookups %.0f/s (budget 500/s)\n' \
    "$(median "${b[@]}")" "$(median "${a[@]}")" "$(echo "$(median "${b[@]}") / $(median "${a[@]}")" | bc -l)" \
    "$(median "${pb[@]}")" "$(median "${pa[@]}")" "$(echo "$(median "${pb[@]}") / $(median "${pa[@]}")" | bc -l)" "$(median "${rates[@]}")"
  kill $pid; wait $pid 2>/dev/null || true
  rm -rf "$work"
}

echo "# bench/keys-scale.sh $* on $(date -u +%F) at $(date -u +%T) UTC; load average $(cut -d' ' -f1-3 /proc/loadavg)"
hot() { # old binary
  local old=$1 work; work=$(mktemp -d)
  need_wrk
  for which in new old; do
    local bin=$BIN; [[ $which == old ]] && bin=$old
    export MDS_DATABASE_URL="sqlite://$work/$which.db?mode=rwc" MDS_LOG=warn
    bench_store "$bin" --mcap data/demo/nse_mcap_2024-03-28.csv
    echo "$KEY" >"$work/$which.key"
  done
  MDS_DATABASE_URL="sqlite://$work/new.db?mode=rwc" $BIN serve --listen 127.0.0.1:18791 2>/dev/null &
  local p1=$!
  MDS_DATABASE_URL="sqlite://$work/old.db?mode=rwc" $old serve --listen 127.0.0.1:18792 2>/dev/null &
  local p2=$!
  ready_wait 18791 >/dev/null; ready_wait 18792 >/dev/null
  # Each server is driven with its own store's key (wrk_key, bench/lib.sh,
  # redefined to pick it by port).
  local newkey oldkey; newkey=$(cat "$work/new.key"); oldkey=$(cat "$work/old.key")
  wrk_key() { if [[ $1 == 18792 ]]; then echo "$oldkey"; else echo "$newkey"; fi; }
  side_by_side "hot key (this build | $old)" 18791 "/v1/companies?limit=50" 18792 "/v1/companies?limit=50"
  kill $p1 $p2; wait $p1 $p2 2>/dev/null || true
  rm -rf "$work"
}
if [[ ${1:-} == hot ]]; then
  ROUNDS=${3:-5}; SECS=${4:-10}; CONNS=${5:-16}
  hot "$2"
  exit
fi
if [[ ${1:-} == flood ]]; then
  ROUNDS=${2:-3}; SECS=${3:-10}; CONNS=${4:-16}
  flood
  exit
fi
if (($#)); then set -- "$@"; else set -- 100 10000 1000000; fi
python3 bench/keys_scale.py "$BIN" "$@"
