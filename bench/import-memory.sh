#!/usr/bin/env bash
# Peak memory (VmHWM, via /usr/bin/time -v) and wall time of `mds import
# companies` of a deterministic synthetic file of N companies
# (bench/gen_companies.py, seed 42) into an empty SQLite store, and of a
# second import of the same file over it (every row an update). The import
# includes building and saving the catalog snapshot.
#
# Usage: bench/import-memory.sh [N=1000000]
# Needs: cargo, python3, /usr/bin/time (installed with apt-get when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
[[ -x /usr/bin/time ]] || { apt-get install -y time >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y time >/dev/null; }; }
cargo build --release --quiet --bin mds
BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/mds
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
python3 bench/gen_companies.py synthetic "$N" 42 "$WORK/companies.csv"
echo "# bench/import-memory.sh $N on $(date -u +%F) at $(date -u +%T) UTC; file $(du -m "$WORK/companies.csv" | cut -f1) MB"
MDS_LOG=warn "$BIN" --database "sqlite://$WORK/mds.db?mode=rwc" migrate >/dev/null
for run in "into an empty store" "over the same rows"; do
  out=$(MDS_LOG=warn /usr/bin/time -v "$BIN" --database "sqlite://$WORK/mds.db?mode=rwc" import companies "$WORK/companies.csv" 2>&1)
  rss=$(echo "$out" | awk -F: '/Maximum resident set size/ {gsub(/ /,"",$2); print $2}')
  wall=$(echo "$out" | awk '/Elapsed \(wall clock\)/ {print $NF}')
  printf '%s: peak RSS %d MiB, wall %s\n' "$run" $((rss / 1024)) "$wall"
done
