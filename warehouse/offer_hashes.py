"""How an offer row is hashed: its identity, its content, its fee and plan lists.

DuckDB's 64-bit ``hash()`` of the typed values. A fee or plan list hashes as the XOR of its
rows' hashes, seq included, so order counts (the row form, FEE_SET_HASH / PLAN_SET_HASH, is
the expression of sql/0003_history.sql; a test keeps them in step). ``hash()`` is four times
cheaper per poll than md5 over canonical JSON; it is not promised stable across DuckDB
releases, and the price of a change there is one extra version per offer after the upgrade,
nothing lost.

The content hash is built in two steps, the offer's own fields first, then that hash with
the two list hashes (migration 15, which moved the stored hashes to this form).

The host attributes (``gpurent_core.host.HOST_FIELDS``: CUDA, interconnect, reliability,
hosting, vCPUs...) describe the machine: they are identity fields, so a host that changes
them makes a new version (and identity), and an unchanged one hashes the same run after
run. Migration 20 moved the stored hashes to the form with them (all NULL then).
"""

from __future__ import annotations

from gpurent_core.host import HOST_FIELDS
from warehouse.feed_schema import FEE_ITEM_FIELDS, PLAN_ITEM_FIELDS

__all__ = [
    "CONTENT_FIELDS",
    "CONTENT_HASH",
    "FEE_SET_HASH",
    "HASHES",
    "IDENTITY_FIELDS",
    "IDENTITY_HASH",
    "PLAN_SET_HASH",
    "content_hash",
    "fields_hash",
    "hashed",
    "identity_hash",
    "list_hash",
]

# The offer's fields, as in the feed, in table order (ids and observed_at excluded).
CONTENT_FIELDS = (
    "gpu_vendor", "gpu_model", "gpu_vram_gb", "gpu_form_factor", "gpu_count", "raw_gpu_name",
    "status", "available_count", "price", "currency", "billing_unit", "price_basis",
    "price_kind", "region", "url", *HOST_FIELDS,
)  # fmt: skip
IDENTITY_FIELDS = (
    "gpu_vendor", "gpu_model", "gpu_vram_gb", "gpu_form_factor", "gpu_count", "raw_gpu_name",
    "region", "url", *HOST_FIELDS,
)  # fmt: skip

FEE_SET_HASH = f"bit_xor(hash({', '.join(FEE_ITEM_FIELDS)}))"
PLAN_SET_HASH = f"bit_xor(hash({', '.join(PLAN_ITEM_FIELDS)}))"
HASHES = "fee_hash UBIGINT, plan_hash UBIGINT, identity_hash UBIGINT, content_hash UBIGINT"
"""The columns ``hashed`` adds, as DDL."""


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
    """Offer rows with typed lists (``fees``, ``plans``) and the columns of ``HASHES``."""
    return f"""(
        SELECT o.*, {IDENTITY_HASH} AS identity_hash, {CONTENT_HASH} AS content_hash
        FROM (
            SELECT *, {list_hash("fees", FEE_ITEM_FIELDS)} AS fee_hash,
                {list_hash("plans", PLAN_ITEM_FIELDS)} AS plan_hash
            FROM {rows} AS r
        ) AS o
    )"""
