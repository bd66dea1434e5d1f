"""UCloud 优刻得 UHost (signed UCloud API): GPU machine types with their sale state and prices.

Two actions (UCloud's API docs, UCloudDoc-Team/api `uhost-api/*.md`), each a signed POST
(see `spiders.parsers.ucloud`):

* `DescribeAvailableInstanceTypes` (Region): `AvailableInstanceTypes[]` with `Zone`,
  `Name`, `Status` (Normal 可售, Beta 公测, Soldout 售罄, Hidden 隐藏), `MachineClass`
  ("GPU" / "Normal"), `ParentType`, `GraphicsMemory.Value` (GB per card),
  `MachineSizes[{Gpu, Collection[{Cpu, Memory[]}]}]`, `Disks[{Name, BootDisk[], DataDisk[]}]`.
* `GetUHostInstancePrice` (Zone, MachineType, GpuType, GPU, CPU, Memory, Count, ChargeType,
  Disks.N.*): `PriceSet[{ChargeType, Price, OriginalPrice, ListPrice}]`, in CNY (元) per
  ChargeType unit for the whole configuration asked (machine and its system disk).

Our offer is the smallest machine of one GPU type in one zone: `Dynamic` (按小时, prepaid
hour by hour) is the headline price, `Month` a commitment plan. UHost tells no free-card
count: the stock is the type's Status alone (Normal/Beta in stock without a count, Soldout
sold out; a Status nobody documented is quarantined and the offer's stock is unknown).

Our readings (the docs' examples hold placeholder values only): a GPU type's `Name` is the
GPU type as `GetUHostInstancePrice` takes it in `GpuType` ("T4", "A100", "4090") and its
`ParentType` the machine type (`MachineType` "G"); `Collection.Memory` is in MB, as the
price action's `Memory`.

Response contracts (rule of truth 9): an instance type lost `Zone`, `Name`, `MachineClass`
or `Status`, a price entry lost `ChargeType` or `Price`: drift, never read as a state.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gpurent_core.billing_facts import platform_fees
from gpurent_core.model import BillingUnit, PriceBasis, PriceKind, PricePlan, SkipKind
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
from spiders.parsers.ucloud import ParamValue, envelope_problem

CURRENCY = "CNY"
PRICE_PAGE_URL = "https://www.ucloud.cn/site/active/gpu.html"
DEFAULT_REGION = "cn-bj2"
"""北京二, UCloud's largest region with GPU types; other regions can be passed to the spider."""

DYNAMIC = "Dynamic"
CHARGE_UNITS: dict[str, BillingUnit] = {DYNAMIC: BillingUnit.HOUR, "Month": BillingUnit.MONTH}
"""The ChargeTypes we price, in the order we ask for them (Dynamic first: the headline)."""
PLAN_CHARGE_TYPES = ("Month",)

# Documented Status values; Hidden types are not on sale (skipped: not offered).
RENTABLE_BY_STATUS: dict[str, bool] = {"Normal": True, "Beta": True, "Soldout": False}
HIDDEN = "Hidden"
GPU_CLASS = "GPU"
DEFAULT_MACHINE_TYPE = "G"
"""UHost's GPU machine type (uhost_type.md: MachineType = G, GpuType = ...)."""

TYPES_CONTRACT = Contract(
    "instance type", identity=("Zone", "Name", "MachineClass"), stock=("Status",)
)
PRICE_CONTRACT = Contract("price entry", identity=("ChargeType",), price=("Price",))
CONTRACTS: tuple[Contract, ...] = (TYPES_CONTRACT, PRICE_CONTRACT)


BOOT_DISK_GB = 20
"""System disk we price with: the default 20 GB a Linux image needs (it must be bought)."""
DEFAULT_CPU = 4
DEFAULT_MEMORY_MB = 8192
"""The price action's documented defaults, used when a type lists no CPU/memory size."""

# The optional cloud data disk, from the billing facts (billing_facts.toml in this folder).
PLATFORM_FEES = platform_fees("ucloud")


# -- requests ------------------------------------------------------------------


@dataclass(frozen=True)
class GpuListing:
    """One GPU type on sale in one zone, as the instance-types answer lists it."""

    zone: str
    gpu_type: str
    machine_type: str
    status: str
    vram_gb: int | None
    gpu_count: int
    """Cards in the smallest machine of this type (what we price)."""
    cpu: int
    memory_mb: int
    boot_disk_type: str

    @property
    def offer_key(self) -> str:
        return f"{self.zone}/{self.gpu_type}"


def instance_types_params(region: str) -> dict[str, ParamValue]:
    return {"Action": "DescribeAvailableInstanceTypes", "Region": region}


def price_params(listing: GpuListing, region: str, charge_type: str) -> dict[str, ParamValue]:
    """Price of the smallest machine of the listing, with its system disk, one machine."""
    return {
        "Action": "GetUHostInstancePrice",
        "Region": region,
        "Zone": listing.zone,
        "MachineType": listing.machine_type,
        "GpuType": listing.gpu_type,
        "GPU": listing.gpu_count,
        "CPU": listing.cpu,
        "Memory": listing.memory_mb,
        "Count": 1,
        "ChargeType": charge_type,
        # The docs spell the boolean "True" / "False" (Disks.N.IsBoot is typed string).
        "Disks.0.IsBoot": "True",
        "Disks.0.Type": listing.boot_disk_type,
        "Disks.0.Size": BOOT_DISK_GB,
    }


# -- DescribeAvailableInstanceTypes ---------------------------------------------


TypesPage = ucloud.TypesPage
"""The instance types answer (its `listings`: `GpuListing`s)."""


def parse_instance_types(data: Any, ctx: ParseContext) -> ucloud.TypesPage[GpuListing]:
    return ucloud.read_instance_types(data, ctx, TYPES_CONTRACT, _listing)


def _listing(item: dict[str, Any], page: ucloud.TypesPage[GpuListing]) -> GpuListing | None:
    """The listing of a GPU type on sale; None for a spot type (with a note). A type that is
    no public GPU offer raises `Skip` (counted by kind in the run report)."""
    zone = ucloud.text_field(item, "Zone")
    name = ucloud.text_field(item, "Name")
    machine_class = ucloud.text_field(item, "MachineClass")
    status = ucloud.text_field(item, "Status")
    if machine_class != GPU_CLASS:
        raise Skip(SkipKind.NOT_A_GPU_OFFER, f"MachineClass {machine_class!r}: no GPU")
    if status == HIDDEN:
        raise Skip(SkipKind.NOT_OFFERED, "Status Hidden: not on sale to the public")
    if item.get("InstanceType") == "spot":
        # The price action has no spot ChargeType we read (Preemptive is undocumented in
        # its answer): a plan we cannot price, not an offer we are blind to.
        page.notes.append(f"{zone}/{name}: spot instance type, no spot price read: skipped")
        return None
    vram_gb = ucloud.graphics_memory_gb(item)
    identify_gpu(name, field="Name", vram_gb=vram_gb)  # unknown cards: quarantined now
    gpu_count, cpu, memory_mb = _smallest_size(item)
    parent = item.get("ParentType")
    machine_type = parent.strip() if isinstance(parent, str) and parent.strip() else None
    return GpuListing(
        zone=zone,
        gpu_type=name,
        machine_type=machine_type or DEFAULT_MACHINE_TYPE,
        status=status,
        vram_gb=vram_gb,
        gpu_count=gpu_count,
        cpu=cpu,
        memory_mb=memory_mb,
        boot_disk_type=ucloud.boot_disk_type(item),
    )


def _smallest_size(item: dict[str, Any]) -> tuple[int, int, int]:
    """(GPUs, CPU cores, memory MB) of the smallest machine: the fewest cards, then the
    fewest cores and least memory listed for that card count."""
    sizes = [s for s in ucloud.side_list(item.get("MachineSizes")) if isinstance(s, dict)]
    with_gpu = [(to_int(s.get("Gpu"), "MachineSizes"), s) for s in sizes if s.get("Gpu")]
    usable = [(count, size) for count, size in with_gpu if count >= 1]
    if not usable:
        raise FieldProblem(INVALID_VALUE, "MachineSizes", "no machine size with a GPU")
    gpu_count, size = min(usable, key=lambda pair: pair[0])
    shapes: list[tuple[int, int]] = []
    for collection in ucloud.side_list(size.get("Collection")):
        if not isinstance(collection, dict) or collection.get("Cpu") is None:
            continue
        cpu = to_int(collection["Cpu"], "MachineSizes")
        memories = [to_int(m, "MachineSizes") for m in ucloud.side_list(collection.get("Memory"))]
        if cpu >= 1 and memories and min(memories) >= 1:
            shapes.append((cpu, min(memories)))
    if not shapes:
        return gpu_count, DEFAULT_CPU, DEFAULT_MEMORY_MB
    cpu, memory_mb = min(shapes)
    return gpu_count, cpu, memory_mb


# -- GetUHostInstancePrice ---------------------------------------------------------


@dataclass(frozen=True)
class PriceQuote:
    """One PriceSet entry: CNY per ChargeType unit for the whole configuration."""

    charge_type: str
    price: Decimal
    original_price: Decimal | None = None
    """OriginalPrice: the price before a limited-time discount; None when not told."""


@dataclass
class QuotePage(ApiPage):
    quote: PriceQuote | None = None
    problem: FieldProblem | None = None
    """The answer is a price page but its price cannot be trusted."""


def parse_price_answer(data: Any, charge_type: str) -> QuotePage:
    unanswered = envelope_problem(data)
    if unanswered is not None:
        return QuotePage.unanswered(unanswered)
    entries = data.get("PriceSet")
    if not isinstance(entries, list):
        return QuotePage(layout_error="no 'PriceSet' list in a RetCode 0 answer")
    page = QuotePage()
    apply_check(page, check_items(entries, PRICE_CONTRACT))
    mine = [e for e in entries if isinstance(e, dict) and e.get("ChargeType") == charge_type]
    if len(mine) != 1:
        page.problem = FieldProblem(
            PRICE_UNPARSED, "PriceSet", f"{len(mine)} PriceSet entries for ChargeType {charge_type}"
        )
        return page
    entry = mine[0]
    gone = PRICE_CONTRACT.gone(entry)
    try:
        if gone:
            raise FieldProblem(MISSING_FIELD, gone[0], f"key gone: {', '.join(gone)}")
        page.quote = PriceQuote(
            charge_type=charge_type,
            price=to_price(entry["Price"], "Price"),
            original_price=_original_price(entry),
        )
    except FieldProblem as problem:
        page.problem = problem
    return page


def _original_price(entry: Mapping[str, Any]) -> Decimal | None:
    # A side field: absent, null or unreadable, the quote stands without it.
    try:
        return (
            None
            if entry.get("OriginalPrice") is None
            else to_price(entry["OriginalPrice"], "OriginalPrice")
        )
    except FieldProblem:
        return None


# -- the offer ---------------------------------------------------------------------


def offer_records(
    ctx: ParseContext, listing: GpuListing, quotes: Mapping[str, PriceQuote | FieldProblem]
) -> PageResult:
    """The offer of one listing from its quotes (Dynamic required)."""
    key = listing.offer_key
    raw = _raw(listing, quotes)
    result = PageResult()
    hourly = quotes.get(DYNAMIC)
    if not isinstance(hourly, PriceQuote):
        problem = hourly or FieldProblem(MISSING_FIELD, "PriceSet", "no Dynamic price")
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
    plans: list[PricePlan] = []
    for charge_type in PLAN_CHARGE_TYPES:
        quote = quotes.get(charge_type)
        if isinstance(quote, FieldProblem):
            result.records.append(_quarantine(ctx, quote.reason, quote.field, raw, key))
        elif quote is not None:
            plans.append(
                price_plan(
                    quote.price,
                    CURRENCY,
                    PriceBasis.INSTANCE,
                    PriceKind.COMMITMENT,
                    CHARGE_UNITS[charge_type],
                )
            )
    if hourly.original_price is not None and hourly.original_price > hourly.price:
        result.notes.append(
            f"{key}: hourly price read during a limited-time discount "
            f"(OriginalPrice {hourly.original_price})"
        )
    offer = gpu_offer(
        ctx,
        offer_key=key,
        raw=raw,
        gpu=identity,
        raw_gpu_name=listing.gpu_type,
        gpu_count=listing.gpu_count,
        stock=availability_from_flag(rentable),
        price=hourly.price,
        currency=CURRENCY,
        # The price action prices the whole configuration: GPUs, CPU, memory, system disk.
        price_basis=PriceBasis.INSTANCE,
        region=listing.zone,
        url=PRICE_PAGE_URL,
        fees=PLATFORM_FEES,
        plans=plans,
    )
    result.records.insert(0, offer)
    return result


def _raw(listing: GpuListing, quotes: Mapping[str, PriceQuote | FieldProblem]) -> dict[str, Any]:
    shown: dict[str, Any] = {
        charge_type: quote.price if isinstance(quote, PriceQuote) else quote.reason
        for charge_type, quote in quotes.items()
    }
    return {
        "Zone": listing.zone,
        "Name": listing.gpu_type,
        "MachineType": listing.machine_type,
        "Status": listing.status,
        "GraphicsMemory": listing.vram_gb,
        "GPU": listing.gpu_count,
        "CPU": listing.cpu,
        "Memory": listing.memory_mb,
        "SystemDisk": f"{BOOT_DISK_GB} GB {listing.boot_disk_type}",
        "PriceSet": shown,
    }


def _quarantine(
    ctx: ParseContext, reason: str, field: str | None, raw: Any, key: str | None
) -> Record:
    return make_quarantine(ctx, reason=reason, field=field, raw=raw, offer_key=key)
