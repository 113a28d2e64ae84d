# Shared helpers of the bench scripts (sourced, not run): their setup, medians,
# wrk runs, mds-versus-baseline rounds and full walks of a list. They read
# $KEY, $CONNS, $SECS and $ROUNDS.

need_wrk() { command -v wrk >/dev/null || { apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }; }; }
# A temp dir in $WORK, removed at exit, when the background jobs are killed.
bench_workdir() { WORK=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT; }
# The mds binary to measure in $BIN: $MDS_BIN when set (another build, an
# older one for a before/after comparison, or a debug one for a quick try),
# else this tree's release build.
release_mds() {
  if [[ -n "${MDS_BIN:-}" ]]; then
    BIN=$MDS_BIN
  else
    cargo build --release --quiet --bin mds
    BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/mds
  fi
}
# Access logs, as users run both servers: on unless ACCESS_LOGS=off. On,
# mds logs at `info` (a line a request, target `mds::access`, to the file
# its stderr goes to) and nginx writes its `combined` lines to a file; off,
# mds logs at `warn` and nginx has `access_log off`. Sets ACCESS_LOGS and
# MDS_LOG.
bench_logs() {
  ACCESS_LOGS=${ACCESS_LOGS:-on}
  if [[ $ACCESS_LOGS == off ]]; then export MDS_LOG=warn; else export MDS_LOG=info; fi
}
# What the benches against a baseline start with: wrk, the release mds
# ($BIN) and the baseline and catalog_bench examples (in $EX), a $WORK,
# the logs of bench_logs.
release_bench_setup() {
  need_wrk
  cargo build --release --quiet --bin mds
  cargo build --release --quiet -p mds-catalog --example baseline --example catalog_bench
  TARGET=${CARGO_TARGET_DIR:-$PWD/target}; BIN=$TARGET/release/mds; EX=$TARGET/release/examples
  bench_workdir
  bench_logs
}

# What the benches of one demo store served by nodes of $BIN start with:
# wrk, $BIN (release_mds), a $WORK, the header line of the run ($1: the
# script and its arguments), quiet logs and the store (bench_store) at
# $WORK/demo.db, with the key in $KEY.
demo_bench_setup() {
  need_wrk
  release_mds
  bench_workdir
  bench_logs
  echo "# $1 ($BIN, access logs $ACCESS_LOGS) on $(date -u +%F) at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"
  export MDS_DATABASE_URL="sqlite://$WORK/demo.db?mode=rwc"
  bench_store "$BIN"
}
# The store at $MDS_DATABASE_URL made by the mds binary $1: the demo
# exchanges (with the further `import exchanges` arguments $2..., such as
# `--mcap FILE`), a `bench` tier too large to refuse (what is measured is
# the cost of checking and counting, not of refusing), account `bench` and a
# key of it in $KEY.
bench_store() {
  local bin=$1; shift
  $bin migrate >/dev/null
  $bin import exchanges --nse data/demo/nse_EQUITY_L_2024-01.csv --bse data/demo/bse_Equity_2024-01.csv --as-of 2024-01-30 "$@" >/dev/null 2>&1
  $bin tiers set bench --rate-limit-per-minute 1000000000 --monthly-quota 1000000000000 >/dev/null
  $bin accounts create bench >/dev/null
  KEY=$($bin keys create --account bench --tier bench 2>/dev/null | tail -n 1)
}

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# wrk → "req/s p50_ms p99_ms"
ms() { awk '{v=$1; if (v ~ /us$/) {sub(/us/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v*=1000}; printf "%.3f", v}'; }
# The key run_wrk sends to the server on port $1: $KEY (a bench whose
# servers hold different stores redefines it).
wrk_key() { echo "$KEY"; }
run_wrk() { # port path conns secs
  local out; out=$(wrk -t1 -c"$3" -d"$4s" --latency -H "Authorization: Bearer $(wrk_key "$1")" "http://127.0.0.1:$1$2")
  echo "$(echo "$out" | awk '/Requests\/sec/ {print $2}') $(echo "$out" | awk '$1=="50%" {print $2}' | ms) $(echo "$out" | awk '$1=="99%" {print $2}' | ms)"
}
# Two servers (or two paths) side by side, ABBA-alternated (odd rounds the
# first first), median of ROUNDS: a "round" line each, then "median" with the
# ratio first/second (of req/s).
side_by_side() { # label port path bport bpath
  local label=$1 port=$2 path=$3 bport=$4 bpath=$5 r=() b=() q=() a x i
  run_wrk "$port" "$path" "$CONNS" 2 >/dev/null; run_wrk "$bport" "$bpath" "$CONNS" 2 >/dev/null # warm-up
  for i in $(seq 1 "$ROUNDS"); do
    if (( i % 2 )); then
      a=$(run_wrk "$port" "$path" "$CONNS" "$SECS"); sleep 1; x=$(run_wrk "$bport" "$bpath" "$CONNS" "$SECS")
    else
      x=$(run_wrk "$bport" "$bpath" "$CONNS" "$SECS"); sleep 1; a=$(run_wrk "$port" "$path" "$CONNS" "$SECS")
    fi
    sleep 1
    r+=("${a%% *}"); b+=("${x%% *}"); q+=("$(echo "${r[-1]} / ${b[-1]}" | bc -l)")
    printf '%s round %d: %s req/s (p50 %s ms, p99 %s ms) | %s (p50 %s ms, p99 %s ms) | ratio %.3f\n' \
      "$label" "$i" "${r[-1]}" "$(echo $a | cut -d' ' -f2)" "$(echo $a | cut -d' ' -f3)" \
      "${b[-1]}" "$(echo $x | cut -d' ' -f2)" "$(echo $x | cut -d' ' -f3)" "${q[-1]}"
  done
  printf '%s median: %s req/s against %s; ratio %.3f\n' "$label" "$(median "${r[@]}")" "$(median "${b[@]}")" "$(median "${q[@]}")"
}
# The CPU (user + system, from /proc/PID/stat) the server PID spends per
# request over a wrk run on one path: what the throughput ratio tends to
# when the machine is saturated, and steadier than it on a shared one.
cpu_per_request() { # port pid path conns secs → "µs per request"
  local t0 t1 out n
  t0=$(awk '{print $14 + $15}' "/proc/$2/stat")
  out=$(wrk -t1 -c"$4" -d"$5s" -H "Authorization: Bearer $KEY" "http://127.0.0.1:$1$3")
  t1=$(awk '{print $14 + $15}' "/proc/$2/stat")
  n=$(echo "$out" | awk '/requests in/ {print $1}')
  echo "($t1 - $t0) * 1000000 / $(getconf CLK_TCK) / $n" | bc -l | xargs printf '%.2f'
}
# mds against a baseline serving the same bytes, on one path.
versus() { # label port bport path
  side_by_side "$1 (mds | baseline)" "$2" "$4" "$3" "$4"
}
# A baseline answering every path with BODY and the headers of the `curl -D`
# dump HEADERS, doing no other work, on 127.0.0.1:PORT; its pid in
# $BASELINE_PID once it answers. BASELINE=nginx (the default) runs nginx
# with 2 workers on the same bytes (Date, Server, Connection and
# Content-Length are its own; Last-Modified, ETag and Accept-Ranges are
# turned off), the file's descriptor cached and sendfile off (for bodies of
# ~10 KB a plain write was the faster of the two here);
# BASELINE=hyper the example server (crates/mds-catalog/examples/baseline.rs).
need_nginx() { command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || { apt-get install -y nginx-light >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y nginx-light >/dev/null; }; }; }
baseline() { # port body headers
  local port=$1 body=$2 heads=$3
  if [[ ${BASELINE:-nginx} == hyper ]]; then
    "$EX/baseline" 127.0.0.1:$port "$body" "$heads" & BASELINE_PID=$!
  else
    need_nginx
    local dir="$WORK/nginx-$port" type=application/json add=""
    mkdir -p "$dir/root"; cp "$body" "$dir/root/body"
    # Its workers run as an unprivileged user.
    chmod a+rx "$WORK" "$dir" "$dir/root"; chmod a+r "$dir/root/body"
    while IFS= read -r line; do
      line=${line%$'\r'}; [[ $line == *:* ]] || continue
      local name=${line%%:*} value=${line#*: }
      case ${name,,} in
        date|content-length|server|connection|transfer-encoding|keep-alive) ;;
        content-type) type=$value ;;
        *) add+="      add_header \"$name\" \"${value//\"/\\\"}\" always;"$'\n' ;;
      esac
    done < <(tail -n +2 "$heads")
    local log="access_log off;"
    [[ ${ACCESS_LOGS:-on} == off ]] || log="access_log $dir/access.log combined;"
    cat >"$dir/nginx.conf" <<CONF
worker_processes 2;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 4096; }
http {
  $log
  server_tokens off;
  sendfile off;
  open_file_cache max=16 inactive=1h;
  open_file_cache_valid 1h;
  etag off;
  max_ranges 0;
  keepalive_requests 100000000;
  server {
    listen 127.0.0.1:$port;
    root $dir/root;
    location / {
      default_type "$type";
      types { }
      add_header Last-Modified "";
$add      try_files /body =404;
    }
  }
}
CONF
    /usr/sbin/nginx -c "$dir/nginx.conf" -p "$dir" 2>>"$dir/error.log" & BASELINE_PID=$!
  fi
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/" >/dev/null && break; sleep 0.05; done
}
ready_wait() { # port → seconds until /readyz is 200
  local t0; t0=$(date +%s.%N)
  for _ in $(seq 1 3000); do curl -sf "http://127.0.0.1:$1/readyz" >/dev/null && break; sleep 0.01; done
  echo "$(date +%s.%N) - $t0" | bc -l
}
# A list walked whole by next_cursor (limit=200, with the query `q`):
# "pages sync_token last_cursor", the cursor of the last page ("-" when there
# is one page) and the token the last page ends with ("-" when it has none).
walk_list() { # port path q
  python3 - "$1" "$2" "$3" "$KEY" <<'PY'
import http.client, json, sys
port, path, q, key = sys.argv[1:]
c = http.client.HTTPConnection("127.0.0.1", int(port))
cur, last, pages = None, None, 0
while True:
    c.request("GET", path + "?limit=200" + ("&" + q if q else "") + ("&cursor=" + cur if cur else ""),
              headers={"Authorization": "Bearer " + key})
    body = json.loads(c.getresponse().read())
    pages += 1
    if not body["has_more"]:
        print(pages, body.get("sync_token") or "-", last or "-")
        break
    last = cur = body["next_cursor"]
PY
}
