#!/usr/bin/env bash
# The dashboard and the alert rules against a real Prometheus:
# `promtool check rules` and `promtool test rules` on deploy/prometheus/, then
# `mds demo` on a free loopback port and Debian's `prometheus` on another,
# scraping it every second with the rules loaded, ~20 s of traffic (callers'
# mistakes, 429s, a flood of made-up keys beyond the key lookup budget), and
# every query of deploy/grafana/mds-dashboard.json through Prometheus's HTTP
# API (scripts/mds_dashboard.py check: no query error, the traffic panels
# have data, the rules evaluate, the provoked alerts are pending).
#
# Usage: scripts/prometheus-check.sh [--pictures | --rules-only]
#   --rules-only  only `promtool check rules` and `promtool test rules`
#               (scripts/deploy-check.sh)
#   --pictures  a longer run (PICTURES_SECONDS, default 90) of what a healthy
#               node sees, drawn into docs/images/dashboard-*.png
#               (matplotlib pip-installed into a venv in the temp dir; set
#               PICTURES_VENV to reuse one)
# MDS_BIN=path/to/mds uses that binary instead of building this tree's.
# With MDS_TEST_REDIS_URL set and Redis answering, the node runs with
# --redis, so the dashboard's Redis series are checked too.
# Installs Debian's `prometheus` package when prometheus or promtool is
# missing (needs root). Loopback only; stops what it started on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib-demo-server.sh
source scripts/lib-apt.sh
t0=$(date +%s)
PICTURES=""
RULES_ONLY=""
[[ "${1:-}" == "--pictures" ]] && PICTURES=1
[[ "${1:-}" == "--rules-only" ]] && RULES_ONLY=1

apt_ensure prometheus prometheus promtool prometheus
prometheus --version 2>&1 | head -n 1

promtool check rules deploy/prometheus/mds-alerts.yml
promtool test rules deploy/prometheus/mds-alerts.test.yml
[[ -n "$RULES_ONLY" ]] && exit 0

if [[ -n "${MDS_BIN:-}" ]]; then
  BIN=$MDS_BIN
else
  cargo build --quiet --bin mds
  BIN=${CARGO_TARGET_DIR:-$PWD/target}/debug/mds
fi
WORK=$(mktemp -d)
PROM_PID=""
cleanup() {
  if [[ -n "$PROM_PID" ]]; then kill "$PROM_PID" 2>/dev/null || true; wait "$PROM_PID" 2>/dev/null || true; fi
  stop_demo_server
  rm -rf "$WORK"
}
trap cleanup EXIT

# The lookup budget low enough for the flood to pass it.
export MDS_KEY_LOOKUPS_PER_SECOND=5
if [[ -n "${MDS_TEST_REDIS_URL:-}" ]] && redis-cli -u "$MDS_TEST_REDIS_URL" ping >/dev/null 2>&1; then
  export MDS_REDIS_URL=$MDS_TEST_REDIS_URL
fi
start_demo_server
mds() { "$BIN" --database "$WORK/mds.db" "$@" 2>>"$WORK/cli.err" || { cat "$WORK/cli.err" >&2; return 1; }; }
mds tiers set dashboard-check --rate-limit-per-minute 100000 --monthly-quota 100000000 >/dev/null
mds tiers set dashboard-quota --rate-limit-per-minute 1000 --monthly-quota 5 >/dev/null
ROOMY_KEY=$(mds keys create --account demo --tier dashboard-check)
SLOW_KEY=$(mds keys create --account demo --tier evaluation)
QUOTA_KEY=$(mds keys create --account demo --tier dashboard-quota)
INSTANCE=${BASE#http://}
echo "mds: $BASE${MDS_REDIS_URL:+ (with --redis)}"

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PROM=http://127.0.0.1:$(free_port)
cat >"$WORK/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $PWD/deploy/prometheus/mds-alerts.yml
scrape_configs:
  - job_name: mds
    static_configs:
      - targets: ["$INSTANCE"]
EOF
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
  --web.listen-address="${PROM#http://}" >"$WORK/prometheus.log" 2>&1 &
PROM_PID=$!
up() { curl -sf "$PROM/api/v1/query" --data-urlencode "query=up{instance=\"$INSTANCE\"}" | grep -q '"value":\[[0-9.]*,"1"\]'; }
for _ in $(seq 1 100); do
  up && break
  kill -0 "$PROM_PID" 2>/dev/null || { cat "$WORK/prometheus.log" >&2; echo "prometheus exited" >&2; exit 1; }
  sleep 0.2
done
up || { tail -n 20 "$WORK/prometheus.log" >&2; echo "prometheus never scraped $INSTANCE" >&2; exit 1; }
echo "prometheus: $PROM, scraping $INSTANCE"

if [[ -n "$PICTURES" ]]; then SECS=${PICTURES_SECONDS:-90}; MODE=healthy; else SECS=${TRAFFIC_SECONDS:-20}; MODE=check; fi
start=$(date +%s)
python3 scripts/dashboard-traffic.py "$BASE" "$SECS" "$MODE" "$ROOMY_KEY" "$SLOW_KEY" "$QUOTA_KEY"
end=$(date +%s)
# Let the scrape after the traffic land and the rules see it.
sleep 3
python3 scripts/mds_dashboard.py check "$PROM" "$BASE" "$INSTANCE" "$end" "$MODE"

if [[ -n "$PICTURES" ]]; then
  VENV=${PICTURES_VENV:-$WORK/venv}
  if ! "$VENV/bin/python" -c 'import matplotlib' 2>/dev/null; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check 'matplotlib>=3.7,<4'
  fi
  "$VENV/bin/python" scripts/mds_dashboard.py pictures "$PROM" "$INSTANCE" "$start" "$end" docs/images
fi
echo "prometheus check: $(( $(date +%s) - t0 )) s"
