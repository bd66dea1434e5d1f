-- 0012 stale rows and unknown VRAM (rules of truth 2 and 10; docs/history.md).
--
-- A partial run (some pages or items failed) keeps the offers it could not see: their
-- versions stay open, unchanged, and they are marked stale instead of vanishing.
--   current_offers.last_seen_at  NULL while the provider's current run saw the offer; else
--                                the observation time of the last run that did (set when
--                                it first went stale, kept while it stays stale).
--   stale_spans                  one row per stretch of good runs an offer stayed stale:
--                                from the history_at of the first run that missed it to the
--                                history_at of the run that saw it again or, being complete,
--                                no longer listed it (NULL while it lasts). It lets a past
--                                run's snapshot say which offers that run really saw; it
--                                grows with changes of staleness, not with polls.
-- A name that leaves the VRAM open (H20, several GeForce cards) may now come with no VRAM:
-- gpu_vram_gb NULL means unknown, and no VRAM filter ever counts it as fitting.

ALTER TABLE offer_identities ALTER COLUMN gpu_vram_gb DROP NOT NULL;
ALTER TABLE current_offers ALTER COLUMN gpu_vram_gb DROP NOT NULL;
ALTER TABLE current_offers ADD COLUMN last_seen_at TIMESTAMPTZ;

CREATE TABLE stale_spans (
    provider     VARCHAR     NOT NULL,
    offer_key    VARCHAR     NOT NULL,
    stale_from   TIMESTAMPTZ NOT NULL,
    stale_to     TIMESTAMPTZ CHECK (stale_to > stale_from),
    last_seen_at TIMESTAMPTZ NOT NULL
);

-- The latest state, stale rows included. observed_at / age_s are per row: the last run that
-- saw the offer (its last good state), not the current run, for a stale row.
CREATE OR REPLACE VIEW latest_offers AS
SELECT
    h.run_id, c.provider, c.offer_key, coalesce(c.last_seen_at, h.observed_at) AS observed_at,
    c.gpu_vendor, c.gpu_model, c.gpu_vram_gb, c.gpu_form_factor, c.gpu_count, c.raw_gpu_name,
    c.status, c.available_count, c.price, c.currency, c.billing_unit, c.price_basis,
    c.price_kind, c.region, c.url,
    h.finished_at AS run_finished_at,
    date_diff('second', coalesce(c.last_seen_at, h.observed_at), current_timestamp) AS age_s,
    c.fees,
    c.plans,
    c.last_seen_at IS NOT NULL AS stale
FROM current_offers AS c
JOIN current_runs AS h ON h.provider = c.provider;
