#!/usr/bin/env bash
# Loads GET /docs of a real `mds demo` server in headless Chromium, with every
# other network access disabled, and checks that Redoc rendered the document:
# the DOM holds the three operations, no console error was logged, and the
# page made no request outside the server. Writes a screenshot next to the
# DOM in the temp dir when KEEP=1 (and prints where).
#
# Usage: scripts/check-docs-page.sh
# Needs: cargo, chromium (installed with apt-get when missing), curl.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib-demo-server.sh
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [[ -z "$CHROME" ]]; then
  { apt-get install -y chromium >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y chromium >/dev/null; }; }
  CHROME=$(command -v chromium)
fi
# shellcheck source=scripts/lib-steps.sh
source scripts/lib-steps.sh
build_mds
BIN=$MDS_BIN
WORK=$(mktemp -d)
trap 'stop_demo_server; [[ "${KEEP:-}" == 1 ]] && echo "kept $WORK" || rm -rf "$WORK"' EXIT
start_demo_server
echo "server: $BASE"

# --host-resolver-rules: any host other than the server's fails to resolve, so
# a CDN reference would show up as a failed load (and an error) here.
flags=(--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update
  --no-first-run --disable-sync --disable-extensions --user-data-dir="$WORK/profile"
  --host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
  --enable-logging=stderr --v=0 --virtual-time-budget=15000 --window-size=1280,2000)
t0=$(date +%s.%N)
timeout 120 "$CHROME" "${flags[@]}" --log-net-log="$WORK/net.json" --dump-dom "$BASE/docs" >"$WORK/dom.html" 2>"$WORK/chrome.log"
timeout 120 "$CHROME" "${flags[@]}" --screenshot="$WORK/docs.png" "$BASE/docs" >/dev/null 2>>"$WORK/chrome.log"
echo "chromium: $(echo "$(date +%s.%N) - $t0" | bc -l | xargs printf '%.1f') s for DOM + screenshot"

fail=0
for op in "List companies" "Get an article" "Usage of the calling key" "Daily usage of the calling key" "/v1/companies" "/v1/news/{slug}" "/v1/usage/daily"; do
  grep -qF "$op" "$WORK/dom.html" || { echo "FAIL: rendered page lacks \"$op\""; fail=1; }
done
# Redoc shows its own error box when it cannot load or parse the document.
if grep -qiE 'Something went wrong|Error downloading|Failed to load' "$WORK/dom.html"; then
  echo "FAIL: Redoc reported an error"; fail=1
fi
# Every console message (console.log/warn/error, "Uncaught ...") is logged
# as an INFO:CONSOLE line; the page should log nothing.
if grep -E 'CONSOLE|Uncaught|net::ERR_' "$WORK/chrome.log"; then
  echo "FAIL: console messages or failed loads (above)"; fail=1
fi
# Every URL requested while loading, from the net log, minus Chromium's own
# background traffic (update checks, accounts, dictionaries): only the server.
grep -o '"url":"[^"]*"' "$WORK/net.json" | cut -d'"' -f4 | sort -u >"$WORK/urls.txt"
grep -vE '^(data:|chrome|about:)' "$WORK/urls.txt" | grep -vF "$BASE/" \
  | grep -vE '^https?://([a-z0-9-]+\.)*(google\.com|googleapis\.com|gvt1\.com|gstatic\.com)(/|$)' >"$WORK/foreign.txt" || true
if [[ -s "$WORK/foreign.txt" ]]; then cat "$WORK/foreign.txt"; echo "FAIL: the page requested URLs outside the server (above)"; fail=1; fi
grep -qF "$BASE/docs/redoc.standalone.js" "$WORK/urls.txt" && grep -qF "$BASE/v1/openapi.json" "$WORK/urls.txt" \
  || { echo "FAIL: the page did not load the local script and document"; fail=1; }
if grep -Eo 'https?://[^"'"'"' )]+' "$WORK/dom.html" | grep -vE "^$BASE|json-schema.org|www.w3.org|redocly.com|github.com" | sort -u | grep .; then
  echo "note: absolute URLs in the rendered DOM (above); links only, nothing was fetched from them"
fi
[[ -s "$WORK/docs.png" ]] || { echo "FAIL: no screenshot"; fail=1; }
if [[ $fail == 0 ]]; then echo "OK: /docs renders the three operations, no console errors, offline"; fi
exit $fail
