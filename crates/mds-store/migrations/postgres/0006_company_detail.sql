-- Company details and change stamps: the columns and meaning of
-- migrations/sqlite/0006_company_detail.sql (read it for what they hold).
ALTER TABLE companies ADD COLUMN details_json TEXT COLLATE "C";
ALTER TABLE companies ADD COLUMN updated_at TEXT COLLATE "C" NOT NULL DEFAULT '1970-01-01T00:00:00+00:00';
ALTER TABLE companies ADD COLUMN change_seq BIGINT NOT NULL DEFAULT 0;
UPDATE companies SET
    updated_at = to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"'),
    change_seq = COALESCE((SELECT value::bigint FROM meta WHERE key = 'generation_companies'), 0);
