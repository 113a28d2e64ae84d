#!/usr/bin/env bash
# Storage cost of the daily usage ledger: KEYS keys, each calling ROUTES
# routes on every one of DAYS days, written through the store's own
# apply_usage (one batch per day), on SQLite and, when MDS_TEST_POSTGRES_URL
# names a server, on PostgreSQL (a database made and dropped for the run).
# Prints the ledger's rows, the bytes of every usage table and index, and
# the time one day's batch took (crates/mds-store/examples/usage_ledger_storage.rs).
#
# Usage: bench/usage-ledger-storage.sh [KEYS=10000] [DAYS=31] [ROUTES="1 2 3"]
set -euo pipefail
cd "$(dirname "$0")/.."
KEYS=${1:-10000}; DAYS=${2:-31}; ROUTES=${3:-"1 2 3"}
cargo build --release --quiet -p mds-store --example usage_ledger_storage
BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/examples/usage_ledger_storage
for r in $ROUTES; do
  "$BIN" sqlite "$KEYS" "$DAYS" "$r"
  if [[ -n "${MDS_TEST_POSTGRES_URL:-}" ]]; then
    "$BIN" postgres "$KEYS" "$DAYS" "$r"
  fi
done
