#!/usr/bin/env bash
# Property-based check of the served API against its own OpenAPI document
# with Schemathesis: starts `mds demo` on a loopback port with its demo key,
# then `schemathesis run` (its default checks) on /v1/openapi.json.
#
# Usage: scripts/schemathesis.sh [MAX_EXAMPLES=50] [MAX_SECONDS=300]
# Needs: cargo, python3 (>= 3.9) with venv; Schemathesis is pip-installed
# into a venv in the temp dir (set SCHEMATHESIS_VENV to reuse one).
set -euo pipefail
cd "$(dirname "$0")/.."
MAX_EXAMPLES=${1:-50}; MAX_SECONDS=${2:-300}
# shellcheck source=scripts/lib-client-check.sh
source scripts/lib-client-check.sh SCHEMATHESIS_VENV
if [[ ! -x "$VENV/bin/schemathesis" ]]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check 'schemathesis>=4,<5'
fi
"$VENV/bin/schemathesis" --version
# Schemathesis runs with its default checks. What it is kept from is what
# no schema can say:
# - a cursor (`cursor`) or a sync token / event position (`since`) is
#   opaque and bound to the filters or the log that produced it: every
#   generated one is rightly refused (400 invalid_cursor, 410). The hook
#   drops them (fuzzing phase); the coverage phase does not run hooks, so
#   it is off for the operations that take one. Cursors are covered by
#   tests/suite/http_companies.rs and tests/suite/http_news.rs, sync tokens by
#   tests/suite/http_reference.rs, event positions by tests/suite/http_events.rs.
# - an ISIN's check digit (`isin` in a query, `isins` in a webhook body):
#   the hook puts a real ISIN in place of a generated one, and the coverage
#   phase is off for the webhook bodies too (tests/suite/http_news.rs and
#   tests/suite/http_webhooks.rs cover the refusals).
# - that published_before must be later than published_after (GET
#   /v1/news): the hook drops a published_before that does not follow
#   (tests/suite/http_news.rs covers the refusal).
# - the day bounds of the actions routes (`from`/`to` of
#   /v1/companies/{isin}/actions, `ex_date_from`/`ex_date_to` of
#   /v1/actions): the pattern states `YYYY-MM-DD`, not that the day exists
#   (2024-02-30) nor that the upper bound is not before the lower one; the
#   hook drops a day that does not exist and an upper bound before the
#   lower, and the coverage phase is off for both operations
#   (tests/suite/http_actions.rs covers the refusals). The price routes' bounds
#   likewise (`from`/`to` of /v1/companies/{isin}/prices, also at most 10
#   years apart; `date` of /v1/prices, a day that exists), and their
#   coverage phase is off too (tests/suite/http_prices.rs covers the refusals).
# - the `month` of /v1/usage/daily moves with the clock (this month and the
#   twelve before): the hook drops it (tests/suite/http_usage_daily.rs); so does
#   an `as_of` after today (the pattern states the years 1990 to 2099;
#   tests/suite/http_identity.rs covers the refusal).
# - `sort=relevance` of /v1/companies needs `search` (section 15; one
#   parameter depending on another, which no schema states): the hook
#   drops it without one (tests/suite/http_companies.rs covers the refusal).
# - an account has at most 10 webhook endpoints: the stateful phase fills
#   them, so POST /v1/webhooks may rightly answer 400 to valid data
#   (tests/suite/http_webhooks.rs). Endpoints created here go nowhere:
#   hooks.example.com does not answer.
# Everything else the service checks, the document states (patterns,
# formats, bounds, closed bodies). The event stream never ends (a
# Server-Sent Events response): no generated request of it can complete, so
# it is not run; tests/suite/http_events.rs covers it.
cat >"$WORK/mds_st_hooks.py" <<'PY'
import datetime
import re

import schemathesis


def _instant(s):
    return datetime.datetime.fromisoformat(s.replace("z", "Z").replace("t", "T"))


def _day(s):
    if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", str(s)):
        return None
    try:
        return datetime.date.fromisoformat(str(s))
    except ValueError:
        return None


def _bounds(query, low, high):
    # Only a value of the pattern's form that names no day is dropped; a
    # value of another form is the route's to refuse.
    for name in (low, high):
        v = str(query.get(name, ""))
        if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", v) and _day(v) is None:
            query.pop(name)
    lo, hi = _day(query.get(low)), _day(query.get(high))
    if lo is not None and hi is not None and hi < lo:
        query.pop(high)
    elif lo is not None and hi is not None and low == "from" and (hi - lo).days > 3650:
        # At most 10 years a request of a company's prices.
        query.pop(low)


@schemathesis.hook
def map_query(ctx, query):
    if query:
        _bounds(query, "from", "to")
        _bounds(query, "ex_date_from", "ex_date_to")
        # A company's prices: `to` defaults to the last day loaded, which no
        # schema knows, so a `from` alone may rightly be more than 10 years
        # before it, or after it (tests/suite/http_prices.rs covers both).
        path = getattr(getattr(ctx, "operation", None), "path", None)
        if (path is None or path.endswith("/prices")) and "from" in query and "to" not in query:
            query.pop("from")
        if "date" in query and _day(query["date"]) is None and re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", str(query["date"])):
            query["date"] = "2025-02-12"
        query.pop("cursor", None)
        query.pop("since", None)
        query.pop("month", None)
        if str(query.get("as_of", "")) > datetime.date.today().isoformat():
            query.pop("as_of")
        # A news search's `q` is free text the service parses (section 15:
        # at least one word, quotes paired, at most 16 terms), which no
        # pattern states: a `q` it would refuse becomes a plain word
        # (tests/suite/http_news_search.rs covers the refusals).
        if "q" in query and not _q_taken(str(query["q"])):
            query["q"] = "bank"
        if query.get("sort") == "relevance" and "search" not in query and "q" not in query:
            query.pop("sort")
        if "isin" in query:
            query["isin"] = "INE002A01018"
        after, before = query.get("published_after"), query.get("published_before")
        if after is not None and before is not None:
            try:
                ordered = _instant(after) < _instant(before)
            except (TypeError, ValueError):
                ordered = False
            if not ordered:
                query.pop("published_before")
    return query


def _q_taken(q):
    parts = q.split()
    return (
        q.isascii() and q.isprintable() and len(q) <= 200 and q.count('"') % 2 == 0
        and 0 < len(parts) <= 16 and all(any(c.isalnum() for c in p) for p in parts)
    )


@schemathesis.hook
def map_body(ctx, body):
    # ISINs of the document's pattern (any case, spaces around) become one
    # the store knows; others stay, so a negative test's invalid ISIN is
    # still sent as generated.
    isins = body.get("isins") if isinstance(body, dict) else None
    if isinstance(isins, list) and all(isinstance(i, str) and re.fullmatch(r"\s*[A-Za-z]{2}[A-Za-z0-9]{9}[0-9]\s*", i) for i in isins):
        body["isins"] = ["INE002A01018"] if isins else []
    return body
PY
for op in "GET /v1/companies" "GET /v1/news" "GET /v1/companies/changes" "GET /v1/events" "GET /v1/usage/daily" \
  "POST /v1/webhooks" "PATCH /v1/webhooks/{id}" "GET /v1/actions" "GET /v1/companies/{isin}/actions" \
  "GET /v1/prices" "GET /v1/companies/{isin}/prices"; do
  printf '[[operations]]\ninclude-name = "%s"\nphases.coverage.enabled = false\n\n' "$op"
done >"$WORK/schemathesis.toml"
printf '[[operations]]\ninclude-name = "GET /v1/events/stream"\nenabled = false\n\n' >>"$WORK/schemathesis.toml"
printf '[[operations]]\ninclude-name = "POST /v1/webhooks"\nchecks.positive_data_acceptance.expected-statuses = ["2XX", 400]\n\n' >>"$WORK/schemathesis.toml"
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
  -H "Authorization: Bearer $KEY" \
  --max-examples "$MAX_EXAMPLES" --seed 42 --no-color "${@:3}")
rc=$?
set -e
echo "schemathesis: exit $rc after $(( $(date +%s) - t0 )) s"
exit $rc
