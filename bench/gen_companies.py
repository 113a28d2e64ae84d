#!/usr/bin/env python3
"""Companies import files (CSV, V1Company columns) for bench/run.sh.

  gen_companies.py synthetic N SEED OUT   N deterministic synthetic companies
  gen_companies.py detailed N SEED OUT    the same companies, with every detail column
                                          (listings, four levels, market cap) filled as
                                          `mds import exchanges` fills them
  gen_companies.py casparser IN.csv.gz OUT  the equity ISINs of a casparser
                                            ISIN list (valid, distinct ISINs only)

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
    if sys.argv[1] in ("synthetic", "detailed"):
        synthetic(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], with_details=sys.argv[1] == "detailed")
    else:
        casparser(sys.argv[2], sys.argv[3])
