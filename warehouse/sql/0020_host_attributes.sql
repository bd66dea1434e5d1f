-- 0020 host attributes (issue 32; gpurent_core/host.py, docs/usage.md "Host attributes").
--   offer_identities.<each>  what the host publishes about itself, NULL where the provider
--   current_offers.<each>    does not say it: cuda_version (text, compared as version
--                            numbers), driver_version, interconnect (nvlink, sxm, pcie),
--                            nvlink_gbps, host_reliability (0..1), hosting (secure, verified,
--                            community), max_rental_hours, vcpus_per_gpu, ram_gb_per_gpu,
--                            disk_gb_per_gpu
-- They describe the machine: identity fields, in the identity and the content hash
-- (warehouse/offer_hashes.py). Stored hashes move to the form with them (NULL here, as for
-- every row stored before), or the next run would see every open offer as changed.
-- The views that read the two tables are made again with the new columns at their end.
-- Re-runnable (IF NOT EXISTS; the hashes and views are recomputed), no CHECKs on the new
-- columns (the record's contract checks them on the way in; DuckDB adds no constraint with
-- a column).

ALTER TABLE offer_identities ADD COLUMN IF NOT EXISTS cuda_version VARCHAR;
ALTER TABLE offer_identities ADD COLUMN IF NOT EXISTS driver_version VARCHAR;
ALTER TABLE offer_identities ADD COLUMN IF NOT EXISTS interconnect VARCHAR;
ALTER TABLE offer_identities ADD COLUMN IF NOT EXISTS nvlink_gbps DECIMAL(14,4);
ALTER TABLE offer_identities ADD COLUMN IF NOT EXISTS host_reliability DECIMAL(14,4);
ALTER TABLE offer_identities ADD COLUMN IF NOT EXISTS hosting VARCHAR;
ALTER TABLE offer_identities ADD COLUMN IF NOT EXISTS max_rental_hours INTEGER;
ALTER TABLE offer_identities ADD COLUMN IF NOT EXISTS vcpus_per_gpu DECIMAL(14,4);
ALTER TABLE offer_identities ADD COLUMN IF NOT EXISTS ram_gb_per_gpu DECIMAL(14,4);
ALTER TABLE offer_identities ADD COLUMN IF NOT EXISTS disk_gb_per_gpu DECIMAL(14,4);

ALTER TABLE current_offers ADD COLUMN IF NOT EXISTS cuda_version VARCHAR;
ALTER TABLE current_offers ADD COLUMN IF NOT EXISTS driver_version VARCHAR;
ALTER TABLE current_offers ADD COLUMN IF NOT EXISTS interconnect VARCHAR;
ALTER TABLE current_offers ADD COLUMN IF NOT EXISTS nvlink_gbps DECIMAL(14,4);
ALTER TABLE current_offers ADD COLUMN IF NOT EXISTS host_reliability DECIMAL(14,4);
ALTER TABLE current_offers ADD COLUMN IF NOT EXISTS hosting VARCHAR;
ALTER TABLE current_offers ADD COLUMN IF NOT EXISTS max_rental_hours INTEGER;
ALTER TABLE current_offers ADD COLUMN IF NOT EXISTS vcpus_per_gpu DECIMAL(14,4);
ALTER TABLE current_offers ADD COLUMN IF NOT EXISTS ram_gb_per_gpu DECIMAL(14,4);
ALTER TABLE current_offers ADD COLUMN IF NOT EXISTS disk_gb_per_gpu DECIMAL(14,4);

UPDATE offer_identities SET identity_hash = hash(
    provider, offer_key, gpu_vendor, gpu_model, gpu_vram_gb, gpu_form_factor, gpu_count,
    raw_gpu_name, region, url,
    cuda_version, driver_version, interconnect, nvlink_gbps, host_reliability, hosting,
    max_rental_hours, vcpus_per_gpu, ram_gb_per_gpu, disk_gb_per_gpu
);

UPDATE current_offers SET content_hash = hash(
    hash(
        gpu_vendor, gpu_model, gpu_vram_gb, gpu_form_factor, gpu_count, raw_gpu_name,
        status, available_count, price, currency, billing_unit, price_basis, price_kind,
        region, url,
        cuda_version, driver_version, interconnect, nvlink_gbps, host_reliability, hosting,
        max_rental_hours, vcpus_per_gpu, ram_gb_per_gpu, disk_gb_per_gpu
    ),
    fee_hash,
    plan_hash
);

-- As migration 14 defined it, with the host attributes (from the identity) at the end.
CREATE OR REPLACE VIEW version_rows AS
SELECT
    v.version_id, v.provider, i.offer_key, v.identity_id, v.valid_from, v.valid_to,
    i.gpu_vendor, i.gpu_model, i.gpu_vram_gb, i.gpu_form_factor, i.gpu_count, i.raw_gpu_name,
    v.status, v.available_count, v.price, v.currency, v.billing_unit, v.price_basis,
    v.price_kind, i.region, i.url, v.fee_set_id, v.plan_set_id,
    i.cuda_version, i.driver_version, i.interconnect, i.nvlink_gbps, i.host_reliability,
    i.hosting, i.max_rental_hours, i.vcpus_per_gpu, i.ram_gb_per_gpu, i.disk_gb_per_gpu
FROM offer_versions AS v
JOIN offer_identities AS i ON i.identity_id = v.identity_id
UNION ALL
SELECT
    c.version_id, c.provider, c.offer_key, c.identity_id, c.valid_from,
    NULL::TIMESTAMPTZ AS valid_to,
    c.gpu_vendor, c.gpu_model, c.gpu_vram_gb, c.gpu_form_factor, c.gpu_count, c.raw_gpu_name,
    c.status, c.available_count, c.price, c.currency, c.billing_unit, c.price_basis,
    c.price_kind, c.region, c.url, c.fee_set_id, c.plan_set_id,
    c.cuda_version, c.driver_version, c.interconnect, c.nvlink_gbps, c.host_reliability,
    c.hosting, c.max_rental_hours, c.vcpus_per_gpu, c.ram_gb_per_gpu, c.disk_gb_per_gpu
FROM current_offers AS c;

-- As history_views.sql defines them (a view's columns are fixed when it is made).
CREATE OR REPLACE VIEW run_versions AS
SELECT r.run_id, r.observed_at AS run_observed_at, r.history_at, v.*
FROM history_runs AS r
JOIN version_rows AS v
    ON v.provider = r.provider
    AND v.valid_from <= r.history_at
    AND coalesce(v.valid_to, 'infinity'::TIMESTAMPTZ) > r.history_at;

CREATE OR REPLACE VIEW observations AS
SELECT
    run_id, provider, offer_key, run_observed_at AS observed_at, gpu_vendor, gpu_model,
    gpu_vram_gb, gpu_form_factor, gpu_count, raw_gpu_name, status, available_count, price,
    currency, billing_unit, price_basis, price_kind, region, url,
    cuda_version, driver_version, interconnect, nvlink_gbps, host_reliability, hosting,
    max_rental_hours, vcpus_per_gpu, ram_gb_per_gpu, disk_gb_per_gpu
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

-- As migration 17 defined them, with the new columns.
CREATE OR REPLACE VIEW current_offer_rows AS
SELECT
    c.*,
    h.run_id,
    h.observed_at AS run_observed_at,
    h.finished_at AS run_finished_at,
    c.last_seen_at IS NOT NULL OR NOT h.confirmed AS stale
FROM current_offers AS c
JOIN provider_looks AS h ON h.provider = c.provider;

-- The latest state: migration 17's columns in the same order, the host attributes last.
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
    c.stale,
    c.cuda_version, c.driver_version, c.interconnect, c.nvlink_gbps, c.host_reliability,
    c.hosting, c.max_rental_hours, c.vcpus_per_gpu, c.ram_gb_per_gpu, c.disk_gb_per_gpu
FROM current_offer_rows AS c
LEFT JOIN fee_set_lists AS f ON f.fee_set_id = c.fee_set_id
LEFT JOIN plan_set_lists AS p ON p.plan_set_id = c.plan_set_id;
