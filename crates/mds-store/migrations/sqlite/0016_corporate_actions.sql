-- Corporate actions (contract section 13): the actions imported from the
-- exchanges' files, resolved to an ISIN and merged across NSE and BSE, and
-- the rows no ISIN was found for.
--
-- `corporate_actions`: one row an action, keyed by its stable id
-- (`mds_domain::actions::ActionId`); `action_json` is the whole
-- `mds_domain::actions::CorporateAction` as served; the other columns are
-- what the routes filter and sort by: `type`, `ex_date` (`YYYY-MM-DD`),
-- `sources` (`nse`, `bse` or `nse,bse`), `new_isin` (a split's or a
-- consolidation's successor, for lineage). Re-importing a row changes
-- nothing: the row's JSON is compared as text.
-- `corporate_action_unresolved`: the rows resolved to no ISIN, kept so they
-- can be counted and listed, one per exchange, code (NSE symbol or BSE
-- security code), ex-date and text, with the file and line first seen.
CREATE TABLE corporate_actions (
    id          TEXT NOT NULL PRIMARY KEY,
    isin        TEXT NOT NULL,
    symbol      TEXT NOT NULL,
    type        TEXT NOT NULL,
    ex_date     TEXT NOT NULL,
    sources     TEXT NOT NULL,
    new_isin    TEXT,
    action_json TEXT NOT NULL
);

-- The calendar (`GET /v1/actions`): ex-date, then id.
CREATE INDEX corporate_actions_calendar ON corporate_actions (ex_date, id);
-- One ISIN's actions (`GET /v1/companies/{isin}/actions`).
CREATE INDEX corporate_actions_isin ON corporate_actions (isin, ex_date);

CREATE TABLE corporate_action_unresolved (
    source  TEXT NOT NULL CHECK (source IN ('nse', 'bse')),
    code    TEXT NOT NULL,
    ex_date TEXT NOT NULL,
    purpose TEXT NOT NULL,
    file    TEXT NOT NULL,
    line    BIGINT NOT NULL,
    PRIMARY KEY (source, code, ex_date, purpose)
);
