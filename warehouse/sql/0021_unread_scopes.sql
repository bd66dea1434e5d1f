-- 0021 what each good run could not read (rule of truth 10; docs/history.md).
--
-- A run loaded late is woven in before runs already stored, and must meet each of them as
-- that run really looked: an offer a later run could not read is kept by it, stale,
-- whatever state the late run gives the offer (not closed as no longer listed). The stale
-- stretches say it for offers the later run kept; for an offer the late run brings that no
-- later run listed, only the later run's own scope can say it, so it is kept here.
--   unread_scopes  one row per entry of a good run's unread set, as its weave used it
--                  (warehouse.unread): key  an offer key, or a key prefix when prefix
--                  (""  is every offer); sold_out  a prefix where not listed means sold
--                  out. The keys of the run's quarantine lines are entries too. Runs loaded
--                  before this migration have no rows: a late run counts them as having
--                  read every offer, as before.
-- Re-runnable (IF NOT EXISTS).

CREATE TABLE IF NOT EXISTS unread_scopes (
    provider VARCHAR NOT NULL,
    run_id   VARCHAR NOT NULL,
    key      VARCHAR NOT NULL,
    prefix   BOOLEAN NOT NULL,
    sold_out BOOLEAN NOT NULL
);
