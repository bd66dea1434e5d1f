"""Featurize instances (`GET /bus/api/v1/available_instances` -> `{status, message, data}`).

Field meanings (the official `featurize` SDK on PyPI and LinDong123a/featurize-haunter):

* envelope `status: 0` is success; anything else is an error with a `message`.
* `data.records[]`: `id`, `name`, `gpu` ("GeForce RTX 3090, ..."; the card is the part before
  the first comma), `unit_price` (CNY per hour, presumed: the SDK does not say) and
  `status`.
* `status: "online"` means idle and rentable (the haunter's `idle()`).

Our reading (assumptions):

* An instance is one machine rented whole: the price is per instance; its card count comes
  from the GPU name (`split_gpu_count`: "RTX 3090 x2"), else 1.
* A part after the first comma that is only a memory size ("GeForce RTX 3080, 10GB, ...") is
  the card's VRAM, read as a hint that settles models sold in several sizes (RTX 3080: 10 or
  12 GB). Only on a one-card instance: on "RTX 4090 x2, 48GB" the size may be the machine's
  total, so it is not read (the card's own name must say it). A size that contradicts the
  name quarantines the record (the resolver's "VRAM sizes disagree").
* Statuses other than "online" that plainly say the machine is taken or down
  (`TAKEN_STATUSES`) are `sold_out`; any other value is `unknown` with a page note and a
  quarantine line beside the offer saying which word was not understood, so a new status
  word never reads as "everything sold out" (rule of truth 3).

Contract (`INSTANCE`): every record carries `id` and `gpu` (identity), `unit_price` (price)
and `status` (stock). A record whose `status` key is gone is drift, quarantined (never read
as `unknown` or taken, and when no record has it the page is a layout error): the SDK
documents no absent status. A `status` present but null or of another type says nothing we
know: the offer is `unknown`, with that reason set aside beside it. An envelope `status`
that is not a whole number is a changed answer (a layout error), not an API error.

Featurize publishes no add-on fees in our sources, so offers carry none.
"""

from __future__ import annotations

import re
from typing import Any

from gpurent_core.model import PriceBasis, StockStatus
from gpurent_core.normalize.availability import UNKNOWN, Availability, availability_from_flag
from gpurent_core.normalize.gpu import split_gpu_count
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    FieldProblem,
    ParseContext,
    Record,
    gpu_offer,
    id_text,
    identify_gpu,
    require,
    set_aside,
    to_price,
)
from spiders.parsers.contract import Contract, apply_check, check_items, contracted
from spiders.parsers.envelope import ApiPage, code_envelope

CURRENCY = "CNY"
ENDPOINT_URL = "https://featurize.cn/bus/api/v1/available_instances"
IDLE_STATUS = "online"
# Statuses read as "cannot be rented now" (our assumption: the SDK only names "online").
TAKEN_STATUSES = frozenset({"busy", "using", "in_use", "rented", "occupied", "offline"})
# Keys every record carries (status included: its loss would turn the market "unknown").
INSTANCE = Contract("instance", identity=("id", "gpu"), price=("unit_price",), stock=("status",))
CONTRACTS: tuple[Contract, ...] = (INSTANCE,)
# A comma-separated part of `gpu` that is a memory size and nothing else: "10GB", "24 GB".
MEMORY_PART = re.compile(r"^(\d{1,4})\s*(?:gb|gib|g)$", re.IGNORECASE)


class InstancesPage(ApiPage):
    """A page of the instance list (an envelope `status` other than 0 is an API error)."""


def parse_instances(data: Any, ctx: ParseContext) -> InstancesPage:
    retyped = _retyped_envelope(data)
    if retyped is not None:
        return InstancesPage(layout_error=retyped)
    problem = code_envelope(data, code_key="status", ok=0, message_key="message")
    if problem is not None:
        return InstancesPage.unanswered(problem)
    payload = data.get("data")
    records = payload.get("records") if isinstance(payload, dict) else None
    if not isinstance(records, list):
        return InstancesPage(layout_error="no 'data.records' list in a status 0 answer")
    page = InstancesPage()
    for item in records:
        page.records.extend(instance_records(item, ctx))
    unknown = _unrecognised_statuses(records)
    if unknown:
        shown = ", ".join(repr(v) for v in unknown)
        page.notes.append(f"unrecognised instance status {shown}: stock unknown")
    apply_check(page, check_items(records, INSTANCE))
    return page


def _retyped_envelope(data: Any) -> str | None:
    """The layout error of an envelope whose `status` is there but no whole number: the SDK's
    codes are numbers, so `[]` or `true` is a changed answer, not the API reporting an error
    (and `false` must not pass for the success code 0)."""
    if not isinstance(data, dict) or "status" not in data:
        return None  # code_envelope names these
    status = data["status"]
    if isinstance(status, int) and not isinstance(status, bool):
        return None
    return f"envelope status is not a number (got {type(status).__name__})"


def instance_records(item: Any, ctx: ParseContext) -> list[Record]:
    """The offer of one record, or its quarantine line (a key of `INSTANCE` gone, a bad
    value; any failure costs this record only)."""
    key = id_text(item.get("id")) if isinstance(item, dict) else None
    return contracted(ctx, item, INSTANCE, offer_key=key, build=lambda: _build(item, key, ctx))


def _unrecognised_statuses(records: list[Any]) -> list[str]:
    """Status words read as `unknown`, each once, in order of first sight."""
    unknown: list[str] = []
    for item in records:
        value = item.get("status") if isinstance(item, dict) else None
        if (
            isinstance(value, str)
            and _availability(value).status is StockStatus.UNKNOWN
            and value not in unknown
        ):
            unknown.append(value)
    return unknown


def _build(item: dict[str, Any], key: str | None, ctx: ParseContext) -> list[Record]:
    if key is None:
        raise FieldProblem(MISSING_FIELD, "id", "id is missing")
    raw_gpu = require(item, "gpu")
    if not isinstance(raw_gpu, str):
        raise FieldProblem(MISSING_FIELD, "gpu", "gpu is not text")
    # "GeForce RTX 3090, ...": the card is named before the first comma, details after it.
    card, *details = raw_gpu.split(",")
    count, name = split_gpu_count(card.strip())
    vram = _memory_part(details) if count in (None, 1) else None
    identity = identify_gpu(name, field="gpu", vram_gb=vram)
    price = to_price(item.get("unit_price"), "unit_price")
    stock, unread = _stock(item.get("status"))
    return [
        gpu_offer(
            ctx,
            offer_key=key,
            raw=item,
            gpu=identity,
            raw_gpu_name=raw_gpu,
            gpu_count=count or 1,
            stock=stock,
            price=price,
            currency=CURRENCY,
            price_basis=PriceBasis.INSTANCE,
            url=ENDPOINT_URL,
        ),
        *set_aside(ctx, unread, offer_key=key, item=item),
    ]


def _stock(status: Any) -> tuple[Availability, FieldProblem | None]:
    """The stock a status says; a status we cannot read (null, not text, a word we do not
    know) is `unknown`, with the reason returned to be set aside beside the offer."""
    stock = _availability(status)
    if stock.status is not StockStatus.UNKNOWN:
        return stock, None
    if status is None:
        detail = "status is null"  # not a value the SDK documents
    elif isinstance(status, str):
        detail = f"status {status!r}"
    else:
        detail = f"status not a status word ({status!r:.40})"
    return stock, FieldProblem(INVALID_VALUE, "status", f"{detail}: stock unknown")


def _availability(status: Any) -> Availability:
    if not isinstance(status, str):
        return UNKNOWN
    value = status.strip().lower()
    if value == IDLE_STATUS:
        return availability_from_flag(True)
    if value in TAKEN_STATUSES:
        return availability_from_flag(False)
    return UNKNOWN


def _memory_part(details: list[str]) -> int | None:
    """The VRAM in GB that the parts after the card name give, or None when none does."""
    sizes = {int(m.group(1)) for part in details if (m := MEMORY_PART.match(part.strip()))}
    if len(sizes) > 1:
        shown = ", ".join(f"{size} GB" for size in sorted(sizes))
        raise FieldProblem(INVALID_VALUE, "gpu", f"gpu gives several memory sizes ({shown})")
    return sizes.pop() if sizes else None
