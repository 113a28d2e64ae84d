#!/usr/bin/env bash
# Events (API.md section 11) through clients from outside the project: the
# Standard Webhooks reference library (`standardwebhooks` from PyPI) verifies
# real deliveries to a receiver on loopback, and an EventSource client
# (`sseclient-py`) reads the stream resumed with Last-Event-ID, against a
# real `mds demo` started with --webhooks-allow-private (development only:
# it lets webhooks reach http and loopback). The checks are
# scripts/events_check.py.
#
# Usage: scripts/events-client.sh
# Needs: cargo, python3 (>= 3.10) with venv, and PyPI through pip. The venv
# goes in a temp dir unless EVENTS_CLIENT_VENV names one to create or reuse.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib-steps.sh
source scripts/lib-steps.sh

build_mds
BIN=$MDS_BIN

WORK=$(mktemp -d)
# shellcheck source=scripts/lib-demo-server.sh
source scripts/lib-demo-server.sh
trap 'stop_demo_server; rm -rf "$WORK"' EXIT
VENV=${EVENTS_CLIENT_VENV:-$WORK/venv}

step "venv ($VENV) and pip install standardwebhooks, sseclient-py, requests"
[[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check 'standardwebhooks>=1.0,<2' 'sseclient-py>=1.8,<2' 'requests>=2.31,<3'
"$VENV/bin/python" -c 'import importlib.metadata as m; print("standardwebhooks", m.version("standardwebhooks"), "sseclient-py", m.version("sseclient-py"))'

step "mds demo --webhooks-allow-private"
DEMO_ARGS=--webhooks-allow-private start_demo_server

step "events_check.py"
MDS_BASE_URL=$BASE MDS_API_KEY=$KEY "$VENV/bin/python" scripts/events_check.py
step "done"
