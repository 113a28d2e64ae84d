#!/usr/bin/env bash
# The import of the four corporate-action files of data/actions/ (issue 42;
# target: under 10 s and 200 MiB), on SQLite, into a store holding the
# demo's identity history (the NSE and BSE lists of 2024-01, NSE's of
# 2026-05-17, NSE's symbol changes): each command under /usr/bin/time -v,
# its wall clock, CPU and peak RSS, and its summary's first line. Then the
# NSE files again (nothing changes: idempotent).
#
# Usage: bench/actions-import.sh
# MDS_BIN: the binary to measure (else this tree's release build).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
release_mds
bench_workdir
export MDS_DATABASE_URL="sqlite://$WORK/mds.db?mode=rwc" MDS_LOG=warn
echo "# bench/actions-import.sh ($BIN) on $(date -u +%F) at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"
"$BIN" migrate >/dev/null
"$BIN" import exchanges --nse data/demo/nse_EQUITY_L_2024-01.csv --bse data/demo/bse_Equity_2024-01.csv --as-of 2024-01-31 >/dev/null
"$BIN" import exchanges --nse data/demo/nse_EQUITY_L_2026-05-17.csv --as-of 2026-05-17 >/dev/null
"$BIN" import nse-changes --symbols data/demo/nse_symbolchange_2026-05-17.csv >/dev/null

nse=(data/actions/nse_CF-CA-equities_2016-01-05_to_2025-07-18.csv.zst data/actions/nse_CF-CA-equities_2025-07-15_to_2026-07-15.csv.zst)
bse=(data/actions/bse_Corporate_Actions_2025-07-15_to_2026-07-15.csv.zst data/actions/bse_Corporate_Actions_2026-07-23_to_2026-08-31.csv.zst)
total=0
timed() { # label args...
  local label=$1; shift
  local out wall cpu rss
  out=$(/usr/bin/time -v "$BIN" import "$@" 2>&1) || { echo "$out" >&2; exit 1; }
  wall=$(echo "$out" | awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}')
  cpu=$(echo "$out" | awk -F': ' '/User time/ {u = $2} /System time/ {s = $2} END {printf "%.2f + %.2f s", u, s}')
  rss=$(echo "$out" | awk -F': ' '/Maximum resident/ {printf "%.0f MiB", $2 / 1024}')
  total=$(echo "$total + $wall" | bc -l)
  echo "$label: wall $wall s, CPU $cpu, peak RSS $rss"
  echo "$out" | grep -v -E '^\s+(Command|User|System|Percent|Elapsed|Average|Maximum|Exit|Major|Minor|Voluntary|Involuntary|Swaps|File|Socket|Signals|Page)' | head -n 3 | sed 's/^/  /'
}
timed "nse-actions, both NSE files" nse-actions "${nse[@]}"
timed "bse-actions, both BSE files" bse-actions "${bse[@]}"
echo "the four files: $total s of wall clock"
timed "nse-actions again (nothing changes)" nse-actions "${nse[@]}"
echo "# done at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"
