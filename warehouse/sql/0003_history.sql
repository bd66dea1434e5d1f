-- 0003 history: offers are stored once per change, not once per poll (docs/history.md).
--
-- Before: observations / addon_fees / price_plans held one row per offer per good run, so a
-- 5-minute watch poll of 10k offers added ~3M rows a day. After:
--   offer_versions   one row per offer state: valid from the run that first saw it in that
--                    state, valid to the run that no longer saw it so (NULL while current).
--                    It holds what moves (stock, free count, price terms, list ids) ...
--   offer_identities ... and points at what rarely does (key, GPU, name, region, URL),
--                    stored once per distinct identity.
--   addon_fee_sets,  fee lists and plan lists, stored once per distinct list and shared by
--   price_plan_sets  every version that carries them (most offers of a provider share one).
--   current_offers   the open versions, whole, with their lists: the latest state,
--                    maintained by each load, so reading it costs the same at any age.
--   current_runs     per provider, the good run that state comes from.
-- crawl_runs gains history_at (the run's place in its provider's history: started_at, made
-- unique per provider; NULL for runs that did not feed the state) and observed_at (the
-- earliest observed_at of the run's offers: what reconstructed rows show).
-- Every good run's offers stay reconstructable: the versions whose validity holds the run's
-- history_at (views observations / addon_fees / price_plans in history_views.sql).
--
-- The content hash: DuckDB's 64-bit hash() of every offer field except the ids and
-- observed_at, with the fee and plan lists in it by their own hashes (XOR of their rows'
-- hashes, seq included); the identity hash: hash() of provider, key and identity fields. warehouse/history.py computes it with the same expressions (a test
-- keeps the two in step). It only decides whether an offer changed since its previous state
-- and which stored list a list is; 64 bits leave no practical room for collisions there.

ALTER TABLE crawl_runs ADD COLUMN history_at TIMESTAMPTZ;
ALTER TABLE crawl_runs ADD COLUMN observed_at TIMESTAMPTZ;

-- A fee list, one row per fee; seq is the fee's position in the offer's list.
CREATE TABLE addon_fee_sets (
    fee_set_id            INTEGER        NOT NULL,
    set_hash              UBIGINT        NOT NULL,
    seq                   INTEGER        NOT NULL CHECK (seq >= 0),
    fee_type              VARCHAR        NOT NULL
        CHECK (fee_type IN ('system_disk', 'data_disk', 'storage_stopped', 'egress', 'ingress',
                            'public_ip', 'image', 'no_gpu_mode', 'vcpu', 'memory')),
    amount                DECIMAL(18,10) NOT NULL CHECK (amount >= 0),
    currency              VARCHAR        NOT NULL CHECK (regexp_full_match(currency, '[A-Z]{3}')),
    unit                  VARCHAR
        CHECK (unit IN ('second', 'minute', 'hour', 'day', 'week', 'month', 'year')),
    basis                 VARCHAR        NOT NULL
        CHECK (basis IN ('instance', 'gpu', 'gb', 'tb', 'vcpu', 'gib_ram')),
    quantity              DECIMAL(18,6)  CHECK (quantity >= 0),
    included_quantity     DECIMAL(18,6)  CHECK (included_quantity >= 0),
    mandatory             BOOLEAN        NOT NULL,
    charged_while_stopped BOOLEAN        NOT NULL,
    note                  VARCHAR,
    PRIMARY KEY (fee_set_id, seq)
);

-- A plan list, one row per plan; seq is the plan's position in the offer's list.
CREATE TABLE price_plan_sets (
    plan_set_id  INTEGER       NOT NULL,
    set_hash     UBIGINT       NOT NULL,
    seq          INTEGER       NOT NULL CHECK (seq >= 0),
    price        DECIMAL(18,8) NOT NULL CHECK (price >= 0),
    currency     VARCHAR       NOT NULL CHECK (regexp_full_match(currency, '[A-Z]{3}')),
    billing_unit VARCHAR       NOT NULL
        CHECK (billing_unit IN ('second', 'minute', 'hour', 'day', 'week', 'month', 'year')),
    price_basis  VARCHAR       NOT NULL CHECK (price_basis IN ('gpu', 'instance')),
    price_kind   VARCHAR       NOT NULL
        CHECK (price_kind IN ('on_demand', 'spot', 'member', 'commitment')),
    PRIMARY KEY (plan_set_id, seq)
);

CREATE SEQUENCE offer_version_ids START 1;

-- What rarely changes about an offer, once per distinct combination.
CREATE TABLE offer_identities (
    identity_id     INTEGER     NOT NULL,
    provider        VARCHAR     NOT NULL,
    offer_key       VARCHAR     NOT NULL,
    identity_hash   UBIGINT     NOT NULL,
    gpu_vendor      VARCHAR     NOT NULL,
    gpu_model       VARCHAR     NOT NULL,
    gpu_vram_gb     INTEGER     NOT NULL CHECK (gpu_vram_gb >= 0),
    gpu_form_factor VARCHAR,
    gpu_count       INTEGER     NOT NULL CHECK (gpu_count >= 1),
    raw_gpu_name    VARCHAR     NOT NULL,
    region          VARCHAR,
    url             VARCHAR,
    PRIMARY KEY (identity_id)
);

-- One row per offer state. No primary key on purpose: an index on the largest table would
-- cost more bytes than the rows; version_id grows with inserts, so zone maps find a version.
-- valid_from / valid_to are history_at values of runs of the same provider.
CREATE TABLE offer_versions (
    version_id      BIGINT        NOT NULL,
    provider        VARCHAR       NOT NULL,
    identity_id     INTEGER       NOT NULL,
    valid_from      TIMESTAMPTZ   NOT NULL,
    valid_to        TIMESTAMPTZ   CHECK (valid_to > valid_from),
    status          VARCHAR       NOT NULL
        CHECK (status IN ('in_stock', 'low', 'sold_out', 'unknown')),
    available_count INTEGER       CHECK (available_count >= 0),
    price           DECIMAL(18,8) NOT NULL CHECK (price >= 0),
    currency        VARCHAR       NOT NULL CHECK (regexp_full_match(currency, '[A-Z]{3}')),
    billing_unit    VARCHAR       NOT NULL
        CHECK (billing_unit IN ('second', 'minute', 'hour', 'day', 'week', 'month', 'year')),
    price_basis     VARCHAR       NOT NULL CHECK (price_basis IN ('gpu', 'instance')),
    price_kind      VARCHAR       NOT NULL
        CHECK (price_kind IN ('on_demand', 'spot', 'member', 'commitment')),
    fee_set_id      INTEGER,
    plan_set_id     INTEGER
);

-- The open versions (valid_to IS NULL) with their lists, one row per offer of the latest
-- state. Derived data: rebuilt from offer_versions if ever in doubt. Values were checked on
-- their way into offer_versions, so no CHECKs here.
CREATE TABLE current_offers (
    provider        VARCHAR       NOT NULL,
    offer_key       VARCHAR       NOT NULL,
    version_id      BIGINT        NOT NULL,
    identity_id     INTEGER       NOT NULL,
    valid_from      TIMESTAMPTZ   NOT NULL,
    content_hash    UBIGINT       NOT NULL,
    gpu_vendor      VARCHAR       NOT NULL,
    gpu_model       VARCHAR       NOT NULL,
    gpu_vram_gb     INTEGER       NOT NULL,
    gpu_form_factor VARCHAR,
    gpu_count       INTEGER       NOT NULL,
    raw_gpu_name    VARCHAR       NOT NULL,
    status          VARCHAR       NOT NULL,
    available_count INTEGER,
    price           DECIMAL(18,8) NOT NULL,
    currency        VARCHAR       NOT NULL,
    billing_unit    VARCHAR       NOT NULL,
    price_basis     VARCHAR       NOT NULL,
    price_kind      VARCHAR       NOT NULL,
    region          VARCHAR,
    url             VARCHAR,
    fee_set_id      INTEGER,
    plan_set_id     INTEGER,
    fees            STRUCT(
        seq INTEGER, fee_type VARCHAR, amount DECIMAL(18,10), currency VARCHAR, unit VARCHAR,
        basis VARCHAR, quantity DECIMAL(18,6), included_quantity DECIMAL(18,6),
        mandatory BOOLEAN, charged_while_stopped BOOLEAN, note VARCHAR
    )[] NOT NULL,
    plans           STRUCT(
        seq INTEGER, price DECIMAL(18,8), currency VARCHAR, billing_unit VARCHAR,
        price_basis VARCHAR, price_kind VARCHAR
    )[] NOT NULL
);

-- Per provider, the good run the current state comes from (one row per provider).
CREATE TABLE current_runs (
    provider    VARCHAR     NOT NULL,
    run_id      VARCHAR     NOT NULL,
    started_at  TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ NOT NULL,
    observed_at TIMESTAMPTZ NOT NULL,
    history_at  TIMESTAMPTZ NOT NULL
);

-- ---------------------------------------------------------------- existing data
-- Good runs get their place in history; equal start times of one provider are spread by a
-- microsecond each, in the order the latest-state views used (finished_at, run_id).
UPDATE crawl_runs AS c
SET history_at = p.history_at, observed_at = p.observed_at
FROM (
    SELECT
        r.run_id,
        r.provider,
        r.started_at + to_microseconds(
            row_number() OVER (
                PARTITION BY r.provider, r.started_at ORDER BY r.finished_at, r.run_id
            ) - 1
        ) AS history_at,
        o.observed_at
    FROM crawl_runs AS r
    JOIN (
        SELECT run_id, provider, min(observed_at) AS observed_at
        FROM observations
        GROUP BY run_id, provider
    ) AS o ON o.run_id = r.run_id AND o.provider = r.provider
    WHERE r.status IN ('ok', 'partial', 'auth_required') AND r.offers > 0
) AS p
WHERE c.run_id = p.run_id AND c.provider = p.provider;

CREATE TEMP TABLE _mig_fee_hash AS
SELECT
    run_id, provider, offer_key,
    bit_xor(hash(
        seq, fee_type, amount, currency, unit, basis, quantity, included_quantity, mandatory,
        charged_while_stopped, note
    )) AS set_hash
FROM addon_fees
GROUP BY run_id, provider, offer_key;

CREATE TEMP TABLE _mig_plan_hash AS
SELECT
    run_id, provider, offer_key,
    bit_xor(hash(seq, price, currency, billing_unit, price_basis, price_kind)) AS set_hash
FROM price_plans
GROUP BY run_id, provider, offer_key;

CREATE TEMP TABLE _mig_fee_ids AS
SELECT set_hash, CAST(row_number() OVER (ORDER BY set_hash) AS INTEGER) AS set_id
FROM (SELECT DISTINCT set_hash FROM _mig_fee_hash);

CREATE TEMP TABLE _mig_plan_ids AS
SELECT set_hash, CAST(row_number() OVER (ORDER BY set_hash) AS INTEGER) AS set_id
FROM (SELECT DISTINCT set_hash FROM _mig_plan_hash);

INSERT INTO addon_fee_sets
SELECT
    i.set_id, i.set_hash, f.seq, f.fee_type, f.amount, f.currency, f.unit, f.basis,
    f.quantity, f.included_quantity, f.mandatory, f.charged_while_stopped, f.note
FROM (
    SELECT *, row_number() OVER (PARTITION BY set_hash ORDER BY run_id, provider, offer_key) AS rn
    FROM _mig_fee_hash
) AS k
JOIN _mig_fee_ids AS i ON i.set_hash = k.set_hash
JOIN addon_fees AS f
    ON f.run_id = k.run_id AND f.provider = k.provider AND f.offer_key = k.offer_key
WHERE k.rn = 1;

INSERT INTO price_plan_sets
SELECT
    i.set_id, i.set_hash, p.seq, p.price, p.currency, p.billing_unit, p.price_basis,
    p.price_kind
FROM (
    SELECT *, row_number() OVER (PARTITION BY set_hash ORDER BY run_id, provider, offer_key) AS rn
    FROM _mig_plan_hash
) AS k
JOIN _mig_plan_ids AS i ON i.set_hash = k.set_hash
JOIN price_plans AS p
    ON p.run_id = k.run_id AND p.provider = k.provider AND p.offer_key = k.offer_key
WHERE k.rn = 1;

-- Every stored observation with its run's place (rn: the run's rank among the provider's
-- good runs; next_at: the next good run's history_at) and its content hash.
CREATE TEMP TABLE _mig_obs AS
SELECT
    o.*,
    r.history_at,
    r.rn,
    r.next_at,
    fi.set_id AS fee_set_id,
    pi.set_id AS plan_set_id,
    hash(
        o.gpu_vendor, o.gpu_model, o.gpu_vram_gb, o.gpu_form_factor, o.gpu_count,
        o.raw_gpu_name, o.status, o.available_count, o.price, o.currency, o.billing_unit,
        o.price_basis, o.price_kind, o.region, o.url, fh.set_hash, ph.set_hash
    ) AS content_hash,
    hash(
        o.provider, o.offer_key, o.gpu_vendor, o.gpu_model, o.gpu_vram_gb, o.gpu_form_factor,
        o.gpu_count, o.raw_gpu_name, o.region, o.url
    ) AS identity_hash
FROM observations AS o
JOIN (
    SELECT
        run_id, provider, history_at,
        row_number() OVER (PARTITION BY provider ORDER BY history_at) AS rn,
        lead(history_at) OVER (PARTITION BY provider ORDER BY history_at) AS next_at
    FROM crawl_runs
    WHERE history_at IS NOT NULL
) AS r ON r.run_id = o.run_id AND r.provider = o.provider
LEFT JOIN _mig_fee_hash AS fh
    ON fh.run_id = o.run_id AND fh.provider = o.provider AND fh.offer_key = o.offer_key
LEFT JOIN _mig_fee_ids AS fi ON fi.set_hash = fh.set_hash
LEFT JOIN _mig_plan_hash AS ph
    ON ph.run_id = o.run_id AND ph.provider = o.provider AND ph.offer_key = o.offer_key
LEFT JOIN _mig_plan_ids AS pi ON pi.set_hash = ph.set_hash;

INSERT INTO offer_identities
SELECT
    CAST(row_number() OVER (ORDER BY provider, offer_key, identity_hash) AS INTEGER),
    provider, offer_key, identity_hash, gpu_vendor, gpu_model, gpu_vram_gb, gpu_form_factor,
    gpu_count, raw_gpu_name, region, url
FROM (SELECT DISTINCT ON (identity_hash) * FROM _mig_obs);

-- Islands: an offer's consecutive good runs with the same content make one version.
CREATE TEMP TABLE _mig_versions AS
SELECT
    nextval('offer_version_ids') AS version_id,
    provider,
    offer_key,
    min(history_at) AS valid_from,
    nullif(
        arg_max(coalesce(next_at, 'infinity'::TIMESTAMPTZ), rn), 'infinity'::TIMESTAMPTZ
    ) AS valid_to,
    any_value(content_hash) AS content_hash,
    any_value(identity_hash) AS identity_hash,
    any_value(status) AS status,
    any_value(available_count) AS available_count,
    any_value(price) AS price,
    any_value(currency) AS currency,
    any_value(billing_unit) AS billing_unit,
    any_value(price_basis) AS price_basis,
    any_value(price_kind) AS price_kind,
    any_value(fee_set_id) AS fee_set_id,
    any_value(plan_set_id) AS plan_set_id
FROM (
    SELECT *, sum(starts) OVER (PARTITION BY provider, offer_key ORDER BY rn) AS island
    FROM (
        SELECT
            *,
            CASE
                WHEN lag(rn) OVER w = rn - 1 AND lag(content_hash) OVER w = content_hash THEN 0
                ELSE 1
            END AS starts
        FROM _mig_obs
        WINDOW w AS (PARTITION BY provider, offer_key ORDER BY rn)
    )
)
GROUP BY provider, offer_key, island;

INSERT INTO offer_versions
SELECT
    v.version_id, v.provider, i.identity_id, v.valid_from, v.valid_to, v.status,
    v.available_count, v.price, v.currency, v.billing_unit, v.price_basis, v.price_kind,
    v.fee_set_id, v.plan_set_id
FROM _mig_versions AS v
JOIN offer_identities AS i ON i.identity_hash = v.identity_hash
ORDER BY v.version_id;

INSERT INTO current_runs
SELECT provider, run_id, started_at, finished_at, observed_at, history_at
FROM crawl_runs
WHERE history_at IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY provider ORDER BY history_at DESC) = 1;

INSERT INTO current_offers
SELECT
    v.provider, i.offer_key, v.version_id, v.identity_id, v.valid_from, m.content_hash,
    i.gpu_vendor, i.gpu_model, i.gpu_vram_gb, i.gpu_form_factor, i.gpu_count, i.raw_gpu_name,
    v.status, v.available_count, v.price, v.currency, v.billing_unit, v.price_basis,
    v.price_kind, i.region, i.url, v.fee_set_id, v.plan_set_id,
    coalesce((
        SELECT list({
            'seq': f.seq, 'fee_type': f.fee_type, 'amount': f.amount, 'currency': f.currency,
            'unit': f.unit, 'basis': f.basis, 'quantity': f.quantity,
            'included_quantity': f.included_quantity, 'mandatory': f.mandatory,
            'charged_while_stopped': f.charged_while_stopped, 'note': f.note
        } ORDER BY f.seq)
        FROM addon_fee_sets AS f WHERE f.fee_set_id = v.fee_set_id
    ), []),
    coalesce((
        SELECT list({
            'seq': p.seq, 'price': p.price, 'currency': p.currency,
            'billing_unit': p.billing_unit, 'price_basis': p.price_basis,
            'price_kind': p.price_kind
        } ORDER BY p.seq)
        FROM price_plan_sets AS p WHERE p.plan_set_id = v.plan_set_id
    ), [])
FROM offer_versions AS v
JOIN offer_identities AS i ON i.identity_id = v.identity_id
JOIN _mig_versions AS m ON m.version_id = v.version_id
WHERE v.valid_to IS NULL;

DROP TABLE _mig_versions;
DROP TABLE _mig_obs;
DROP TABLE _mig_fee_hash;
DROP TABLE _mig_plan_hash;
DROP TABLE _mig_fee_ids;
DROP TABLE _mig_plan_ids;

-- The per-poll tables go; views of the same names reconstruct them (history_views.sql).
DROP TABLE observations;
DROP TABLE addon_fees;
DROP TABLE price_plans;
