# Sourced by the checks that run a client from outside the project against
# a real `mds demo` (scripts/mcp-client.sh, events-client.sh,
# otlp-check.sh, schemathesis.sh, generated-client.sh), from the repository's root: builds mds (BIN), makes WORK
# (a temp dir) and sets VENV to the virtual environment to use, the one
# named by the variable whose name is $1 (to create or reuse) or else one in
# WORK. On exit the demo server stops, `on_exit` runs (a check defines it to
# stop what else it started) and WORK goes.
# shellcheck source=scripts/lib-steps.sh
source scripts/lib-steps.sh
# shellcheck source=scripts/lib-demo-server.sh
source scripts/lib-demo-server.sh

build_mds
BIN=$MDS_BIN
WORK=$(mktemp -d)
on_exit() { :; }
trap 'stop_demo_server; on_exit; rm -rf "$WORK"' EXIT
VENV=${!1:-$WORK/venv}

# venv_install SPEC...: the step that creates VENV (unless it exists) and
# pip installs SPEC... into it.
venv_install() {
  step "venv ($VENV) and pip install $*"
  [[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "$@"
}

# versions DIST...: prints each installed distribution's version.
versions() {
  "$VENV/bin/python" -c 'import importlib.metadata as m, sys; print(*(f"{d} {m.version(d)}" for d in sys.argv[1:]), "on Python", sys.version.split()[0])' "$@"
}
