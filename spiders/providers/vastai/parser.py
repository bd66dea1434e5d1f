"""Vast.ai search results (`POST /api/v0/bundles/` -> `{"offers": [...]}`) to records.

Field meanings (Vast.ai's public search API; gpuhunt's Vast.ai provider for the money
fields):

* `dph_base`: USD per hour for the machine as offered (all `num_gpus` cards), without
  storage: our price, basis `instance`. `dph_total` adds the storage of the disk asked
  for in the search and is absent from one real capture, so it is never required.
* `min_bid`: the interruptible (spot) price per hour for the same bundle.
* `storage_cost`: USD per GB per month of disk, billed while the instance is stopped too.
* `internet_up_cost_per_tb` / `internet_down_cost_per_tb` (USD/TB, newer) or
  `inet_up_cost` / `inet_down_cost` (USD/GB): traffic out of / into the instance.
* `rentable` / `rented`: on the market / taken. `gpu_ram`: MB per card (the VRAM hint).
  A real capture lists sold-out offers with `rentable: false` and no `rented` key, so
  `rented` is needed only where `rentable` is true: there it alone tells a taken machine
  from a free one, and its loss is drift (`RENTABLE_CONTRACT`), never "not rented".

Host attributes (`_host`; each left out where the offer does not carry it, never required):

* `cuda_max_good`: the highest CUDA version the host's driver runs (12.4 -> "12.4");
  `driver_version`: the driver, as written.
* `bw_nvlink`: measured NVLink bandwidth, GB/s: above 0 it states NVLink (rounded to whole
  GB/s: a measurement, re-taken between polls); else the card's form factor says.
* `reliability2`: Vast.ai's host reliability score, 0..1 (to 0.1%: it drifts in the fourth
  place between polls, which would make every poll a new version).
* `hosting_type` 1: a data-center host ("secure cloud"); else `verification` "verified" is
  a verified host, any other value (unverified, deverified) community.
* `cpu_cores_effective` (the bundle's vCPUs), `cpu_ram` (the machine's MB, of which the
  bundle gets `gpu_frac`), `disk_space` (GB the bundle may allocate): per card of
  `num_gpus`.
* `duration`: seconds until the host's offer ends (`end_date`), the longest rental: in
  whole days' hours, rounded down (it shrinks every second).

Contracts (`CONTRACTS`): every offer carries its id, card, card count, VRAM hint, price and
`rentable`; a rentable one carries `rented` too. A key gone quarantines that offer; gone
from every offer it is the page's layout error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gpurent_core.enums import Hosting, Interconnect
from gpurent_core.host import cuda_version
from gpurent_core.model import (
    AddonFee,
    BillingUnit,
    FeeBasis,
    FeeType,
    PriceBasis,
    PriceKind,
    PricePlan,
)
from gpurent_core.normalize.availability import UNKNOWN, Availability, availability_from_flag
from spiders.parsers.common import (
    INVALID_VALUE,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    gpu_offer,
    hourly_price,
    identify_gpu,
    kept_price,
    measure,
    optional_int,
    price_plan,
    require,
    set_aside,
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
from spiders.parsers.envelope import list_at, no_list
from spiders.parsers.fees import per_gb_fee

CURRENCY = "USD"
# A console link that opens the offer (the form public tools use; not a documented URL).
OFFER_URL = "https://cloud.vast.ai/create/?offer_id={id}"
# What every offer carries (the stock flag included: its loss would quietly turn the whole
# market "unknown").
OFFER_CONTRACT = Contract(
    "offer",
    identity=("id", "gpu_name", "num_gpus", "gpu_ram"),
    price=("dph_base",),
    stock=("rentable",),
)
# What a rentable offer carries besides: `rented` (a taken machine stays `rentable: true`).
RENTABLE_CONTRACT = Contract("rentable offer", stock=("rented",))
CONTRACTS: tuple[Contract, ...] = (OFFER_CONTRACT, RENTABLE_CONTRACT)
# More cards than any one machine holds: a broken count, not a bundle.
MAX_GPUS = 256


@dataclass
class BundlesPage(PageResult):
    count: int = 0
    """Offers in the page's list (quarantined ones included)."""
    last_id: int | None = None
    """Highest offer id on the page: the keyset cursor for the next page."""


def search_body(*, limit: int, after_id: int) -> dict[str, Any]:
    """One page of the keyset search: offers with id > after_id, ascending, `limit` at most.

    No rentable/rented filter: sold-out offers are part of what we track.
    """
    return {
        "type": "on-demand",
        "id": {"gt": after_id},
        "order": [["id", "asc"]],
        "limit": limit,
    }


def parse_bundles(data: Any, ctx: ParseContext) -> BundlesPage:
    offers = list_at(data, "offers")
    if offers is None:
        return BundlesPage(layout_error=no_list(data, "offers"))
    page = BundlesPage(count=len(offers))
    ids = [o["id"] for o in offers if isinstance(o, dict) and _is_int(o.get("id"))]
    page.last_id = max(ids) if ids else None
    for offer in offers:
        page.records.extend(offer_records(offer, ctx))
    apply_check(page, check_items(offers, OFFER_CONTRACT))
    apply_check(page, check_items([o for o in offers if _says_rentable(o)], RENTABLE_CONTRACT))
    return page


def offer_key(offer: Mapping[str, Any]) -> str | None:
    return str(offer["id"]) if _is_int(offer.get("id")) else None


def offer_records(offer: Any, ctx: ParseContext) -> list[Record]:
    if _says_rentable(offer):
        gone = RENTABLE_CONTRACT.gone(offer)
        if gone:
            return [drift_quarantine(ctx, offer, gone, offer_key=offer_key(offer))]
    return contracted(
        ctx, offer, OFFER_CONTRACT, offer_key=offer_key, build=lambda: _build(offer, ctx)
    )


def _says_rentable(offer: Any) -> bool:
    return isinstance(offer, Mapping) and offer.get("rentable") is True


def _build(offer: dict[str, Any], ctx: ParseContext) -> list[Record]:
    offer_id = to_int(require(offer, "id"), "id")
    raw_name = require(offer, "gpu_name")
    vram_mb = optional_int(offer, "gpu_ram")
    identity = identify_gpu(raw_name, vram_mb=vram_mb)
    count = to_int(require(offer, "num_gpus"), "num_gpus")
    if not 1 <= count <= MAX_GPUS:
        raise FieldProblem(INVALID_VALUE, "num_gpus", f"num_gpus is no card count: {count}")
    price = _price(offer)
    availability, problem = _availability(offer, count)
    side: list[Record] = set_aside(ctx, problem, offer_key=str(offer_id), item=offer)
    plans = _spot_plan(offer, ctx, side)
    fees = (*_storage_fee(offer), *_traffic_fees(offer, ctx, side))
    record = gpu_offer(
        ctx,
        offer_key=str(offer_id),
        raw=offer,
        gpu=identity,
        raw_gpu_name=raw_name,
        gpu_count=count,
        stock=availability,
        price=price,
        currency=CURRENCY,
        price_basis=PriceBasis.INSTANCE,
        region=_region(offer.get("geolocation")),
        url=OFFER_URL.format(id=offer_id),
        fees=fees,
        plans=plans,
        host=_host(offer, count),
    )
    return [record, *side]


def _host(offer: dict[str, Any], count: int) -> dict[str, Any]:
    """What the offer says of its host (module docstring), each None where it does not."""
    driver = offer.get("driver_version")
    nvlink = measure(offer.get("bw_nvlink"), 0)
    seconds = measure(offer.get("duration"), 0)
    if offer.get("hosting_type") == 1:
        hosting: Hosting | None = Hosting.SECURE
    elif isinstance(offer.get("verification"), str):
        verified = offer["verification"].strip().casefold() == "verified"
        hosting = Hosting.VERIFIED if verified else Hosting.COMMUNITY
    else:
        hosting = None
    frac = measure(offer.get("gpu_frac"), 6)
    machine_ram_gb = measure(offer.get("cpu_ram"), 4, per=1000) if frac and frac <= 1 else None
    return {
        "cuda_version": cuda_version(offer.get("cuda_max_good")),
        "driver_version": driver.strip() or None if isinstance(driver, str) else None,
        "interconnect": Interconnect.NVLINK if nvlink else None,
        "nvlink_gbps": nvlink or None,
        "host_reliability": _score(measure(offer.get("reliability2"), 3)),
        "hosting": hosting,
        "max_rental_hours": int(seconds // 86400) * 24 if seconds is not None else None,
        "vcpus_per_gpu": measure(offer.get("cpu_cores_effective"), 2, per=count),
        "ram_gb_per_gpu": (
            measure(machine_ram_gb * frac, 1, per=count)
            if machine_ram_gb is not None and frac is not None
            else None
        ),
        "disk_gb_per_gpu": measure(offer.get("disk_space"), 1, per=count),
    }


def _score(value: Decimal | None) -> Decimal | None:
    return value if value is not None and value <= 1 else None


def _price(offer: dict[str, Any]) -> Decimal:
    return hourly_price(offer.get("dph_base"), "dph_base")


def _availability(offer: dict[str, Any], count: int) -> tuple[Availability, FieldProblem | None]:
    """Stock from `rentable` and `rented`, and the problem to set aside when a flag is not
    a yes/no (the offer stands, its stock `unknown`: rule of truth 1).

    The contracts hold here: `rentable` is present, and `rented` too when `rentable` is true
    (a sold-out offer may come without `rented`, `_says_rentable`).
    """
    rentable = offer.get("rentable")
    if not isinstance(rentable, bool):
        return UNKNOWN, _not_a_flag(offer, "rentable")
    if rentable:
        rented = offer.get("rented")
        if not isinstance(rented, bool):
            return UNKNOWN, _not_a_flag(offer, "rented")
        rentable = not rented
    # A rentable bundle is the whole machine: all num_gpus cards are free together.
    return availability_from_flag(rentable, count=count if rentable else None), None


def _not_a_flag(offer: dict[str, Any], key: str) -> FieldProblem:
    return FieldProblem(INVALID_VALUE, key, f"{key} is not true or false: {offer.get(key)!r:.40}")


def _spot_plan(
    offer: dict[str, Any], ctx: ParseContext, side: list[Record]
) -> tuple[PricePlan, ...]:
    # The on-demand offer stands; a bad spot price is set aside on its own line.
    bid = kept_price(ctx, offer, "min_bid", offer_key=str(offer.get("id")), side=side)
    if not bid:  # absent, unreadable or 0
        return ()
    return (price_plan(bid, CURRENCY, PriceBasis.INSTANCE, PriceKind.SPOT),)


def _storage_fee(offer: dict[str, Any]) -> tuple[AddonFee, ...]:
    # Mandatory: every instance has a disk. A bad value quarantines the offer, since its
    # true cost could not be computed.
    if offer.get("storage_cost") is None:
        return ()
    return (
        per_gb_fee(
            to_price(offer["storage_cost"], "storage_cost"),
            CURRENCY,
            BillingUnit.MONTH,
            mandatory=True,
            while_stopped=True,
            note="per GB of the disk size chosen when renting",
        ),
    )


_TRAFFIC = (
    (FeeType.EGRESS, "internet_up_cost_per_tb", "inet_up_cost"),
    (FeeType.INGRESS, "internet_down_cost_per_tb", "inet_down_cost"),
)


def _traffic_fees(offer: dict[str, Any], ctx: ParseContext, side: list[Record]) -> list[AddonFee]:
    fees: list[AddonFee] = []
    for fee_type, per_tb, per_gb in _TRAFFIC:
        # Prefer the per-TB field: it is the published figure (2), the per-GB one is
        # derived from it (0.001953125 = 2/1024).
        key, basis = (
            (per_tb, FeeBasis.TB) if offer.get(per_tb) is not None else (per_gb, FeeBasis.GB)
        )
        amount = kept_price(ctx, offer, key, offer_key=str(offer.get("id")), side=side)
        if amount is None:
            continue
        fees.append(
            AddonFee(
                fee_type=fee_type,
                amount=amount,
                currency=CURRENCY,
                unit=None,
                basis=basis,
                mandatory=False,
            )
        )
    return fees


def _region(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = value.strip().lstrip(",").strip()
    return text or None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
