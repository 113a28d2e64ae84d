#!/usr/bin/env python3
"""A news import file (JSON Lines of articles) for the news-import benchmarks.

  gen_news.py N SEED OUT   N deterministic synthetic articles, about 2.9 KB each
                           (a body of 12 to 40 sentences), spread over 2,000 ISINs,
                           24 categories and 60 tags, published over 2020-2026

Output is never committed.
"""
import json, random, sys

WORDS = ("market shares quarter results revenue growth margin board dividend order plant capacity "
         "export demand rupee crore lakh profit loss guidance analyst rating target price sector "
         "bank credit deposit steel cement power pharma software auto retail telecom").split()
CATEGORIES = ["results", "orders", "dividends", "mergers", "ratings", "ipo", "policy", "markets",
              "banking", "energy", "pharma", "technology", "autos", "metals", "realty", "telecom",
              "fmcg", "infrastructure", "insurance", "media", "logistics", "chemicals", "textiles", "agri"]


def isin(n):
    body = "INE%05dA01" % n
    digits = "".join(str(int(c, 36)) for c in body)
    total = 0
    for k, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if k % 2 == 0 else 1)
        total += d // 10 + d % 10
    return body + str((10 - total % 10) % 10)


def main():
    n, seed, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    rng = random.Random(seed)
    isins = [isin(i) for i in range(1, 2001)]
    tags = ["tag%02d" % i for i in range(60)]
    with open(out, "w") as f:
        for i in range(n):
            sentence = lambda: " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 16))).capitalize() + "."
            day = rng.randint(0, 6 * 365)
            published = "20%02d-%02d-%02dT%02d:%02d:00+05:30" % (
                20 + day // 365, 1 + (day % 365) // 31 % 12, 1 + day % 28, rng.randint(0, 23), rng.randint(0, 59))
            article = {
                "slug": "article-%d-%d" % (seed, i),
                "headline": sentence()[:200],
                "subheadline": sentence()[:300],
                "excerpt": sentence(),
                "body": " ".join(sentence() for _ in range(rng.randint(12, 40))),
                "category": rng.choice(CATEGORIES),
                "tags": rng.sample(tags, rng.randint(0, 4)),
                "isin": rng.choice(isins),
                "ticker": None,
                "company_name": None,
                "author_name": "Desk %d" % rng.randint(1, 40),
                "hero_image": None,
                "url": "https://news.example/a/%d" % i,
                "published_at": published,
                "updated_at": None,
            }
            f.write(json.dumps(article) + "\n")


if __name__ == "__main__":
    main()
