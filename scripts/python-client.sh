#!/usr/bin/env bash
# The Python client (clients/python): installs it with its test extras into a
# virtual environment, type-checks it (mypy --strict), lints and checks its
# formatting (ruff), and runs its tests (pytest) against a real `mds demo`
# that the tests start on a free loopback port.
#
# Usage: scripts/python-client.sh [PYTEST_ARGS...]
# Needs: cargo, python3 (>= 3.10) with venv, and PyPI through pip. The venv
# goes in a temp dir unless PY_CLIENT_VENV names one to create or reuse.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib-steps.sh
source scripts/lib-steps.sh

build_mds
export MDS_BIN

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
VENV=${PY_CLIENT_VENV:-$WORK/venv}
PKG=$PWD/clients/python

step "venv ($VENV) and pip install clients/python[test]"
[[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
PIP=("$VENV/bin/pip" install --quiet --disable-pip-version-check)
"${PIP[@]}" "$PKG[test]"
# A reused venv may hold an older build of the package: install this tree's.
"${PIP[@]}" --force-reinstall --no-deps "$PKG"
"$VENV/bin/python" -c 'import mds_client, sys; print("mds_client", mds_client.__version__, "on Python", sys.version.split()[0])'

cd "$PKG"
step "mypy --strict"
"$VENV/bin/mypy" --strict --cache-dir "$WORK/mypy-cache" src tests

step "ruff check, ruff format --check"
"$VENV/bin/ruff" check --no-cache .
"$VENV/bin/ruff" format --check --no-cache .

step "without the pandas extra: works, and to_pandas() says what to install"
[[ -x "$WORK/bare/bin/python" ]] || python3 -m venv "$WORK/bare"
"$WORK/bare/bin/pip" install --quiet --disable-pip-version-check "$PKG"
"$WORK/bare/bin/python" - <<'PY'
import importlib.util

import mds_client

assert importlib.util.find_spec("pandas") is None, "pandas is in the bare venv"
page = mds_client.CompanyPage.from_json({"data": [], "has_more": False, "next_cursor": None})
try:
    page.to_pandas()
except ImportError as exc:
    assert "pip install 'mds-client[pandas]'" in str(exc), exc
    print("ok:", exc)
else:
    raise SystemExit("to_pandas() worked without pandas")
PY

step "pytest (against a real mds demo)"
set +e
"$VENV/bin/pytest" -p no:cacheprovider -rs "$@" tests
rc=$?
set -e
if [[ $rc -eq 5 ]]; then
  echo "pytest collected no tests: that is a failure here" >&2
  exit 1
fi
step "done (pytest exit $rc)"
exit $rc
