# Sourced by scripts/*.sh from the repository's root: `step` titles each step
# of a check with the seconds since it began, and `build_mds` builds this
# tree's mds binary and names it in MDS_BIN.
t0=$(date +%s)

# step TITLE...: prints `==> TITLE (Ns)`.
step() { printf '==> %s (%ss)\n' "$*" "$(( $(date +%s) - t0 ))"; }

# build_mds: cargo builds the mds binary (debug) and sets MDS_BIN to it.
build_mds() {
  step "cargo build --bin mds"
  cargo build --quiet --bin mds
  MDS_BIN=${CARGO_TARGET_DIR:-$PWD/target}/debug/mds
}
