"""The price checks of issue 43 against a node serving the whole real
archives (bench/price-checks.sh loads them and runs this).

Usage: price_checks.py PORT KEY DAYS_FILE RAW_DIR [LIMIT]

DAYS_FILE holds the trading days of the archives (every day that has a
file, one YYYY-MM-DD a line); RAW_DIR the archives unpacked (udiff/,
secbhav/), read only to tell a failure's cause. LIMIT (optional) checks
only the first LIMIT action groups and ISIN changes within the days.

1. Actions. Every split, bonus and consolidation with an ex-date in
   2024-2026 (`GET /v1/actions?type=...`, walked by cursor), grouped by ISIN
   and ex-date (a split and a bonus on one day are one step, of the product
   of their factors). The series is read with its lineage from the ISIN
   that supersedes the action's today (its `new_isin`, else its own,
   followed by `superseded_by`). Around the ex-date, with the last bar
   before it and the first on or after it (one series, EQ first): the
   unadjusted close (`adjust=none`) steps by the group's factor within
   TOLERANCE, and the split-adjusted one (`adjust=split`) moves by less
   than TOLERANCE; a move of the 20% price band itself to a close at the
   day's high or low passes (listed). No bar on one side is a failure only
   when the archives hold a row of the security (its ISINs or NSE symbols)
   on that side within the window; else it did not trade on NSE then
   (listed, not a failure). An ex-date after the last day or on the first
   day of the archives is skipped.
2. Lineage. Every ISIN change dated within the archives (each superseded
   ISIN's `isin_changed`, from its history), read from the new ISIN with its
   lineage over WINDOW trading days either side of the change: no day of
   the window on which the archives hold a row of it is missing, no day
   has two bars of one series, and the old ISIN's bars are there when it
   has any.

Prints every failure with what tells its cause, then the counts; exits 1
when a check fails.
"""

from __future__ import annotations

import bisect
import csv
import datetime as dt
import http.client
import json
import sys
import urllib.parse

TOLERANCE = 0.20  # an ordinary day's move is less than this
BAND_SLACK = 0.001  # a tick's rounding of a move at the 20% price band
WINDOW = 30  # trading days either side of an ISIN change
ACTION_BEFORE, ACTION_AFTER = 20, 10  # trading days before an ex-date, and from it
SERIES_ORDER = ["EQ", "BE", "BZ", "SM", "ST"]
TYPES = ["split", "bonus", "consolidation"]


class Api:
    """A keep-alive client of the node on 127.0.0.1:PORT."""

    def __init__(self, port: int, key: str) -> None:
        self.port, self.key = port, key
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.requests = 0

    def get(self, path: str, **query: str) -> dict:
        q = urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        url = path + ("?" + q if q else "")
        for attempt in range(2):
            try:
                self.conn.request("GET", url, headers={"Authorization": "Bearer " + self.key})
                resp = self.conn.getresponse()
                body = resp.read()
                break
            except (http.client.HTTPException, OSError):
                if attempt:
                    raise
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        self.requests += 1
        if resp.status != 200:
            raise RuntimeError(f"GET {url}: {resp.status} {body[:300]!r}")
        return json.loads(body)

    def walk(self, path: str, **query: str) -> list:
        out, cursor = [], None
        while True:
            page = self.get(path, limit="200", cursor=cursor, **query)
            out += page["data"]
            if not page["has_more"]:
                return out
            cursor = page["next_cursor"]


def day(s: str) -> dt.date:
    return dt.date.fromisoformat(s)


def series_rank(s: str) -> int:
    return SERIES_ORDER.index(s) if s in SERIES_ORDER else len(SERIES_ORDER)


def by_day(bars: list) -> dict:
    """A bar a day: of the preferred series (EQ first)."""
    out: dict = {}
    for b in bars:
        d = b["date"]
        if d not in out or series_rank(b["series"]) < series_rank(out[d]["series"]):
            out[d] = b
    return out


def fmt(x) -> str:
    return "-" if x is None else f"{x:g}"


class Groups:
    """The actions that adjust a series, by (ISIN, ex-date)."""

    def __init__(self, actions: list) -> None:
        self.groups: dict = {}
        for a in actions:
            self.groups.setdefault((a["isin"], a["ex_date"]), []).append(a)

    def items(self):
        return sorted(self.groups.items(), key=lambda kv: (kv[0][1], kv[0][0]))


class Raw:
    """The archives' day files, unpacked in DIR (udiff/, secbhav/): which
    rows of given ISINs or symbols a day holds, read only to tell a
    failure's cause (did the security trade that day?)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.cache: dict = {}

    def day(self, d: str) -> list:
        if d not in self.cache:
            rows = []
            for path, udiff in ((f"{self.root}/udiff/nse-cm-bhavcopy-{d}.csv", True),
                                (f"{self.root}/secbhav/sec_bhavdata_full_{d}.csv", False)):
                try:
                    with open(path, newline="") as f:
                        lines = list(csv.reader(f))
                except FileNotFoundError:
                    continue
                head = [h.strip() for h in lines[0]]
                col = {h: i for i, h in enumerate(head)}
                for r in lines[1:]:
                    r = [c.strip() for c in r]
                    if udiff:
                        rows.append(("udiff", r[col["ISIN"]], r[col["TckrSymb"]], r[col["SctySrs"]], r[col["ClsPric"]]))
                    else:
                        rows.append(("secbhav", "", r[col["SYMBOL"]], r[col["SERIES"]], r[col["CLOSE_PRICE"]]))
            self.cache[d] = rows
        return self.cache[d]

    def rows(self, d: str, isins: set, symbols: set) -> list:
        return [r for r in self.day(d) if (r[1] and r[1] in isins) or r[2] in symbols]


def nse_symbols(api: Api, isins: set) -> set:
    """Every NSE symbol the ISINs carried (their histories)."""
    out = set()
    for isin in isins:
        try:
            events = api.get(f"/v1/companies/{isin}/history")["events"]
        except RuntimeError:
            continue
        for e in events:
            if e.get("exchange") == "nse":
                out |= {e[k] for k in ("symbol", "from", "to") if e.get(k)}
    return out


def latest(api: Api, isin: str) -> str:
    """The ISIN that supersedes `isin` today (its `superseded_by`, followed)."""
    seen = [isin]
    while len(seen) < 10:
        nxt = api.get(f"/v1/companies/{seen[-1]}").get("superseded_by")
        if not nxt or nxt in seen:
            break
        seen.append(nxt)
    return seen[-1]


def at_band(move: float, bar: dict) -> bool:
    """A move of the price band's 20% (within a tick's rounding) to a close
    at the day's high or low: the most a banded stock may move in a day."""
    return abs(abs(move) - TOLERANCE) < BAND_SLACK and bar["close"] in (bar["high"], bar["low"])


def tally(counts: dict, failures: list, info: dict, problems: list) -> bool:
    """Counts one check's outcome (a failure kept with its problems); whether it passed."""
    if problems:
        counts["fail"] += 1
        info["problems"] = problems
        failures.append(info)
        return False
    counts["pass"] += 1
    return True


def trading_window(days: list, d: dt.date, before: int, after: int) -> list:
    i = bisect.bisect_left(days, d)
    return [x.isoformat() for x in days[max(0, i - before):i + after]]


def check_actions(api: Api, raw: Raw, days: list, limit: int | None) -> tuple[dict, list, list, list]:
    actions = []
    for t in TYPES:
        actions += api.walk("/v1/actions", type=t, ex_date_from="2024-01-01", ex_date_to="2026-12-31")
    groups = Groups(actions).items()
    first, last = days[0], days[-1]
    counts = {"actions": len(actions), "groups": len(groups), "skipped": 0, "checked": 0, "pass": 0, "fail": 0,
              "untraded": 0, "band": 0}
    by_kind: dict = {}
    inside = []
    for (isin, ex), group in groups:
        kinds = "+".join(sorted({a["type"] for a in group}))
        k = by_kind.setdefault(kinds, {"checked": 0, "pass": 0, "skipped": 0, "untraded": 0})
        if first < day(ex) <= last:
            inside.append(((isin, ex), group, kinds, k))
        else:
            counts["skipped"] += 1
            k["skipped"] += 1
    failures, untraded, banded = [], [], []
    for (isin, ex), group, kinds, k in inside[:limit]:
        exd = day(ex)
        counts["checked"] += 1
        k["checked"] += 1
        factors = [a.get("factor") for a in group]
        factor = None
        if all(f is not None for f in factors):
            factor = 1.0
            for f in factors:
                factor *= f
        new = [a[t]["new_isin"] for a in group for t in ("split", "consolidation") if (a.get(t) or {}).get("new_isin")]
        series_isin = latest(api, new[0] if new else isin)
        window = trading_window(days, exd, ACTION_BEFORE, ACTION_AFTER)
        path = f"/v1/companies/{series_isin}/prices"
        q = {"from": window[0], "to": window[-1]}
        unadj = api.get(path, adjust="none", **q)
        adj = api.get(path, adjust="split", **q)
        raw_d, adj_d = by_day(unadj["bars"]), by_day(adj["bars"])
        before = [d for d in sorted(raw_d) if d < ex]
        after = [d for d in sorted(raw_d) if d >= ex]
        i = bisect.bisect_left(days, exd)
        info = {
            "isin": isin,
            "series_isin": series_isin,
            "symbol": group[0].get("symbol"),
            "type": kinds,
            "ex_date": ex,
            "factor": factor,
            "ids": [a["id"] for a in group],
            "purposes": sorted({a["purpose"].strip() for a in group}),
            "sources": sorted({s for a in group for s in a["sources"]}),
            "ex_is_trading_day": i < len(days) and days[i] == exd,
            "day_before": before[-1] if before else None,
            "day_after": after[0] if after else None,
            "applied": [(x["action_id"], x["ex_date"], x["factor"]) for x in adj["adjustments"]],
        }
        problems = []
        if factor is None:
            problems.append("no factor")
        if not before or not after:
            # Did it trade on NSE in the window, on the side the series lacks?
            isins = {isin, series_isin, *(b["isin"] for b in unadj["bars"])}
            symbols = {a["symbol"] for a in group} | nse_symbols(api, isins)
            side = [d for d in window if (d < ex if not before else d >= ex)]
            found = [(d, r) for d in side for r in raw.rows(d, isins, symbols)]
            info["raw"] = found[:3]
            if not found:
                counts["untraded"] += 1
                k["untraded"] += 1
                info["why"] = "no row in the archives " + ("before" if not before else "on or after") + " the ex-date"
                untraded.append(info)
                continue
            problems.append("no bar " + ("before" if not before else "on or after") + " the ex-date, but the archives have rows")
        else:
            b, a = raw_d[before[-1]], raw_d[after[0]]
            ab, aa = adj_d.get(before[-1]), adj_d.get(after[0])
            info.update(
                close_before=b["close"], close_after=a["close"], series=(b["series"], a["series"]),
                bar_isins=(b["isin"], a["isin"]),
                adj_before=ab and ab["close"], adj_after=aa and aa["close"],
                # trading days between the two bars, exclusive
                gap=bisect.bisect_left(days, day(after[0])) - bisect.bisect_right(days, day(before[-1])),
            )
            step = a["close"] / b["close"] if b["close"] else None
            info["step"] = step
            off = step / factor - 1 if factor is not None and step is not None else None
            if off is not None and abs(off) >= TOLERANCE and not at_band(off, a):
                problems.append(f"unadjusted step {step:.4f} is not the factor {factor:g}")
            if ab is None or aa is None:
                problems.append("adjusted series lacks a bar the unadjusted one has")
            else:
                move = aa["close"] / ab["close"] - 1
                info["adj_move"] = move
                if abs(move) >= TOLERANCE and not at_band(move, a):
                    problems.append(f"split-adjusted close moves {move:+.1%}")
                elif abs(move) >= TOLERANCE:
                    counts["band"] += 1
                    info["why"] = f"moved {move:+.2%} to a close at the day's {'high' if move > 0 else 'low'}: the 20% band"
                    banded.append(info)
        if tally(counts, failures, info, problems):
            k["pass"] += 1
    counts["by_kind"] = by_kind
    return counts, failures, untraded, banded


def isin_changes(api: Api) -> list:
    """(from, to, date, exact) of every ISIN change, from the superseded ISINs' histories."""
    out = []
    superseded = api.walk("/v1/companies", status="superseded")
    for c in superseded:
        for e in api.get(f"/v1/companies/{c['isin']}/history")["events"]:
            if e["type"] == "isin_changed" and e["from"] == c["isin"]:
                out.append((e["from"], e["to"], e["date"], e.get("exact")))
    return sorted(set(out), key=lambda t: (t[2], t[0]))


def check_lineage(api: Api, raw: Raw, days: list, limit: int | None) -> tuple[dict, list, list]:
    changes = isin_changes(api)
    first, last = days[0], days[-1]
    counts = {"changes": len(changes), "skipped": 0, "checked": 0, "pass": 0, "fail": 0, "untraded": 0,
              "days_untraded": 0}
    failures, untraded = [], []
    inside = [c for c in changes if first < day(c[2]) <= last]
    counts["skipped"] = len(changes) - len(inside)
    for old, new, date, exact in inside[:limit]:
        window = trading_window(days, day(date), WINDOW, WINDOW)
        q = {"adjust": "none", "from": window[0], "to": window[-1]}
        series = api.get(f"/v1/companies/{new}/prices", **q)["bars"]
        own_old = api.get(f"/v1/companies/{old}/prices", lineage="false", **q)["bars"]
        counts["checked"] += 1
        problems = []
        have = sorted({b["date"] for b in series})
        info = {"old": old, "new": new, "date": date, "exact": exact, "bars": len(series)}
        isins = {old, new, *(b["isin"] for b in series)}
        symbols = nse_symbols(api, isins)
        info["symbols"] = sorted(symbols)
        if have:
            info["first"], info["last"] = have[0], have[-1]
            missing = [d for d in window if d not in set(have)]
            # A day the archives hold no row of it: it did not trade then.
            traded = [(d, raw.rows(d, isins, symbols)) for d in missing]
            info["missing_traded"] = [(d, rows[:2]) for d, rows in traded if rows]
            info["missing_untraded"] = [d for d, rows in traded if not rows]
            counts["days_untraded"] += len(info["missing_untraded"])
            if info["missing_traded"]:
                problems.append(f"{len(info['missing_traded'])} trading days missing that the archives have rows of")
        else:
            found = [(d, r) for d in window for r in raw.rows(d, isins, symbols)]
            if found:
                problems.append("no bars in the window, but the archives have rows")
                info["raw"] = found[:3]
            else:
                counts["untraded"] += 1
                untraded.append(info)
                continue
        seen: dict = {}
        for b in series:
            seen.setdefault((b["date"], b["series"]), []).append(b["isin"])
        twice = {k: v for k, v in seen.items() if len(v) > 1}
        if twice:
            problems.append(f"{len(twice)} days with two bars of one series")
            info["twice"] = sorted(twice.items())[:5]
        old_in = [b for b in series if b["isin"] == old]
        info["old_bars"], info["old_in_series"] = len(own_old), len(old_in)
        if own_old and not old_in:
            problems.append("the old ISIN's bars are not in the lineage series")
        info["isins_before"] = sorted({b["isin"] for b in series if b["date"] < date})
        info["isins_after"] = sorted({b["isin"] for b in series if b["date"] >= date})
        tally(counts, failures, info, problems)
    return counts, failures, untraded


def main() -> int:
    port, key, days_file, raw_dir = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    limit = int(sys.argv[5]) if len(sys.argv) > 5 else None
    with open(days_file) as f:
        days = sorted({day(line.strip()) for line in f if line.strip()})
    api, raw = Api(port, key), Raw(raw_dir)
    print(f"trading days in the archives: {len(days)} ({days[0]} .. {days[-1]})")

    counts, failures, untraded, banded = check_actions(api, raw, days, limit)
    print("\n## 1. Splits, bonuses and consolidations at their ex-dates")
    for f in failures:
        print(
            f"FAIL {f['ex_date']} {f['isin']} ({f['symbol']}) {f['type']} factor {fmt(f['factor'])}: "
            f"{'; '.join(f['problems'])}"
        )
        print(
            f"     close {fmt(f.get('close_before'))} on {f['day_before']} -> {fmt(f.get('close_after'))} on "
            f"{f['day_after']} (step {fmt(f.get('step') and round(f['step'], 4))}; "
            f"split-adjusted {fmt(f.get('adj_before'))} -> {fmt(f.get('adj_after'))}); "
            f"ex-date a trading day: {f['ex_is_trading_day']}; trading days between: {f.get('gap', '-')}"
        )
        print(
            f"     series of {f['series_isin']}, bars of {f.get('bar_isins', '-')}, series {f.get('series', '-')}; "
            f"sources {f['sources']}; adjustments applied {f['applied']}"
        )
        if f.get("raw"):
            print(f"     archive rows: {f['raw']}")
        for p in f["purposes"]:
            print(f"     purpose: {p}")
    for f in untraded:
        print(
            f"NOT TRADED {f['ex_date']} {f['isin']} ({f['symbol']}) {f['type']} factor {fmt(f['factor'])} "
            f"sources {f['sources']}: {f['why']} ({ACTION_BEFORE} trading days before, {ACTION_AFTER} from it)"
        )
    for f in banded:
        print(
            f"AT BAND {f['ex_date']} {f['isin']} ({f['symbol']}) {f['type']} factor {fmt(f['factor'])}: "
            f"close {fmt(f['close_before'])} on {f['day_before']} -> {fmt(f['close_after'])} on {f['day_after']}, "
            f"{f['why']}"
        )
    print(
        f"actions: {counts['actions']} ({counts['groups']} ISIN and ex-date groups); skipped (ex-date outside "
        f"the archives' days): {counts['skipped']}; checked {counts['checked']}: {counts['pass']} pass "
        f"({counts['band']} of them at the 20% band), "
        f"{counts['fail']} fail, {counts['untraded']} not traded on NSE on one side (or both) of the ex-date"
    )
    for kind, k in sorted(counts["by_kind"].items()):
        print(
            f"  {kind}: checked {k['checked']}, pass {k['pass']}, not traded {k['untraded']}, "
            f"skipped {k['skipped']}"
        )

    lcounts, lfailures, luntraded = check_lineage(api, raw, days, limit)
    print(f"\n## 2. Lineage series across an ISIN change ({WINDOW} trading days either side)")
    for f in lfailures:
        print(f"FAIL {f['date']} {f['old']} -> {f['new']} (exact {f['exact']}): {'; '.join(f['problems'])}")
        print(
            f"     {f['bars']} bars {f.get('first', '-')} .. {f.get('last', '-')}; old ISIN's own bars "
            f"{f['old_bars']}, in the series {f['old_in_series']}; ISINs before {f['isins_before']}, "
            f"from the change {f['isins_after']}; symbols {f['symbols']}"
        )
        if f.get("missing_traded"):
            print(f"     missing, with rows in the archives: {f['missing_traded'][:6]}")
        if f.get("raw"):
            print(f"     archive rows: {f['raw']}")
        if f.get("twice"):
            print(f"     two bars: {f['twice']}")
    for f in luntraded:
        print(f"NOT TRADED {f['date']} {f['old']} -> {f['new']}: no bar and no row in the archives in the window")
    print(
        f"ISIN changes: {lcounts['changes']}; skipped (outside the archives' days): {lcounts['skipped']}; "
        f"checked {lcounts['checked']}: {lcounts['pass']} pass, {lcounts['fail']} fail, {lcounts['untraded']} "
        f"not traded on NSE in the window; days absent from a series because the archives have no row of it: "
        f"{lcounts['days_untraded']}"
    )
    print(f"\nrequests: {api.requests}")
    return 1 if counts["fail"] or lcounts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
