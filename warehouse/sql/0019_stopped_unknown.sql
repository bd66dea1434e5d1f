-- 0019 "charged while stopped" may be unknown.
--   addon_fee_sets.charged_while_stopped  NULL: no source says whether the fee is also
--                                         billed while the instance is stopped; the cost
--                                         engine counts it as charged (never the cheap
--                                         reading). Rows stored before keep their value.
-- (fee_set_lists keeps its fees as structs, whose fields were always nullable.)
-- The table is rebuilt rather than altered: DuckLake keeps the old NOT NULL on the rows a
-- small commit inlines into its catalog, and refuses them when they are flushed.

CREATE TABLE addon_fee_sets_0019 (
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
    charged_while_stopped BOOLEAN,
    note                  VARCHAR,
    PRIMARY KEY (fee_set_id, seq)
);

INSERT INTO addon_fee_sets_0019
SELECT fee_set_id, set_hash, seq, fee_type, amount, currency, unit, basis, quantity,
       included_quantity, mandatory, charged_while_stopped, note
FROM addon_fee_sets;

DROP TABLE addon_fee_sets;
ALTER TABLE addon_fee_sets_0019 RENAME TO addon_fee_sets;
