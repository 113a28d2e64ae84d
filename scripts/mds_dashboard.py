"""The queries of deploy/grafana/mds-dashboard.json against a real
Prometheus, for scripts/prometheus-check.sh.

  python3 scripts/mds_dashboard.py check PROM NODE INSTANCE AT MODE
      Checks, and exits 1 on any failure:
      - every metric name the dashboard's queries and the loaded alert rules
        read is one the node exports (NODE's /metrics; mds_redis_* only when the
        node runs with --redis);
      - every panel's description names docs/operations.md, its quoted
        sections are headings there and the alerts it names are rules;
      - the $instance variable's query lists INSTANCE;
      - every query of every panel, with Grafana's variables put in, runs
        without error at time AT, and returns data (the Redis series only
        with --redis); the Traffic row and the admission panel return a
        number, and the errors panel has the statuses the traffic made;
      - the alert rules loaded and evaluate without error, every runbook_url
        names a heading of docs/operations.md, and (MODE `check`) the
        alerts the traffic provokes are pending or firing while those of a
        healthy node are not.
  python3 scripts/mds_dashboard.py pictures PROM INSTANCE START END OUTDIR
      Draws each row of the dashboard (its panels' queries over START..END,
      from query_range) as OUTDIR/dashboard-ROW.png. Needs matplotlib.

Grafana's variables are put in as Grafana would: $instance as the escaped
instance, $__rate_interval as four scrape intervals (RATE_INTERVAL, default
4s for the check's 1 s scrapes).
"""

import json
import math
import os
import re
import sys
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DASHBOARD = os.path.join(ROOT, "deploy/grafana/mds-dashboard.json")
ALERTS = os.path.join(ROOT, "deploy/prometheus/mds-alerts.yml")
OPERATIONS = os.path.join(ROOT, "docs/operations.md")
# Metrics a node exports only with --redis.
REDIS_ONLY = ("mds_redis_", "mds_local_admitted_total", "mds_usage_mirror_")
# Alerts the check's traffic provokes (a flood of made-up keys beyond the
# lookup budget, answered 503), and those a healthy node must not raise.
PROVOKED = {"MdsKeyLookupsThrottled", "MdsHigh5xxRate"}
QUIET = {
    "MdsUsageFlushStalled",
    "MdsLimitsDegraded",
    "MdsBackgroundTaskFailed",
    "MdsConnectionsRefused",
    "MdsNodeDown",
    "MdsNoNodes",
    "MdsStoreDown",
    "MdsUsageMirrorPushFailing",
}


def read(path):
    with open(path) as f:
        return f.read()


def panels():
    """(row title, panel) for every panel of the dashboard, in order."""
    row = ""
    for p in json.loads(read(DASHBOARD))["panels"]:
        if p["type"] == "row":
            row = p["title"]
        else:
            yield row, p


def fill(expr, instance, rate_interval):
    """The query Grafana sends for expr."""
    escaped = re.sub(r"([.\\+*?()|\[\]{}^$])", r"\\\1", instance).replace("\\", "\\\\")
    out = expr.replace("$__rate_interval", rate_interval).replace("$instance", escaped)
    if "$" in out:
        raise SystemExit(f"a variable this script does not know in: {expr}")
    return out


def api(prom, path, **params):
    """GET PROM/api/v1/PATH; the parsed answer (errors too)."""
    url = f"{prom}/api/v1/{path}?{urllib.parse.urlencode(params, doseq=True)}"
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        return json.load(e)


def legend(fmt, labels):
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: labels.get(m.group(1), ""), fmt).strip() or fmt


class Checks:
    """Counts the checks made, and keeps the failures."""

    def __init__(self):
        self.passed, self.failures = 0, []

    def expect(self, ok, failure):
        if ok:
            self.passed += 1
        else:
            self.failures.append(failure)
        return ok


def check(prom, node, instance, at, mode):
    rate_interval = os.environ.get("RATE_INTERVAL", "4s")
    c = Checks()
    with urllib.request.urlopen(f"{node}/metrics", timeout=10) as r:
        exported = {
            line.split("{")[0].split(" ")[0] for line in r.read().decode().splitlines() if line and line[0] != "#"
        }
    redis = any(n.startswith(REDIS_ONLY) for n in exported)
    var = next(v for v in json.loads(read(DASHBOARD))["templating"]["list"] if v["name"] == "instance")
    rules = [r for g in api(prom, "rules")["data"]["groups"] for r in g["rules"]]
    queries = [t["expr"] for _, p in panels() for t in p["targets"]] + [var["definition"]] + [r["query"] for r in rules]
    used = set(re.findall(r"\bmds_[a-z_]+\b", " ".join(queries)))
    for name in sorted(used):
        if redis or not name.startswith(REDIS_ONLY):
            c.expect(name in exported, f"metric {name} is read but not exported by the node")
    print(f"metric names: {len(used)} read{'' if redis else ' (mds_redis_* not checked: no --redis)'}")

    titles = re.findall(r"^#+ (.*)$", read(OPERATIONS), re.MULTILINE)
    alerts = set(re.findall(r"^\s*- alert: (\w+)", read(ALERTS), re.MULTILINE))
    ids = [p["id"] for p in json.loads(read(DASHBOARD))["panels"]]
    c.expect(len(ids) == len(set(ids)), f"panel ids repeat: {ids}")
    for _, p in panels():
        desc = p.get("description", "")
        c.expect(
            "docs/operations.md" in desc, f"panel {p['title']}: its description names no docs/operations.md section"
        )
        for section in re.findall(r"(?<![A-Za-z])'([^']+)'(?![A-Za-z])", desc):
            c.expect(section in titles, f"panel {p['title']}: '{section}' is no heading of docs/operations.md")
        for name in re.findall(r"\bMds\w+", desc):
            c.expect(name in alerts, f"panel {p['title']}: names alert {name}, which is not a rule")

    metric = re.fullmatch(r"label_values\((\w+),\s*instance\)", var["definition"]).group(1)
    values = api(prom, "label/instance/values", **{"match[]": metric}).get("data", [])
    c.expect(instance in values, f"$instance: label_values({metric}, instance) is {values}, not {instance}")

    n = 0
    for row, p in panels():
        for t in p["targets"]:
            n += 1
            q = fill(t["expr"], instance, rate_interval)
            ans = api(prom, "query", query=q, time=at)
            what = f"{p['title']} / {t.get('legendFormat', t['refId'])}"
            if not c.expect(
                ans.get("status") == "success", f"{what}: {ans.get('errorType')}: {ans.get('error')} ({q})"
            ):
                continue
            result = ans["data"]["result"]
            numbers = [float(s["value"][1]) for s in result if math.isfinite(float(s["value"][1]))]
            print(f"  {len(result):3d} series  {what}")
            if redis or not any(m.startswith(REDIS_ONLY) for m in re.findall(r"\bmds_[a-z_]+\b", q)):
                c.expect(result, f"{what}: no data ({q})")
            if row == "Traffic" or p["title"] == "Admission decisions":
                c.expect(numbers, f"{what}: traffic panel with no number ({q})")
            if p["title"].startswith("Errors"):
                want = {"400", "401", "404", "429"} | ({"503"} if mode == "check" else set())
                got = {s["metric"].get("status") for s in result}
                c.expect(want <= got, f"{what}: no series for status {sorted(want - got)}")
    print(f"dashboard: {n} queries run")

    loaded = {r["name"] for r in rules}
    c.expect(loaded == alerts, f"rules loaded {sorted(loaded)}, the file has {sorted(alerts)}")
    # GitHub's anchors of the headings.
    headings = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in titles}
    for r in rules:
        c.expect(
            r.get("health") == "ok" and not r.get("lastError"),
            f"rule {r['name']}: health {r.get('health')}: {r.get('lastError')}",
        )
        anchor = r["annotations"].get("runbook_url", "").partition("#")[2]
        c.expect(
            anchor in headings, f"rule {r['name']}: runbook_url anchor #{anchor} is no heading of docs/operations.md"
        )
    active = {a["labels"]["alertname"]: a["state"] for a in api(prom, "alerts")["data"]["alerts"]}
    print(f"rules: {len(rules)} loaded; active: {active or 'none'}")
    if mode == "check":
        for name in sorted(PROVOKED):
            c.expect(name in active, f"alert {name}: the traffic provokes it, yet it is not pending")
    for name in sorted(QUIET):
        c.expect(name not in active, f"alert {name} is {active.get(name)} on a healthy node")

    for f in c.failures:
        print(f"FAIL: {f}", file=sys.stderr)
    print(f"dashboard: {c.passed} passed, {len(c.failures)} failed")
    sys.exit(1 if c.failures else 0)


UNITS = {"reqps": "requests/s", "ops": "per second", "s": "seconds", "percentunit": "share", "short": ""}


def pictures(prom, instance, start, end, outdir):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import PercentFormatter

    rate_interval = os.environ.get("RATE_INTERVAL", "10s")
    # From one rate window in: before it, every rate still ramps up from
    # the idle time before the traffic.
    start = float(start) + float(rate_interval.rstrip("s"))
    step = max(1, int((float(end) - start) / 200))
    rows = {}
    for row, p in panels():
        rows.setdefault(row, []).append(p)
    os.makedirs(outdir, exist_ok=True)
    for row, ps in rows.items():
        cols = {4: 2, 5: 3, 6: 3}.get(len(ps), min(len(ps), 4))
        nrows = math.ceil(len(ps) / cols)
        fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 4.2 * nrows), squeeze=False)
        for ax, p in zip(axes.flat, ps):
            unit = p["fieldConfig"]["defaults"].get("unit", "short")
            top = 0.0
            for t in p["targets"]:
                ans = api(
                    prom, "query_range", query=fill(t["expr"], instance, rate_interval), start=start, end=end, step=step
                )
                if ans.get("status") != "success":
                    raise SystemExit(f"{p['title']}: {ans.get('error')}")
                for s in ans["data"]["result"]:
                    xs = [float(v[0]) - start for v in s["values"]]
                    ys = [float(v[1]) for v in s["values"]]
                    finite = [y for y in ys if math.isfinite(y)]
                    if not finite:
                        continue  # a route with no traffic: no point to draw
                    top = max(top, *finite)
                    ax.plot(xs, ys, linewidth=1.2, label=legend(t.get("legendFormat", ""), s["metric"]))
            title = p["title"]
            steps = p["fieldConfig"]["defaults"]["thresholds"]["steps"]
            line = steps[1]["value"] if len(steps) > 1 else None
            if line is not None and (top == 0 or top >= line / 10):
                ax.axhline(line, color="red", linestyle="--", linewidth=0.8)
                top = max(top, line)
            elif line is not None:
                shown = f"{line * 1000:g} ms" if unit == "s" and line < 1 else f"{line:g}"
                title += f" (alert line {shown}: off the scale)"
            ax.set_title(title, fontsize=10)
            ax.set_xlabel("seconds into the run", fontsize=8)
            ax.set_ylabel(UNITS.get(unit, unit), fontsize=8)
            # Lines at 0 just above the axis, where they can be seen.
            top = top or 1.0
            ax.set_ylim(-0.03 * top, 1.1 * top)
            if unit == "percentunit":
                ax.yaxis.set_major_formatter(PercentFormatter(1.0))
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=3, frameon=False)
        for ax in list(axes.flat)[len(ps) :]:
            ax.axis("off")
        fig.suptitle(f"mds dashboard: {row}", fontsize=12)
        fig.tight_layout()
        name = os.path.join(outdir, "dashboard-" + re.sub(r"[^a-z]+", "-", row.lower()).strip("-") + ".png")
        fig.savefig(name, dpi=80)
        plt.close(fig)
        print(f"wrote {os.path.relpath(name, ROOT)}")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "check":
        check(*args)
    elif cmd == "pictures":
        pictures(*args)
    else:
        raise SystemExit(__doc__)
