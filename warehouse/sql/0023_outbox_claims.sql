-- 0023 delivery claims (warehouse/watch/outbox.py: two deliverers send an alert once).
--   outbox.claimed_until  set when a delivery claims a pending row, in a commit of its own
--                         under the write lease, just before it sends it; cleared when the
--                         send's end is marked. Until then no other delivery takes the row,
--                         not even `gpurent watch deliver --all` (which ignores only the
--                         backoff, next_attempt_at). A claim left by a deliverer that died
--                         lapses at that time, and the row is sent by the next delivery.
-- Nullable, with no default: DuckLake adds a plain column; NULL is unclaimed.
-- IF NOT EXISTS: re-runnable.

ALTER TABLE outbox ADD COLUMN IF NOT EXISTS claimed_until TIMESTAMPTZ;
