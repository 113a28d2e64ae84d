-- The admin API's key list pages by keyset (issue 16): in creation order
-- (`created_at`, then `prefix`), of every key or of one account's, each
-- page one walk of an index from the cursor's position.
CREATE INDEX api_keys_created ON api_keys (created_at, prefix);
CREATE INDEX api_keys_account_created ON api_keys (account_id, created_at, prefix);
