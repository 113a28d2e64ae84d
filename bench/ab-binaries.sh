#!/usr/bin/env bash
# One mds binary against another (a change against the revision before it),
# on the same store contents (the demo set, a `bench` tier too large to
# refuse), ABBA-alternated, median of ROUNDS: the ratio new/old of req/s for
# a list page kept and made (a node with MDS_PAGE_CACHE_MIB=0), a company's
# detail, an article, the news list, the caller's usage, and a change-feed
# page kept and made. Each binary runs its own two nodes on its own SQLite
# file.
#
# Usage: bench/ab-binaries.sh OLD_BIN NEW_BIN [ROUNDS=4] [SECONDS=4] [CONNECTIONS=16]
# With ONLY="list page kept,article" (names as printed), only those rows.
# Build OLD_BIN from another revision in a worktree of its own
# (`git worktree add ../old REV && cargo build --release --bin mds` there).
# Sharing a CARGO_TARGET_DIR with another tree, touch the worktree's
# crates/*/src/lib.rs and src/main.rs first: path crates keep their artifact
# names across trees, and cargo may otherwise take the other tree's.
# Needs: wrk (installed with apt-get when missing), python3, bc.
set -euo pipefail
cd "$(dirname "$0")/.."
OLD=$1; NEW=$2; ROUNDS=${3:-4}; SECS=${4:-4}; CONNS=${5:-16}
. bench/lib.sh
need_wrk
bench_workdir
export MDS_LOG=warn
echo "# bench/ab-binaries.sh $OLD $NEW $ROUNDS $SECS $CONNS on $(date -u +%F) at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"

start() { # BIN name port: imports the demo set, a bench key (in $WORK/name.key), two nodes (port: pages kept, port+1: made)
  local bin=$1 d=$WORK/$2 port=$3
  mkdir -p "$d"
  export MDS_DATABASE_URL="sqlite://$d/mds.db?mode=rwc"
  $bin migrate >/dev/null
  $bin import exchanges --nse data/demo/nse_EQUITY_L_2024-01.csv --bse data/demo/bse_Equity_2024-01.csv \
    --mcap data/demo/nse_mcap_2024-03-28.csv --as-of 2024-01-30 >/dev/null 2>&1
  $bin import news data/demo/news.jsonl >/dev/null
  $bin tiers set bench --rate-limit-per-minute 1000000000 --monthly-quota 1000000000000 >/dev/null
  $bin accounts create bench >/dev/null
  $bin keys create --account bench --tier bench 2>/dev/null | tail -n 1 >"$WORK/$2.key"
  $bin serve --listen 127.0.0.1:$port 2>"$d/kept.log" &
  MDS_PAGE_CACHE_MIB=0 $bin serve --listen 127.0.0.1:$((port + 1)) 2>"$d/made.log" &
  ready_wait $port >/dev/null; ready_wait $((port + 1)) >/dev/null
}
start "$OLD" old 18501
start "$NEW" new 18511
rps() { # key port path
  wrk -t1 -c"$CONNS" -d"${SECS}s" -H "Authorization: Bearer $1" "http://127.0.0.1:$2$3" | awk '/Requests\/sec/ {print $2}'
}
isin=$(sed -n 2p data/demo/nse_EQUITY_L_2024-01.csv | awk -F, '{print $7}')
slug=$(head -n 1 data/demo/news.jsonl | python3 -c 'import json, sys; print(json.load(sys.stdin)["slug"])')
ko=$(cat "$WORK/old.key"); kn=$(cat "$WORK/new.key")
for t in "list page kept:0:/v1/companies?limit=50" "list page made:1:/v1/companies?limit=50" \
         "company detail:0:/v1/companies/$isin" "article:0:/v1/news/$slug" "news list:0:/v1/news" "usage:0:/v1/usage" \
         "change page kept:0:/v1/companies/changes?limit=50" "change page made:1:/v1/companies/changes?limit=50"; do
  IFS=: read -r name off path <<<"$t"
  [[ -z ${ONLY:-} || ",$ONLY," == *",$name,"* ]] || continue
  rs=()
  for r in $(seq 1 "$ROUNDS"); do
    if (( r % 2 )); then
      o=$(rps "$ko" $((18501 + off)) "$path"); n=$(rps "$kn" $((18511 + off)) "$path")
    else
      n=$(rps "$kn" $((18511 + off)) "$path"); o=$(rps "$ko" $((18501 + off)) "$path")
    fi
    rs+=("$(echo "$n / $o" | bc -l)")
  done
  printf '%s: new/old rounds %s| median %.3f\n' "$name" "$(printf '%.3f ' "${rs[@]}")" "$(median "${rs[@]}")"
done
echo "# done at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"
