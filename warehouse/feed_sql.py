"""Typing a feed's lines in DuckDB, vouching only for what pydantic would read the same.

``offer_rows_sql`` turns a relation of feed lines ``(line, text)`` into one row per line:
the offer typed (the columns of ``feed_schema.OBSERVATION_SCHEMA``, its fee and plan lists)
and hashed (warehouse.offer_hashes), and ``ok``, whether the SQL reading vouches for it. A
line it does not vouch for (a quarantine line, a coerced value, a bad line) is for the exact
path (warehouse.feed_exact, the pydantic contract) to read or quarantine.

How a line is vouched for:

1. ``from_json`` parses it into the contract's keys, each leaf kept as JSON text (so its
   JSON type is known: a string field must hold a JSON string, a count a JSON integer, a
   flag true or false, money a JSON string); enum and currency leaves are read as text
   (only a JSON string reads as one of their values: a number reads as digits).
2. Written back, the parse must be the line itself (``to_json``): the expected keys once
   each, in the contract's order, minified, no escape the parser would normalise. That is
   the canonical line the spiders write (``record.model_dump(mode="json")`` through
   ``spiders.extensions.FeedLinesExporter``); any other spelling of a record (spaces, other
   key order, an extra, missing or doubled key) goes the exact way, and reads the same.
3. The leaves must hold what the columns need, as pydantic reads them: money as decimal
   strings within the column's scale and range, UTC times, known enum values, integers in
   range, and the run's provider and id.

Checks are computed as a column, never as a filter: DuckDB pushes a filter below the parse
by copying the parse into each condition that uses it (the line parsed once per check).
"""

from __future__ import annotations

import json
from enum import StrEnum

from gpurent_core.host import CUDA_VERSION_PATTERN
from gpurent_core.model import (
    BillingUnit,
    FeeBasis,
    FeeType,
    Hosting,
    Interconnect,
    PriceBasis,
    PriceKind,
    StockStatus,
)
from warehouse.feed_schema import (
    FEE_AMOUNT,
    FEE_LIST_TYPE,
    INT32_MAX,
    LINE,
    MEASURE,
    PLAN_LIST_TYPE,
    PRICE,
    QUANTITY,
    sql_type,
)
from warehouse.offer_hashes import hashed

__all__ = ["OFFER_PREFIX", "offer_rows_sql", "vouched"]

# The keys of an offer line, of a fee and of a plan, in the contract's order
# (gpurent_core.model), with how each leaf is read: "text" (a JSON string), "word" (a JSON
# string checked against a pattern: money, times), "enum" (read as VARCHAR), "int", "bool".
_OFFER_LEAVES = {
    "kind": "enum", "provider": "text", "offer_key": "text", "run_id": "text",
    "observed_at": "word", "gpu_vendor": "text", "gpu_model": "text", "gpu_vram_gb": "int",
    "gpu_form_factor": "text", "gpu_count": "int", "raw_gpu_name": "text", "status": "enum",
    "available_count": "int", "price": "word", "currency": "enum", "billing_unit": "enum",
    "price_basis": "enum", "price_kind": "enum", "region": "text", "url": "text",
    "cuda_version": "text", "driver_version": "text", "interconnect": "enum",
    "nvlink_gbps": "word", "host_reliability": "word", "hosting": "enum",
    "max_rental_hours": "int", "vcpus_per_gpu": "word", "ram_gb_per_gpu": "word",
    "disk_gb_per_gpu": "word",
}  # fmt: skip
_FEE_LEAVES = {
    "fee_type": "enum", "amount": "word", "currency": "enum", "unit": "enum", "basis": "enum",
    "quantity": "word", "included_quantity": "word", "mandatory": "bool",
    "charged_while_stopped": "bool", "note": "text",
}  # fmt: skip
_PLAN_LEAVES = {
    "price": "word", "currency": "enum", "billing_unit": "enum", "price_basis": "enum",
    "price_kind": "enum",
}  # fmt: skip


def _leaf_types(leaves: dict[str, str]) -> dict[str, object]:
    return {k: "VARCHAR" if kind == "enum" else "JSON" for k, kind in leaves.items()}


_SCHEMA = json.dumps(
    _leaf_types(_OFFER_LEAVES)
    | {"fees": [_leaf_types(_FEE_LEAVES)], "plans": [_leaf_types(_PLAN_LEAVES)]}
)

OFFER_PREFIX = '{"kind":"offer",'
"""How a canonical offer line starts. Only such lines are parsed: a line that is no JSON
fails the parse, and a failure makes DuckDB redo its whole vector row by row."""


def _text(leaf: str) -> str:
    """A JSON string leaf's value: unquoted, unescaped where it holds an escape."""
    return (
        f"CASE WHEN contains({leaf}, '\\') THEN json_extract_string({leaf}, '$')"
        f" ELSE {leaf}[2:-2] END"
    )


def _is_string(leaf: str) -> str:
    return f"starts_with({leaf}, '\"')"


def _one_of(enum: type[StrEnum]) -> str:
    return "(" + ", ".join(f"'{member.value}'" for member in enum) + ")"


def _money(dtype: object, leaf: str) -> str:
    """A JSON string of decimal digits that fits the column without rounding: one integer
    digit short of the limit, no more decimals than the scale (so the cast and the exact
    path's half-even rounding agree)."""
    precision = getattr(dtype, "precision", None) or 38
    scale = int(getattr(dtype, "scale", 0))
    pattern = f'"[0-9]{{1,{precision - scale - 1}}}(\\.[0-9]{{1,{scale}}})?"'
    return f"regexp_full_match({leaf}, '{pattern}')"


def _int(leaf: str, minimum: int, *, nullable: bool) -> str:
    # Written back, an integer is its digits: anything else (1.0, 1e2, -3, "2") fails here.
    check = (
        f"(regexp_full_match({leaf}, '[0-9]{{1,10}}')"
        f" AND try_cast({leaf} AS BIGINT) BETWEEN {minimum} AND {INT32_MAX})"
    )
    return f"({leaf} IS NULL OR {check})" if nullable else check


_TIME = (
    '"[1-9][0-9]{3}-[0-9]{2}-[0-9]{2}T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]'
    '(\\.[0-9]{1,6})?(Z|\\+00:00)"'
)
_CURRENCY = "'[A-Z]{3}'"
_FEE_OK = f"""f IS NOT NULL AND f.fee_type IN {_one_of(FeeType)}
    AND {_money(FEE_AMOUNT, "f.amount")} AND regexp_full_match(f.currency, {_CURRENCY})
    AND (f.unit IS NULL OR f.unit IN {_one_of(BillingUnit)}) AND f.basis IN {_one_of(FeeBasis)}
    AND (f.quantity IS NULL OR {_money(QUANTITY, "f.quantity")})
    AND (f.included_quantity IS NULL OR {_money(QUANTITY, "f.included_quantity")})
    AND f.mandatory IN ('true', 'false')
    AND (f.charged_while_stopped IS NULL OR f.charged_while_stopped IN ('true', 'false'))
    AND (f.note IS NULL OR {_is_string("f.note")})"""
_PLAN_OK = f"""p IS NOT NULL AND {_money(PRICE, "p.price")}
    AND regexp_full_match(p.currency, {_CURRENCY})
    AND p.billing_unit IN {_one_of(BillingUnit)} AND p.price_basis IN {_one_of(PriceBasis)}
    AND p.price_kind IN {_one_of(PriceKind)}"""
_REQUIRED_TEXT = ("provider", "offer_key", "run_id", "gpu_vendor", "gpu_model", "raw_gpu_name")
_NULLABLE_TEXT = ("gpu_form_factor", "region", "url", "cuda_version", "driver_version")
_MEASURES = (
    "nvlink_gbps",
    "host_reliability",
    "vcpus_per_gpu",
    "ram_gb_per_gpu",
    "disk_gb_per_gpu",
)
# A CUDA version holds no escape: its JSON text is the pattern between quotes.
_CUDA = '"' + CUDA_VERSION_PATTERN.strip("^$") + '"'


def _each(column: str, var: str, ok: str) -> str:
    """Every element of a list passes ``ok`` (an empty list does; a check that is NULL on
    an element fails it: ``list_bool_and`` alone would skip it)."""
    return f"list_bool_and(list_transform({column}, lambda {var}: coalesce({ok}, false)))"


_OK = " AND ".join(
    [
        "r IS NOT NULL",
        "to_json(r)::VARCHAR = text",  # (2): the contract's keys, canonically written
        "r.kind = 'offer'",
        *(_is_string(f"r.{k}") for k in _REQUIRED_TEXT),
        *(f"(r.{k} IS NULL OR {_is_string(f'r.{k}')})" for k in _NULLABLE_TEXT),
        f"($provider IS NULL OR {_text('r.provider')} = $provider)",
        f"($run_id IS NULL OR {_text('r.run_id')} = $run_id)",
        f"regexp_full_match(r.observed_at, '{_TIME}')",
        "try_cast(r.observed_at[2:-2] AS TIMESTAMPTZ) IS NOT NULL",
        _int("r.gpu_vram_gb", 1, nullable=True),
        _int("r.gpu_count", 1, nullable=False),
        _int("r.available_count", 0, nullable=True),
        f"r.status IN {_one_of(StockStatus)}",
        _money(PRICE, "r.price"),
        f"regexp_full_match(r.currency, {_CURRENCY})",
        f"r.billing_unit IN {_one_of(BillingUnit)}",
        f"r.price_basis IN {_one_of(PriceBasis)}",
        f"r.price_kind IN {_one_of(PriceKind)}",
        f"(r.cuda_version IS NULL OR regexp_full_match(r.cuda_version, '{_CUDA}'))",
        f"(r.interconnect IS NULL OR r.interconnect IN {_one_of(Interconnect)})",
        f"(r.hosting IS NULL OR r.hosting IN {_one_of(Hosting)})",
        _int("r.max_rental_hours", 0, nullable=True),
        *(f"(r.{k} IS NULL OR {_money(MEASURE, f'r.{k}')})" for k in _MEASURES),
        f"(r.host_reliability IS NULL OR try_cast(r.host_reliability[2:-2] AS {sql_type(MEASURE)}) <= 1)",
        "r.fees IS NOT NULL AND r.plans IS NOT NULL",
        f"(len(r.fees) = 0 OR {_each('r.fees', 'f', _FEE_OK)})",
        f"(len(r.plans) = 0 OR {_each('r.plans', 'p', _PLAN_OK)})",
    ]
)


def vouched() -> str:
    """The SQL verdict on a parsed line ``r`` (its text ``text``): true when the typed row
    is what the exact path would read. (A function, so a test can vouch for nothing and
    hold the two readings equal.)"""
    return f"coalesce({_OK}, false)"


def _typed(leaf: str, target: str) -> str:
    # try_cast: a row the checks refuse is typed too (its values are never used).
    return f"try_cast({leaf}[2:-2] AS {target})"


_FEES = f"""list_transform(r.fees, lambda f, i: {{
    'seq': (i - 1)::INTEGER, 'fee_type': f.fee_type,
    'amount': {_typed("f.amount", sql_type(FEE_AMOUNT))}, 'currency': f.currency,
    'unit': f.unit, 'basis': f.basis,
    'quantity': {_typed("f.quantity", sql_type(QUANTITY))},
    'included_quantity': {_typed("f.included_quantity", sql_type(QUANTITY))},
    'mandatory': f.mandatory = 'true',
    'charged_while_stopped': CASE f.charged_while_stopped
        WHEN 'true' THEN true WHEN 'false' THEN false END,
    'note': {_text("f.note")}}})::{FEE_LIST_TYPE}"""
_PLANS = f"""list_transform(r.plans, lambda p, i: {{
    'seq': (i - 1)::INTEGER, 'price': {_typed("p.price", sql_type(PRICE))},
    'currency': p.currency, 'billing_unit': p.billing_unit,
    'price_basis': p.price_basis, 'price_kind': p.price_kind}})::{PLAN_LIST_TYPE}"""


def _measure(key: str) -> str:
    return f"{_typed(f'r.{key}', sql_type(MEASURE))} AS {key}"


_COLUMNS = f"""line AS {LINE}, {_text("r.run_id")} AS run_id, {_text("r.provider")} AS provider,
    {_text("r.offer_key")} AS offer_key, {_typed("r.observed_at", "TIMESTAMPTZ")} AS observed_at,
    {_text("r.gpu_vendor")} AS gpu_vendor, {_text("r.gpu_model")} AS gpu_model,
    try_cast(r.gpu_vram_gb AS INTEGER) AS gpu_vram_gb,
    {_text("r.gpu_form_factor")} AS gpu_form_factor,
    try_cast(r.gpu_count AS INTEGER) AS gpu_count, {_text("r.raw_gpu_name")} AS raw_gpu_name,
    r.status AS status, try_cast(r.available_count AS INTEGER) AS available_count,
    {_typed("r.price", sql_type(PRICE))} AS price, r.currency AS currency,
    r.billing_unit AS billing_unit, r.price_basis AS price_basis, r.price_kind AS price_kind,
    {_text("r.region")} AS region, {_text("r.url")} AS url,
    {_text("r.cuda_version")} AS cuda_version, {_text("r.driver_version")} AS driver_version,
    r.interconnect AS interconnect, {_measure("nvlink_gbps")}, {_measure("host_reliability")},
    r.hosting AS hosting, try_cast(r.max_rental_hours AS INTEGER) AS max_rental_hours,
    {_measure("vcpus_per_gpu")}, {_measure("ram_gb_per_gpu")}, {_measure("disk_gb_per_gpu")},
    {_FEES} AS fees, {_PLANS} AS plans"""


def offer_rows_sql(lines: str) -> str:
    """A query over relation ``lines`` (``line`` INTEGER, ``text`` VARCHAR, NULL for a line
    that is not UTF-8): per line, ``_line``, the offer typed (OBSERVATION_SCHEMA, ``fees``,
    ``plans``), ``ok`` (the verdict), ``raw`` (the text where not ok, for the exact path)
    and the hashes (warehouse.offer_hashes.HASHES). Parameters ``$provider`` and ``$run_id``
    (NULL: any) are the run the feed belongs to."""
    typed = f"""(
        SELECT {_COLUMNS}, ok, CASE WHEN ok THEN NULL ELSE text END AS raw
        FROM (
            SELECT *, {vouched()} AS ok FROM (
                SELECT line, text, CASE WHEN starts_with(text, '{OFFER_PREFIX}')
                    THEN TRY(from_json(text, '{_SCHEMA}')) END AS r
                FROM {lines}
            )
        )
    )"""
    return f"SELECT * FROM {hashed(typed)}"
