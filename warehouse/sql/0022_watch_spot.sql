-- 0022 watches and spot prices (`gpurent watch add --include-spot`; audit W4).
--   watches.include_spot  TRUE: the watch also reads offers priced spot (interruptible:
--                         the machine can be taken back), marked spot in the alert, as
--                         `cheapest --include-spot` ranks them. FALSE or NULL (watches
--                         added before this migration): spot offers are another product
--                         and never match the watch, as `cheapest` leaves them out.
-- Nullable, with no default: DuckLake adds a plain column; NULL reads as FALSE
-- (warehouse.watch.store). IF NOT EXISTS: re-runnable.

ALTER TABLE watches ADD COLUMN IF NOT EXISTS include_spot BOOLEAN;
