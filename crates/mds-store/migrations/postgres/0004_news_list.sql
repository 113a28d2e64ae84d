-- The news list (GET /v1/news), on PostgreSQL: the indexes of
-- migrations/sqlite/0004_news_list.sql, the same text (the columns are
-- COLLATE "C", and so is the sort key made of one: each index is in byte
-- order, as the queries compare).
--
-- The news list: its order and the filters it narrows by.
--
-- The list is ordered by `published_at` descending, then `slug` ascending,
-- with undated articles (`published_at` NULL) last, by `slug`. Both
-- backends sort by one key, `COALESCE(published_at, '')`, descending, then
-- `slug`: `published_at` is RFC 3339 text in UTC written by
-- `mds_domain::time::format_utc` (one offset, `+00:00`; fractional seconds
-- only when there are some), so text order is time order ('+' sorts before
-- '.', and both before the digits), and the empty text of an undated
-- article sorts below every instant, so those come last. No backend's NULL
-- placement is relied on.
--
-- Each index ends with that key and `slug`: a page is a walk of one of
-- them from the cursor's position (a range condition on the key), never a
-- sort of the matches, however deep the page.
CREATE INDEX articles_list ON articles (COALESCE(published_at, '') DESC, slug);

-- `isin`: the articles about one company.
CREATE INDEX articles_isin_list ON articles (isin, COALESCE(published_at, '') DESC, slug);

-- `ticker`: exact and case-insensitive, so the index is on the upper-cased
-- ticker (ASCII upper case on both backends; tickers are ASCII).
CREATE INDEX articles_ticker_list ON articles (UPPER(ticker), COALESCE(published_at, '') DESC, slug);

-- `category`: a handful of values, each with many articles.
CREATE INDEX articles_category_list ON articles (category, COALESCE(published_at, '') DESC, slug);

-- `tag` has no index: tags are a JSON array (`tags_json`), matched per row
-- while a page's walk of `articles_list` goes on.
