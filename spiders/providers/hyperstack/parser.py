"""Hyperstack (NexGen Cloud) flavors joined with the price book.

Two answers (Hyperstack's Infrahub API; skypilot's `fetch_hyperstack.py` for the join):

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
`member` plan, the spot rate a `spot` plan. A flavor whose `stock_available` key is gone is
drift (quarantined by `FLAVOR_CONTRACT`, never read as sold out); a null or non-boolean flag
is unknown stock with a quarantine line saying why. A group whose `gpu` is "" holds CPU-only
flavors (no GPU offer: skipped, counted by kind); a null or non-text group `gpu` quarantines
its flavors. A flavor's own `gpu` repeats its group's, so a flavor without the key reads the
group's (no drift: the contract asks only what cannot be had another way). A group whose
flavor list cannot be read declares its region's offers unread (`<region>/`, kept stale), or
every offer when it names no region: which flavors it held is unknown.
vCPUs, RAM and the flavor's own disks are part of the flavor price (the price book lists them at 0; a non-zero rate becomes a mandatory fee);
persistent volumes are an optional per-GB fee.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from gpurent_core.billing_facts import platform_fees
from gpurent_core.model import (
    AddonFee,
    BillingUnit,
    FeeType,
    PriceBasis,
    PriceKind,
    PricePlan,
    SkipKind,
)
from gpurent_core.normalize.availability import availability_from_flag
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    NOT_AN_OFFER,
    PRICE_UNPARSED,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    gpu_offer,
    identify_gpu,
    make_quarantine,
    make_skip,
    measure,
    not_an_object,
    price_plan,
    require,
    set_aside,
    to_decimal,
    to_int,
    to_price,
)
from spiders.parsers.contract import (
    Contract,
    apply_check,
    check_items,
    contracted,
    drift_quarantine,
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
# What every flavor must carry (its price comes from the price book, joined on `gpu`, which
# the flavor's group names too: the flavor's own copy is not required).
FLAVOR_CONTRACT = Contract("flavor", identity=("name", "gpu_count"), stock=("stock_available",))
# A group names its GPU (none: CPU-only flavors) and lists its flavors.
GROUP_CONTRACT = Contract("flavor group", identity=("gpu", "flavors"))
PRICEBOOK_CONTRACT = Contract("price book entry", identity=("name",), price=("value",))
CONTRACTS: tuple[Contract, ...] = (GROUP_CONTRACT, FLAVOR_CONTRACT, PRICEBOOK_CONTRACT)


@dataclass(frozen=True)
class BookPrice:
    """One price book entry: the list price and, when lower, what this account pays."""

    list_price: Decimal
    account_price: Decimal | None = None


@dataclass
class PricebookPage(PageResult):
    """The price book (no records of its own: its prices price the flavors)."""

    prices: dict[str, BookPrice] = field(default_factory=dict)
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
    if not data:
        page.layout_error = "price book is empty"
    else:
        apply_check(page, check_items(data, PRICEBOOK_CONTRACT))
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
    if not any(isinstance(group, dict) for group in groups):
        # Empty, or a list of something else: an answer without a single flavor group is a
        # changed layout (Hyperstack always lists its flavors), never "nothing for rent".
        return FlavorsPage(layout_error=f"no flavor group in 'data' ({len(groups)} entries)")
    page = FlavorsPage()
    flavors: list[Any] = []
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("flavors"), list):
            page.records.append(_unlisted_group(ctx, group, page))
            continue
        if "gpu" not in group:
            # The group's GPU key gone is drift, not a CPU-only group: its flavors are held.
            page.records.extend(
                drift_quarantine(ctx, f, ["gpu"], offer_key=_flavor_key(f, group))
                for f in group["flavors"]
            )
            continue
        gpu = group["gpu"]
        if not isinstance(gpu, str):
            # Only "" says CPU-only (as recorded); a null or garbled name is not that signal.
            page.records.extend(
                _group_quarantine(ctx, f, group, f"group gpu is not a name: {gpu!r}")
                for f in group["flavors"]
            )
            continue
        if not gpu.strip():
            # CPU-only flavors: not GPU rentals (skipped, counted). A flavor naming a GPU in
            # such a group contradicts it: held back with why, never skipped unaccounted.
            page.records.extend(
                record for flavor in group["flavors"] for record in _cpu_only(ctx, flavor, group)
            )
            continue
        for flavor in group["flavors"]:
            flavors.append(flavor)
            page.records.extend(flavor_records(flavor, group, prices, ctx))
    apply_check(page, check_items(groups, GROUP_CONTRACT))
    apply_check(page, check_items(flavors, FLAVOR_CONTRACT))
    for volume in VOLUME_PRICES:
        if flavors and volume not in prices:
            # An optional fee: the offers stand without it, and the run says what is unknown.
            page.notes.append(f"price book has no {volume!r} rate: volume fee unknown")
    return page


def _unlisted_group(ctx: ParseContext, group: Any, page: FlavorsPage) -> Record:
    """The line of a group whose flavors cannot be read. A `flavors` that is there but is not
    a list cannot even be counted, so the page says so too (its other groups stand; the run
    is partial and those offers stay as they were, stale)."""
    if not isinstance(group, dict):
        reason = f"{NOT_AN_OFFER}: flavor group is not an object"
    elif "flavors" not in group:
        reason = f"{MISSING_FIELD}: key gone: flavors"
    else:
        reason = f"{INVALID_VALUE}: flavors is not a list"
        garbled = f"flavor group {str(group.get('gpu'))[:40]!r}: flavors is not a list"
        page.layout_error = page.layout_error or garbled
    if isinstance(group, dict):
        # The group's offers are unknown: keep its region's (or, unnamed, every) offers stale.
        region = _text(group.get("region_name"))
        page.unread_prefixes.append(f"{region}/" if region else "")
    raw = group if isinstance(group, dict) else str(group)
    return make_quarantine(ctx, reason=reason, field="flavors", raw=raw, offer_key=None)


def _cpu_only(ctx: ParseContext, flavor: Any, group: dict[str, Any]) -> list[Record]:
    """The skip of a CPU-only flavor of a CPU-only group (its own `gpu` "" or left to the
    group's); else the line that holds it back: not an object, or a GPU named in it."""
    if not isinstance(flavor, dict):
        return not_an_object(ctx, flavor)
    named = flavor.get("gpu", "")
    if isinstance(named, str) and not named.strip():
        key = _flavor_key(flavor, group)
        return [make_skip(ctx, SkipKind.NOT_A_GPU_OFFER, "CPU-only flavor", offer_key=key)]
    detail = f"flavor gpu {named!r} in a CPU-only group"
    return [_group_quarantine(ctx, flavor, group, detail)]


def _group_quarantine(ctx: ParseContext, flavor: Any, group: dict[str, Any], detail: str) -> Record:
    """The line of one flavor held back by its group (keyed like its offer when it can be)."""
    raw = flavor if isinstance(flavor, dict) else str(flavor)
    return make_quarantine(
        ctx,
        reason=f"{INVALID_VALUE}: {detail}",
        field="gpu",
        raw=raw,
        offer_key=_flavor_key(flavor, group),
    )


def _flavor_key(flavor: Any, group: dict[str, Any]) -> str | None:
    """`<region>/<flavor name>`, the offer key (None when either is missing)."""
    if not isinstance(flavor, dict):
        return None
    region = _text(flavor.get("region_name")) or _text(group.get("region_name"))
    name = _text(flavor.get("name"))
    return f"{region}/{name}" if region and name else None


def flavor_records(
    flavor: Any, group: dict[str, Any], prices: dict[str, BookPrice], ctx: ParseContext
) -> list[Record]:
    region, key = None, _flavor_key(flavor, group)
    if isinstance(flavor, dict):
        region = _text(flavor.get("region_name")) or _text(group.get("region_name"))
    return contracted(
        ctx,
        flavor,
        FLAVOR_CONTRACT,
        offer_key=key,
        build=lambda: _build(flavor, group, key, region, prices, ctx),
    )


def _build(
    flavor: dict[str, Any],
    group: dict[str, Any],
    key: str | None,
    region: str | None,
    prices: dict[str, BookPrice],
    ctx: ParseContext,
) -> list[Record]:
    if key is None:
        raise FieldProblem(MISSING_FIELD, "name", "flavor name or region_name missing")
    # The flavor's own `gpu`, else its group's (the same name, one level up).
    raw_name = str(require(flavor if "gpu" in flavor else group, "gpu")).strip()
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
    problem = None
    if not isinstance(flag, bool):
        # Null or not a yes/no: unknown stock, with a line saying why (never a state).
        problem = FieldProblem(
            INVALID_VALUE, "stock_available", f"stock_available is not a flag: {flag!r}"
        )
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
            host=_host(flavor, count),
        ),
        *set_aside(ctx, problem, offer_key=key, item=flavor),
    ]


def _host(flavor: dict[str, Any], count: int) -> dict[str, Any]:
    """A flavor's `cpu`, `ram` (GB) and root `disk` (GB) are the whole VM's: per card,
    divided by its GPUs. The `ephemeral` local disk is scratch space lost on stop, not
    counted."""
    return {
        "vcpus_per_gpu": measure(flavor.get("cpu"), 2, per=count),
        "ram_gb_per_gpu": measure(flavor.get("ram"), 1, per=count),
        "disk_gb_per_gpu": measure(flavor.get("disk"), 1, per=count),
    }


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
