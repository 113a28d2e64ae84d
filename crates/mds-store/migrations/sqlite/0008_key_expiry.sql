-- Key expiry (contract section 9): `expires_at`, when a key stops working
-- (RFC 3339, UTC), NULL for a key that does not expire. Set when a key is
-- issued with an expiry, or when it is rolled (the old key keeps working
-- until the end of the overlap window). A serving node refuses a key from
-- that instant on, by its own clock; the row is kept (its usage history
-- stays), as for a revoked key.
ALTER TABLE api_keys ADD COLUMN expires_at TEXT;
