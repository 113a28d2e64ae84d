#!/usr/bin/env bash
# The price checks of issue 43 on the whole real archives, run by hand:
# a store loaded as the demo loads its (the lists and change files of
# data/demo), but with the four corporate-action files of
# ../shared/data/actions and both price archives of ../shared/data/prices
# (~2.2 million bars), served on 127.0.0.1 and asked over HTTP
# (bench/price_checks.py says what is checked):
#  1. every split, bonus, consolidation and split+bonus of 2024-2026: the
#     unadjusted close steps by the action's factor at the ex-date, the
#     split-adjusted one moves less than an ordinary day (20%);
#  2. a lineage series across an ISIN change misses no trading day (every
#     day with a file in the archives).
# (That the two archives agree on their overlapping EQ rows is a test:
# crates/mds-import/tests/bhavcopy.rs.)
#
# Usage: bench/price-checks.sh [LIMIT]
#   LIMIT: check only the first LIMIT action groups and ISIN changes.
# MDS_BIN: the mds binary (else this tree's release build).
# SHARED: the shared data (default ../shared); absent, the script says so
#   and exits 2.
# PRICES: the price files to import instead of both archives (a quick try
#   on a subset, such as data/prices/*.tar.zst).
# STORE: the SQLite file of the store, kept after the run (else a temp
#   one); one that exists already is checked again without importing (to
#   look into a failure: `mds serve` it).
# Exits 1 when a check fails, 2 when the shared data are absent, 3 when an
# import fails.
set -euo pipefail
cd "$(dirname "$0")/.."
LIMIT=${1:-}
SHARED=${SHARED:-../shared}
if [[ ! -d $SHARED/data/actions || ! -d $SHARED/data/prices ]]; then
  echo "price-checks: $SHARED/data/actions and $SHARED/data/prices are absent: these checks read the whole real archives, which the repository does not carry; nothing checked" >&2
  exit 2
fi
PRICES=${PRICES:-$(ls "$SHARED"/data/prices/*.tar.zst)}
. bench/lib.sh
release_mds
bench_workdir
echo "# bench/price-checks.sh $LIMIT ($BIN) on $(date -u +%F) at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"

STORE=${STORE:-$WORK/mds.db}
[[ -e $STORE ]] && reuse=1 || reuse=
export MDS_DATABASE_URL="sqlite://$STORE?mode=rwc" MDS_LOG=warn
run() { # label command...: runs it (bounded), prints its time and last line
  local t0 out; t0=$(date +%s.%N)
  out=$(timeout 900 "${@:2}" 2>"$WORK/err") || { cat "$WORK/err" >&2; echo "price-checks: $1 failed" >&2; exit 3; }
  printf '%s: %.1f s; %s\n' "$1" "$(echo "$(date +%s.%N) - $t0" | bc -l)" "$(echo "$out" | tail -n 1)"
}
if [[ -n $reuse ]]; then
  echo "reusing the store $STORE"
  "$BIN" accounts create bench >/dev/null 2>&1 || true
  KEY=$("$BIN" keys create --account bench --tier bench 2>/dev/null | tail -n 1)
else
  # As `mds demo` loads its store (mds_import::demo::imports), but with the
  # shared actions and prices: the 2024 lists (and the key, bench_store), the
  # 2026 lists, the change files, NSE's and BSE's actions, the prices.
  bench_store "$BIN" --mcap data/demo/nse_mcap_2024-03-28.csv
  run "2026 lists" "$BIN" import exchanges --nse data/demo/nse_EQUITY_L_2026-05-17.csv \
    --nse-sme data/demo/nse_SME_EQUITY_L_2026-05-17.csv --as-of 2026-05-17
  run "change files" "$BIN" import nse-changes --symbols data/demo/nse_symbolchange_2026-05-17.csv \
    --names data/demo/nse_namechange_2026-05-17.csv
  run "NSE actions" "$BIN" import nse-actions "$SHARED"/data/actions/nse_*.csv
  run "BSE actions" "$BIN" import bse-actions "$SHARED"/data/actions/bse_*.csv
  # shellcheck disable=SC2086 # PRICES is a list of paths
  run "prices" "$BIN" import nse-bhavcopy $PRICES
fi

# The trading days: every day that has a file in the archives imported;
# the files unpacked, to tell a failure's cause (did it trade that day?).
mkdir "$WORK/raw"
for f in $PRICES; do tar --zstd -xf "$f" -C "$WORK/raw"; done
find "$WORK/raw" -name '*.csv' | grep -oE '[0-9]{4}-[0-9]{2}-[0-9]{2}' | sort -u >"$WORK/days"

port=18431
"$BIN" serve --listen 127.0.0.1:$port 2>"$WORK/serve.log" & pid=$!
printf 'time to ready: %.2f s\n' "$(ready_wait $port)"
rc=0
timeout 1200 python3 bench/price_checks.py $port "$KEY" "$WORK/days" "$WORK/raw" $LIMIT || rc=$?
kill -TERM $pid; wait $pid 2>/dev/null || true
echo "# done at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"
exit $rc
