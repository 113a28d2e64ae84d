#!/usr/bin/env bash
# Peak memory (VmHWM, via /usr/bin/time -v) and wall time of `mds import
# news` of a deterministic synthetic file of N articles (bench/gen_news.py,
# seed 42, about 2.9 KB an article) into an empty SQLite store, and of a
# second import of the same file over it (every row unchanged).
#
# Usage: bench/news-import-memory.sh [N=100000] [BASELINE_BIN]
#   BASELINE_BIN: another `mds` binary (an older build) measured in the same
#   run, on the same file, for a ratio.
# Needs: cargo, python3, /usr/bin/time (installed with apt-get when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-100000}
BASE=${2:-}
[[ -x /usr/bin/time ]] || { apt-get install -y time >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y time >/dev/null; }; }
if [[ -z "${MDS_BIN:-}" ]]; then
  cargo build --release --quiet --bin mds
  MDS_BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/mds
fi
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
python3 bench/gen_news.py "$N" 42 "$WORK/news.jsonl"
echo "# bench/news-import-memory.sh $N on $(date -u +%F) at $(date -u +%T) UTC; file $(du -m "$WORK/news.jsonl" | cut -f1) MB"
measure() { # label binary
  rm -f "$WORK"/mds.db*
  MDS_LOG=warn "$2" --database "sqlite://$WORK/mds.db?mode=rwc" migrate >/dev/null
  for run in "into an empty store" "over the same rows"; do
    out=$(MDS_LOG=warn /usr/bin/time -v "$2" --database "sqlite://$WORK/mds.db?mode=rwc" import news "$WORK/news.jsonl" 2>&1)
    rss=$(echo "$out" | awk -F: '/Maximum resident set size/ {gsub(/ /,"",$2); print $2}')
    wall=$(echo "$out" | awk '/Elapsed \(wall clock\)/ {print $NF}')
    printf '%s, %s: peak RSS %d MiB, wall %s\n' "$1" "$run" $((rss / 1024)) "$wall"
  done
}
measure "this build" "$MDS_BIN"
[[ -n "$BASE" ]] && measure "baseline $(basename "$(dirname "$BASE")")" "$BASE"
exit 0
