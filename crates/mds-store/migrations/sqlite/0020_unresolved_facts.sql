-- The rows of the exchanges' action files resolved to no ISIN
-- (`corporate_action_unresolved`) kept with what resolving them and
-- reading their actions later needs, so that an import that makes their
-- ISIN known (a list, a change file, a daily file) resolves them
-- (contract 10.3; `mds_node::import`, "resolve again"), as
-- `corporate_action_rows` keeps the rows resolved.
--
-- `security_id`: BSE's security id (`Security Name`), '' for NSE;
-- `series`: NSE's series, '' for BSE or none; `face_value`: NSE's face
-- value as written by Rust's `f64` (round-trips), '' for BSE or none;
-- `record_date`: `YYYY-MM-DD`, '' for none.
--
-- Rows kept before this migration get '' for each: they are resolved again
-- as far as that allows (a BSE row by its code alone; an NSE row's text
-- read without its series or face value, so a fund's or debt's row is read
-- by its text and a percentage dividend or a rights price is null, and no
-- record date). An import of their file again keeps the row as it is
-- (`ON CONFLICT DO NOTHING`, so its count of rows new to the store stays
-- exact); a re-import after their ISIN is known resolves them from the
-- file as any row.
ALTER TABLE corporate_action_unresolved ADD COLUMN security_id TEXT NOT NULL DEFAULT '';
ALTER TABLE corporate_action_unresolved ADD COLUMN series TEXT NOT NULL DEFAULT '';
ALTER TABLE corporate_action_unresolved ADD COLUMN face_value TEXT NOT NULL DEFAULT '';
ALTER TABLE corporate_action_unresolved ADD COLUMN record_date TEXT NOT NULL DEFAULT '';
