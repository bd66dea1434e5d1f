-- 0017 only what the latest look confirmed is ranked (rule of truth 11; docs/history.md).
--
-- An offer of the latest state is CONFIRMED when its provider's latest run (by started_at,
-- among all of its runs: failed, layout_changed and auth_required without offers included)
-- is the run the latest state comes from (current_runs), and that run saw it
-- (current_offers.last_seen_at IS NULL). Otherwise it is stale: its last good state, with
-- the age of the look that last saw it, listed by `offers` but ranked only on request.
-- Runs are compared by started_at, never by when they were loaded: a run stored late with
-- an older start (a backfill) leaves the provider's latest look as it was.
--   provider_looks      one row per provider with a current run: that run, and whether it
--                       is also the provider's latest look (confirmed: no run of the
--                       provider, of any status, started after it)
--   current_offer_rows  current_offers with their run's columns and `stale` (not
--                       confirmed): the one definition latest_offers and the cost ranking's
--                       lower bound (warehouse/ranking.py) both read
--   latest_offers       as migration 13 defined it; `stale` now also covers every offer of a
--                       provider whose latest run did not feed the state

-- NOT EXISTS rather than the latest start per provider: DuckDB pushes the current runs' start
-- times into the scan of crawl_runs, so the cost follows the runs since then, not every run
-- ever stored (1.8M runs: ~5 ms against ~70 ms for a max() per provider).
CREATE OR REPLACE VIEW provider_looks AS
SELECT
    h.provider, h.run_id, h.started_at, h.finished_at, h.observed_at, h.history_at,
    NOT EXISTS (
        SELECT 1 FROM crawl_runs AS r
        WHERE r.provider = h.provider AND r.started_at > h.started_at
    ) AS confirmed
FROM current_runs AS h;

CREATE OR REPLACE VIEW current_offer_rows AS
SELECT
    c.*,
    h.run_id,
    h.observed_at AS run_observed_at,
    h.finished_at AS run_finished_at,
    c.last_seen_at IS NOT NULL OR NOT h.confirmed AS stale
FROM current_offers AS c
JOIN provider_looks AS h ON h.provider = c.provider;

-- The latest state: every column migration 13 gave it, in the same order.
CREATE OR REPLACE VIEW latest_offers AS
SELECT
    c.run_id, c.provider, c.offer_key,
    coalesce(c.last_seen_at, c.run_observed_at) AS observed_at,
    c.gpu_vendor, c.gpu_model, c.gpu_vram_gb, c.gpu_form_factor, c.gpu_count, c.raw_gpu_name,
    c.status, c.available_count, c.price, c.currency, c.billing_unit, c.price_basis,
    c.price_kind, c.region, c.url,
    c.run_finished_at,
    date_diff('second', coalesce(c.last_seen_at, c.run_observed_at), current_timestamp) AS age_s,
    coalesce(f.fees, []) AS fees,
    coalesce(p.plans, []) AS plans,
    c.stale
FROM current_offer_rows AS c
LEFT JOIN fee_set_lists AS f ON f.fee_set_id = c.fee_set_id
LEFT JOIN plan_set_lists AS p ON p.plan_set_id = c.plan_set_id;
