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
# shellcheck source=scripts/lib-client-check.sh
source scripts/lib-client-check.sh EVENTS_CLIENT_VENV

venv_install 'standardwebhooks>=1.0,<2' 'sseclient-py>=1.8,<2' 'requests>=2.31,<3'
versions standardwebhooks sseclient-py

step "mds demo --webhooks-allow-private"
DEMO_ARGS=--webhooks-allow-private start_demo_server

step "events_check.py"
MDS_BASE_URL=$BASE MDS_API_KEY=$KEY "$VENV/bin/python" scripts/events_check.py
step "done"
