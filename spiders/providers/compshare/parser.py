"""优云智算 Compshare (UCloud API): GPU types with their on-shelf state, free cards, prices.

Three actions (UCloud's API docs, UCloudDoc-Team/api `ucompshare-api/*.md`), each a signed
POST (see `spiders.parsers.ucloud`):

* `DescribeAvailableCompShareInstanceTypes` (Region): `AvailableInstanceTypes[]` with
  `Zone`, `Name` (the GPU type, as `GpuType` takes it: "4090"), `Status` (Normal, Beta,
  Soldout, Hidden), `InstanceType` ("uhost" or "spot"), `MachineClass` ("GPU"/"Normal"),
  `GraphicsMemory.Value` (GB per card), `MachineSizes[{Gpu, Collection}]`, `Disks[]`.
* `DescribeCompShareGpuInventory` (Region, Zone): `GpuInventoryByZone`, a nested map
  pool (`Exclusive`, `Spot`) -> zone id -> GPU type -> free cards. The map is keyed by a
  numeric zone id that the types answer does not carry, so we ask one zone at a time and
  read the single zone id in the answer.
* `GetCompShareInstancePrice` (Zone, GpuType, Gpu, ChargeType, Disks.N.*):
  `PriceDetail[{ChargeType, Instance, Disks, CompShareImage, OriginalPrice,
  InstanceDiscountType}]`, in CNY per ChargeType unit for the whole machine.

Our offer is the smallest machine of one GPU type in one zone: `Dynamic` (hourly) is the
headline price, `Day` and `Month` are commitment plans. `Disks` and `CompShareImage` are
add-on fees: absent or unreadable, the offer stands with that fee unknown (a note says so).

Response contracts (rule of truth 9): an instance type lost `Zone`, `Name`, `Status` or
`InstanceType` (the last tells a spot type's Status from the on-demand one of the same
card), an inventory answer lost `GpuInventoryByZone`, a price entry lost `ChargeType` or
`Instance`: drift, never read as a state. Reading `Name` as the GPU type
(the same string as the inventory keys and `GpuType`) is our reading of the docs; their
examples carry placeholder values only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypeVar

from gpurent_core.billing_facts import platform_fees
from gpurent_core.model import (
    AddonFee,
    BillingUnit,
    FeeBasis,
    FeeType,
    PriceBasis,
    PriceKind,
    PricePlan,
    SkipKind,
)
from gpurent_core.normalize.availability import availability_from_flag
from spiders.parsers import ucloud
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    PRICE_UNPARSED,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    Skip,
    gpu_offer,
    identify_gpu,
    make_quarantine,
    make_skip,
    price_plan,
    to_int,
    to_price,
)
from spiders.parsers.contract import Contract, apply_check, check_items
from spiders.parsers.envelope import ApiPage
from spiders.parsers.fees import per_instance_fee
from spiders.parsers.ucloud import ParamValue, envelope_problem, type_offer_key

_T = TypeVar("_T")

CURRENCY = "CNY"
PRICE_LIST_URL = "https://www.compshare.cn/price-list"
DEFAULT_REGION = "cn-wlcb"
"""Compshare's GPU region (乌兰察布); other regions can be passed to the spider."""

DYNAMIC = "Dynamic"
CHARGE_UNITS: dict[str, BillingUnit] = {
    DYNAMIC: BillingUnit.HOUR,
    "Day": BillingUnit.DAY,
    "Month": BillingUnit.MONTH,
}
"""The ChargeTypes we price, in the order we ask for them (Dynamic first: the headline)."""
PLAN_CHARGE_TYPES = ("Day", "Month")

# Documented Status values; Hidden types are not on sale (skipped: not offered).
RENTABLE_BY_STATUS: dict[str, bool] = {"Normal": True, "Beta": True, "Soldout": False}
HIDDEN = "Hidden"
EXCLUSIVE_POOL = "Exclusive"

TYPES_CONTRACT = Contract(
    "instance type", identity=("Zone", "Name"), stock=("Status", "InstanceType")
)
INVENTORY_CONTRACT = Contract("inventory answer", stock=("GpuInventoryByZone",))
PRICE_CONTRACT = Contract("price entry", identity=("ChargeType",), price=("Instance",))
CONTRACTS: tuple[Contract, ...] = (TYPES_CONTRACT, INVENTORY_CONTRACT, PRICE_CONTRACT)

MAX_FREE_CARDS = 1_000_000
"""No zone holds a million free cards of one type: a count above is a bad cell (`1e400`),
read as no count rather than as a market in stock."""

BOOT_DISK_GB = 100
"""System disk size we price with: the free cloud-disk allowance, so `Disks` should be 0."""

# The cloud-disk fee beyond the free allowance, from the billing facts
# (billing_facts.toml in this folder); the quoted system-disk and image prices are per offer.
(CLOUD_DISK_FEE,) = platform_fees("compshare")


# -- requests ------------------------------------------------------------------


@dataclass(frozen=True)
class GpuListing:
    """One GPU type on sale in one zone, as the instance-types answer lists it."""

    zone: str
    gpu_type: str
    status: str
    vram_gb: int | None
    gpu_count: int
    """Cards in the smallest machine of this type (what we price)."""
    boot_disk_type: str

    @property
    def offer_key(self) -> str:
        return f"{self.zone}/{self.gpu_type}"


def instance_types_params(region: str) -> dict[str, ParamValue]:
    return {"Action": "DescribeAvailableCompShareInstanceTypes", "Region": region}


def inventory_params(region: str, zone: str) -> dict[str, ParamValue]:
    return {"Action": "DescribeCompShareGpuInventory", "Region": region, "Zone": zone}


def price_params(listing: GpuListing, region: str, charge_type: str) -> dict[str, ParamValue]:
    """Price of the smallest machine: Cpu and Memory are left to the API's defaults
    (16 cores, 32768 MB), the system disk is the free 100 GB."""
    return {
        "Action": "GetCompShareInstancePrice",
        "Region": region,
        "Zone": listing.zone,
        "ChargeType": charge_type,
        "GpuType": listing.gpu_type,
        "Gpu": listing.gpu_count,
        "Disks.0.IsBoot": True,
        "Disks.0.Type": listing.boot_disk_type,
        "Disks.0.Size": BOOT_DISK_GB,
    }


# -- DescribeAvailableCompShareInstanceTypes ------------------------------------


TypesPage = ucloud.TypesPage
"""The instance types answer (its `listings`: `GpuListing`s)."""


def parse_instance_types(data: Any, ctx: ParseContext) -> ucloud.TypesPage[GpuListing]:
    return ucloud.read_instance_types(data, ctx, TYPES_CONTRACT, _listing)


def _listing(item: dict[str, Any], page: ucloud.TypesPage[GpuListing]) -> GpuListing | None:
    """The listing of an instance type on sale; None for a spot type (with a note). A type
    that is no public GPU offer raises `Skip` (counted by kind in the run report)."""
    key = type_offer_key(item)
    zone = ucloud.text_field(item, "Zone")
    name = ucloud.text_field(item, "Name")
    status = ucloud.text_field(item, "Status")
    if status == HIDDEN:
        raise Skip(SkipKind.NOT_OFFERED, "Status Hidden: not on sale to the public")
    if item.get("MachineClass") not in (None, "GPU"):
        detail = f"MachineClass {item.get('MachineClass')!r}: no GPU"
        raise Skip(SkipKind.NOT_A_GPU_OFFER, detail)
    if item.get("InstanceType") == "spot":
        # GetCompShareInstancePrice has no spot ChargeType: nothing to price it with (and
        # the spot type's Status is not the on-demand one's). The cards are those of the
        # on-demand type of the same zone and GPU, an offer we do read: a plan we cannot
        # price, not an offer we are blind to, so a note and no count.
        page.notes.append(f"{key}: spot instance type, no spot price to read: skipped")
        return None
    vram_gb = ucloud.graphics_memory_gb(item)
    identify_gpu(name, field="Name", vram_gb=vram_gb)  # unknown cards: quarantined now
    return GpuListing(
        zone=zone,
        gpu_type=name,
        status=status,
        vram_gb=vram_gb,
        gpu_count=_smallest_gpu_count(item),
        boot_disk_type=ucloud.boot_disk_type(item),
    )


def _smallest_gpu_count(item: dict[str, Any]) -> int:
    sizes = item.get("MachineSizes")
    if not isinstance(sizes, list) or not sizes:
        return 1
    counts = [
        to_int(size.get("Gpu"), "MachineSizes")
        for size in sizes
        if isinstance(size, dict) and size.get("Gpu") is not None
    ]
    usable = [count for count in counts if count >= 1]
    if not usable:
        raise FieldProblem(INVALID_VALUE, "MachineSizes", "no machine size with a GPU")
    return min(usable)


# -- DescribeCompShareGpuInventory ------------------------------------------------


@dataclass
class InventoryPage(ApiPage):
    free: dict[str, int] | None = None
    """GPU type -> free cards of the Exclusive pool in the zone asked; None: unknown."""
    zone_id: str | None = None


def parse_inventory(data: Any, zone: str) -> InventoryPage:
    problem = envelope_problem(data)
    if problem is not None:
        return InventoryPage.unanswered(problem)
    check = check_items([data], INVENTORY_CONTRACT)
    if check.layout_error is not None:
        page = InventoryPage()
        apply_check(page, check)
        return page
    return read_inventory_map(data.get("GpuInventoryByZone"), zone)


def read_inventory_map(by_zone: Any, zone: str) -> InventoryPage:
    """Free cards per GPU type from `GpuInventoryByZone` of an answer for one zone."""
    if isinstance(by_zone, str):
        # Typed "string" in the docs, shown as an object in their example: accept both.
        try:
            by_zone = json.loads(by_zone) if by_zone.strip() else {}
        except ValueError:
            by_zone = None
    if not isinstance(by_zone, dict):
        return InventoryPage(layout_error="no 'GpuInventoryByZone' map in the answer")
    pool = by_zone.get(EXCLUSIVE_POOL)
    if not isinstance(pool, dict) or len(pool) != 1:
        count = len(pool) if isinstance(pool, dict) else 0
        return InventoryPage(
            notes=[f"{zone}: {count} zones in the {EXCLUSIVE_POOL} inventory, free counts unknown"]
        )
    zone_id, counts = next(iter(pool.items()))
    if not isinstance(counts, dict):
        return InventoryPage(layout_error=f"{zone}: inventory of zone {zone_id} is not a map")
    free_by_type: dict[str, int] = {}
    page = InventoryPage(free=free_by_type, zone_id=str(zone_id))
    for gpu_type, raw in counts.items():
        try:
            free = to_int(raw, f"GpuInventoryByZone.{gpu_type}")
        except FieldProblem as problem:
            page.notes.append(f"{zone}/{gpu_type}: {problem.detail}: free count unknown")
            continue
        if free < 0:
            page.notes.append(f"{zone}/{gpu_type}: negative free count {free}: unknown")
            continue
        if free > MAX_FREE_CARDS:
            page.notes.append(f"{zone}/{gpu_type}: free count over {MAX_FREE_CARDS}: unknown")
            continue
        free_by_type[str(gpu_type)] = free
    return page


# -- GetCompShareInstancePrice ------------------------------------------------------


@dataclass(frozen=True)
class PriceQuote:
    """One PriceDetail entry, CNY per ChargeType unit for the whole machine."""

    charge_type: str
    instance: Decimal
    disks: Decimal | None
    """The quoted system-disk price; None: unknown (absent or unreadable)."""
    image: Decimal | None
    """The quoted image price per GPU per hour; None: unknown."""
    discount_type: int | None = None
    """InstanceDiscountType: 1 night discount, 2 holiday discount, None/0 none."""
    set_aside: tuple[FieldProblem, ...] = field(default=(), compare=False)
    """Side fields of the entry that could not be read (a fee, the discount type): the
    quote stands without them, and the offer carries a quarantine line for each."""

    @property
    def unknown_fees(self) -> list[str]:
        """The add-on fees this quote does not tell (absent or unreadable)."""
        return [
            name
            for name, amount in (("Disks", self.disks), ("CompShareImage", self.image))
            if amount is None
        ]


@dataclass
class QuotePage(ApiPage):
    quote: PriceQuote | None = None
    problem: FieldProblem | None = None
    """The answer is a price page but its price cannot be trusted."""


def parse_price_answer(data: Any, charge_type: str) -> QuotePage:
    unanswered = envelope_problem(data)
    if unanswered is not None:
        return QuotePage.unanswered(unanswered)
    details = data.get("PriceDetail")
    if not isinstance(details, list):
        return QuotePage(layout_error="no 'PriceDetail' list in a RetCode 0 answer")
    page = QuotePage()
    apply_check(page, check_items(details, PRICE_CONTRACT))
    entries = [d for d in details if isinstance(d, dict) and d.get("ChargeType") == charge_type]
    if len(entries) != 1:
        page.problem = FieldProblem(
            PRICE_UNPARSED,
            "PriceDetail",
            f"{len(entries)} PriceDetail entries for ChargeType {charge_type}",
        )
        return page
    try:
        page.quote = _quote(entries[0], charge_type)
    except FieldProblem as problem:
        page.problem = problem
    return page


def _quote(entry: Mapping[str, Any], charge_type: str) -> PriceQuote:
    """The quote of one PriceDetail entry: its instance price is required, its fees and
    discount type are side fields (unreadable ones set aside, the quote stands)."""
    gone = PRICE_CONTRACT.gone(entry)
    if gone:
        raise FieldProblem(MISSING_FIELD, gone[0], f"key gone: {', '.join(gone)}")
    instance = to_price(entry["Instance"], "Instance")
    side: list[FieldProblem] = []
    disks = _side(side, lambda: _optional_price(entry, "Disks"))
    image = _side(side, lambda: _optional_price(entry, "CompShareImage"))
    discount = _side(side, lambda: _discount_type(entry))
    return PriceQuote(
        charge_type=charge_type,
        instance=instance,
        disks=disks,
        image=image,
        discount_type=discount,
        set_aside=tuple(side),
    )


def _optional_price(entry: Mapping[str, Any], key: str) -> Decimal | None:
    # Absent or null: the answer does not tell this fee (never read as free).
    return None if entry.get(key) is None else to_price(entry[key], key)


def _discount_type(entry: Mapping[str, Any]) -> int | None:
    value = entry.get("InstanceDiscountType")
    return None if value is None else to_int(value, "InstanceDiscountType")


def _side(side: list[FieldProblem], read: Callable[[], _T | None]) -> _T | None:
    """A side field read by `read`; its problem is kept in `side` and the field is None."""
    try:
        return read()
    except FieldProblem as problem:
        side.append(problem)
        return None


# -- the offer ---------------------------------------------------------------------

DISCOUNTS = {1: "night discount", 2: "holiday discount"}


def offer_records(
    ctx: ParseContext,
    listing: GpuListing,
    free: int | None,
    quotes: Mapping[str, PriceQuote | FieldProblem],
) -> PageResult:
    """The offer of one listing from its free count and its quotes (Dynamic required)."""
    key = listing.offer_key
    raw = _raw(listing, free, quotes)
    result = PageResult()
    hourly = quotes.get(DYNAMIC)
    if not isinstance(hourly, PriceQuote):
        problem = hourly or FieldProblem(MISSING_FIELD, "PriceDetail", "no Dynamic price")
        result.records.append(_quarantine(ctx, problem.reason, problem.field, raw, key))
        return result
    try:
        identity = identify_gpu(listing.gpu_type, field="Name", vram_gb=listing.vram_gb)
    except Skip as skip:  # listed types were identified already; kept for a direct call
        result.records.append(make_skip(ctx, skip.kind, skip.detail, offer_key=key))
        return result
    except FieldProblem as problem:
        result.records.append(_quarantine(ctx, problem.reason, problem.field, raw, key))
        return result
    rentable = RENTABLE_BY_STATUS.get(listing.status)
    if rentable is None:
        detail = f"Status {listing.status!r} is not one of Normal, Beta, Soldout, Hidden"
        result.records.append(
            _quarantine(
                ctx, f"{INVALID_VALUE}: {detail}", "Status", {"Status": listing.status}, key
            )
        )
    availability = availability_from_flag(rentable, free)
    for aside in hourly.set_aside:
        result.records.append(_quarantine(ctx, aside.reason, aside.field, raw, key))
    if hourly.unknown_fees:
        result.notes.append(
            f"{key}: {', '.join(hourly.unknown_fees)} not quoted (Dynamic): that fee unknown"
        )
    plans: list[PricePlan] = []
    for charge_type in PLAN_CHARGE_TYPES:
        quote = quotes.get(charge_type)
        if isinstance(quote, FieldProblem):
            result.records.append(_quarantine(ctx, quote.reason, quote.field, raw, key))
        elif quote is not None:
            unit = CHARGE_UNITS[charge_type]
            plans.append(
                price_plan(
                    quote.instance, CURRENCY, PriceBasis.INSTANCE, PriceKind.COMMITMENT, unit
                )
            )
    if hourly.discount_type in DISCOUNTS:
        result.notes.append(
            f"{key}: hourly price read during a {DISCOUNTS[hourly.discount_type]} "
            f"(InstanceDiscountType {hourly.discount_type})"
        )
    offer = gpu_offer(
        ctx,
        offer_key=key,
        raw=raw,
        gpu=identity,
        raw_gpu_name=listing.gpu_type,
        gpu_count=listing.gpu_count,
        stock=availability,
        price=hourly.instance,
        currency=CURRENCY,
        # Compshare quotes the whole machine (the price action takes GPU, CPU and RAM).
        price_basis=PriceBasis.INSTANCE,
        region=listing.zone,
        url=PRICE_LIST_URL,
        fees=_fees(listing, hourly),
        plans=plans,
    )
    result.records.insert(0, offer)
    return result


def _fees(listing: GpuListing, hourly: PriceQuote) -> tuple[AddonFee, ...]:
    fees = [CLOUD_DISK_FEE]
    if hourly.disks is not None and hourly.disks > 0:
        fees.append(
            per_instance_fee(
                FeeType.SYSTEM_DISK,
                hourly.disks,
                CURRENCY,
                BillingUnit.HOUR,
                mandatory=True,
                note=f"{BOOT_DISK_GB} GB {listing.boot_disk_type} system disk, as quoted (Dynamic)",
            )
        )
    if hourly.image is not None and hourly.image > 0:
        fees.append(
            AddonFee(
                fee_type=FeeType.IMAGE,
                amount=hourly.image,
                currency=CURRENCY,
                unit=BillingUnit.HOUR,
                basis=FeeBasis.GPU,
                mandatory=False,
                note="CompShareImage: image price per GPU per hour, as quoted (Dynamic)",
            )
        )
    return tuple(fees)


def _raw(
    listing: GpuListing, free: int | None, quotes: Mapping[str, PriceQuote | FieldProblem]
) -> dict[str, Any]:
    shown: dict[str, Any] = {}
    for charge_type, quote in quotes.items():
        if isinstance(quote, PriceQuote):
            shown[charge_type] = {
                "Instance": quote.instance,
                "Disks": quote.disks,
                "CompShareImage": quote.image,
            }
        else:
            shown[charge_type] = quote.reason
    return {
        "Zone": listing.zone,
        "Name": listing.gpu_type,
        "Status": listing.status,
        "GraphicsMemory": listing.vram_gb,
        "Gpu": listing.gpu_count,
        "free": free,
        "PriceDetail": shown,
    }


def _quarantine(
    ctx: ParseContext, reason: str, field: str | None, raw: Any, key: str | None
) -> Record:
    return make_quarantine(ctx, reason=reason, field=field, raw=raw, offer_key=key)
