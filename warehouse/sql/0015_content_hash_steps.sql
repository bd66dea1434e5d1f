-- 0015 the content hash in two steps (warehouse/offer_hashes.py).
--
-- An open version's content hash was one hash() of the offer's fields and its two list
-- hashes. It is now the hash of (the hash of the fields, the fee list hash, the plan list
-- hash): a large feed is read with its lists left as text, and its offers' list hashes are
-- found once per distinct list after the fields were hashed (warehouse/feed_lists.py), so
-- the fields' hash must be a step of its own. Stored hashes move to the new form here, or
-- the next run would see every open offer as changed.

UPDATE current_offers SET content_hash = hash(
    hash(
        gpu_vendor, gpu_model, gpu_vram_gb, gpu_form_factor, gpu_count, raw_gpu_name,
        status, available_count, price, currency, billing_unit, price_basis, price_kind,
        region, url
    ),
    fee_hash,
    plan_hash
);
