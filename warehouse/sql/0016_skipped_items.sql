-- 0016 skipped items (rule of truth 9; docs/history.md).
--
-- A run counts the items of a listing that are no GPU rental offer gpurent ranks (a CPU-only
-- type, a card the catalog leaves out on purpose, a "contact sales" entry) by kind, apart
-- from the quarantine: they make no run partial.
--   crawl_runs.skipped  JSON object of kind -> count (NULL: nothing skipped, or a run
--                       loaded before runs counted them)

ALTER TABLE crawl_runs ADD COLUMN skipped VARCHAR;
