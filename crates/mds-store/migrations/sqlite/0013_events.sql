-- Events (contract section 11): the log, webhook endpoints with their
-- delivery state and attempts, and the open event streams.
--
-- `events`: the log. `id` increases in commit order (AUTOINCREMENT: never
-- reused, even after pruning); `type` is the wire type; `isin`, `ticker`,
-- `tags_json` what the event is about (for filters); `data_json` its
-- `data`. A `ping` is for one endpoint only (`endpoint_id`) and never in
-- the log, which reads the rows whose `endpoint_id` is NULL.
-- `meta.events_pruned_through`: the highest id retention has deleted; a
-- `since` below it is expired.
CREATE TABLE events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    type        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    isin        TEXT,
    ticker      TEXT,
    tags_json   TEXT NOT NULL DEFAULT '[]',
    data_json   TEXT NOT NULL,
    endpoint_id TEXT
);

CREATE INDEX events_isin ON events (isin, id);
CREATE INDEX events_ticker ON events (ticker, id);
CREATE INDEX events_created_at ON events (created_at);

INSERT INTO meta (key, value) VALUES ('events_pruned_through', '0') ON CONFLICT (key) DO NOTHING;

-- `webhook_endpoints`: an account's endpoints (`we_…`), the secret that
-- signs (and, during a rotation, the old one until it expires), the
-- filter (JSON: types, isins, tickers, tags), and the delivery state:
-- every matching event with an id up to `delivered_through` is delivered or given
-- up; the next one is tried for the `attempt`-th time at `next_attempt_at`
-- by the node holding the lease (`lease_owner` until `lease_until`).
-- `failing_since`: the first failure since the last success.
CREATE TABLE webhook_endpoints (
    id                 TEXT PRIMARY KEY,
    account_id         INTEGER NOT NULL REFERENCES accounts (id),
    url                TEXT NOT NULL,
    description        TEXT,
    filter_json        TEXT NOT NULL,
    secret             TEXT NOT NULL,
    old_secret         TEXT,
    old_secret_until   TEXT,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    disabled_at        TEXT,
    disabled_reason    TEXT,
    delivered_through  BIGINT NOT NULL,
    attempt            BIGINT NOT NULL DEFAULT 0,
    next_attempt_at    TEXT,
    failing_since      TEXT,
    lease_owner        TEXT,
    lease_until        TEXT
);

CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, created_at);

-- `webhook_attempts`: every delivery attempt, newest kept (pruned per
-- endpoint): the event, when, the answer's status or the error, how long.
CREATE TABLE webhook_attempts (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    endpoint_id  TEXT NOT NULL,
    event_id     BIGINT NOT NULL,
    attempt      BIGINT NOT NULL,
    attempted_at TEXT NOT NULL,
    status       BIGINT,
    error        TEXT,
    duration_ms  BIGINT NOT NULL
);

CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, id);

-- `event_streams`: the open streams, per key, across nodes, each held by
-- its node until `lease_until` (renewed while open; a dead node's lapse).
CREATE TABLE event_streams (
    id          TEXT PRIMARY KEY,
    key_prefix  TEXT NOT NULL,
    node        TEXT NOT NULL,
    lease_until TEXT NOT NULL
);

CREATE INDEX event_streams_key ON event_streams (key_prefix);
