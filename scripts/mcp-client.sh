#!/usr/bin/env bash
# The MCP tools (API.md section 12) through a real MCP client from outside
# the project: the `mcp` SDK from PyPI, in a virtual environment, over
# streamable HTTP against a real `mds demo` (POST /mcp) and over stdio
# (`mds mcp`, spawned by the SDK as a desktop agent would). The checks are
# scripts/mcp_check.py.
#
# Usage: scripts/mcp-client.sh
# Needs: cargo, python3 (>= 3.10) with venv, and PyPI through pip. The venv
# goes in a temp dir unless MCP_CLIENT_VENV names one to create or reuse.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib-client-check.sh
source scripts/lib-client-check.sh MCP_CLIENT_VENV

# The SDK's 1.x line: its client API (streamablehttp_client, ClientSession)
# is the one the check is written against; 2.x renamed it.
venv_install 'mcp>=1.20,<2'
versions mcp

step "mds demo"
start_demo_server

step "mcp_check.py (streamable HTTP and stdio)"
MDS_BASE_URL=$BASE MDS_API_KEY=$KEY MDS_BIN=$BIN "$VENV/bin/python" scripts/mcp_check.py
step "done"
