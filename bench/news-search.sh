#!/usr/bin/env bash
# GET /v1/news?q= over N articles (issue 44; bench/gen_news.py, seed 42,
# `zipf`: bodies of 12 to 40 sentences drawn from 4,000 words with Zipf
# frequencies, so "the" is in every article, "company" in 3 of 4,
# "dividend" in a third and the rare word, of rank 3,000, in about 2%). `mds import news` (which
# builds the news index and its FTS5 search index and saves their
# snapshot: its wall time), then `mds serve` on that store keeping no page
# (MDS_PAGE_CACHE_MIB=0: every request makes its search); each kind of
# query asked round and round by wrk at CONNECTIONS connections for
# SECONDS: req/s, p50 and p99. Kinds: one word (in every article), two
# words, a phrase, a prefix, a word with an ISIN filter, a word in date
# order, a common word (in most articles), a rare word, a word in no
# article, and the mix of them all.
#
# Usage: bench/news-search.sh [SECONDS=10] [CONNECTIONS=2] [N=100000]
# Needs: cargo, python3, curl, wrk.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-10}; CONNS=${2:-2}; N=${3:-100000}
. bench/lib.sh
need_wrk
if [[ -z "${MDS_BIN:-}" ]]; then
  cargo build --release --quiet --bin mds
  MDS_BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/mds
fi
BIN=$MDS_BIN
bench_workdir
export MDS_LOG=warn
echo "# bench/news-search.sh $SECS $CONNS $N on $(date -u +%F) at $(date -u +%T) UTC; uptime:$(uptime | sed 's/.*load/ load/')"
export MDS_DATABASE_URL="sqlite://$WORK/news.db?mode=rwc"
$BIN migrate >/dev/null
python3 bench/gen_news.py "$N" 42 "$WORK/news.jsonl" zipf
RARE=$(cd bench && python3 -c 'import gen_news; print(gen_news.zipf_words(42)[0][2999])')
t0=$(date +%s.%N)
$BIN import news "$WORK/news.jsonl" >/dev/null
printf 'import of %d articles (news index, search index, snapshot): %.1f s\n' "$N" "$(echo "$(date +%s.%N) - $t0" | bc -l)"
$BIN tiers set bench --rate-limit-per-minute 1000000000 --monthly-quota 1000000000000 >/dev/null
$BIN accounts create bench >/dev/null
KEY=$($BIN keys create --account bench --tier bench 2>/dev/null | tail -n 1); export KEY
ISINS=$(python3 -c 'import json,sys
seen=[]
for l in open(sys.argv[1]):
    i=json.loads(l)["isin"]
    if i not in seen: seen.append(i)
    if len(seen)==20: break
print(" ".join(seen))' "$WORK/news.jsonl")
kind() { # name, then paths
  local name=$1; shift
  printf '%s\n' "$@" >"$WORK/paths-$name"
}
kind word "/v1/news?q=dividend&limit=20" "/v1/news?q=cement&limit=20" "/v1/news?q=rupee&limit=20"
kind two_words "/v1/news?q=dividend+cement&limit=20" "/v1/news?q=bank+credit&limit=20"
kind phrase "/v1/news?q=%22net+profit%22&limit=20" "/v1/news?q=%22target+price%22&limit=20"
kind prefix "/v1/news?q=pharm*&limit=20" "/v1/news?q=cem*&limit=20"
kind isin $(for i in $ISINS; do echo "/v1/news?q=dividend&isin=$i&limit=20"; done)
kind by_date "/v1/news?q=dividend&sort=published_at&limit=20" "/v1/news?q=steel+power&sort=published_at&limit=20"
kind common "/v1/news?q=company&limit=20" "/v1/news?q=the&limit=20"
kind rare "/v1/news?q=$RARE&limit=20"
kind no_match "/v1/news?q=zanzibar&limit=20"
cat "$WORK"/paths-* >"$WORK/paths-mix"
PORT=18744
MDS_PAGE_CACHE_MIB=0 MDS_LOG=warn,mds_node::news_load=info $BIN serve --listen 127.0.0.1:$PORT >"$WORK/serve.log" 2>&1 &
for _ in $(seq 1 6000); do grep -Eq "news index (built|loaded)" "$WORK/serve.log" && break; sleep 0.05; done
grep -Eo "news index (built|loaded).*" "$WORK/serve.log" | head -n 1
echo "kind       req/s     p50 ms   p99 ms   (wrk -t1 -c$CONNS -d${SECS}s, every request made)"
for name in word two_words phrase prefix isin by_date common rare no_match mix; do
  out=$(PATHS_FILE=$WORK/paths-$name wrk -t1 -c"$CONNS" -d"${SECS}s" --latency -s bench/paths.lua "http://127.0.0.1:$PORT")
  printf '%-10s %-9s %-8s %s\n' "$name" "$(echo "$out" | awk '/Requests\/sec/ {print $2}')" \
    "$(echo "$out" | awk '$1=="50%" {print $2}' | ms)" "$(echo "$out" | awk '$1=="99%" {print $2}' | ms)"
done
curl -s -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT/v1/news?q=dividend&limit=2" | head -c 300; echo
