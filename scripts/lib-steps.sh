# Sourced by scripts/*.sh from the repository's root: `step` titles each step
# of a check with the seconds since it began, and `build_mds` builds this
# tree's mds binary and names it in MDS_BIN.
t0=$(date +%s)

# step TITLE...: prints `==> TITLE (Ns)`.
step() { printf '==> %s (%ss)\n' "$*" "$(( $(date +%s) - t0 ))"; }

# build_mds: cargo builds the mds binary (debug) and sets MDS_BIN to it;
# with MDS_BIN already naming a binary (.ci/run names the one its test run
# built), uses that one and builds nothing.
build_mds() {
  if [[ -n "${MDS_BIN:-}" && -x "$MDS_BIN" ]]; then
    step "mds: $MDS_BIN"
    return
  fi
  step "cargo build --bin mds"
  cargo build --quiet --bin mds
  MDS_BIN=${CARGO_TARGET_DIR:-$PWD/target}/debug/mds
}
