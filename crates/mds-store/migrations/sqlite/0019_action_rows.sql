-- The rows of the exchanges' action files that were resolved to an ISIN
-- (contract 13.1, 10.3), kept with what resolved them, so that a later
-- import that changes the identity history resolves them again and moves
-- their actions (`mds_node::import`, "resolve again"): one per exchange,
-- code, ex-date and text, like `corporate_action_unresolved`.
--
-- `code`: NSE's symbol or BSE's security code, as written; `security_id`:
-- BSE's security id (`Security Name`), '' for NSE; `isin`: the ISIN the row
-- was last resolved to.
CREATE TABLE corporate_action_rows (
    source      TEXT NOT NULL CHECK (source IN ('nse', 'bse')),
    code        TEXT NOT NULL,
    ex_date     TEXT NOT NULL,
    purpose     TEXT NOT NULL,
    security_id TEXT NOT NULL,
    isin        TEXT NOT NULL,
    PRIMARY KEY (source, code, ex_date, purpose)
);
