-- Company details and change stamps (contract sections 7.1 and 7.2).
--
-- `details_json`: what is known beyond `V1Company` (listings, the four
-- classification levels, the market capitalisation), the JSON of
-- `mds_domain::CompanyDetails`; NULL when nothing is.
-- `updated_at`: when the row's content last changed (RFC 3339, UTC).
-- `change_seq`: the `companies` generation of the upsert that last changed
-- the row's content. An upsert that leaves a row as it was changes neither
-- stamp. The change feed serves rows in `(change_seq, isin)` order, and a
-- sync token is the generation it was served at: "since G" is every row
-- with `change_seq > G`. Companies are never deleted, so this one stamp per
-- row is the whole change history: a token never outlives it.
--
-- Rows that exist when this migration runs are stamped with the current
-- generation and time: their history before it is unknown.
ALTER TABLE companies ADD COLUMN details_json TEXT;
ALTER TABLE companies ADD COLUMN updated_at TEXT NOT NULL DEFAULT '1970-01-01T00:00:00+00:00';
ALTER TABLE companies ADD COLUMN change_seq BIGINT NOT NULL DEFAULT 0;
UPDATE companies SET
    updated_at = strftime('%Y-%m-%dT%H:%M:%S+00:00', 'now'),
    change_seq = COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'generation_companies'), 0);
