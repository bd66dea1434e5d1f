"""Hyperstack (NexGen Cloud) flavors joined with the price book.

Two answers (PROVIDERS.md B9; skypilot's `fetch_hyperstack.py` for the join):

* `GET /v1/pricebook`: a list of `{id, name, value, original_value, discount_applied,
  start_time, end_time}`; `name` is a flavor's `gpu` name ("A100-80G-PCIe") with `value`
  the USD per GPU per hour as a decimal string, or `<gpu>-spot` for the spot rate, or a
  component ("vCPU", "RAM", "hypervisor-local-storage", a volume type such as "Cloud-SSD").
  `original_value` is the list price; `value` is what this account pays (lower when
  `discount_applied`).
* `GET /v1/core/flavors`: `{status, message, data: [{gpu, region_name, flavors: [{id,
  name, region_name, cpu, ram, disk, ephemeral, gpu, gpu_count, stock_available}]}]}`.

Our offer is one flavor in one region (`n3-A100x2` in CANADA-1): `gpu_count` cards at the
per-GPU list price (basis `gpu`), in stock when `stock_available`. An account discount is a
`member` plan, the spot rate a `spot` plan. vCPUs, RAM and the flavor's own disks are part of
the flavor price (the price book lists them at 0; a non-zero rate becomes a mandatory fee);
persistent volumes are an optional per-GB fee.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from gpurent.billing_facts import platform_fees
from gpurent.model import AddonFee, BillingUnit, FeeType, PriceBasis, PriceKind, PricePlan
from gpurent.normalize.availability import availability_from_flag
from spiders.parsers.common import (
    MISSING_FIELD,
    PRICE_UNPARSED,
    FieldProblem,
    ParseContext,
    Record,
    gpu_offer,
    guarded,
    identify_gpu,
    keys_missing_everywhere,
    make_quarantine,
    not_an_object,
    price_plan,
    renamed_fields,
    require,
    to_decimal,
    to_int,
    to_price,
)
from spiders.parsers.envelope import ApiPage, answer_keys
from spiders.parsers.fees import per_gb_fee, vm_part_fee

CURRENCY = "USD"
CONSOLE_URL = "https://console.hyperstack.cloud/"
SPOT_SUFFIX = "-spot"
VCPU_PRICE = "vCPU"
RAM_PRICE = "RAM"
# Volume types priced per GB per hour in the price book.
VOLUME_PRICES = ("Cloud-SSD",)
# Keys every flavor carries (the stock flag included: without it all stock is unknown).
CORE_KEYS = ("name", "gpu", "gpu_count", "stock_available")


@dataclass(frozen=True)
class BookPrice:
    """One price book entry: the list price and, when lower, what this account pays."""

    list_price: Decimal
    account_price: Decimal | None = None


@dataclass
class PricebookPage:
    prices: dict[str, BookPrice] = field(default_factory=dict)
    layout_error: str | None = None
    api_error: str | None = None
    problems: list[str] = field(default_factory=list)
    """Entries that could not be read (named, so a missing price can be traced)."""


class FlavorsPage(ApiPage):
    """The flavors of every region (`"status": false` is an API error)."""


def parse_pricebook(data: Any) -> PricebookPage:
    if isinstance(data, dict) and data.get("status") is False:
        return PricebookPage(api_error=_message(data))
    if not isinstance(data, list):
        return PricebookPage(layout_error=f"price book is not a list (got {answer_keys(data)})")
    page = PricebookPage()
    for entry in data:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            page.problems.append(f"entry without a name: {str(entry)[:60]}")
            continue
        name = entry["name"].strip()
        try:
            page.prices[name] = _book_price(entry)
        except FieldProblem as problem:
            page.problems.append(f"{name}: {problem.detail}")
    missing = keys_missing_everywhere(data, ("name", "value"))
    if not data:
        page.layout_error = "price book is empty"
    elif missing:
        page.layout_error = f"no price book entry carries {', '.join(missing)}"
    return page


def _book_price(entry: dict[str, Any]) -> BookPrice:
    value = to_price(entry.get("value"), "value")
    original = entry.get("original_value")
    if original is None:
        return BookPrice(value)
    listed = to_price(original, "original_value")
    return BookPrice(listed, value if value < listed else None)


def parse_flavors(data: Any, prices: dict[str, BookPrice], ctx: ParseContext) -> FlavorsPage:
    if isinstance(data, dict) and data.get("status") is False:
        return FlavorsPage(api_error=_message(data))
    groups = data.get("data") if isinstance(data, dict) else None
    if not isinstance(groups, list):
        keys = answer_keys(data)
        return FlavorsPage(layout_error=f"no 'data' list of flavor groups (got {keys})")
    page = FlavorsPage()
    flavors: list[Any] = []
    cpu_only = 0
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("flavors"), list):
            page.records.append(
                make_quarantine(
                    ctx, reason=f"{MISSING_FIELD}: flavor group without a flavors list",
                    field="flavors", raw=group if isinstance(group, dict) else str(group),
                    offer_key=None,
                )
            )  # fmt: skip
            continue
        if not str(group.get("gpu") or "").strip():
            cpu_only += len(group["flavors"])  # CPU-only flavors: not GPU rentals
            continue
        for flavor in group["flavors"]:
            flavors.append(flavor)
            page.records.extend(flavor_records(flavor, group, prices, ctx))
    page.layout_error = renamed_fields(flavors, CORE_KEYS, "flavor")
    if cpu_only:
        page.notes.append(f"skipped {cpu_only} CPU-only flavors")
    return page


def flavor_records(
    flavor: Any, group: dict[str, Any], prices: dict[str, BookPrice], ctx: ParseContext
) -> list[Record]:
    if not isinstance(flavor, dict):
        return not_an_object(ctx, flavor)
    region = _text(flavor.get("region_name")) or _text(group.get("region_name"))
    name = _text(flavor.get("name"))
    key = f"{region}/{name}" if region and name else None
    return guarded(
        ctx, offer_key=key, raw=flavor, build=lambda: _build(flavor, key, region, prices, ctx)
    )


def _build(
    flavor: dict[str, Any],
    key: str | None,
    region: str | None,
    prices: dict[str, BookPrice],
    ctx: ParseContext,
) -> list[Record]:
    if key is None:
        raise FieldProblem(MISSING_FIELD, "name", "flavor name or region_name missing")
    raw_name = str(require(flavor, "gpu")).strip()
    identity = identify_gpu(raw_name, field="gpu")
    count = to_int(require(flavor, "gpu_count"), "gpu_count")
    book = prices.get(raw_name)
    if book is None:
        raise FieldProblem(PRICE_UNPARSED, "gpu", f"no price book entry for {raw_name!r}")
    plans: list[PricePlan] = []
    if book.account_price is not None:
        plans.append(price_plan(book.account_price, CURRENCY, PriceBasis.GPU, PriceKind.MEMBER))
    spot = prices.get(raw_name + SPOT_SUFFIX)
    if spot is not None:
        spot_price = spot.account_price or spot.list_price
        plans.append(price_plan(spot_price, CURRENCY, PriceBasis.GPU, PriceKind.SPOT))
    flag = flavor.get("stock_available")
    return [
        gpu_offer(
            ctx,
            offer_key=key,
            raw=flavor,
            gpu=identity,
            raw_gpu_name=raw_name,
            gpu_count=count,
            stock=availability_from_flag(flag if isinstance(flag, bool) else None),
            price=book.list_price,
            currency=CURRENCY,
            price_basis=PriceBasis.GPU,
            region=region,
            url=CONSOLE_URL,
            fees=_fees(flavor, prices),
            plans=plans,
        )
    ]


def _fees(flavor: dict[str, Any], prices: dict[str, BookPrice]) -> tuple[AddonFee, ...]:
    # Platform-wide fees (the optional public IP) from the billing facts, then the price
    # book's per-flavor parts and volumes.
    fees: list[AddonFee] = list(platform_fees("hyperstack"))
    components = ((VCPU_PRICE, FeeType.VCPU, "cpu"), (RAM_PRICE, FeeType.MEMORY, "ram"))
    for book_name, part, size_key in components:
        book = prices.get(book_name)
        if book is None or book.list_price == 0:
            continue  # part of the flavor price
        fees.append(
            vm_part_fee(
                part,
                book.list_price,
                CURRENCY,
                quantity=to_decimal(require(flavor, size_key), size_key),
                note=f"price book {book_name!r}, for the flavor's {size_key}",
            )
        )
    for volume in VOLUME_PRICES:
        book = prices.get(volume)
        if book is None:
            continue
        fees.append(
            per_gb_fee(
                book.list_price,
                CURRENCY,
                BillingUnit.HOUR,
                mandatory=False,
                while_stopped=True,
                note=f"persistent {volume} volume per GB (optional; the flavor's disks included)",
            )
        )
    return tuple(fees)


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _message(data: dict[str, Any]) -> str:
    return str(data.get("message") or data.get("error_reason") or "status false")[:80]
