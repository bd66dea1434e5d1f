"""Reading one staging feed and validating it before anything touches the database.

Each line is checked on its own by the pydantic contract (gpurent.model), then against
what the columns can hold (DECIMAL scales, INTEGER range); Polars then checks the feed as
a whole (values that did not survive conversion, duplicate offer keys). A line that fails
becomes a quarantine row with its reason: never dropped, never fatal (rule of truth 6).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import polars as pl
from pydantic import ValidationError

from gpurent.model import OfferRecord, QuarantineRecord, parse_feed_line

# Column types; each money scale matches its DuckDB DECIMAL column (sql/0001_init.sql).
PRICE = pl.Decimal(18, 8)
FEE_AMOUNT = pl.Decimal(18, 10)
QUANTITY = pl.Decimal(18, 6)
UTC_TIME = pl.Datetime("us", "UTC")
_INT32_MAX = 2**31 - 1

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

# Columns that are NOT NULL in the tables: a null there means a value did not convert.
_REQUIRED = {
    "observations": [
        c
        for c in OBSERVATION_SCHEMA
        # gpu_vram_gb may be null: the name leaves the VRAM open and the offer does not say.
        if c not in {"gpu_form_factor", "region", "url", "available_count", "gpu_vram_gb"}
    ],
    "addon_fees": [
        c for c in FEE_SCHEMA if c not in {"unit", "quantity", "included_quantity", "note"}
    ],
    "price_plans": list(PLAN_SCHEMA),
}
DUPLICATE_REASON = "duplicate offer_key in feed"
_LINE = "_line"
# An offer set aside by a feed-wide check: (line, reason, field, (offer_key, observed_at)).
_SetAside = tuple[int, str, str, tuple[str | None, datetime | None]]


@dataclass(frozen=True)
class FeedBatch:
    """A validated feed: frames shaped like their tables, plus what was set aside.

    ``offers``/``fees``/``plans``/``quarantine`` follow OBSERVATION_SCHEMA, FEE_SCHEMA,
    PLAN_SCHEMA and QUARANTINE_SCHEMA (money as Polars Decimal). ``lines`` counts the
    non-blank lines read; ``sha256`` is the digest of the file's bytes.
    """

    offers: pl.DataFrame
    fees: pl.DataFrame
    plans: pl.DataFrame
    quarantine: pl.DataFrame
    lines: int = 0
    sha256: str | None = None

    @classmethod
    def empty(cls) -> FeedBatch:
        return cls(
            offers=pl.DataFrame(schema=OBSERVATION_SCHEMA),
            fees=pl.DataFrame(schema=FEE_SCHEMA),
            plans=pl.DataFrame(schema=PLAN_SCHEMA),
            quarantine=pl.DataFrame(schema=QUARANTINE_SCHEMA),
        )


class _Reject(Exception):
    """A record the contract accepts but the warehouse cannot store faithfully."""

    def __init__(self, reason: str, field: str | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.field = field


def read_feed(
    path: Path | str, *, provider: str | None = None, run_id: str | None = None
) -> FeedBatch:
    """Read and validate the JSON Lines feed at ``path``.

    With ``provider``/``run_id`` given, offers that name another run are quarantined and
    quarantine rows carry those ids; without them, quarantine ids may be null.
    """
    data = Path(path).read_bytes()
    quarantine: list[dict[str, Any]] = []
    offers: list[dict[str, Any]] = []
    fees: list[dict[str, Any]] = []
    plans: list[dict[str, Any]] = []
    texts: dict[int, str] = {}
    lines = 0

    def reject(line: int, reason: str, raw: str | None, **extra: Any) -> None:
        quarantine.append(
            {"run_id": run_id, "provider": provider, "seq": line, "reason": reason, "raw": raw}
            | extra
        )

    for line, raw_line in enumerate(data.splitlines(), start=1):
        if not raw_line.strip():
            continue
        lines += 1
        try:
            text = raw_line.decode("utf-8")
        except UnicodeDecodeError:
            reject(line, "line is not UTF-8", raw_line.decode("utf-8", "replace"))
            continue
        try:
            # parse_float=Decimal: a price written as a JSON number keeps its exact digits.
            decoded = json.loads(text, parse_float=Decimal, parse_constant=_no_constant)
        except ValueError as exc:
            reject(line, f"invalid JSON: {exc}", text)
            continue
        if not isinstance(decoded, dict):
            reject(line, "line is not a JSON object", text)
            continue
        hints = {
            "offer_key": _str_or_none(decoded.get("offer_key")),
            "observed_at": _time_or_none(decoded.get("observed_at")),
        }
        try:
            record = parse_feed_line(decoded)
        except ValidationError as exc:
            reason, field = _describe(exc)
            reject(line, reason, text, field=field, **hints)
            continue
        if isinstance(record, QuarantineRecord):
            quarantine.append(_quarantine_row(record, line, provider=provider, run_id=run_id))
            continue
        try:
            _check_run(record, provider=provider, run_id=run_id)
            row, fee_rows, plan_rows = _offer_rows(record, line)
        except _Reject as exc:
            reject(line, exc.reason, text, field=exc.field, **hints)
            continue
        texts[line] = text
        offers.append(row)
        fees.extend(fee_rows)
        plans.extend(plan_rows)

    batch_offers, batch_fees, batch_plans, set_aside = _validate_frames(offers, fees, plans)
    for line, reason, field, (offer_key, observed_at) in set_aside:
        reject(line, reason, texts[line], field=field, offer_key=offer_key, observed_at=observed_at)
    quarantine_frame = pl.DataFrame(quarantine, schema=QUARANTINE_SCHEMA, orient="row")
    return FeedBatch(
        offers=batch_offers,
        fees=batch_fees,
        plans=batch_plans,
        quarantine=quarantine_frame.sort("seq"),
        lines=lines,
        sha256=hashlib.sha256(data).hexdigest(),
    )


def _validate_frames(
    offers: list[dict[str, Any]], fees: list[dict[str, Any]], plans: list[dict[str, Any]]
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, list[_SetAside]]:
    """Feed-wide checks in Polars; returns the kept frames and the offers set aside."""
    offer_frame = _frame(offers, OBSERVATION_SCHEMA)
    fee_frame = _frame(fees, FEE_SCHEMA)
    plan_frame = _frame(plans, PLAN_SCHEMA)
    set_aside: list[_SetAside] = []

    # Belt and braces: Polars turns a value that does not fit its dtype into null, silently.
    # The per-record checks should make this impossible; if one slips, quarantine the offer.
    unstorable: dict[int, str] = {}
    for table, frame in (
        ("observations", offer_frame),
        ("addon_fees", fee_frame),
        ("price_plans", plan_frame),
    ):
        for column in _REQUIRED[table]:
            for line in frame.filter(pl.col(column).is_null())[_LINE].to_list():
                unstorable.setdefault(line, f"{table}.{column}")
    id_rows = offer_frame.select(_LINE, "offer_key", "observed_at").iter_rows()
    ids = {line: (key, observed_at) for line, key, observed_at in id_rows}
    for line, column in sorted(unstorable.items()):
        reason = f"value does not fit column {column}"
        set_aside.append((line, reason, column.split(".")[1], ids.get(line, (None, None))))
    offer_frame = offer_frame.filter(~pl.col(_LINE).is_in(list(unstorable)))

    # One offer per key per run: keep the first line, quarantine the later ones.
    first = offer_frame["offer_key"].is_first_distinct()
    for line in offer_frame.filter(~first)[_LINE].to_list():
        set_aside.append((line, DUPLICATE_REASON, "offer_key", ids[line]))
    offer_frame = offer_frame.filter(first)

    kept = offer_frame[_LINE]
    return (
        offer_frame.drop(_LINE),
        fee_frame.filter(pl.col(_LINE).is_in(kept.implode())).drop(_LINE),
        plan_frame.filter(pl.col(_LINE).is_in(kept.implode())).drop(_LINE),
        set_aside,
    )


def _frame(rows: list[dict[str, Any]], schema: pl.Schema) -> pl.DataFrame:
    full = pl.Schema({_LINE: pl.Int32(), **schema})
    return pl.DataFrame(rows, schema=full, orient="row")


def _check_run(record: OfferRecord, *, provider: str | None, run_id: str | None) -> None:
    if provider is not None and record.provider != provider:
        raise _Reject(f"offer of provider {record.provider!r} in a {provider!r} feed", "provider")
    if run_id is not None and record.run_id != run_id:
        raise _Reject(f"offer of run {record.run_id!r} in the feed of run {run_id!r}", "run_id")


def _offer_rows(
    record: OfferRecord, line: int
) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    ids = {"run_id": record.run_id, "provider": record.provider, "offer_key": record.offer_key}
    row = {
        _LINE: line,
        **ids,
        "observed_at": record.observed_at,
        "gpu_vendor": record.gpu_vendor,
        "gpu_model": record.gpu_model,
        "gpu_vram_gb": _fit_int(record.gpu_vram_gb, "gpu_vram_gb", minimum=0),
        "gpu_form_factor": record.gpu_form_factor,
        "gpu_count": _fit_int(record.gpu_count, "gpu_count", minimum=1),
        "raw_gpu_name": record.raw_gpu_name,
        "status": record.status.value,
        "available_count": _fit_int(record.available_count, "available_count", minimum=0),
        "price": _fit(record.price, PRICE, "price"),
        "currency": record.currency,
        "billing_unit": record.billing_unit.value,
        "price_basis": record.price_basis.value,
        "price_kind": record.price_kind.value,
        "region": record.region,
        "url": record.url,
    }
    fee_rows = [
        {
            _LINE: line,
            **ids,
            "seq": seq,
            "fee_type": fee.fee_type.value,
            "amount": _fit(fee.amount, FEE_AMOUNT, f"fees.{seq}.amount"),
            "currency": fee.currency,
            "unit": fee.unit.value if fee.unit is not None else None,
            "basis": fee.basis.value,
            "quantity": _fit(fee.quantity, QUANTITY, f"fees.{seq}.quantity"),
            "included_quantity": _fit(
                fee.included_quantity, QUANTITY, f"fees.{seq}.included_quantity"
            ),
            "mandatory": fee.mandatory,
            "charged_while_stopped": fee.charged_while_stopped,
            "note": fee.note,
        }
        for seq, fee in enumerate(record.fees)
    ]
    plan_rows = [
        {
            _LINE: line,
            **ids,
            "seq": seq,
            "price": _fit(plan.price, PRICE, f"plans.{seq}.price"),
            "currency": plan.currency,
            "billing_unit": plan.billing_unit.value,
            "price_basis": plan.price_basis.value,
            "price_kind": plan.price_kind.value,
        }
        for seq, plan in enumerate(record.plans)
    ]
    return row, fee_rows, plan_rows


def _fit(value: Decimal | None, dtype: pl.Decimal, field: str) -> Decimal | None:
    """Round half-even to the column's scale; reject negative, non-finite or too-large values.

    Money in the warehouse is never negative: the contract forbids a negative price, and a
    negative plan price or fee amount is as untrustworthy.
    """
    if value is None:
        return None
    precision = dtype.precision or 38
    scale = dtype.scale
    if not value.is_finite():
        raise _Reject(f"{field} is not a finite number", field)
    if value < 0:
        raise _Reject(f"{field} is negative ({value})", field)
    limit = Decimal(10) ** (precision - scale)
    try:
        fitted = value.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_EVEN)
    except InvalidOperation:
        fitted = limit  # too many digits to quantize: certainly out of range
    if fitted >= limit:
        raise _Reject(f"{field} {value} is out of range for DECIMAL({precision},{scale})", field)
    return fitted


def _fit_int(value: int | None, field: str, *, minimum: int) -> int | None:
    if value is None:
        return None
    if not minimum <= value <= _INT32_MAX:
        raise _Reject(f"{field} {value} is out of range [{minimum}, {_INT32_MAX}]", field)
    return value


def _quarantine_row(
    record: QuarantineRecord, line: int, *, provider: str | None, run_id: str | None
) -> dict[str, Any]:
    raw = record.raw
    return {
        "run_id": run_id if run_id is not None else record.run_id,
        "provider": provider if provider is not None else record.provider,
        "seq": line,
        "observed_at": record.observed_at,
        "offer_key": record.offer_key,
        "reason": record.reason,
        "field": record.field,
        # Decimals decoded from the feed go back out as strings; no float on the way.
        "raw": json.dumps(raw, ensure_ascii=False, default=str) if isinstance(raw, dict) else raw,
    }


def _describe(exc: ValidationError) -> tuple[str, str | None]:
    """A one-line reason naming the failing fields, and the first field's dotted path."""
    errors = exc.errors(include_url=False)
    paths = [".".join(str(part) for part in error["loc"]) for error in errors]
    parts = [
        f"{path or '<record>'}: {error['msg']}" for path, error in zip(paths, errors, strict=True)
    ]
    reason = "invalid record: " + "; ".join(parts[:3])
    if len(parts) > 3:
        reason += f" (+{len(parts) - 3} more)"
    return reason, (paths[0] or None) if paths else None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _time_or_none(value: Any) -> datetime | None:
    """observed_at of a rejected line when it is readable, so the quarantine row is dated."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed.astimezone(UTC) if parsed.tzinfo is not None else None
