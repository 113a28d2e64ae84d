#!/usr/bin/env bash
# Property-based check of the served API against its own OpenAPI document
# with Schemathesis: starts `mds demo` on a loopback port with its demo key,
# then `schemathesis run --checks all` on /v1/openapi.json.
#
# Usage: scripts/schemathesis.sh [MAX_EXAMPLES=50] [MAX_SECONDS=300]
# Needs: cargo, python3 (>= 3.9) with venv; Schemathesis is pip-installed
# into a venv in the temp dir (set SCHEMATHESIS_VENV to reuse one).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib-demo-server.sh
MAX_EXAMPLES=${1:-50}; MAX_SECONDS=${2:-300}
cargo build --quiet --bin mds
BIN=${CARGO_TARGET_DIR:-$PWD/target}/debug/mds
WORK=$(mktemp -d)
trap 'stop_demo_server; rm -rf "$WORK"' EXIT
VENV=${SCHEMATHESIS_VENV:-$WORK/venv}
if [[ ! -x "$VENV/bin/schemathesis" ]]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check 'schemathesis>=4,<5'
fi
"$VENV/bin/schemathesis" --version
# A cursor (or a sync token) is opaque and bound to the filters that
# produced it, which no schema can say: every generated one is rightly
# refused (400 invalid_cursor) and would fail the "valid data is accepted" check. Neither
# can a schema say that an ISIN has a check digit, or that published_before
# must be later than published_after (GET /v1/news refuses both, rightly).
# The hook drops the cursor and the sync token, puts a real ISIN in place of a generated one
# and drops a published_before that does not follow published_after
# (fuzzing phase); the coverage phase does not run hooks, so it is off for
# these operations. Cursors are covered by tests/http_companies.rs and
# tests/http_news.rs, sync tokens by tests/http_reference.rs, the ISIN and the interval by tests/http_news.rs.
# The `month` of /v1/usage/daily is the same kind of value: which months
# may be asked for moves with the date (this one and the twelve before), so
# a well-formed month is often rightly refused; it is dropped the same way,
# and covered by tests/http_usage_daily.rs. `as_of` too (a day from
# 1990-01-01 up to today: a well-formed date is often rightly refused): the
# hook sets a valid day, and the day's bounds are covered by
# tests/http_identity.rs.
# The webhook routes that take a body: a valid URL (https, a public host)
# and an ISIN's check digit cannot be stated by a schema, and an account
# has at most 10 endpoints, so a well-formed create is often rightly
# refused (400 invalid_field). The hook puts a real URL and ISIN in place
# of generated ones; the check that valid data is accepted is off for
# POST /v1/webhooks and PATCH /v1/webhooks/{id} (the 11th endpoint), the
# rest (never a 5xx, only documented statuses, problem+json) still runs.
# Covered by tests/http_webhooks.rs. Deliveries of the endpoints created
# here go nowhere: hooks.example.com does not answer.
cat >"$WORK/mds_st_hooks.py" <<'PY'
import schemathesis


import datetime


def _instant(s):
    return datetime.datetime.fromisoformat(s.replace("z", "Z").replace("t", "T"))


@schemathesis.hook
def map_query(ctx, query):
    if query:
        query.pop("cursor", None)
        query.pop("since", None)
        query.pop("month", None)
        if "as_of" in query:
            query["as_of"] = "2024-01-31"
        if "isin" in query:
            query["isin"] = "INE002A01018"
        if "types" in query:
            query["types"] = "article.published,company.changed"
        after, before = query.get("published_after"), query.get("published_before")
        if after is not None and before is not None:
            try:
                ordered = _instant(after) < _instant(before)
            except (TypeError, ValueError):
                ordered = False
            if not ordered:
                query.pop("published_before")
    return query


@schemathesis.hook
def map_body(ctx, body):
    op = ctx.operation
    if isinstance(body, dict) and op.path in ("/v1/webhooks", "/v1/webhooks/{id}"):
        if isinstance(body.get("url"), str):
            body["url"] = "https://hooks.example.com/schemathesis"
        if isinstance(body.get("isins"), list):
            body["isins"] = ["INE002A01018"] if body["isins"] else []
    return body
PY
for op in "GET /v1/companies" "GET /v1/companies/{isin}" "GET /v1/news" "GET /v1/companies/changes" "GET /v1/usage/daily" "GET /v1/events"; do
  printf '[[operations]]\ninclude-name = "%s"\nphases.coverage.enabled = false\n\n' "$op"
done >"$WORK/schemathesis.toml"
# The event stream never ends (a Server-Sent Events response): no
# generated request of it can complete; tests/http_events.rs covers it.
printf '[[operations]]\ninclude-name = "GET /v1/events/stream"\nenabled = false\n\n' >>"$WORK/schemathesis.toml"
# The hook makes every webhook body valid (a real URL and ISIN), so a body
# generated to be invalid is often accepted: for them an acceptance counts
# as a rejection (`--checks all` outranks an operation's `enabled`).
for op in "POST /v1/webhooks" "PATCH /v1/webhooks/{id}"; do
  # `--checks all` on the command line outranks an operation's
  # `enabled = false`; the statuses that count as accepting are the
  # operation's own setting, so a rightly refused create passes.
  printf '[[operations]]\ninclude-name = "%s"\nphases.coverage.enabled = false\nchecks.positive_data_acceptance.enabled = false\nchecks.positive_data_acceptance.expected-statuses = ["2XX", 400, 401, 403, 404, 409, 429, "5XX"]\nchecks.negative_data_rejection.expected-statuses = [200, 201, 400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 428, 429, "5XX"]\n\n' "$op"
done >>"$WORK/schemathesis.toml"
export PYTHONPATH="$WORK${PYTHONPATH:+:$PYTHONPATH}" SCHEMATHESIS_HOOKS=mds_st_hooks
start_demo_server
# The demo key's tier (pro, 600 a minute) would refuse most of a run's
# requests with 429 and leave the routes behind them untested: the run
# uses a key of the enterprise tier (6,000 a minute) on the demo account.
KEY=$("$BIN" --database "$WORK/mds.db" keys create --account demo --tier enterprise | tail -1)
echo "server: $BASE"
t0=$(date +%s)
set +e
# Run from $WORK: Schemathesis keeps a cache (.schemathesis/) in the cwd.
(cd "$WORK" && timeout "$MAX_SECONDS" "$VENV/bin/schemathesis" --config-file "$WORK/schemathesis.toml" run "$BASE/v1/openapi.json" \
  --checks all -H "Authorization: Bearer $KEY" \
  --max-examples "$MAX_EXAMPLES" --seed 42 --no-color "${@:3}")
rc=$?
set -e
echo "schemathesis: exit $rc after $(( $(date +%s) - t0 )) s"
exit $rc
