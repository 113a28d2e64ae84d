#!/usr/bin/env bash
# Peak memory (VmHWM, via /usr/bin/time -v) and wall time of the three
# steps of an identity history of N companies (bench/gen_companies.py
# history, seed 42) into an empty SQLite store: `mds import exchanges` of
# the 2024-01-31 list, then of the 2026-05-17 list, then `mds import
# nse-changes` of the symbol- and name-change files, then the 2026-05-17
# list again (which changes nothing and moves no generation). Each step that moves
# the companies generation includes building and saving the catalog
# snapshot; the size of that catalog, and of its history per company, are
# printed (the debug line of `mds_node::catalog_load`).
#
# Usage: bench/identity-import-memory.sh [N=1000000] [BIN]
#   BIN: an mds binary to measure instead of this tree's release build.
# Needs: cargo, python3, /usr/bin/time (installed with apt-get when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
[[ -x /usr/bin/time ]] || { apt-get install -y time >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y time >/dev/null; }; }
if [[ -n ${2:-} ]]; then
  BIN=$2
else
  cargo build --release --quiet --bin mds
  BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/mds
fi
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
python3 bench/gen_companies.py history "$N" 42 "$WORK" 2>/dev/null
DB="sqlite://$WORK/mds.db?mode=rwc"
MDS_LOG=warn "$BIN" --database "$DB" migrate >/dev/null
echo "# bench/identity-import-memory.sh $N on $(date -u +%F) at $(date -u +%T) UTC"
step() {
  local what=$1; shift
  local out rss wall
  out=$(MDS_LOG=warn,mds_node::catalog_load=debug /usr/bin/time -v "$BIN" --database "$DB" import "$@" 2>&1) || { echo "$out" >&2; exit 1; }
  rss=$(echo "$out" | awk -F: '/Maximum resident set size/ {gsub(/ /,"",$2); print $2}')
  wall=$(echo "$out" | awk '/Elapsed \(wall clock\)/ {print $NF}')
  printf '%s: peak RSS %d MiB, wall %s\n' "$what" $((rss / 1024)) "$wall"
  echo "$out" | grep -E '^(imported |identity: )' | sed 's/^/  /'
  # The catalog the step built (none when nothing changed): its size, and
  # what its history costs a company.
  echo "$out" | { grep 'catalog built' || true; } | sed -E 's/.* rows=([0-9]+) bytes=([0-9]+) history_bytes=([0-9]+).*/\1 \2 \3/' |
    awk '{printf "  catalog: %d rows, %.1f MB, history %.1f MB (%.1f bytes a company)\n", $1, $2/1e6, $3/1e6, $3/$1}'
}
step "import exchanges 2024 (empty store)" exchanges --as-of 2024-01-31 --nse "$WORK/EQUITY_L_2024-01-31.csv"
step "import exchanges 2026" exchanges --as-of 2026-05-17 --nse "$WORK/EQUITY_L_2026-05-17.csv"
step "import nse-changes" nse-changes --symbols "$WORK/symbolchange.csv" --names "$WORK/namechange.csv"
step "import exchanges 2026 again (writes nothing)" exchanges --as-of 2026-05-17 --nse "$WORK/EQUITY_L_2026-05-17.csv"
echo "store: $(du -m "$WORK/mds.db" | cut -f1) MB"
