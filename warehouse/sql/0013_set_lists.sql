-- 0013 fee and plan lists stored once per set (docs/history.md).
--
-- current_offers held each offer's fee and plan lists whole, a copy per offer of lists that
-- a few sets cover (most offers of a provider share them). Writing those copies was a third
-- of writing current_offers (a fresh 100k-offer load: 0.44 -> 0.24 s without them). Each
-- list is now stored once, beside its rows, under the set's id; latest_offers joins it back.
--   fee_set_lists   one row per fee set: its fees as a list of structs ordered by seq
--   plan_set_lists  one row per plan set: its plans, the same way
-- An offer without fees (or plans) has no set (fee_set_id NULL) and reads an empty list.

CREATE TABLE fee_set_lists (
    fee_set_id INTEGER NOT NULL,
    fees       STRUCT(
        seq INTEGER, fee_type VARCHAR, amount DECIMAL(18,10), currency VARCHAR, unit VARCHAR,
        basis VARCHAR, quantity DECIMAL(18,6), included_quantity DECIMAL(18,6),
        mandatory BOOLEAN, charged_while_stopped BOOLEAN, note VARCHAR
    )[] NOT NULL
);

CREATE TABLE plan_set_lists (
    plan_set_id INTEGER NOT NULL,
    plans       STRUCT(
        seq INTEGER, price DECIMAL(18,8), currency VARCHAR, billing_unit VARCHAR,
        price_basis VARCHAR, price_kind VARCHAR
    )[] NOT NULL
);

-- seq is each struct's first field, so list_sort orders a list by it.
INSERT INTO fee_set_lists
SELECT fee_set_id, list_sort(list({
    'seq': seq, 'fee_type': fee_type, 'amount': amount, 'currency': currency, 'unit': unit,
    'basis': basis, 'quantity': quantity, 'included_quantity': included_quantity,
    'mandatory': mandatory, 'charged_while_stopped': charged_while_stopped, 'note': note
}))
FROM addon_fee_sets
GROUP BY fee_set_id;

INSERT INTO plan_set_lists
SELECT plan_set_id, list_sort(list({
    'seq': seq, 'price': price, 'currency': currency, 'billing_unit': billing_unit,
    'price_basis': price_basis, 'price_kind': price_kind
}))
FROM price_plan_sets
GROUP BY plan_set_id;

ALTER TABLE current_offers DROP COLUMN fees;
ALTER TABLE current_offers DROP COLUMN plans;

-- The latest state, as migration 12 defined it, with the lists joined from their sets.
CREATE OR REPLACE VIEW latest_offers AS
SELECT
    h.run_id, c.provider, c.offer_key, coalesce(c.last_seen_at, h.observed_at) AS observed_at,
    c.gpu_vendor, c.gpu_model, c.gpu_vram_gb, c.gpu_form_factor, c.gpu_count, c.raw_gpu_name,
    c.status, c.available_count, c.price, c.currency, c.billing_unit, c.price_basis,
    c.price_kind, c.region, c.url,
    h.finished_at AS run_finished_at,
    date_diff('second', coalesce(c.last_seen_at, h.observed_at), current_timestamp) AS age_s,
    coalesce(f.fees, []) AS fees,
    coalesce(p.plans, []) AS plans,
    c.last_seen_at IS NOT NULL AS stale
FROM current_offers AS c
JOIN current_runs AS h ON h.provider = c.provider
LEFT JOIN fee_set_lists AS f ON f.fee_set_id = c.fee_set_id
LEFT JOIN plan_set_lists AS p ON p.plan_set_id = c.plan_set_id;
