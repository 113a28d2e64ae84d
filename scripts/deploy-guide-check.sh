#!/usr/bin/env bash
# Follows docs/deploy.md on this machine, as far as a container allows: the
# shell blocks the guide marks `<!-- deploy-guide-check: run -->` are run
# as written, in one bash session, with its absolute paths (/etc/mds,
# /var/lib/mds, /usr/local/bin/mds) moved under a temp root. The rest is
# done as the guide's files say, without systemd or a PostgreSQL admin:
# - the database is `mds_deploy_check` on the local PostgreSQL
#   (MDS_TEST_POSTGRES_URL's server; created, then dropped at the end), and
#   Redis a private `redis-server` on a free loopback port: both written
#   into /etc/mds/mds.env where the guide says to edit it;
# - the nodes' addresses, after the settings block, are moved to free
#   loopback ports in /etc/mds/node-N.env (the check block reads them);
# - the `start-nodes` block: each node is started as deploy/mds@.service
#   says (its EnvironmentFile, Environment, User, WorkingDirectory and
#   ExecStart lines, %i the node number; User and Group by setpriv), not
#   by systemctl;
# - the `nginx` block: nginx runs deploy/nginx.conf (upstream and ports
#   moved to the nodes and free loopback ports, a self-signed pair) and a
#   key's request goes through it over TLS.
# Then: /metrics on every public address is 404, each node stops on SIGTERM
# with exit 0, and everything made is removed (the `mds` user too, if this
# made it). Bounded: every wait has a limit; loopback only.
# Usage: scripts/deploy-guide-check.sh   (root; MDS_BIN=path uses that binary)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib-apt.sh
t0=$(date +%s)
apt_ensure nginx nginx-light redis-server redis-server createdb postgresql-client curl curl openssl openssl

if [[ -n "${MDS_BIN:-}" ]]; then
  BIN=$MDS_BIN
else
  cargo build --quiet --bin mds
  BIN=${CARGO_TARGET_DIR:-$PWD/target}/debug/mds
fi
PG=${MDS_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}
PG_SERVER=${PG%/*}
DB=mds_deploy_check
ROOT=$(mktemp -d)
chmod 0755 "$ROOT"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

PIDS=()
MADE_USER=""
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  psql -q "$PG_SERVER/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  [[ -n "$MADE_USER" ]] && userdel mds 2>/dev/null
  rm -rf "$ROOT"
}
trap cleanup EXIT

psql -q "$PG_SERVER/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null
psql -q "$PG_SERVER/postgres" -c "CREATE DATABASE $DB" >/dev/null
REDIS_PORT=$(free_port)
redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no >"$ROOT/redis.log" 2>&1 &
PIDS+=($!)
getent passwd mds >/dev/null || MADE_USER=1

# The guide's paths, under $ROOT.
moved() { sed -e "s#/etc/mds#$ROOT/etc/mds#g; s#/var/lib/mds#$ROOT/var/lib/mds#g; s#/usr/local/bin/mds#$ROOT/usr/local/bin/mds#g"; }
mkdir -p "$ROOT/etc" "$ROOT/var/lib" "$ROOT/usr/local/bin"

# The session the guide's blocks run in: what the guide leaves to the
# operator (editing the env files, systemctl, nginx) as functions.
set_settings() {
  local env=$ROOT/etc/mds/mds.env
  sed -i -e "s#^MDS_DATABASE_URL=.*#MDS_DATABASE_URL=$PG_SERVER/$DB#" \
    -e "s#^MDS_REDIS_URL=.*#MDS_REDIS_URL=redis://127.0.0.1:$REDIS_PORT#" "$env"
  grep -q '^MDS_NODES=3$' "$env" || { echo "mds.env: MDS_NODES is not 3 for the guide's three nodes" >&2; return 1; }
  local f
  for f in "$ROOT"/etc/mds/node-*.env; do
    sed -i -e "s#^MDS_LISTEN=.*#MDS_LISTEN=127.0.0.1:$(free_port)#" \
      -e "s#^MDS_ADMIN_LISTEN=.*#MDS_ADMIN_LISTEN=127.0.0.1:$(free_port)#" "$f"
  done
}
unit_lines() { sed -n "s/^$1=//p" deploy/mds@.service | sed "s/%i/$2/g" | moved; }
start_nodes() {
  local n user group wd exe envs sets
  user=$(unit_lines User 1)
  group=$(unit_lines Group 1)
  for n in 1 2 3; do
    wd=$(unit_lines WorkingDirectory "$n")
    exe=$(unit_lines ExecStart "$n")
    envs=$(unit_lines EnvironmentFile "$n")
    sets=$(unit_lines Environment "$n")
    (
      cd "$wd"
      set -a
      for f in $sets; do export "${f?}"; done
      for f in $envs; do . "$f"; done
      set +a
      # As systemd does: the process itself under the unit's user and
      # group (runuser would stand between, and answer SIGTERM itself).
      # shellcheck disable=SC2086 # ExecStart's words
      exec setpriv --reuid "$user" --regid "$group" --init-groups -- $exe
    ) >"$ROOT/node-$n.log" 2>&1 &
    PIDS+=($!)
    NODE_PIDS+=($!)
  done
  for n in 1 2 3; do
    local listen ok=""
    listen=$(sed -n 's/^MDS_LISTEN=//p' "$ROOT/etc/mds/node-$n.env")
    for _ in $(seq 1 300); do
      curl -fsS -o /dev/null "http://$listen/readyz" 2>/dev/null && { ok=1; break; }
      sleep 0.1
    done
    [[ -n "$ok" ]] || { cat "$ROOT/node-$n.log" >&2; echo "node $n never ready on $listen" >&2; return 1; }
  done
  echo "three nodes ready, as mds@1..3 would run them (user $user)"
}
run_nginx() {
  local conf=$ROOT/nginx/conf.d/mds.conf https upstream n
  cp -a /etc/nginx "$ROOT/nginx"
  rm -f "$ROOT"/nginx/conf.d/*.conf "$ROOT"/nginx/sites-enabled/*
  mkdir -p "$ROOT/nginx/tls" "$ROOT/nginx/log"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=api.example.com \
    -keyout "$ROOT/nginx/tls/api.example.com.key" -out "$ROOT/nginx/tls/api.example.com.crt" 2>/dev/null
  https=$(free_port)
  upstream=""
  for n in 1 2 3; do upstream+="    server $(sed -n 's/^MDS_LISTEN=//p' "$ROOT/etc/mds/node-$n.env");\n"; done
  sed -e "s#/etc/nginx/tls/#$ROOT/nginx/tls/#; s#/var/log/nginx/#$ROOT/nginx/log/#" \
    -e "/^    server 127.0.0.1:808[0-9]/d" -e "s#^    keepalive 64;#$upstream    keepalive 64;#" \
    -e "s#listen 80;#listen 127.0.0.1:$(free_port);#; s#listen 443 ssl;#listen 127.0.0.1:$https ssl;#" \
    -e "/listen \[::\]/d" deploy/nginx.conf >"$conf"
  sed -i -e "s#/etc/nginx/#$ROOT/nginx/#g; s#/var/log/nginx/#$ROOT/nginx/log/#g; s#/run/nginx.pid#$ROOT/nginx.pid#" \
    -e "s#^user .*#user www-data;#; s#^daemon .*##" "$ROOT/nginx/nginx.conf"
  nginx -t -q -e "$ROOT/nginx/log/error.log" -c "$ROOT/nginx/nginx.conf"
  nginx -e "$ROOT/nginx/log/error.log" -c "$ROOT/nginx/nginx.conf" -g 'daemon off;' &
  PIDS+=($!)
  local code=""
  for _ in $(seq 1 50); do
    code=$(curl -sk -o /dev/null -w '%{http_code}' --resolve "api.example.com:$https:127.0.0.1" \
      -H "Authorization: Bearer $KEY" "https://api.example.com:$https/v1/companies?limit=1" || true)
    [[ "$code" == 200 ]] && break
    sleep 0.1
  done
  [[ "$code" == 200 ]] || { cat "$ROOT/nginx/log/error.log" >&2; echo "through nginx: $code, not 200" >&2; return 1; }
  # The event stream's own location: its head passed on at once (a
  # heartbeat would take 15 s: the head is enough here; over HTTP/2 nginx
  # held it until the first body bytes).
  local head
  head=$(curl -sk -N -m 2 -D - -o /dev/null --resolve "api.example.com:$https:127.0.0.1" \
    -H "Authorization: Bearer $KEY" "https://api.example.com:$https/v1/events/stream" || true)
  grep -qi '^content-type: text/event-stream' <<<"$head" \
    || { echo "through nginx: /v1/events/stream did not open: $head" >&2; return 1; }
  code=$(curl -sk -o /dev/null -w '%{http_code}' --resolve "api.example.com:$https:127.0.0.1" "https://api.example.com:$https/metrics")
  [[ "$code" == 404 ]] || { echo "nginx: /metrics answered $code, not 404" >&2; return 1; }
  echo "nginx (deploy/nginx.conf) on https://127.0.0.1:$https: a key's request and an event stream reach the nodes; /metrics 404"
}

# The guide's blocks, in order, with the hooks above put where the guide
# has the steps a container cannot take as written: the settings edited
# right after the block that installs them.
NODE_PIDS=()
session=$ROOT/guide.sh
ROOT=$ROOT BIN=$BIN python3 - docs/deploy.md >"$session" <<'EOF'
import os, re, sys
root, binary = os.environ["ROOT"], os.environ["BIN"]
text = open(sys.argv[1]).read()
hooks = {"start-nodes": "start_nodes", "nginx": "run_nginx"}
marks = []
for m in re.finditer(r"<!-- deploy-guide-check: (\S+) -->\n```sh\n(.*?)```", text, re.S):
    mark, block = m.group(1), m.group(2)
    marks.append(mark)
    if mark in hooks:
        print(f"echo '== docs/deploy.md: {hooks[mark]} (in place of systemctl)'\n{hooks[mark]}")
        continue
    if mark != "run":
        sys.exit(f"docs/deploy.md: unknown mark {mark}")
    for path in ("/etc/mds", "/var/lib/mds", "/usr/local/bin/mds"):
        block = block.replace(path, root + path)
    block = block.replace("install -m 0755 target/release/mds ", f"install -m 0755 {binary} ")
    first = block.splitlines()[0].replace("'", "")
    print(f"echo '== docs/deploy.md: {first}'\n{block}", end="")
    if "/etc/mds/node-" in block and "install" in block:
        print("set_settings")
        marks.append("settings")
for needed in ("start-nodes", "nginx", "settings"):
    if needed not in marks:
        sys.exit(f"docs/deploy.md: no {needed} block")
EOF
if [[ -z "$MADE_USER" ]]; then sed -i '/^useradd .* mds$/d' "$session"; fi
echo "running docs/deploy.md's blocks (paths under $ROOT)"
# shellcheck disable=SC1090
source "$session"

for n in 1 2 3; do
  listen=$(sed -n 's/^MDS_LISTEN=//p' "$ROOT/etc/mds/node-$n.env")
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://$listen/metrics")
  [[ "$code" == 404 ]] || { echo "node $n: /metrics on the public address answered $code, not 404" >&2; exit 1; }
done
echo "every node: /metrics only on its admin address"
for pid in "${NODE_PIDS[@]}"; do kill -TERM "$pid"; done
for pid in "${NODE_PIDS[@]}"; do
  for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  rc=0
  wait "$pid" || rc=$?
  [[ "$rc" == 0 ]] || { echo "a node exited $rc on SIGTERM" >&2; cat "$ROOT"/node-*.log >&2; exit 1; }
done
for n in 1 2 3; do
  [[ -d "$ROOT/var/lib/mds/$n/spill" ]] || { echo "node $n made no spill directory" >&2; exit 1; }
  owner=$(stat -c %U "$ROOT/var/lib/mds/$n/spill")
  [[ "$owner" == mds ]] || { echo "node $n's spill directory is $owner's: the node did not run as mds" >&2; exit 1; }
done
echo "every node stopped on SIGTERM with exit 0; spill directories in /var/lib/mds/N/spill, made by user mds"
echo "deploy guide check: $(( $(date +%s) - t0 )) s"
