-- 0014 open versions live in current_offers only (docs/history.md).
--
-- An offer's state now was stored twice: as an open version in offer_versions (with its
-- identity in offer_identities) and whole in current_offers. A run that lists a million new
-- offers wrote both, and their identities, before anything else (issue 13: three writes of
-- every new offer). Now an open version is a row of current_offers only; it moves to
-- offer_versions when it closes, its identity to offer_identities if not stored yet.
--   current_offers.fee_hash,   the hashes of the version's fee and plan lists (the sets'
--   current_offers.plan_hash   set_hash), to find their set ids once the sets are stored
--   current_offers.feed_line   the line of the feed that opened the version
--   current_offers.observed_at the observation time written on that line
-- version_rows (history_views.sql) reads closed versions and open ones as one.

ALTER TABLE current_offers ADD COLUMN fee_hash UBIGINT;
ALTER TABLE current_offers ADD COLUMN plan_hash UBIGINT;
ALTER TABLE current_offers ADD COLUMN feed_line INTEGER;
ALTER TABLE current_offers ADD COLUMN observed_at TIMESTAMPTZ;

UPDATE current_offers SET
    fee_hash = (SELECT min(set_hash) FROM addon_fee_sets AS s
                WHERE s.fee_set_id = current_offers.fee_set_id),
    plan_hash = (SELECT min(set_hash) FROM price_plan_sets AS s
                 WHERE s.plan_set_id = current_offers.plan_set_id);

-- The open versions are whole in current_offers: their rows in offer_versions go. (Their
-- identities stay stored: a later close finds them there.)
DELETE FROM offer_versions
WHERE valid_to IS NULL AND version_id IN (SELECT version_id FROM current_offers);

-- Versions with their identity: the offer's fields, whole, with validity; open ones from
-- current_offers (valid_to NULL).
CREATE OR REPLACE VIEW version_rows AS
SELECT
    v.version_id, v.provider, i.offer_key, v.identity_id, v.valid_from, v.valid_to,
    i.gpu_vendor, i.gpu_model, i.gpu_vram_gb, i.gpu_form_factor, i.gpu_count, i.raw_gpu_name,
    v.status, v.available_count, v.price, v.currency, v.billing_unit, v.price_basis,
    v.price_kind, i.region, i.url, v.fee_set_id, v.plan_set_id
FROM offer_versions AS v
JOIN offer_identities AS i ON i.identity_id = v.identity_id
UNION ALL
SELECT
    c.version_id, c.provider, c.offer_key, c.identity_id, c.valid_from,
    NULL::TIMESTAMPTZ AS valid_to,
    c.gpu_vendor, c.gpu_model, c.gpu_vram_gb, c.gpu_form_factor, c.gpu_count, c.raw_gpu_name,
    c.status, c.available_count, c.price, c.currency, c.billing_unit, c.price_basis,
    c.price_kind, c.region, c.url, c.fee_set_id, c.plan_set_id
FROM current_offers AS c;
