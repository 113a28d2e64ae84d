#!/usr/bin/env bash
# Keys at scale (issue 13): a release `mds serve` on SQLite stores holding
# 100 (the baseline), 10,000 and 1,000,000 keys: time to ready and RSS,
# the first request of keys the node has never seen against the same keys
# held, and a revocation's time to reach the node with the store reads it
# cost. See bench/keys_scale.py.
#
# Usage: bench/keys-scale.sh [N ...]   (default: 100 10000 1000000)
# Needs: cargo, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin mds
BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/mds
echo "# bench/keys-scale.sh on $(date -u +%F) at $(date -u +%T) UTC; load average $(cut -d' ' -f1-3 /proc/loadavg)"
if (($#)); then set -- "$@"; else set -- 100 10000 1000000; fi
python3 bench/keys_scale.py "$BIN" "$@"
