-- A random nonce per `companies` generation (contract section 7.2): a sync
-- token carries its generation and that generation's nonce, so a token
-- from a history the store no longer has (restored from an older copy,
-- then imported past the token's generation again) no longer matches and
-- is refused `410`, rather than silently skipping changes. Written by every
-- upsert that makes a generation, in its transaction; never pruned (one
-- row per import). The generation current when this migration runs gets
-- one here.
CREATE TABLE generation_nonces (
    generation BIGINT PRIMARY KEY,
    nonce      BIGINT NOT NULL
);

INSERT INTO generation_nonces (generation, nonce)
SELECT CAST(value AS BIGINT), abs(random() / 2) FROM meta WHERE key = 'generation_companies';
