"""The shapes a feed is read into: frame schemas, their DuckDB types, the typed lists.

One place for what warehouse.feed_sql (the SQL reading), warehouse.feed_exact (the pydantic
reading) and warehouse.history (weaving) must agree on: a value read one way must have
exactly the type it has when read the other way, or their hashes would differ.
"""

from __future__ import annotations

import polars as pl

# Column types; each money scale matches its DuckDB DECIMAL column (sql/0001_init.sql).
PRICE = pl.Decimal(18, 8)
FEE_AMOUNT = pl.Decimal(18, 10)
QUANTITY = pl.Decimal(18, 6)
MEASURE = pl.Decimal(14, 4)
"""A host measure's column (NVLink GB/s, reliability, vCPUs, RAM and disk GB per GPU)."""
UTC_TIME = pl.Datetime("us", "UTC")
INT32_MAX = 2**31 - 1
LINE = "_line"
"""The column holding a staged offer's line in its feed (1-based, blank lines counted)."""

OBSERVATION_SCHEMA = pl.Schema(
    {
        "run_id": pl.String(),
        "provider": pl.String(),
        "offer_key": pl.String(),
        "observed_at": UTC_TIME,
        "gpu_vendor": pl.String(),
        "gpu_model": pl.String(),
        "gpu_vram_gb": pl.Int32(),
        "gpu_form_factor": pl.String(),
        "gpu_count": pl.Int32(),
        "raw_gpu_name": pl.String(),
        "status": pl.String(),
        "available_count": pl.Int32(),
        "price": PRICE,
        "currency": pl.String(),
        "billing_unit": pl.String(),
        "price_basis": pl.String(),
        "price_kind": pl.String(),
        "region": pl.String(),
        "url": pl.String(),
        # The host attributes (gpurent_core.host.HOST_FIELDS), null where not published.
        "cuda_version": pl.String(),
        "driver_version": pl.String(),
        "interconnect": pl.String(),
        "nvlink_gbps": MEASURE,
        "host_reliability": MEASURE,
        "hosting": pl.String(),
        "max_rental_hours": pl.Int32(),
        "vcpus_per_gpu": MEASURE,
        "ram_gb_per_gpu": MEASURE,
        "disk_gb_per_gpu": MEASURE,
    }
)
FEE_SCHEMA = pl.Schema(
    {
        "run_id": pl.String(),
        "provider": pl.String(),
        "offer_key": pl.String(),
        "seq": pl.Int32(),
        "fee_type": pl.String(),
        "amount": FEE_AMOUNT,
        "currency": pl.String(),
        "unit": pl.String(),
        "basis": pl.String(),
        "quantity": QUANTITY,
        "included_quantity": QUANTITY,
        "mandatory": pl.Boolean(),
        "charged_while_stopped": pl.Boolean(),
        "note": pl.String(),
    }
)
PLAN_SCHEMA = pl.Schema(
    {
        "run_id": pl.String(),
        "provider": pl.String(),
        "offer_key": pl.String(),
        "seq": pl.Int32(),
        "price": PRICE,
        "currency": pl.String(),
        "billing_unit": pl.String(),
        "price_basis": pl.String(),
        "price_kind": pl.String(),
    }
)
# run_id / provider are null when read_feed was not told which run the file belongs to.
QUARANTINE_SCHEMA = pl.Schema(
    {
        "run_id": pl.String(),
        "provider": pl.String(),
        "seq": pl.Int32(),
        "observed_at": UTC_TIME,
        "offer_key": pl.String(),
        "reason": pl.String(),
        "field": pl.String(),
        "raw": pl.String(),
    }
)


def sql_type(dtype: pl.DataType) -> str:
    """The DuckDB type of a frame column."""
    if isinstance(dtype, pl.Decimal):
        return f"DECIMAL({dtype.precision}, {dtype.scale})"
    if isinstance(dtype, pl.Datetime):
        return "TIMESTAMPTZ"
    return {pl.String: "VARCHAR", pl.Int32: "INTEGER", pl.Boolean: "BOOLEAN"}[type(dtype)]


# The fields of one fee / plan of an offer's list, seq first (its place in the list).
FEE_ITEM_FIELDS = ("seq", *FEE_SCHEMA.names()[FEE_SCHEMA.names().index("fee_type") :])
PLAN_ITEM_FIELDS = ("seq", *PLAN_SCHEMA.names()[PLAN_SCHEMA.names().index("price") :])


def _struct_type(schema: pl.Schema, fields: tuple[str, ...]) -> str:
    return "STRUCT(" + ", ".join(f"{c} {sql_type(schema[c])}" for c in fields) + ")"


FEE_LIST_TYPE = _struct_type(FEE_SCHEMA, FEE_ITEM_FIELDS) + "[]"
PLAN_LIST_TYPE = _struct_type(PLAN_SCHEMA, PLAN_ITEM_FIELDS) + "[]"
