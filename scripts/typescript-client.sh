#!/usr/bin/env bash
# The TypeScript client (clients/typescript): installs its development
# dependencies from the lockfile (npm ci), checks that the committed
# src/generated/openapi.ts is what `npm run generate` makes from
# docs/openapi.json now, lints it (biome), type-checks it (tsc --noEmit,
# strict: the package without Node's types, then the package and its tests
# with them), and runs its tests (node:test) against real `mds demo` /
# `mds serve` processes that the tests start on free loopback ports, with
# the mds binary the Rust tests built; one test loads the built package in
# headless Chromium, one builds and packs a copy of the folder alone and
# installs the tarball with and without scripts.
#
# Usage: scripts/typescript-client.sh
# Needs: cargo, Node.js >= 20 with npm, the npm registry, and chromium
# (installed with apt-get when missing). MDS_BIN names an mds binary to use
# instead of building target/debug/mds.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib-steps.sh
source scripts/lib-steps.sh

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "node and npm are needed (Node.js >= 20)" >&2
  exit 1
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if (( major < 20 )); then
  echo "Node.js >= 20 is needed, this is $(node --version)" >&2
  exit 1
fi

if ! command -v chromium >/dev/null 2>&1; then
  step "apt-get install chromium"
  apt-get install -y -q chromium >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null 2>&1; }
fi
export MDS_TEST_REQUIRE_CHROMIUM=1

[[ -n "${MDS_BIN:-}" ]] || build_mds
export MDS_BIN
echo "mds: $MDS_BIN; node $(node --version), npm $(npm --version)"

cd clients/typescript
step "npm ci"
npm ci --no-audit --no-fund --loglevel=error

step "src/generated/openapi.ts matches docs/openapi.json"
if ! npm run --silent generate -- --check >/dev/null 2>&1; then
  echo "FAIL: src/generated/openapi.ts is not what docs/openapi.json generates: run \`npm run generate\` in clients/typescript and commit it" >&2
  exit 1
fi

step "biome check (lint and format)"
npm run --silent lint

step "tsc --noEmit (strict)"
npm run --silent typecheck

step "node --test (against a real mds)"
npm test --silent
step "done"
