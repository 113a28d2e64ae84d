#!/usr/bin/env python3
"""A news import file (JSON Lines of articles) for the news-import benchmarks.

  gen_news.py N SEED OUT [zipf]
                           N deterministic synthetic articles, about 2.9 KB each
                           (a body of 12 to 40 sentences), spread over 2,000 ISINs,
                           24 categories and 60 tags, published over 2020-2026.
                           Words: by default drawn evenly from 36 (every word in
                           nearly every article); with `zipf`, from 4,000 words
                           with Zipf frequencies (the k-th most common drawn
                           with weight 1/k, as in English text): English function
                           words and market words first (in the order of ZIPF_HEAD),
                           then made-up words; so "the" is in every article,
                           "company" in most, "dividend" in a fifth, a word of
                           rank 3,000 in about 2% (the search benchmark's corpus)

Output is never committed.
"""
import json, random, sys

WORDS = ("market shares quarter results revenue growth margin board dividend order plant capacity "
         "export demand rupee crore lakh profit loss guidance analyst rating target price sector "
         "bank credit deposit steel cement power pharma software auto retail telecom").split()
# The most common words of the `zipf` corpus, most common first.
ZIPF_HEAD = ("the of to and a in for is on that with said by at as from its was has it be are "
             "an will per cent company year crore which shares have this profit quarter market price "
             "not net or also revenue sales india rs had been growth stock would more than first "
             "after new up investors board over target their results bank about two billion power "
             "months analyst earnings may could government when rupee demand rating margin exports "
             "we our into there they expected dividend last higher lower ended compared other business "
             "order some financial since deal total operating capacity plant sector credit fiscal "
             "record debt while under against week index nifty sensex trading buy sell hold "
             "management segment fund cash flow loss steel interest rate inflation policy "
             "deposit loan retail auto telecom software services consumer energy oil gas cement "
             "pharma infrastructure metals realty insurance guidance outlook shareholders "
             "pharmaceutical pharmacy cemented société déjà").split()
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


def zipf_words(seed):
    """4,000 distinct words, ZIPF_HEAD first, then made-up words of two to
    four syllables, and their cumulative Zipf weights (1/k)."""
    rng = random.Random(seed + 1)
    words, seen = list(ZIPF_HEAD), set(ZIPF_HEAD)
    onsets, vowels, codas = "b c d f g h j k l m n p r s t v w z br ch cr dr gr kr pl pr sh st th tr".split(), "a e i o u ai ea ie ou".split(), ["", "", "n", "r", "s", "l", "m", "t", "x"]
    while len(words) < 4000:
        w = "".join(rng.choice(onsets) + rng.choice(vowels) + rng.choice(codas) for _ in range(rng.randint(2, 4)))
        if w not in seen:
            seen.add(w)
            words.append(w)
    cum, total = [], 0.0
    for k in range(1, len(words) + 1):
        total += 1.0 / k
        cum.append(total)
    return words, cum


def main():
    n, seed, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    zipf = len(sys.argv) > 4 and sys.argv[4] == "zipf"
    rng = random.Random(seed)
    if zipf:
        vocab, cum = zipf_words(seed)
        draw = lambda k: rng.choices(vocab, cum_weights=cum, k=k)
    else:
        draw = lambda k: [rng.choice(WORDS) for _ in range(k)]
    isins = [isin(i) for i in range(1, 2001)]
    tags = ["tag%02d" % i for i in range(60)]
    with open(out, "w") as f:
        for i in range(n):
            sentence = lambda: " ".join(draw(rng.randint(8, 16))).capitalize() + "."
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
