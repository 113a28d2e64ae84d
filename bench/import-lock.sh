#!/usr/bin/env bash
# How long `mds import companies` of N companies holds the SQLite store's
# write lock, against how long the whole import takes, on this tree and on a
# baseline commit (BASE, built from a temporary git worktree into a target
# dir of its own, $TARGET/bench-base: cargo cannot tell two checkouts of one
# workspace apart in one target dir), in the same run. Each binary imports, into a fresh store, the
# deterministic synthetic file of N companies (bench/gen_companies.py, seed
# 42), then a second file of the same ISINs with other values (seed 43:
# every row an update). Beside each import, bench/lock_probe.py asks for the
# write lock every 10 ms, as `mds keys revoke` would; its longest wait is the
# longest the import (its upsert, or the save of the catalog snapshot after
# it) kept another writer out. SQLite gives up on a lock after 5 s
# (BUSY_TIMEOUT): a wait beyond that is a failed revocation. On this tree the
# store also logs how long its write transaction held the lock (locked_ms).
#
# Usage: bench/import-lock.sh [N=1000000] [BASE=840d8ad] [ROUNDS=3]
#   BASE: the commit to compare with (default: the last one before the
#   import staged its rows). Each round runs both binaries, ABBA-alternated
#   (odd rounds the baseline first); medians of the rounds are reported, and
#   the median of each round's ratio.
# Needs: cargo, git, python3. Nothing is written outside a temp dir (removed
# at exit) and target/ (or $CARGO_TARGET_DIR). The first run builds the
# baseline's dependencies too (some minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}; BASE=${2:-840d8ad}; ROUNDS=${3:-3}
TARGET=${CARGO_TARGET_DIR:-$PWD/target}
WORK=$(mktemp -d)
cleanup() {
  [[ -n ${PROBE:-} ]] && kill "$PROBE" 2>/dev/null || true
  git worktree remove --force "$WORK/base" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

git worktree add --quiet --detach "$WORK/base" "$BASE"
(cd "$WORK/base" && CARGO_TARGET_DIR=$TARGET/bench-base cargo build --release --quiet --bin mds)
cp "$TARGET/bench-base/release/mds" "$WORK/mds-base"
cargo build --release --quiet --bin mds
cp "$TARGET/release/mds" "$WORK/mds-this"
grep -q mds_upsert_staging "$WORK/mds-this" || { echo "this tree's binary does not stage upserts" >&2; exit 1; }

python3 bench/gen_companies.py synthetic "$N" 42 "$WORK/companies.csv"
python3 bench/gen_companies.py synthetic "$N" 43 "$WORK/updates.csv"
source bench/lib.sh
echo "# bench/import-lock.sh $N $BASE $ROUNDS on $(date -u +%F) at $(date -u +%T) UTC; file $(du -m "$WORK/companies.csv" | cut -f1) MB; uptime:$(uptime | sed 's/.*load/ load/')"

# import BIN DB FILE → "wall_s longest_wait_s locked_ms" (locked_ms "-" when not logged)
import() {
  local bin=$1 db=$2 file=$3 t0 t1 out probe_out
  probe_out=$WORK/probe.out
  python3 bench/lock_probe.py "$db" >"$probe_out" & PROBE=$!
  sleep 0.5
  t0=$(date +%s.%N)
  out=$(MDS_LOG=warn,mds_store=debug "$bin" --database "sqlite://$db" import companies "$file" 2>&1)
  t1=$(date +%s.%N)
  kill -TERM "$PROBE"; wait "$PROBE" || true; PROBE=
  echo "$out" | grep -q '^imported' || { echo "import failed: $out" >&2; exit 1; }
  local locked; locked=$(echo "$out" | sed -n 's/.*upsert staged.*locked_ms=\([0-9]*\).*/\1/p' | tail -1)
  printf '%.2f %s %s\n' "$(echo "$t1 - $t0" | bc -l)" "$(awk '{print $4}' "$probe_out")" "${locked:--}"
}

declare -A R
for round in $(seq 1 "$ROUNDS"); do
  order=$( (( round % 2 )) && echo "base this" || echo "this base")
  for which in $order; do
    db=$WORK/$which.db
    "$WORK/mds-$which" --database "sqlite://$db?mode=rwc" migrate >/dev/null
    "$WORK/mds-$which" --database "sqlite://$db?mode=rwc" accounts create acme >/dev/null
    for kind in insert update; do
      file=$([[ $kind == insert ]] && echo "$WORK/companies.csv" || echo "$WORK/updates.csv")
      import "$WORK/mds-$which" "$db" "$file" >"$WORK/result"
      R[$which,$kind]+="$(<"$WORK/result");"
      read -r w l k <"$WORK/result"
      printf 'round %d %s %s: import %.2f s, longest writer wait %.3f s, store: lock held %s ms\n' "$round" "$which" "$kind" "$w" "$l" "$k"
    done
    rm -f "$db" "$db-wal" "$db-shm"
    sleep 2
  done
done

# field N of each run of WHICH,KIND
field() { tr ';' '\n' <<<"${R[$1,$2]}" | sed '/^$/d' | cut -d' ' -f"$3"; }
for kind in insert update; do
  label=$([[ $kind == insert ]] && echo "into an empty store" || echo "every row an update")
  mapfile -t bw < <(field base "$kind" 1); mapfile -t bl < <(field base "$kind" 2)
  mapfile -t tw < <(field this "$kind" 1); mapfile -t tl < <(field this "$kind" 2); mapfile -t tk < <(field this "$kind" 3)
  q1=(); q2=(); q3=()
  for i in "${!bw[@]}"; do
    q1+=("$(echo "${tl[i]} / ${bw[i]}" | bc -l)"); q2+=("$(echo "${tl[i]} / ${bl[i]}" | bc -l)"); q3+=("$(echo "${tw[i]} / ${bw[i]}" | bc -l)")
  done
  printf '%s, median of %d: base import %.2f s, longest writer wait %.3f s | this import %.2f s, longest writer wait %.3f s (store: lock held %s ms)\n' \
    "$label" "$ROUNDS" "$(median "${bw[@]}")" "$(median "${bl[@]}")" "$(median "${tw[@]}")" "$(median "${tl[@]}")" "$(median "${tk[@]}")"
  printf '%s, median ratios: this wait / base import %.3f; this wait / base wait %.3f; this import / base import %.3f\n' \
    "$label" "$(median "${q1[@]}")" "$(median "${q2[@]}")" "$(median "${q3[@]}")"
done
