-- Corporate actions: the tables and meaning of
-- migrations/sqlite/0016_corporate_actions.sql (read it for what they hold).
CREATE TABLE corporate_actions (
    id          TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    isin        TEXT COLLATE "C" NOT NULL,
    symbol      TEXT COLLATE "C" NOT NULL,
    type        TEXT COLLATE "C" NOT NULL,
    ex_date     TEXT COLLATE "C" NOT NULL,
    sources     TEXT COLLATE "C" NOT NULL,
    new_isin    TEXT COLLATE "C",
    action_json TEXT COLLATE "C" NOT NULL
);

CREATE INDEX corporate_actions_calendar ON corporate_actions (ex_date, id);
CREATE INDEX corporate_actions_isin ON corporate_actions (isin, ex_date);

CREATE TABLE corporate_action_unresolved (
    source  TEXT COLLATE "C" NOT NULL CHECK (source IN ('nse', 'bse')),
    code    TEXT COLLATE "C" NOT NULL,
    ex_date TEXT COLLATE "C" NOT NULL,
    purpose TEXT COLLATE "C" NOT NULL,
    file    TEXT COLLATE "C" NOT NULL,
    line    BIGINT NOT NULL,
    PRIMARY KEY (source, code, ex_date, purpose)
);
