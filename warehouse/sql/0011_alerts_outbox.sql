-- 0011 alert state and the outbox (rule of truth 7; warehouse/watch/machine.py has the rules).

-- The last good run of each provider a watch has evaluated. Runs are evaluated in order,
-- once each; a watch's first good run of a provider is its baseline (nothing fires on it).
CREATE TABLE watch_cursors (
    watch_id        INTEGER     NOT NULL,
    provider        VARCHAR     NOT NULL,
    run_id          VARCHAR     NOT NULL,
    run_started_at  TIMESTAMPTZ NOT NULL,
    run_finished_at TIMESTAMPTZ NOT NULL,
    evaluated_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (watch_id, provider)
);

-- Alert state per (watch, offer). last_out: the latest out reading, which names the kind
-- of the next alert (out_price -> price_drop, else restock).
CREATE TABLE watch_offer_states (
    watch_id   INTEGER     NOT NULL,
    provider   VARCHAR     NOT NULL,
    offer_key  VARCHAR     NOT NULL,
    phase      VARCHAR     NOT NULL
        CHECK (phase IN ('baseline', 'armed', 'arriving', 'fired', 'leaving')),
    last_out   VARCHAR     CHECK (last_out IN ('out_stock', 'out_price', 'absent')),
    run_id     VARCHAR     NOT NULL,
    changed_at TIMESTAMPTZ NOT NULL,
    fired_at   TIMESTAMPTZ,
    PRIMARY KEY (watch_id, provider, offer_key)
);

-- Notifications, written in the same transaction as the state change that caused them.
-- One row per destination (target_seq: position in the watch's notify_urls), so a failing
-- destination never makes another one get the message twice. idempotency_key names the
-- transition: watch/provider/offer/kind/run. status: pending until a send succeeds (sent),
-- cancelled when the watch was removed first, expired when the transition was already old
-- when evaluated (a poller that was down for hours does not send stale news).
CREATE SEQUENCE notification_ids START 1;

CREATE TABLE outbox (
    notification_id BIGINT      PRIMARY KEY DEFAULT nextval('notification_ids'),
    idempotency_key VARCHAR     NOT NULL,
    target_seq      INTEGER     NOT NULL CHECK (target_seq >= 0),
    watch_id        INTEGER     NOT NULL,
    kind            VARCHAR     NOT NULL CHECK (kind IN ('restock', 'price_drop')),
    provider        VARCHAR     NOT NULL,
    offer_key       VARCHAR     NOT NULL,
    run_id          VARCHAR     NOT NULL,
    title           VARCHAR     NOT NULL,
    body            VARCHAR     NOT NULL,
    status          VARCHAR     NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'sent', 'cancelled', 'expired')),
    attempts        INTEGER     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_error      VARCHAR,
    created_at      TIMESTAMPTZ NOT NULL,
    next_attempt_at TIMESTAMPTZ NOT NULL,
    last_attempt_at TIMESTAMPTZ,
    sent_at         TIMESTAMPTZ,
    UNIQUE (idempotency_key, target_seq)
);
