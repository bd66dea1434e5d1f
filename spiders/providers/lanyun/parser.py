"""蓝耘 Lanyun container market: regions (`GET /api/d/region/list`) and, per region, the hosts
(`POST /api/d/dev/list` -> `{code, total, data: [...]}`).

Field meanings (a public reverse-engineered reference of cloud.lanyun.net's API, the agent
skill "browser-cloud-lanyun" `api-reference.md`, v2 of 2026-05-21; see recordings/PROVENANCE):

* envelope `code: 200` is success; 400/500/80000/801321 are errors with a `message`.
* `data[]`, one host each: `id` (the host, `hostDevId` when ordering), `showCode`,
  `gpuName` ("RTX 4090 6152"), `unuseGpuNum` (free cards), `price` (fen per hour, 230 is
  ¥2.30, for `gpuNum` cards: gpurent asks `gpuNum: 1`, so per card), `enableBuy` (can be
  bought), `gpuMemory` (VRAM GB), `dockerMemorySize` (RAM GB per card) and
  `hostDevCudaVersion`.

Our reading (assumptions, each said in PROVENANCE):

* A number after the card name ("RTX 4090 6152", "RTX 4090 6230") is the host's CPU model
  (Xeon Gold 6152 / 6230), not part of the card: `CPU_SUFFIX` drops it before the GPU
  normaliser reads the name; `gpuMemory` settles the card's size.
* Stock: `enableBuy: false` is sold out whatever the count; else `unuseGpuNum` free cards
  (0: sold out). A null count or flag says nothing: `unknown`, the reason set aside.
* `dataDiskPrice` (fen per GB per day for data disk past the free 50 GB,
  `freeDataDiskSize` of the price preview) is an assumed name: the reference lists no fee
  field of the host list. A side field: a bad value is set aside, the offer stands without it.
* A host whose `gpuNum`/`gpuName` says no GPU ("无卡", CPU only) is skipped (counted).

Offer key: `<regionId>/<id>`, so a region whose request fails leaves only its own offers
unread (`region_prefix`).

Contract (`HOST`): `id` and `gpuName` (identity), `price` (price), `unuseGpuNum` and
`enableBuy` (stock). A key gone from one host quarantines it; gone from every host is a
layout error (never sold out).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from gpurent_core.host import cuda_version
from gpurent_core.model import AddonFee, BillingUnit, FeeType, PriceBasis, SkipKind
from gpurent_core.normalize.availability import Availability, availability_from_counts
from spiders.parsers.common import (
    INVALID_VALUE,
    FieldProblem,
    ParseContext,
    Record,
    Skip,
    counted_stock,
    gpu_offer,
    id_text,
    identify_gpu,
    measure,
    minor_units,
    optional_int,
    require,
    set_aside,
)
from spiders.parsers.contract import Contract, apply_check, check_items, contracted
from spiders.parsers.envelope import ApiPage, code_envelope, listing_size
from spiders.parsers.fees import per_gb_fee

CURRENCY = "CNY"
FEN = 100  # price 230 is ¥2.30
MARKET_URL = "https://cloud.lanyun.net/#/market"
OK_CODE = 200
AUTH_CODES = (401, 403)  # assumed: the reference lists no token error code
# The free data disk every host includes (the price preview's freeDataDiskSize): Lanyun's own
# figure, which happens to equal gpurent's default storage; it is not that default.
FREE_DATA_DISK_GB = Decimal("50")
# "RTX 4090 6152": the trailing number is the host CPU's model, not the card's.
CPU_SUFFIX = re.compile(r"\s+\d{4}[A-Za-z]?$")
# Names of a host without a card (our assumption of how a CPU-only host is written).
NO_GPU_NAMES = frozenset({"无卡", "cpu", "无gpu"})

HOST = Contract(
    "host",
    identity=("id", "gpuName"),
    price=("price",),
    stock=("unuseGpuNum", "enableBuy"),
)
REGION = Contract("region", identity=("id", "name"))
CONTRACTS: tuple[Contract, ...] = (HOST, REGION)


def region_prefix(region_id: str) -> str:
    """The start of every offer key of a region."""
    return f"{region_id}/"


def dev_list_body(*, region_id: int, page: int, page_size: int) -> dict[str, Any]:
    """The request form of the host list: every card type (`gpuId: null`), one card per
    rental (prices per card), pay as you go (`chargeMode: 1`); all keys must be there."""
    return {
        "chargeMode": 1,
        "regionId": region_id,
        "gpuId": None,
        "gpuNum": 1,
        "pageNum": page,
        "pageSize": page_size,
    }


@dataclass
class RegionsPage(ApiPage):
    """The region list: (id, name) pairs; no offers."""

    regions: list[tuple[int, str]] = field(default_factory=list)


@dataclass
class HostsPage(ApiPage):
    """A page of a region's host list."""

    total: int | None = None


def parse_regions(data: Any, ctx: ParseContext) -> RegionsPage:
    problem = code_envelope(
        data, code_key="code", ok=OK_CODE, message_key="message", auth_codes=AUTH_CODES
    )
    if problem is not None:
        return RegionsPage.unanswered(problem)
    items = data.get("data")
    if not isinstance(items, list):
        return RegionsPage(layout_error="no 'data' list in a code 200 region answer")
    page = RegionsPage()
    for item in items:
        if not isinstance(item, dict):
            continue
        region_id, name = item.get("id"), item.get("name")
        if isinstance(region_id, int) and not isinstance(region_id, bool) and isinstance(name, str):
            page.regions.append((region_id, name.strip()))
    apply_check(page, check_items(items, REGION))
    if not page.regions and items:
        page.layout_error = page.layout_error or "no region with an id and a name"
    return page


def parse_hosts(data: Any, ctx: ParseContext, region: tuple[int, str] | None = None) -> HostsPage:
    """A page of hosts of `region` (id, name); the fixtures parse without one (region 0)."""
    problem = code_envelope(
        data, code_key="code", ok=OK_CODE, message_key="message", auth_codes=AUTH_CODES
    )
    if problem is not None:
        return HostsPage.unanswered(problem)
    hosts = data.get("data")
    if not isinstance(hosts, list):
        return HostsPage(layout_error="no 'data' list in a code 200 host answer")
    page = HostsPage(total=listing_size(data.get("total"), least=0))
    region_id, region_name = region or (0, None)
    for host in hosts:
        page.records.extend(host_records(host, ctx, region_id=region_id, region_name=region_name))
    apply_check(page, check_items(hosts, HOST))
    return page


def host_records(
    host: Any, ctx: ParseContext, *, region_id: int = 0, region_name: str | None = None
) -> list[Record]:
    def key(item: Any) -> str | None:
        host_id = id_text(item.get("id"))
        return None if host_id is None else f"{region_prefix(str(region_id))}{host_id}"

    return contracted(
        ctx,
        host,
        HOST,
        offer_key=key,
        build=lambda: _build(host, key(host), region_name, ctx),
    )


def _build(
    host: dict[str, Any], key: str | None, region: str | None, ctx: ParseContext
) -> list[Record]:
    if key is None:
        raise FieldProblem(INVALID_VALUE, "id", "id is not an id")
    raw_name = require(host, "gpuName")
    if not isinstance(raw_name, str):
        raise FieldProblem(INVALID_VALUE, "gpuName", f"gpuName is not text: {raw_name!r}"[:120])
    if raw_name.strip().casefold() in NO_GPU_NAMES:
        raise Skip(SkipKind.NOT_A_GPU_OFFER, f"gpuName {raw_name!r}: a host without a card")
    card = CPU_SUFFIX.sub("", raw_name.strip())
    vram = optional_int(host, "gpuMemory")
    identity = identify_gpu(card, field="gpuName", vram_gb=vram or None)
    price = minor_units(require(host, "price"), FEN, "price")
    stock, stock_problem = counted_stock("unuseGpuNum", lambda: _availability(host))
    fees, fee_problem = _fees(host.get("dataDiskPrice"))
    return [
        gpu_offer(
            ctx,
            offer_key=key,
            raw=host,
            gpu=identity,
            raw_gpu_name=raw_name,
            gpu_count=1,
            stock=stock,
            price=price,
            currency=CURRENCY,
            price_basis=PriceBasis.GPU,
            region=region,
            url=MARKET_URL,
            fees=fees,
            host={
                "cuda_version": cuda_version(host.get("hostDevCudaVersion")),
                "ram_gb_per_gpu": measure(host.get("dockerMemorySize"), 1),
            },
        ),
        *set_aside(ctx, stock_problem, offer_key=key, item=host),
        *set_aside(ctx, fee_problem, offer_key=key, item=host),
    ]


def _availability(host: dict[str, Any]) -> Availability:
    """`enableBuy: false` is sold out; else the free-card count. A null flag or count is
    `unknown` (raised as a problem, set aside by `counted_stock`)."""
    enable = host.get("enableBuy")
    if enable is None or not isinstance(enable, bool):
        raise FieldProblem(INVALID_VALUE, "enableBuy", f"enableBuy is {enable!r}: stock unknown")
    free = optional_int(host, "unuseGpuNum")
    if free is None:
        raise FieldProblem(INVALID_VALUE, "unuseGpuNum", "unuseGpuNum is null: stock unknown")
    if not enable:
        return availability_from_counts(0)
    return availability_from_counts(free)


def _fees(value: Any) -> tuple[tuple[AddonFee, ...], FieldProblem | None]:
    """The data-disk fee past the free 50 GB, fen per GB per day; absent or null: none."""
    if value is None:
        return (), None
    try:
        amount = minor_units(value, FEN, "dataDiskPrice")
        fee = per_gb_fee(
            amount,
            CURRENCY,
            BillingUnit.DAY,
            mandatory=False,
            note="data disk past the free 50 GB",
            fee_type=FeeType.DATA_DISK,
            included_gb=FREE_DATA_DISK_GB,
        )
    except FieldProblem as problem:
        return (), problem
    return (fee,), None
