#!/usr/bin/env bash
# Slowloris against the release `mds serve`: 300 connections each holding
# half a request head, with the default header-read timeout (10 s), once
# with the default open-file limit and once under `prlimit --nofile=256`
# (fewer descriptors than half-sent requests). Figures: /healthz p50/p99
# with and without the attack (the same server, the same run), and the time
# until every half-sent request is dropped. Loopback only.
#
# Usage: bench/slowloris.sh [N=300]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
N=${1:-300}
cargo build --release --quiet --bin mds
BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/mds
bench_workdir
export MDS_LOG=warn MDS_DATABASE_URL="$WORK/mds.db"
"$BIN" migrate
echo "# bench/slowloris.sh $N on $(date -u +%F) at $(date -u +%T) UTC"
for limit in "" "256"; do
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  if [[ -n $limit ]]; then
    prlimit --nofile="$limit:$limit" -- "$BIN" serve --listen "127.0.0.1:$port" &
  else
    "$BIN" serve --listen "127.0.0.1:$port" &
  fi
  pid=$!
  for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
  printf 'nofile=%s ' "${limit:-$(ulimit -n)}"
  python3 bench/slowloris.py "$port" "$N"
  kill "$pid"; wait "$pid" 2>/dev/null || true
done
