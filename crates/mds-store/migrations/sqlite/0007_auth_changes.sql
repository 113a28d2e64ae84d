-- The auth change log (contract section 2.1; issue 13): what each bump of
-- the `auth` generation changed, so a node learns "what changed since G"
-- and does work proportional to the change rather than reloading every key.
--
-- `generation`: the `auth` generation the change made (every bump writes at
-- least one row, in the transaction of the change).
-- `prefix`: the key that changed (created, revoked); NULL for a change of
-- tiers or accounts (few: a node reloads them whole).
--
-- Pruned from the oldest end only; a node whose generation is older than
-- the oldest row kept (less one) has fallen behind and re-reads the keys it
-- holds. Bumps made before this migration have no rows, so a node that
-- started before it re-reads what it holds once.
CREATE TABLE auth_changes (
    generation BIGINT NOT NULL,
    prefix     TEXT
);

CREATE INDEX auth_changes_generation ON auth_changes (generation);
