#!/usr/bin/env bash
# Usage: scripts/demo-seed.sh DB
# Loads the demo's data once into the SQLite file DB (it must not exist) by
# running `mds demo` until it serves, then stopping it. .ci/run exports DB as
# MDS_DEMO_SEED, and the checks that start a demo (scripts/lib-demo-server.sh,
# the Python and TypeScript clients' test fixtures) start it on a copy: each
# still runs a real `mds demo` on a store of its own, without each loading
# the same files again (most of a minute in a debug build).
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -eq 1 ]] || { echo "usage: $0 DB" >&2; exit 2; }
[[ ! -e "$1" ]] || { echo "$1 exists: the seed is made from an empty store" >&2; exit 2; }
# shellcheck source=scripts/lib-steps.sh
source scripts/lib-steps.sh
# shellcheck source=scripts/lib-demo-server.sh
source scripts/lib-demo-server.sh
build_mds
BIN=$MDS_BIN
WORK=$(mktemp -d)
trap 'stop_demo_server; rm -rf "$WORK"' EXIT
MDS_DEMO_SEED= start_demo_server
stop_demo_server
mkdir -p "$(dirname "$1")"
for suffix in "" -wal -shm; do
  [[ ! -f "$WORK/mds.db$suffix" ]] || mv "$WORK/mds.db$suffix" "$1$suffix"
done
echo "demo data loaded into $1"
