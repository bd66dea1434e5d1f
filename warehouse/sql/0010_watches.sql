-- 0010 watches: what a user asked to be told about (`gpurent watch add`).
-- A watch names a GPU model and/or a minimum VRAM, the cards it needs, an optional price cap
-- (compared with the true hourly or monthly cost in `currency`), optional provider and
-- region filters, and the apprise URLs to notify. URLs may reference environment variables
-- as ${NAME}, expanded only when sending, so that secrets can stay out of this file
-- (rule of truth 8); a URL given literally is stored as given and masked whenever shown.
CREATE SEQUENCE watch_ids START 1;

CREATE TABLE watches (
    watch_id    INTEGER       PRIMARY KEY DEFAULT nextval('watch_ids'),
    created_at  TIMESTAMPTZ   NOT NULL,
    gpu_model   VARCHAR,
    min_vram_gb INTEGER       CHECK (min_vram_gb >= 0),
    gpu_count   INTEGER       NOT NULL DEFAULT 1 CHECK (gpu_count >= 1),
    max_price   DECIMAL(18,8) CHECK (max_price > 0),
    currency    VARCHAR       CHECK (regexp_full_match(currency, '[A-Z]{3}')),
    price_per   VARCHAR       CHECK (price_per IN ('hour', 'month')),
    providers   VARCHAR[]     NOT NULL DEFAULT []::VARCHAR[],
    regions     VARCHAR[]     NOT NULL DEFAULT []::VARCHAR[],
    notify_urls VARCHAR[]     NOT NULL CHECK (len(notify_urls) >= 1),
    CHECK (gpu_model IS NOT NULL OR min_vram_gb IS NOT NULL),
    CHECK ((max_price IS NULL) = (currency IS NULL) AND (max_price IS NULL) = (price_per IS NULL))
);
