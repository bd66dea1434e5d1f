"""How an offer row is hashed: its identity, its content, its fee and plan lists.

DuckDB's 64-bit ``hash()`` of the typed values. A fee or plan list hashes as the XOR of its
rows' hashes, seq included, so order counts (the row form, FEE_SET_HASH / PLAN_SET_HASH, is
the expression of sql/0003_history.sql; a test keeps them in step). ``hash()`` is four times
cheaper per poll than md5 over canonical JSON; it is not promised stable across DuckDB
releases, and the price of a change there is one extra version per offer after the upgrade,
nothing lost.

The content hash is built in two steps, the offer's own fields first, then that hash with
the two list hashes (migration 15): a feed read set-wise hashes each offer's fields as the
file streams by, but finds its list hashes afterwards, once per distinct list
(warehouse.feed_lists), and completes the content hash then.

Shared by warehouse.feed (which hashes what it reads) and warehouse.history (which compares
and stores the hashes).
"""

from __future__ import annotations

from warehouse.feed_schema import FEE_ITEM_FIELDS, PLAN_ITEM_FIELDS

__all__ = [
    "CONTENT_FIELDS",
    "CONTENT_HASH",
    "FEE_SET_HASH",
    "IDENTITY_FIELDS",
    "IDENTITY_HASH",
    "PLAN_SET_HASH",
    "content_hash",
    "fields_hash",
    "hashed",
    "identity_hash",
    "list_hash",
    "pending",
]

# The offer's fields, as in the feed, in table order (ids and observed_at excluded).
CONTENT_FIELDS = (
    "gpu_vendor", "gpu_model", "gpu_vram_gb", "gpu_form_factor", "gpu_count", "raw_gpu_name",
    "status", "available_count", "price", "currency", "billing_unit", "price_basis",
    "price_kind", "region", "url",
)  # fmt: skip
IDENTITY_FIELDS = (
    "gpu_vendor", "gpu_model", "gpu_vram_gb", "gpu_form_factor", "gpu_count", "raw_gpu_name",
    "region", "url",
)  # fmt: skip

FEE_SET_HASH = f"bit_xor(hash({', '.join(FEE_ITEM_FIELDS)}))"
PLAN_SET_HASH = f"bit_xor(hash({', '.join(PLAN_ITEM_FIELDS)}))"


def list_hash(column: str, fields: tuple[str, ...]) -> str:
    """The set hash of a list column of structs (an offer's fees / plans): the same value
    as FEE_SET_HASH / PLAN_SET_HASH over its rows, NULL for an empty list."""
    row = ", ".join(f"x.{c}" for c in fields)
    return f"list_aggregate(list_transform({column}, lambda x: hash({row})), 'bit_xor')"


def identity_hash(alias: str) -> str:
    """The identity hash of a row with the offer's fields (provider, key, identity)."""
    fields = ", ".join(f"{alias}.{c}" for c in ("provider", "offer_key", *IDENTITY_FIELDS))
    return f"hash({fields})"


def fields_hash(alias: str) -> str:
    """The first step of the content hash: the offer's own fields, lists left out."""
    return f"hash({', '.join(f'{alias}.{c}' for c in CONTENT_FIELDS)})"


def content_hash(fields: str, fee_hash: str, plan_hash: str) -> str:
    """The content hash from its first step (``fields_hash``) and the two list hashes."""
    return f"hash({fields}, {fee_hash}, {plan_hash})"


IDENTITY_HASH = identity_hash("o")
CONTENT_HASH = content_hash(fields_hash("o"), "o.fee_hash", "o.plan_hash")


def hashed(rows: str) -> str:
    """Offer rows with typed lists (``OFFER_ROW_COLUMNS``) with their list, identity and
    content hashes."""
    return f"""(
        SELECT o.*, {IDENTITY_HASH} AS identity_hash, {CONTENT_HASH} AS content_hash
        FROM (
            SELECT *, {list_hash("fees", FEE_ITEM_FIELDS)} AS fee_hash,
                {list_hash("plans", PLAN_ITEM_FIELDS)} AS plan_hash
            FROM {rows} AS r
        ) AS o
    )"""


def pending(rows: str) -> str:
    """Offer rows whose lists are still text (``fee_text`` / ``plan_text``: the hashes of
    the lists' JSON, warehouse.feed_fast), hashed as far as they can be: ``fee_hash`` /
    ``plan_hash`` hold the text hashes and ``content_hash`` its first step, until
    warehouse.feed_lists puts the set hashes and the whole content hash in their place."""
    return f"""(
        SELECT o.*, o.fee_text AS fee_hash, o.plan_text AS plan_hash,
            {IDENTITY_HASH} AS identity_hash, {fields_hash("o")} AS content_hash
        FROM {rows} AS o
    )"""
