-- 0001 init: the tables of the warehouse.
-- Enums are VARCHAR with CHECK lists that mirror gpurent_core.model (a test keeps them in step).
-- Changing a CHECK in DuckDB means rebuilding the table in a new migration:
-- CREATE TABLE x_new ...; INSERT INTO x_new SELECT ...; DROP TABLE x; ALTER TABLE x_new RENAME TO x.
-- No foreign keys: load_run writes a run and its rows in one transaction, and DuckDB's
-- foreign keys would block later retention deletes and updates of parent rows.

-- One row per provider per run, whatever its status (failed runs included: rule of truth 2).
-- offers / quarantined count the rows stored for the run; reported_* keep what the flow said.
CREATE TABLE crawl_runs (
    run_id               VARCHAR     NOT NULL,
    provider             VARCHAR     NOT NULL,
    started_at           TIMESTAMPTZ NOT NULL,
    finished_at          TIMESTAMPTZ NOT NULL,
    duration_s           DOUBLE      NOT NULL,
    status               VARCHAR     NOT NULL
        CHECK (status IN ('ok', 'partial', 'failed', 'auth_required', 'layout_changed')),
    offers               INTEGER     NOT NULL DEFAULT 0 CHECK (offers >= 0),
    quarantined          INTEGER     NOT NULL DEFAULT 0 CHECK (quarantined >= 0),
    http_errors          INTEGER     NOT NULL DEFAULT 0 CHECK (http_errors >= 0),
    message              VARCHAR,
    reported_offers      INTEGER     NOT NULL DEFAULT 0,
    reported_quarantined INTEGER     NOT NULL DEFAULT 0,
    feed_sha256          VARCHAR,
    loaded_at            TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (run_id, provider)
);

-- One row per offer per run that feeds the latest state (ok, partial, auth_required).
CREATE TABLE observations (
    run_id          VARCHAR       NOT NULL,
    provider        VARCHAR       NOT NULL,
    offer_key       VARCHAR       NOT NULL,
    observed_at     TIMESTAMPTZ   NOT NULL,
    gpu_vendor      VARCHAR       NOT NULL,
    gpu_model       VARCHAR       NOT NULL,
    gpu_vram_gb     INTEGER       NOT NULL CHECK (gpu_vram_gb >= 0),
    gpu_form_factor VARCHAR,
    gpu_count       INTEGER       NOT NULL CHECK (gpu_count >= 1),
    raw_gpu_name    VARCHAR       NOT NULL,
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
    region          VARCHAR,
    url             VARCHAR,
    PRIMARY KEY (run_id, provider, offer_key)
);

-- Add-on fees of an observation; seq is the fee's 0-based position in the offer's list.
CREATE TABLE addon_fees (
    run_id                VARCHAR        NOT NULL,
    provider              VARCHAR        NOT NULL,
    offer_key             VARCHAR        NOT NULL,
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
    PRIMARY KEY (run_id, provider, offer_key, seq)
);

-- Extra ways to rent an observed offer; seq is the plan's 0-based position in the offer's list.
CREATE TABLE price_plans (
    run_id       VARCHAR       NOT NULL,
    provider     VARCHAR       NOT NULL,
    offer_key    VARCHAR       NOT NULL,
    seq          INTEGER       NOT NULL CHECK (seq >= 0),
    price        DECIMAL(18,8) NOT NULL CHECK (price >= 0),
    currency     VARCHAR       NOT NULL CHECK (regexp_full_match(currency, '[A-Z]{3}')),
    billing_unit VARCHAR       NOT NULL
        CHECK (billing_unit IN ('second', 'minute', 'hour', 'day', 'week', 'month', 'year')),
    price_basis  VARCHAR       NOT NULL CHECK (price_basis IN ('gpu', 'instance')),
    price_kind   VARCHAR       NOT NULL
        CHECK (price_kind IN ('on_demand', 'spot', 'member', 'commitment')),
    PRIMARY KEY (run_id, provider, offer_key, seq)
);

-- Input set aside (rule of truth 6). seq is the 1-based line number in the feed file.
-- raw is text: the feed line itself for lines the warehouse rejected; for quarantine records
-- written by a spider, their raw field (a dict as JSON, a string as is).
CREATE TABLE quarantine (
    run_id      VARCHAR     NOT NULL,
    provider    VARCHAR     NOT NULL,
    seq         INTEGER     NOT NULL CHECK (seq >= 1),
    observed_at TIMESTAMPTZ,
    offer_key   VARCHAR,
    reason      VARCHAR     NOT NULL,
    field       VARCHAR,
    raw         VARCHAR,
    PRIMARY KEY (run_id, provider, seq)
);

-- Dated FX rates: 1 base = rate quote, valid from rate_date until the next dated row.
CREATE TABLE fx_rates (
    rate_date  DATE          NOT NULL,
    base       VARCHAR       NOT NULL CHECK (regexp_full_match(base, '[A-Z]{3}')),
    quote      VARCHAR       NOT NULL CHECK (regexp_full_match(quote, '[A-Z]{3}')),
    rate       DECIMAL(18,8) NOT NULL CHECK (rate > 0),
    source     VARCHAR       NOT NULL,
    updated_at TIMESTAMPTZ   NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (rate_date, base, quote)
);
