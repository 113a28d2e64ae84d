# Sourced by scripts/*.sh: starts `mds demo` on a free loopback port over a
# SQLite file in $WORK and sets BASE (http://127.0.0.1:PORT) and KEY (the
# demo key). Needs $WORK (a temp dir) and $BIN (the mds binary); the words of
# $DEMO_ARGS, if set, are added to `mds demo`'s. With MDS_DEMO_SEED (a SQLite
# file a demo has already loaded, as scripts/demo-seed.sh makes it and
# .ci/run exports it), the demo starts on a copy of it: `mds demo` then
# reuses the data it finds and skips most of a minute of loading.
start_demo_server() {
  copy_demo_seed "$WORK/mds.db"
  MDS_LOG=warn "$BIN" --database "$WORK/mds.db" demo --listen 127.0.0.1:0 ${DEMO_ARGS:-} >"$WORK/demo.out" 2>"$WORK/demo.err" &
  DEMO_PID=$!
  # The demo loads its data first (lists, change files, 21k actions, 296
  # days of prices, news): most of a minute in a debug build, more on busy
  # cores.
  for _ in $(seq 1 1800); do
    grep -q '^Serving on http://' "$WORK/demo.out" 2>/dev/null && break
    kill -0 "$DEMO_PID" 2>/dev/null || { cat "$WORK/demo.err" >&2; echo "mds demo exited" >&2; return 1; }
    sleep 0.1
  done
  BASE=$(sed -n 's/^Serving on \(http:\/\/[^ ]*\).*/\1/p' "$WORK/demo.out")
  KEY=$(sed -n '2s/^ *//p' "$WORK/demo.out")
  [[ -n "$BASE" && "$KEY" == mds_* ]] || { cat "$WORK/demo.out" "$WORK/demo.err" >&2; echo "no server/key" >&2; return 1; }
}

stop_demo_server() {
  if [[ -n "${DEMO_PID:-}" ]]; then kill "$DEMO_PID" 2>/dev/null || true; wait "$DEMO_PID" 2>/dev/null || true; fi
}

# copy_demo_seed DB: copies $MDS_DEMO_SEED (with its -wal and -shm files) to
# DB, when MDS_DEMO_SEED names a file; else does nothing.
copy_demo_seed() {
  [[ -n "${MDS_DEMO_SEED:-}" && -f "$MDS_DEMO_SEED" ]] || return 0
  local suffix
  for suffix in "" -wal -shm; do
    [[ ! -f "$MDS_DEMO_SEED$suffix" ]] || cp "$MDS_DEMO_SEED$suffix" "$1$suffix"
  done
}
