"""The exact path: one feed line at a time through the pydantic contract.

Every line the SQL reading (warehouse.feed_sql) does not vouch for comes here: a
quarantine line, a coerced value, a bad line. It is read as ``gpurent_core.model`` reads
it, then checked for what the columns can hold (DECIMAL scales, INTEGER range, the run's
provider and id). A line that fails becomes a quarantine row with its reason: never
dropped, never fatal (rule of truth 6).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any

import polars as pl
from pydantic import ValidationError

from gpurent_core.model import (
    OfferRecord,
    QuarantineRecord,
    parse_feed_line,
)
from warehouse.feed_schema import (
    FEE_AMOUNT,
    FEE_SCHEMA,
    INT32_MAX,
    LINE,
    MEASURE,
    OBSERVATION_SCHEMA,
    PLAN_SCHEMA,
    PRICE,
    QUANTITY,
)

__all__ = ["ExactReader", "hints_of"]


class _Reject(Exception):
    """A record the contract accepts but the warehouse cannot store faithfully."""

    def __init__(self, reason: str, field: str | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.field = field


class ExactReader:
    """The exact path: one line at a time through the pydantic contract."""

    def __init__(self, *, provider: str | None, run_id: str | None) -> None:
        self.provider = provider
        self.run_id = run_id
        self.quarantine: list[dict[str, Any]] = []
        self.offers: list[dict[str, Any]] = []
        self.fees: list[dict[str, Any]] = []
        self.plans: list[dict[str, Any]] = []
        self.lines = 0

    def reject(self, line: int, reason: str, raw: str | None, **extra: Any) -> None:
        self.quarantine.append(
            {"run_id": self.run_id, "provider": self.provider, "seq": line}
            | {"reason": reason, "raw": raw}
            | extra
        )

    def read(self, line: int, raw_line: bytes) -> None:
        provider, run_id = self.provider, self.run_id
        if not raw_line.strip():
            return
        self.lines += 1
        try:
            text = raw_line.decode("utf-8")
        except UnicodeDecodeError:
            self.reject(line, "line is not UTF-8", raw_line.decode("utf-8", "replace"))
            return
        try:
            # parse_float=Decimal: a price written as a JSON number keeps its exact digits.
            decoded = json.loads(text, parse_float=Decimal, parse_constant=_no_constant)
        except ValueError as exc:
            self.reject(line, f"invalid JSON: {exc}", text)
            return
        if not isinstance(decoded, dict):
            self.reject(line, "line is not a JSON object", text)
            return
        hints = {
            "offer_key": _str_or_none(decoded.get("offer_key")),
            "observed_at": _time_or_none(decoded.get("observed_at")),
        }
        try:
            record = parse_feed_line(decoded)
        except ValidationError as exc:
            reason, field = _describe(exc)
            self.reject(line, reason, text, field=field, **hints)
            return
        if isinstance(record, QuarantineRecord):
            self.quarantine.append(_quarantine_row(record, line, provider=provider, run_id=run_id))
            return
        try:
            _check_run(record, provider=provider, run_id=run_id)
            row, fee_rows, plan_rows = _offer_rows(record, line)
        except _Reject as exc:
            self.reject(line, exc.reason, text, field=exc.field, **hints)
            return
        self.offers.append(row)
        self.fees.extend(fee_rows)
        self.plans.extend(plan_rows)

    def frames(self) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
        """The offers, fees and plans read, as frames (OBSERVATION_SCHEMA, FEE_SCHEMA and
        PLAN_SCHEMA, each with its line)."""
        return tuple(  # type: ignore[return-value]
            pl.DataFrame(rows, schema=pl.Schema({LINE: pl.Int32(), **schema}), orient="row")
            for rows, schema in (
                (self.offers, OBSERVATION_SCHEMA),
                (self.fees, FEE_SCHEMA),
                (self.plans, PLAN_SCHEMA),
            )
        )


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
        LINE: line,
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
        "cuda_version": record.cuda_version,
        "driver_version": record.driver_version,
        "interconnect": record.interconnect.value if record.interconnect else None,
        "nvlink_gbps": _fit(record.nvlink_gbps, MEASURE, "nvlink_gbps"),
        "host_reliability": _fit(record.host_reliability, MEASURE, "host_reliability"),
        "hosting": record.hosting.value if record.hosting else None,
        "max_rental_hours": _fit_int(record.max_rental_hours, "max_rental_hours", minimum=0),
        "vcpus_per_gpu": _fit(record.vcpus_per_gpu, MEASURE, "vcpus_per_gpu"),
        "ram_gb_per_gpu": _fit(record.ram_gb_per_gpu, MEASURE, "ram_gb_per_gpu"),
        "disk_gb_per_gpu": _fit(record.disk_gb_per_gpu, MEASURE, "disk_gb_per_gpu"),
    }
    fee_rows = [
        {
            LINE: line,
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
            LINE: line,
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
    if not minimum <= value <= INT32_MAX:
        raise _Reject(f"{field} {value} is out of range [{minimum}, {INT32_MAX}]", field)
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


def hints_of(text: str) -> dict[str, Any]:
    """What a quarantine row of a set-aside line says besides its reason: the offer key and
    the observation time, when the line has them readably."""
    try:
        decoded = json.loads(text, parse_float=Decimal, parse_constant=_no_constant)
    except ValueError:
        decoded = None
    if not isinstance(decoded, dict):
        return {"offer_key": None, "observed_at": None}
    return {
        "offer_key": _str_or_none(decoded.get("offer_key")),
        "observed_at": _time_or_none(decoded.get("observed_at")),
    }
