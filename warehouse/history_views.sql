-- Views over the change history (sql/0003_history.sql). Only CREATE OR REPLACE VIEW, so a
-- later migration may re-apply this file after editing it. These replace views.sql's
-- latest_runs and latest_offers: do not re-apply views.sql after migration 3. (latest_offers
-- is defined again by migrations 12, 13 and 17: the last one is the one in use.)

-- Good runs with their place in their provider's history.
CREATE OR REPLACE VIEW history_runs AS
SELECT run_id, provider, status, started_at, finished_at, observed_at, history_at, offers
FROM crawl_runs
WHERE history_at IS NOT NULL;

-- The latest good run per provider: the run current_offers comes from.
CREATE OR REPLACE VIEW latest_runs AS
SELECT c.*
FROM crawl_runs AS c
JOIN current_runs AS h ON h.run_id = c.run_id AND h.provider = c.provider;

-- The latest state (rule of truth 4) at a cost that does not grow with history.
-- Migrations 12 (stale rows) and 13 (sql/0013_set_lists.sql: lists joined from their sets)
-- redefine it: edit it in the latest.
-- observed_at is the observation time of the latest good run that saw the offer.
-- age_s: whole seconds since then, at query time.
CREATE OR REPLACE VIEW latest_offers AS
SELECT
    h.run_id, c.provider, c.offer_key, h.observed_at, c.gpu_vendor, c.gpu_model,
    c.gpu_vram_gb, c.gpu_form_factor, c.gpu_count, c.raw_gpu_name, c.status,
    c.available_count, c.price, c.currency, c.billing_unit, c.price_basis, c.price_kind,
    c.region, c.url,
    h.finished_at AS run_finished_at,
    date_diff('second', h.observed_at, current_timestamp) AS age_s,
    c.fees,
    c.plans
FROM current_offers AS c
JOIN current_runs AS h ON h.provider = c.provider;

-- Versions with their identity: the offer's fields, whole, with validity.
CREATE OR REPLACE VIEW version_rows AS
SELECT
    v.version_id, v.provider, i.offer_key, v.identity_id, v.valid_from, v.valid_to,
    i.gpu_vendor, i.gpu_model, i.gpu_vram_gb, i.gpu_form_factor, i.gpu_count, i.raw_gpu_name,
    v.status, v.available_count, v.price, v.currency, v.billing_unit, v.price_basis,
    v.price_kind, i.region, i.url, v.fee_set_id, v.plan_set_id
FROM offer_versions AS v
JOIN offer_identities AS i ON i.identity_id = v.identity_id;

-- Every good run with every version it saw: the per-poll history, reconstructed.
-- Cost grows with history; meant for audits and one-run questions, not for dashboards.
CREATE OR REPLACE VIEW run_versions AS
SELECT r.run_id, r.observed_at AS run_observed_at, r.history_at, v.*
FROM history_runs AS r
JOIN version_rows AS v
    ON v.provider = r.provider
    AND v.valid_from <= r.history_at
    AND coalesce(v.valid_to, 'infinity'::TIMESTAMPTZ) > r.history_at;

-- The tables these replaced, as reconstructions: one row per offer per good run.
-- observed_at here is the run's observation time (the earliest in its feed).
CREATE OR REPLACE VIEW observations AS
SELECT
    run_id, provider, offer_key, run_observed_at AS observed_at, gpu_vendor, gpu_model,
    gpu_vram_gb, gpu_form_factor, gpu_count, raw_gpu_name, status, available_count, price,
    currency, billing_unit, price_basis, price_kind, region, url
FROM run_versions;

CREATE OR REPLACE VIEW addon_fees AS
SELECT
    v.run_id, v.provider, v.offer_key, f.seq, f.fee_type, f.amount, f.currency, f.unit,
    f.basis, f.quantity, f.included_quantity, f.mandatory, f.charged_while_stopped, f.note
FROM run_versions AS v
JOIN addon_fee_sets AS f ON f.fee_set_id = v.fee_set_id;

CREATE OR REPLACE VIEW price_plans AS
SELECT
    v.run_id, v.provider, v.offer_key, p.seq, p.price, p.currency, p.billing_unit,
    p.price_basis, p.price_kind
FROM run_versions AS v
JOIN price_plan_sets AS p ON p.plan_set_id = v.plan_set_id;
