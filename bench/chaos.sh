#!/usr/bin/env bash
# The long chaos run: tests/suite/chaos.rs's
# random_faults_under_load_keep_the_invariants (three `mds serve` nodes on a
# private PostgreSQL made with initdb and a private redis-server, under
# paced load) for minutes instead of CI's 40 s: random faults one after
# another, 2 s of calm between (a node SIGKILLed and started again as a
# new node, Redis SIGSTOPped for 2 s, Redis killed and restarted empty,
# PostgreSQL stopped for 1.5 s and started), then the invariants: no
# answer but a 5xx or none outside a fault window; the ledger equal on
# every node, what was served less at most the crash loss bound (100 ms of
# a killed node's traffic per kill, the usage mirror's) and at most the
# unanswered requests more; report = enforcement (the quota brought within
# reach and spent through every node); a revocation reaching every node
# within 1 s. Prints each fault and the figures.
#
# Usage: bench/chaos.sh [SECONDS=600] [SEED]
# Needs PostgreSQL's server binaries (/usr/lib/postgresql/*/bin) and
# redis-server.
set -euo pipefail
cd "$(dirname "$0")/.."
export MDS_CHAOS_SECONDS=${1:-600}
[ -n "${2:-}" ] && export MDS_CHAOS_SEED=$2
echo "# bench/chaos.sh $MDS_CHAOS_SECONDS ${2:-} on $(date -u +%F) at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"
cargo test --quiet -p mds --test suite -- chaos::random_faults_under_load_keep_the_invariants --exact --nocapture 2>&1 |
  grep -E '^(chaos|fault)|test result|panicked|^lost|more than'
echo "# done at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"
