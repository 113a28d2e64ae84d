#!/usr/bin/env bash
# Traces (API.md section 16) read by an outside decoder: a real `mds demo
# --otlp-endpoint` exports to a small OTLP/HTTP receiver on loopback, two
# requests are sent with a W3C traceparent, and scripts/otlp_check.py decodes
# what arrived with OpenTelemetry's own messages (`opentelemetry-proto` from
# PyPI, through protobuf's JSON parser and its binary encoding): the spans
# are in the caller's trace, under its span, with the route templates,
# statuses and key prefix, their store calls as child spans, and no key
# material.
#
# Usage: scripts/otlp-check.sh
# Needs: cargo, python3 (>= 3.10) with venv, and PyPI through pip. The venv
# goes in a temp dir unless OTLP_CHECK_VENV names one to create or reuse.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib-client-check.sh
source scripts/lib-client-check.sh OTLP_CHECK_VENV
RECEIVER_PID=
on_exit() {
  if [[ -n "$RECEIVER_PID" ]]; then kill "$RECEIVER_PID" 2>/dev/null || true; wait "$RECEIVER_PID" 2>/dev/null || true; fi
}

venv_install 'opentelemetry-proto>=1.20,<2'
versions opentelemetry-proto protobuf

step "OTLP/HTTP receiver on loopback"
mkdir "$WORK/otlp"
"$VENV/bin/python" scripts/otlp_check.py receive "$WORK/otlp" &
RECEIVER_PID=$!
for _ in $(seq 1 100); do [[ -s "$WORK/otlp/port" ]] && break; sleep 0.1; done
ENDPOINT="http://127.0.0.1:$(cat "$WORK/otlp/port")"
echo "receiver at $ENDPOINT"

step "mds demo --otlp-endpoint $ENDPOINT"
DEMO_ARGS="--otlp-endpoint $ENDPOINT" start_demo_server

TRACE=4bf92f3577b34da6a3ce929d0e0e4736
PARENT=00f067aa0ba902b7
step "two requests with traceparent 00-$TRACE-$PARENT-01"
for path in /v1/companies/INE296A01024/history "/v1/news/$KEY"; do
  curl -sS -o /dev/null -w "%{http_code}\n" -H "Authorization: Bearer $KEY" \
    -H "traceparent: 00-$TRACE-$PARENT-01" "$BASE$path"
done

step "otlp_check.py check"
"$VENV/bin/python" scripts/otlp_check.py check "$WORK/otlp" --trace "$TRACE" --parent "$PARENT" --key "$KEY"
step "done"
