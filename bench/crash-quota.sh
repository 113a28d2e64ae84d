#!/usr/bin/env bash
# Issue 40's scale-out check, looped: three `mds serve` nodes on PostgreSQL
# and a private Redis, a key with a monthly quota of 1,500, 24 concurrent
# clients spread over the nodes, one node SIGKILLed once 1,200 are
# answered, the clients going on against every node. Each round checks
# that the survivors admit no more than the quota plus the dead node's
# last 100 ms, report no more than the quota nor than was admitted, then
# report what they enforce (tests/suite/crash.rs,
# a_node_dying_near_the_quota_under_many_clients_admits_no_more; rounds
# take turns: clients as fast as they go, paced at ~250 requests/s, and as
# fast with MDS_LEASE_TTL_MS=250, under the usage mirror's 500 ms
# staleness, so a dead node's records come due before its mirror is taken).
#
# Usage: [MDS_TEST_CLUSTER_NODES=1] bench/crash-quota.sh [ROUNDS=10]
# (MDS_TEST_CLUSTER_NODES=1: the nodes told there is one, as an operator
# who left MDS_NODES out runs them: larger leases, the same bounds.)
# Runs the test against a release build of this tree (MDS_BIN=path/to/mds
# for another binary). Needs MDS_TEST_POSTGRES_URL (default
# postgres://postgres@127.0.0.1:5432/test) and redis-server.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-10}
if [[ -n "${MDS_BIN:-}" ]]; then BIN=$MDS_BIN; else cargo build --release --quiet --bin mds; BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/mds; fi
export MDS_TEST_POSTGRES_URL=${MDS_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}
MDS_TEST_BIN=$BIN MDS_CRASH_ROUNDS=$ROUNDS cargo test --quiet -p mds --test suite \
  crash::a_node_dying_near_the_quota_under_many_clients_admits_no_more -- --nocapture 2>&1 |
  grep -E '^round|panicked|test result|admitted|reports|lost'
