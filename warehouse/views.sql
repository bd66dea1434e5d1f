-- Latest-state views (rule of truth 4: latest = latest successful run per provider).
-- Migration 2 only. From migration 3 on, history_views.sql defines latest_runs and
-- latest_offers over the change history: do not re-apply this file after it.
-- Every statement is CREATE OR REPLACE, so a later migration may re-apply this file after
-- editing it. "Latest" orders runs by started_at, then finished_at, then run_id.

-- Runs whose rows feed the latest state: ok, partial or auth_required, with offers stored.
-- A run that stored no offers is never "good": zero offers from a page that answered is a
-- layout problem, not "everything sold out" (rule of truth 3).
CREATE OR REPLACE VIEW good_runs AS
SELECT *
FROM crawl_runs
WHERE status IN ('ok', 'partial', 'auth_required') AND offers > 0;

-- The latest good run per provider.
CREATE OR REPLACE VIEW latest_runs AS
SELECT *
FROM good_runs
QUALIFY row_number() OVER (
    PARTITION BY provider ORDER BY started_at DESC, finished_at DESC, run_id DESC
) = 1;

-- The latest run per provider, whatever its status (for status pages).
CREATE OR REPLACE VIEW last_runs AS
SELECT *
FROM crawl_runs
QUALIFY row_number() OVER (
    PARTITION BY provider ORDER BY started_at DESC, finished_at DESC, run_id DESC
) = 1;

-- The offers of the latest good runs. Offers absent from that run do not linger.
-- age_s: whole seconds since the observation, at query time.
CREATE OR REPLACE VIEW latest_offers AS
SELECT
    o.*,
    r.finished_at AS run_finished_at,
    date_diff('second', o.observed_at, current_timestamp) AS age_s
FROM observations AS o
JOIN latest_runs AS r ON r.run_id = o.run_id AND r.provider = o.provider;
