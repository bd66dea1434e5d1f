-- 0018 watches by form factor (`gpurent watch add --gpu "H100 SXM"`).
--   watches.gpu_form_factor  the form factor the watch's GPU name pins down (PCIe, SXM,
--                            NVL...), as offers state it in gpu_form_factor; NULL: any.
--                            A watch that names one never matches an offer that does not
--                            say its own (unknown is not a match). Set only with gpu_model
--                            (checked by warehouse.watch.criteria.Watch).
-- IF NOT EXISTS: a reader upgrading a file this script already changed applies it again
-- harmlessly.

ALTER TABLE watches ADD COLUMN IF NOT EXISTS gpu_form_factor VARCHAR;
