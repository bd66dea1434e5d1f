"""Reading offer lines set-wise in DuckDB, accepting only what provably reads as pydantic would.

``offer_rows_sql`` turns a relation of feed lines ``(line, text)`` into typed offer rows
(``feed_schema.OFFER_ROW_COLUMNS``) for the lines it can vouch for; every other line is
left out, for the exact path (the pydantic contract, line by line) to read or quarantine.

How a line is vouched for, without writing it back (serialising every parsed line to
compare it with its text cost more than the parse itself):

1. ``from_json_strict`` parses it: strict mode fails on a missing or a doubled key at any
   level (``TRY`` turns the failure into a null, and the line goes the exact way). Leaves
   come back as JSON text, so their JSON type is known: a string field must hold a JSON
   string, a count a JSON integer, a flag true or false, a price a JSON string. A value
   that would need coercing (a count written "2", a price written 1.5) is never vouched
   for. Enum and currency fields are read as text directly: nothing but a JSON string
   reads as one of their values (a number reads as digits, a flag as ``true``).
2. The leaves must hold what the columns need (money as decimal strings within the
   column's scale, UTC times, known enum values, integer ranges, the run's provider and id).
3. Counting proves there is nothing else: the line must be exactly as long as the
   structure (braces, brackets, the expected keys, colons, commas) plus its leaves written
   back. A key the contract does not have adds at least five characters, whitespace one;
   a leaf written with an escape the parser normalises (``\\u00e9``) reads back shorter;
   nothing reads back longer, and no expected key is missing (1), so nothing can offset
   them. A line passes only if it is the expected keys, once each, with these values, in
   any order, minified: the canonical line, as the spiders write it
   (``spiders.extensions.FeedLinesExporter``). Any other spelling of the same record goes
   the exact way, and reads the same.

Line order, blank lines and which lines there are is warehouse.feed_file's business: the
relation's ``text`` is one line with its terminating newline (or none).
"""

from __future__ import annotations

import json
from enum import StrEnum

from gpurent_core.model import (
    BillingUnit,
    FeeBasis,
    FeeType,
    PriceBasis,
    PriceKind,
    StockStatus,
)
from warehouse.feed_schema import (
    FEE_AMOUNT,
    FEE_ITEM_FIELDS,
    FEE_LIST_TYPE,
    INT32_MAX,
    LINE,
    PLAN_ITEM_FIELDS,
    PLAN_LIST_TYPE,
    PRICE,
    QUANTITY,
    sql_type,
)
from warehouse.offer_hashes import list_hash

__all__ = ["OFFER_PREFIX", "list_sets_sql", "offer_rows_sql", "offer_texts_sql"]

# The keys of an offer line, of a fee and of a plan, as the contract (gpurent_core.model)
# has them, with how each leaf is read: "text" (a JSON string: names, keys, URLs), "word"
# (a JSON string checked against a pattern: money, times), "enum" (read as VARCHAR: only
# a JSON string can hold one of the values), "int", "bool".
_OFFER_LEAVES = {
    "kind": "enum", "provider": "text", "offer_key": "text", "run_id": "text",
    "observed_at": "word", "gpu_vendor": "text", "gpu_model": "text", "gpu_vram_gb": "int",
    "gpu_form_factor": "text", "gpu_count": "int", "raw_gpu_name": "text", "status": "enum",
    "available_count": "int", "price": "word", "currency": "enum", "billing_unit": "enum",
    "price_basis": "enum", "price_kind": "enum", "region": "text", "url": "text",
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


def _leaf_types(leaves: dict[str, str]) -> dict[str, str]:
    return {k: "VARCHAR" if kind == "enum" else "JSON" for k, kind in leaves.items()}


_FEE_LIST_SCHEMA = [_leaf_types(_FEE_LEAVES)]
_PLAN_LIST_SCHEMA = [_leaf_types(_PLAN_LEAVES)]
_LEAVES_SCHEMA = json.dumps(
    _leaf_types(_OFFER_LEAVES) | {"fees": _FEE_LIST_SCHEMA, "plans": _PLAN_LIST_SCHEMA}
)
# The lists left as JSON: DuckDB hands each back written out again, minified (see
# ``offer_texts_sql``).
_TEXTS_SCHEMA = json.dumps(_leaf_types(_OFFER_LEAVES) | {"fees": "JSON", "plans": "JSON"})

OFFER_PREFIX = '{"kind":"offer",'
"""How a canonical offer line starts. Only such lines are parsed set-wise: a quarantine
line would fail the strict parse, and a failure makes DuckDB redo its whole vector row by
row."""


def _structure(keys: list[str]) -> int:
    """Characters of a minified object with these keys, its values left out: braces, the
    quoted keys, colons and the commas between members."""
    return 2 + sum(len(k) + 3 for k in keys) + (len(keys) - 1)


# The top level's structure, with its two lists' brackets.
_TOP = _structure([*_OFFER_LEAVES, "fees", "plans"]) + 4
_FEE = _structure(list(_FEE_LEAVES))
_PLAN = _structure(list(_PLAN_LEAVES))


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
    """A JSON string of decimal digits that fits the column without rounding its integer
    part: one integer digit short of the limit, no more decimals than the scale (the exact
    path rounds half-even to the scale, as the cast does)."""
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


def _chars(leaf: str, kind: str) -> str:
    """The length of a leaf written back: a JSON null is ``null``; an enum leaf (read as
    text) is its value in quotes."""
    if kind == "enum":
        return f"coalesce(strlen({leaf}) + 2, 4)"
    return f"strlen(coalesce({leaf}, 'null'))"


def _list_chars(column: str, var: str, leaves: dict[str, str], structure: int, ok: str) -> str:
    """The length of a list written back, when each element passes ``ok``; else a
    negative number no line length can equal (one pass over the list for both)."""
    each = " + ".join(_chars(f"{var}.{k}", kind) for k, kind in leaves.items())
    # Each element's structure and leaves, plus the comma after it; the last has none.
    element = f"CASE WHEN {ok} THEN {structure} + 1 + {each} ELSE -1000000000 END"
    return f"coalesce(list_sum(list_transform({column}, lambda {var}: {element})) - 1, 0)"


_FEE_OK = f"""f IS NOT NULL AND f.fee_type IN {_one_of(FeeType)}
    AND {_money(FEE_AMOUNT, "f.amount")} AND regexp_full_match(f.currency, {_CURRENCY})
    AND (f.unit IS NULL OR f.unit IN {_one_of(BillingUnit)}) AND f.basis IN {_one_of(FeeBasis)}
    AND (f.quantity IS NULL OR {_money(QUANTITY, "f.quantity")})
    AND (f.included_quantity IS NULL OR {_money(QUANTITY, "f.included_quantity")})
    AND f.mandatory IN ('true', 'false') AND f.charged_while_stopped IN ('true', 'false')
    AND (f.note IS NULL OR {_is_string("f.note")})"""
_PLAN_OK = f"""p IS NOT NULL AND {_money(PRICE, "p.price")}
    AND regexp_full_match(p.currency, {_CURRENCY})
    AND p.billing_unit IN {_one_of(BillingUnit)} AND p.price_basis IN {_one_of(PriceBasis)}
    AND p.price_kind IN {_one_of(PriceKind)}"""
_REQUIRED_TEXT = ("provider", "offer_key", "run_id", "gpu_vendor", "gpu_model", "raw_gpu_name")
_NULLABLE_TEXT = ("gpu_form_factor", "region", "url")
_TOP_OK = " AND ".join(
    [
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
        "r.fees IS NOT NULL AND r.plans IS NOT NULL",
    ]
)
# (3), with the lists' element checks of (2): the line (its newline left out) against the
# structure and the leaves.
_LINE_CHARS = "strlen(text) - CASE WHEN ends_with(text, chr(10)) THEN 1 ELSE 0 END"
_FEES_CHARS = _list_chars("r.fees", "f", _FEE_LEAVES, _FEE, _FEE_OK)
_PLANS_CHARS = _list_chars("r.plans", "p", _PLAN_LEAVES, _PLAN, _PLAN_OK)
_TOP_LEAVES = [_chars(f"r.{k}", kind) for k, kind in _OFFER_LEAVES.items()]
_EXACT_LENGTH = f"{_LINE_CHARS} = " + " + ".join(
    [str(_TOP), *_TOP_LEAVES, _FEES_CHARS, _PLANS_CHARS]
)
# The same when the lists are read as JSON text (offer_texts_sql): each list counts as its
# text written back, brackets included.
_TEXTS_LENGTH = f"{_LINE_CHARS} = " + " + ".join(
    [str(_TOP - 4), *_TOP_LEAVES, "strlen(r.fees)", "strlen(r.plans)"]
)


def _typed(leaf: str, target: str) -> str:
    # try_cast: the rows kept passed the checks, but DuckDB may cast before it filters.
    return f"try_cast({leaf}[2:-2] AS {target})"


def _fees(column: str) -> str:
    """A parsed fee list (``_FEE_LIST_SCHEMA``) typed as FEE_LIST_TYPE."""
    return f"""list_transform({column}, lambda f, i: {{
    'seq': (i - 1)::INTEGER, 'fee_type': f.fee_type,
    'amount': {_typed("f.amount", sql_type(FEE_AMOUNT))}, 'currency': f.currency,
    'unit': f.unit, 'basis': f.basis,
    'quantity': {_typed("f.quantity", sql_type(QUANTITY))},
    'included_quantity': {_typed("f.included_quantity", sql_type(QUANTITY))},
    'mandatory': f.mandatory = 'true', 'charged_while_stopped': f.charged_while_stopped = 'true',
    'note': {_text("f.note")}}})::{FEE_LIST_TYPE}"""


def _plans(column: str) -> str:
    """A parsed plan list (``_PLAN_LIST_SCHEMA``) typed as PLAN_LIST_TYPE."""
    return f"""list_transform({column}, lambda p, i: {{
    'seq': (i - 1)::INTEGER, 'price': {_typed("p.price", sql_type(PRICE))},
    'currency': p.currency, 'billing_unit': p.billing_unit,
    'price_basis': p.price_basis, 'price_kind': p.price_kind}})::{PLAN_LIST_TYPE}"""


_OFFER_COLUMNS = f"""line AS {LINE}, {_text("r.run_id")} AS run_id,
    {_text("r.provider")} AS provider,
    {_text("r.offer_key")} AS offer_key, {_typed("r.observed_at", "TIMESTAMPTZ")} AS observed_at,
    {_text("r.gpu_vendor")} AS gpu_vendor, {_text("r.gpu_model")} AS gpu_model,
    try_cast(r.gpu_vram_gb AS INTEGER) AS gpu_vram_gb,
    {_text("r.gpu_form_factor")} AS gpu_form_factor,
    try_cast(r.gpu_count AS INTEGER) AS gpu_count, {_text("r.raw_gpu_name")} AS raw_gpu_name,
    r.status AS status, try_cast(r.available_count AS INTEGER) AS available_count,
    {_typed("r.price", sql_type(PRICE))} AS price, r.currency AS currency,
    r.billing_unit AS billing_unit, r.price_basis AS price_basis, r.price_kind AS price_kind,
    {_text("r.region")} AS region, {_text("r.url")} AS url"""


def _parsed(lines: str, schema: str, where: str | None) -> str:
    picked = f"starts_with(text, '{OFFER_PREFIX}')" + (f" AND ({where})" if where else "")
    return f"""(
        SELECT line, text, TRY(from_json_strict(text, '{schema}')) AS r
        FROM {lines} WHERE {picked}
    ) AS parsed"""


def offer_rows_sql(lines: str, *, where: str | None = None) -> str:
    """A query of the typed offer rows of the lines of relation ``lines`` (columns ``line``
    INTEGER, ``text`` VARCHAR) that it vouches for. Parameters ``$provider`` and ``$run_id``
    (NULL: any) are the run the feed belongs to. ``where``: a condition on ``line`` that
    picks the lines to read before any is parsed.

    The caller turns DuckDB's filter pushdown off (warehouse.feed.checks_above_parse):
    pushed below the parse, each check would parse the line again.
    """
    return f"""
        SELECT {_OFFER_COLUMNS}, {_fees("r.fees")} AS fees, {_plans("r.plans")} AS plans
        FROM {_parsed(lines, _LEAVES_SCHEMA, where)}
        WHERE r IS NOT NULL AND {_TOP_OK} AND {_EXACT_LENGTH}
    """


def offer_texts_sql(lines: str, *, where: str | None = None) -> str:
    """``offer_rows_sql`` with each offer's fee and plan lists left as text, for the lists
    to be checked and typed once per distinct list rather than once per offer (they repeat
    across a provider's offers): ``fee_text`` / ``plan_text`` (UBIGINT) are the hashes of
    the lists' JSON as ``list_sets_sql`` finds them again.

    Such a row is vouched for only once both of its lists are (``list_sets_sql``): the top
    level is checked as in ``offer_rows_sql``, and the line must be as long as its structure,
    its leaves and its two lists written back. A list passes only if it is canonical (the
    expected keys once each, no number, minified); such a list is never written back longer
    than it was written, and is as long only when written as it reads back. A list that
    would read back longer (a number: ``1e2`` reads back ``100.0``) never passes.
    """
    return f"""
        SELECT {_OFFER_COLUMNS}, hash(r.fees) AS fee_text, hash(r.plans) AS plan_text
        FROM {_parsed(lines, _TEXTS_SCHEMA, where)}
        WHERE r IS NOT NULL AND {_TOP_OK} AND {_TEXTS_LENGTH}
    """


def _list_check(text: str, parsed: str, chars: str) -> str:
    """A list's text is canonical: it parses strictly (a list of objects with the expected
    keys, once each), every element passes its checks, and it is as long as its structure
    and leaves written back (no extra key, whitespace or escape)."""
    return f"coalesce({parsed} IS NOT NULL AND strlen({text}) = 2 + {chars}, false)"


def list_sets_sql(lines: str, *, where: str | None = None) -> str:
    """A query, per line of ``lines`` (as ``offer_texts_sql``), of its two lists as that
    query hashed their text (``fee_text`` / ``plan_text``), whether each is canonical
    (``fee_ok`` / ``plan_ok``), the list typed (``fee_items`` / ``plan_items``, as
    FEE_LIST_TYPE / PLAN_LIST_TYPE) and its set hash (``fee_set`` / ``plan_set``,
    warehouse.offer_hashes.list_hash). A list's verdict depends on its text alone, so one
    line per distinct text answers for every offer carrying it."""
    fees_chars = _list_chars("fl", "f", _FEE_LEAVES, _FEE, _FEE_OK)
    plans_chars = _list_chars("pl", "p", _PLAN_LEAVES, _PLAN, _PLAN_OK)
    fee_list = json.dumps(_FEE_LIST_SCHEMA)
    plan_list = json.dumps(_PLAN_LIST_SCHEMA)
    return f"""
        SELECT line, fee_text, {_list_check("fees", "fl", fees_chars)} AS fee_ok,
            {list_hash("fee_items", FEE_ITEM_FIELDS)} AS fee_set, fee_items,
            plan_text, {_list_check("plans", "pl", plans_chars)} AS plan_ok,
            {list_hash("plan_items", PLAN_ITEM_FIELDS)} AS plan_set, plan_items
        FROM (
          SELECT *, {_fees("fl")} AS fee_items, {_plans("pl")} AS plan_items FROM (
            SELECT line, r.fees AS fees, r.plans AS plans,
                hash(r.fees) AS fee_text, hash(r.plans) AS plan_text,
                TRY(from_json_strict(r.fees, '{fee_list}')) AS fl,
                TRY(from_json_strict(r.plans, '{plan_list}')) AS pl
            FROM {_parsed(lines, _TEXTS_SCHEMA, where)}
            WHERE r IS NOT NULL AND r.fees IS NOT NULL AND r.plans IS NOT NULL
          )
        )
    """
