#!/usr/bin/env bash
# A client generated from the served OpenAPI document, with a stock generator,
# works against the real server: starts `mds demo` on a loopback port with its
# demo key, downloads /v1/openapi.json, generates a Python client with
# openapi-python-client (pinned), checks the generator raised no warning and
# made one model per wire type (no per-status error models, one enum per
# concept), then with the generated code:
#   - walks /v1/companies by next_cursor to the end (with and without a
#     filter) and compares the rows with a plain HTTP walk;
#   - walks /v1/news by next_cursor (with an instant filter) and compares
#     the articles with a plain HTTP walk;
#   - reads /v1/events and finds each event's data parsed into the model
#     of its type (the document's oneOf);
#   - reads /v1/usage into its typed model, and /v1/usage/daily, whose days
#     add up to it;
#   - sends a bad `limit` and gets the 400 parsed into the Problem model.
#
# Usage: scripts/generated-client.sh
# Needs: cargo, python3 (>= 3.9) with venv; openapi-python-client is
# pip-installed into a venv in the temp dir (set GENERATED_CLIENT_VENV to
# reuse one). No network beyond PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
OPC_VERSION=0.29.1
t0=$(date +%s)
# shellcheck source=scripts/lib-client-check.sh
source scripts/lib-client-check.sh GENERATED_CLIENT_VENV
if [[ "$("$VENV/bin/openapi-python-client" --version 2>/dev/null || true)" != *" $OPC_VERSION" ]]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "openapi-python-client==$OPC_VERSION"
fi
"$VENV/bin/openapi-python-client" --version

start_demo_server
echo "server: $BASE"
"$VENV/bin/python" -c 'import sys, urllib.request; open(sys.argv[2], "wb").write(urllib.request.urlopen(sys.argv[1]).read())' \
  "$BASE/v1/openapi.json" "$WORK/openapi.json"

# No post hooks: the stock formatter (ruff) is not needed to run the code.
printf 'package_name_override: mds_api\npost_hooks: []\n' >"$WORK/config.yaml"
"$VENV/bin/openapi-python-client" generate --path "$WORK/openapi.json" --config "$WORK/config.yaml" \
  --meta none --output-path "$WORK/gen/mds_api" >"$WORK/generate.log" 2>&1 \
  || { cat "$WORK/generate.log"; echo "FAIL: the generator failed"; exit 1; }
if grep -qiE 'warning|error' "$WORK/generate.log"; then
  cat "$WORK/generate.log"; echo "FAIL: the generator warned about the document"; exit 1
fi
models=$(cd "$WORK/gen/mds_api/models" && ls -- *.py | grep -v '^__init__' | sed 's/\.py$//' | sort | tr '\n' ' ')
echo "models: $models"
events=""
for i in 0 1 2 3 4; do events+="v1_identity_event_type_$i v1_identity_event_type_${i}_type "; done
hooks="v1_webhook_attempt v1_webhook_attempt_list v1_webhook_create v1_webhook_endpoint v1_webhook_endpoint_list v1_webhook_endpoint_with_secret v1_webhook_ping v1_webhook_replay v1_webhook_rotate v1_webhook_update "
actions="action_type dividend_kind v1_action_page v1_bonus v1_buyback v1_company_actions v1_corporate_action_removed v1_dividend v1_face_value_change v1_rights "
for i in 0 1 2 3 4 5 6 7; do actions+="v1_corporate_action_type_$i v1_corporate_action_type_${i}_type "; done
search="match_field v1_company_list_item v1_search_match "
prices="adjust isin_source v1_bar v1_company_prices v1_market_day v1_price_adjustment "
# The exact-match values: the industries tree, the news facets, an empty page's hint.
facets="v1_basic_industry v1_facet v1_hint v1_industries v1_industry v1_macro_sector v1_news_facets v1_sector "
want="article classification company_status endpoint_status exchange listing listing_status market_cap market_cap_band problem subscribable_type v1_article_summary v1_changes_page v1_company v1_company_changed v1_company_detail v1_company_history v1_company_page v1_event v1_event_page ${events}v1_news_page v1_ping v1_prices_published v1_symbol_history v1_symbol_period v1_usage v1_usage_daily v1_usage_day v1_usage_day_by_route v1_usage_window ${hooks}${actions}${search}${prices}${facets}"
want=$(printf '%s\n' $want | sort | tr '\n' ' ')
[[ "$models" == "$want" ]] || { echo "FAIL: expected the models $want"; exit 1; }

cat >"$WORK/exercise.py" <<'PY'
"""Exercises the generated client against a live server (argv: base URL, key)."""
import datetime
import json
import sys
import urllib.error
import urllib.parse
import urllib.request

from mds_api import AuthenticatedClient
from mds_api.api.companies import get_company_history, get_symbol, list_companies
from mds_api.api.events import list_events
from mds_api.api.news import list_news
from mds_api.api.usage import get_usage, get_usage_daily
from mds_api.models import (
    Exchange,
    Problem,
    V1ArticleSummary,
    V1CompanyChanged,
    V1CompanyPage,
    V1EventPage,
    V1NewsPage,
    V1Usage,
    V1UsageDaily,
)

base, key = sys.argv[1], sys.argv[2]
client = AuthenticatedClient(base_url=base, token=key, raise_on_unexpected_status=True)


def plain_pages(path, **params):
    """Every page of a list by plain HTTP, following next_cursor."""
    cursor = None
    while True:
        q = dict(params, limit=200, **({"cursor": cursor} if cursor else {}))
        req = urllib.request.Request(
            f"{base}{path}?{urllib.parse.urlencode(q)}", headers={"Authorization": f"Bearer {key}"}
        )
        page = json.load(urllib.request.urlopen(req))
        yield page
        if not page["has_more"]:
            assert page["next_cursor"] is None
            return
        cursor = page["next_cursor"]


def generated_pages(operation, limit, **filters):
    """Every page of a list through the generated client's ``operation``."""
    cursor = None
    while True:
        kwargs = dict(filters, limit=limit)
        if cursor is not None:
            kwargs["cursor"] = cursor
        page = operation.sync(client=client, **kwargs)
        yield page
        if not page.has_more:
            assert page.next_cursor is None
            return
        assert isinstance(page.next_cursor, str)
        cursor = page.next_cursor


def plain_walk(**params):
    """Every (ticker, isin) by plain HTTP."""
    return [(c["ticker"], c["isin"]) for page in plain_pages("/v1/companies", **params) for c in page["data"]]


def generated_walk(limit, **filters):
    """Every (ticker, isin) through the generated client; returns rows and pages."""
    rows, pages = [], 0
    for page in generated_pages(list_companies, limit, **filters):
        assert isinstance(page, V1CompanyPage), page
        pages += 1
        assert len(page.data) <= limit
        rows += [(c.ticker, c.isin) for c in page.data]
    return rows, pages


everything = plain_walk()
rows, pages = generated_walk(97)
assert rows == everything, (len(rows), len(everything))
assert pages == -(-len(everything) // 97), pages
print(f"listCompanies: {len(rows)} companies in {pages} pages, as a plain walk")

nse = plain_walk(exchange="nse")
rows, pages = generated_walk(50, exchange=Exchange.NSE)
assert rows == nse and 0 < len(nse) < len(everything), (len(rows), len(nse))
print(f"listCompanies(exchange=NSE): {len(rows)} companies in {pages} pages, as a plain walk")

# Identity over time: a split's history and a symbol's holders, typed.
history = get_company_history.sync(client=client, isin="INE296A01024")
split = [e for e in history.events if e.type_.value == "isin_changed"]
assert split and split[0].to == "INE296A01032", history
holders = get_symbol.sync(client=client, symbol="TATAMOTORS")
assert any(p.isin == "INE155A01022" for p in holders.periods), holders
print(f"getCompanyHistory: {len(history.events)} events; getSymbol(TATAMOTORS): {len(holders.periods)} periods")

def plain_news(**params):
    """Every article slug by plain HTTP."""
    return [a["slug"] for page in plain_pages("/v1/news", **params) for a in page["data"]]


def generated_news(limit, **filters):
    """Every article slug through the generated client."""
    slugs = []
    for page in generated_pages(list_news, limit, **filters):
        assert isinstance(page, V1NewsPage), page
        assert all(not hasattr(a, "body") for a in page.data)
        slugs += [a.slug for a in page.data]
    return slugs


since = datetime.datetime(2026, 1, 15, tzinfo=datetime.timezone.utc)
every = plain_news()
assert generated_news(7) == every and len(every) > 7, len(every)
recent = plain_news(published_after=since.isoformat())
assert generated_news(5, published_after=since) == recent and 0 < len(recent) < len(every), len(recent)
print(f"listNews: {len(every)} articles, {len(recent)} after {since.isoformat()}, as a plain walk")

# Events: each data parsed into the model of its type.
shapes = {"article.published": V1ArticleSummary, "article.updated": V1ArticleSummary, "company.changed": V1CompanyChanged}
# A corporate action is one model per type (the document's oneOf).
import mds_api.models as generated_models
actions = tuple(getattr(generated_models, f"V1CorporateActionType{i}") for i in range(8))
shapes["corporate_action.added"] = shapes["corporate_action.changed"] = actions
shapes["prices.published"] = generated_models.V1PricesPublished
shapes["corporate_action.removed"] = generated_models.V1CorporateActionRemoved
seen = {}
for page in generated_pages(list_events, 100):
    assert isinstance(page, V1EventPage), page
    for e in page.data:
        assert isinstance(e.data, shapes[e.type_]), (e.type_, type(e.data))
        seen[e.type_] = seen.get(e.type_, 0) + 1
    if {"article.published", "company.changed"} <= set(seen) and sum(seen.values()) >= 1000:
        break
assert {"article.published", "company.changed"} <= set(seen), seen
print(f"listEvents: {sum(seen.values())} events, each data its type's model: {seen}")

usage = get_usage.sync(client=client)
assert isinstance(usage, V1Usage), usage
assert usage.tier == "pro" and usage.entitled, usage
assert usage.current_month.requests > 0 and usage.current_month.quota > 0, usage.current_month
print(f"getUsage: tier {usage.tier}, {usage.current_month.requests} requests this month")

daily = get_usage_daily.sync(client=client)
assert isinstance(daily, V1UsageDaily), daily
assert daily.requests == sum(d.requests for d in daily.days) == usage.current_month.requests, daily
today = daily.days[-1]
routes = today.by_route.additional_properties
assert sum(routes.values()) == today.requests and routes["/v1/companies"] > 0 and routes["/v1/news"] > 0, today
print(f"getUsageDaily: {len(daily.days)} days, {daily.requests} requests, today {today.requests}")

client.raise_on_unexpected_status = False
for bad in (0, 500):
    r = list_companies.sync_detailed(client=client, limit=bad)
    assert r.status_code == 400, r.status_code
    p = r.parsed
    assert isinstance(p, Problem), p
    assert (p.code, p.param, p.status) == ("invalid_parameter", "limit", 400), p
    assert p.request_id == r.headers["x-request-id"], (p.request_id, r.headers)
print(f"listCompanies(limit=0): 400 parsed as Problem(code={p.code!r}, param={p.param!r})")
PY
PYTHONPATH="$WORK/gen" "$VENV/bin/python" "$WORK/exercise.py" "$BASE" "$KEY"
echo "OK: generated client works against the server ($(( $(date +%s) - t0 )) s)"
