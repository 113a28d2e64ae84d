#!/usr/bin/env python3
"""Companies import files (CSV, V1Company columns) for bench/run.sh.

  gen_companies.py synthetic N SEED OUT   N deterministic synthetic companies
  gen_companies.py detailed N SEED OUT    the same companies, with every detail column
                                          (listings, four levels, market cap) filled as
                                          `mds import exchanges` fills them
  gen_companies.py casparser IN.csv.gz OUT  the equity ISINs of a casparser
                                            ISIN list (valid, distinct ISINs only)
  gen_companies.py history N SEED DIR     an identity history for `mds import exchanges`
                                          and `mds import nse-changes`: DIR/EQUITY_L_2024-01-31.csv
                                          (N companies), DIR/EQUITY_L_2026-05-17.csv, and NSE's
                                          change files DIR/symbolchange.csv (no header, as NSE's)
                                          and DIR/namechange.csv; 10% of the companies get 1 to 5
                                          identity events beyond their listing (1% of all a split:
                                          a new ISIN of the same issuer, face value halved; symbol
                                          changes, some chained A->B->C, dated in the change file;
                                          name changes; 0.5% of all delisted), and 0.2% new
                                          listings appear in 2026

Industries, bands and exchanges not in the source are assigned from a seeded
generator, so every filter has something to select. Output is never committed.
"""
import csv, gzip, random, sys

INDUSTRIES = ["Banks", "Software", "Steel", "Pharmaceuticals", "Textiles", "Cement", "Power", "Chemicals",
              "Automobiles", "Auto Components", "Finance", "Insurance", "Realty", "Telecom", "FMCG", "Media",
              "Construction", "Fertilisers", "Hotels", "Logistics", "Oil & Gas", "Metals", "Paper", "Sugar"]
SECTORS = ["Financials", "Information Technology", "Materials", "Health Care", "Industrials", "Energy",
           "Consumer Discretionary", "Consumer Staples", "Utilities", "Real Estate", "Communication Services"]
BANDS = ["large_cap", "mid_cap", "small_cap", "", "", ""]
SUFFIX = ["Limited", "Ltd", "Industries Limited", "India Limited", "Enterprises Ltd", "Holdings Limited",
          "Corporation Limited", "& Co. Ltd", "Private Ltd"]
UNICODE = ["Nestlé", "Société", "ÉCOLE", "Müller", "Straße", "भारत", "पेट्रोलियम", "निगम", "Ωmega", "Café", "Øresund"]


def isin_check(body):
    digits = "".join(str(int(c, 36)) for c in body)
    total = 0
    for k, ch in enumerate(reversed(digits)):
        d = int(ch)
        if k % 2 == 0:
            d *= 2
            d = d // 10 + d % 10
        total += d
    return str((10 - total % 10) % 10)


def valid_isin(s):
    return len(s) == 12 and s[:2].isalpha() and s[:2].isupper() and s[2:11].isalnum() and s[11].isdigit() \
        and s[2:11] == s[2:11].upper() and isin_check(s[:11]) == s[11]


def extras(rng):
    bse, nse = rng.random() < 0.7, rng.random() < 0.5
    if not (bse or nse):
        bse = True
    return [rng.choice(INDUSTRIES) if rng.random() < 0.85 else "", rng.choice(SECTORS) if rng.random() < 0.7 else "",
            "true" if bse else "false", "true" if nse else "false", rng.choice(BANDS)]


HEADER = ["isin", "ticker", "name", "industry", "sector", "is_bse", "is_nse", "market_cap_band", "logo_url"]


DETAIL_HEADER = ["nse_series", "nse_listed_on", "nse_face_value", "bse_scrip_code", "bse_group", "bse_face_value",
                 "bse_status", "macro_sector", "basic_industry", "market_cap_inr_crore", "market_cap_as_of"]
MACRO = ["Financial Services", "Information Technology", "Commodities", "Healthcare", "Industrials", "Energy",
         "Consumer Discretionary", "Fast Moving Consumer Goods", "Utilities", "Services", "Telecommunication"]
BASIC = ["Private Sector Bank", "Computers - Software & Consulting", "Iron & Steel", "Pharmaceuticals",
         "Heavy Electrical Equipment", "Refineries & Marketing", "Passenger Cars & Utility Vehicles", "Tea & Coffee",
         "Power Generation", "Hotels & Resorts", "Telecom - Cellular & Fixed line services", "Cement & Cement Products"]


def details(rng, k, bse, nse):
    """The detail cells of one company, as the exchanges' files give them."""
    face = rng.choice(["1", "2", "5", "10", "10", "10"])
    nse_cells = [rng.choice(["EQ", "EQ", "EQ", "BE", "BZ"]),
                 "%04d-%02d-%02d" % (rng.randint(1994, 2024), rng.randint(1, 12), rng.randint(1, 28)), face] \
        if nse == "true" else ["", "", ""]
    bse_cells = [str(500000 + k), rng.choice(["A", "B", "T", "X", "XT", "M"]), face, "active"] \
        if bse == "true" else ["", "", "", ""]
    mcap = ["%.2f" % (rng.lognormvariate(6, 2)), "2024-03-28"] if nse == "true" else ["", ""]
    return nse_cells + bse_cells + [rng.choice(MACRO), rng.choice(BASIC)] + mcap


def synthetic(n, seed, out, with_details=False):
    rng = random.Random(seed)
    drng = random.Random(seed + 1)
    cons, vows = "bcdfghjklmnprstvwyz", "aeiou"
    words = sorted({"".join(rng.choice(cons) + rng.choice(vows) for _ in range(rng.randint(1, 4))).capitalize()
                    for _ in range(20000)})
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(HEADER + (DETAIL_HEADER if with_details else []))
        for k in range(n):
            parts = [rng.choice(words) for _ in range(rng.randint(1, 3))]
            if rng.random() < 0.05:
                parts.insert(rng.randint(0, len(parts)), rng.choice(UNICODE))
            name = " ".join(parts) + " " + rng.choice(SUFFIX)
            ticker = "".join(p for p in parts if p.isascii()).upper()[: rng.randint(3, 12)] or "X"
            if rng.random() < 0.3:
                ticker += str(rng.randint(1, 99))
            if rng.random() < 0.02:
                ticker = rng.choice(["M&M", "BAJAJ-AUTO", "20MICRONS", "L&TFH"]) + str(rng.randint(0, 999))
            body = "INE%08d" % k
            logo = "https://logos.example.com/%s.png" % ticker.lower() if rng.random() < 0.3 else ""
            ex = extras(rng)
            row = [body + isin_check(body), ticker, name] + ex + [logo]
            if with_details:
                row += details(drng, k, ex[2], ex[3])
            w.writerow(row)


B36 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def b36(k, width):
    out = ""
    for _ in range(width):
        out = B36[k % 36] + out
        k //= 36
    return out


def history_isin(k, serial):
    body = "INE" + b36(k, 4) + "01" + "%02d" % serial
    return body + isin_check(body)


def nse_date(y, m, d):
    return "%02d-%s-%04d" % (d, ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"][m - 1], y)


def history(n, seed, out_dir):
    import os
    rng = random.Random(seed)
    os.makedirs(out_dir, exist_ok=True)
    cons, vows = "bcdfghjklmnprstvwyz", "aeiou"
    words = sorted({"".join(rng.choice(cons) + rng.choice(vows) for _ in range(rng.randint(1, 4))).capitalize()
                    for _ in range(20000)})
    header = ["SYMBOL", "NAME OF COMPANY", " SERIES", " DATE OF LISTING", " PAID UP VALUE", " MARKET LOT",
              " ISIN NUMBER", " FACE VALUE"]
    first, second, sym_rows, name_rows = [], [], [], []
    counts = {"split": 0, "symbol": 0, "name": 0, "delisted": 0, "new": 0, "with_events": 0}
    for k in range(n):
        name = " ".join(rng.choice(words) for _ in range(rng.randint(1, 3))) + " " + rng.choice(SUFFIX)
        symbol = "S" + b36(k, 4)
        face = rng.choice([1, 2, 5, 10, 10, 10])
        listed = nse_date(rng.randint(1994, 2023), rng.randint(1, 12), rng.randint(1, 28))
        row = [symbol, name, "EQ", listed, face, 1, history_isin(k, 1), face]
        first.append(row)
        if rng.random() >= 0.10:
            second.append(row)
            continue
        counts["with_events"] += 1
        events = rng.randint(1, 5)
        later = list(row)
        if rng.random() < 0.05:  # 0.5% of all: gone, after a change or two
            events = min(events, 2)
        elif rng.random() < 0.1:  # 1% of all: a split, counted as one event
            later[6] = history_isin(k, 2)
            later[7] = later[4] = max(1, face // 2)
            events -= 1
            counts["split"] += 1
        day = 0
        cur = symbol
        while events > 0:
            day += rng.randint(1, 60)
            y, rest = 2024 + (30 + day) // 360, (30 + day) % 360
            when = nse_date(min(y, 2026), 1 + rest // 30 if y < 2026 else min(4, 1 + rest // 30), 1 + rest % 28)
            if rng.random() < 0.5:
                new = cur + b36(events, 1)
                sym_rows.append([later[1], cur, new, when])
                cur = new
                counts["symbol"] += 1
            else:
                new_name = rng.choice(words) + " " + later[1]
                name_rows.append([cur, later[1], new_name, when])
                later[1] = new_name[:200]
                counts["name"] += 1
            events -= 1
        later[0] = cur
        if later[6] == row[6] and rng.random() < 0.05:
            counts["delisted"] += 1
            continue
        second.append(later)
    for j in range(n // 500):
        k = n + j
        name = " ".join(rng.choice(words) for _ in range(rng.randint(1, 3))) + " " + rng.choice(SUFFIX)
        second.append(["S" + b36(k, 4), name, "SM", nse_date(2025, rng.randint(1, 12), rng.randint(1, 28)), 10, 1,
                       history_isin(k, 1), 10])
        counts["new"] += 1
    # The name file names the symbol of the day it was made.
    final = {}
    for r in sym_rows:
        final[r[1]] = r[2]
    def latest(s):
        seen = 0
        while s in final and seen < 10:
            s, seen = final[s], seen + 1
        return s
    for r in name_rows:
        r[0] = latest(r[0])
    for name, rows in (("EQUITY_L_2024-01-31.csv", first), ("EQUITY_L_2026-05-17.csv", second)):
        with open(os.path.join(out_dir, name), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(header)
            w.writerows(rows)
    with open(os.path.join(out_dir, "symbolchange.csv"), "w", newline="") as f:
        csv.writer(f).writerows(sym_rows)
    with open(os.path.join(out_dir, "namechange.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["NCH_SYMBOL", " NCH_PREV_NAME", " NCH_NEW_NAME", " NCH_DT"])
        w.writerows(name_rows)
    print(counts, file=sys.stderr)


def casparser(src, out):
    rng = random.Random(2026)
    seen = set()
    with gzip.open(src, "rt", newline="") as f, open(out, "w", newline="") as o:
        w = csv.writer(o)
        w.writerow(HEADER)
        for row in csv.DictReader(f):
            isin = row["isin"].strip()
            if isin in seen or not valid_isin(isin):
                continue
            seen.add(isin)
            name = (row["issuer"] or row["name"]).strip() or isin
            sym = row["symbol"].strip().upper()
            if not sym or len(sym) > 32 or not all(33 <= ord(c) <= 126 for c in sym):
                sym = "".join(c for c in name.upper() if c.isascii() and c.isalnum())[:10] or isin
            ex = extras(rng)
            if row.get("exchange", "").strip() == "NSE":
                ex[3] = "true"
            w.writerow([isin, sym, name] + ex + [""])


if __name__ == "__main__":
    if sys.argv[1] == "history":
        history(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    elif sys.argv[1] in ("synthetic", "detailed"):
        synthetic(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], with_details=sys.argv[1] == "detailed")
    else:
        casparser(sys.argv[2], sys.argv[3])
