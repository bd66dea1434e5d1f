"""Prime Intellect availability (`GET /api/v1/availability/` -> `{<GPU type>: [offer, ...]}`).

The shape is Prime Intellect's documented one (recordings/PROVENANCE: docs.primeintellect.ai
api-reference/check-gpu-availability and provision-gpu, the OpenAPI schema of
api.primeintellect.ai, the public prime CLI): an object keyed by GPU type ("H100_80GB"), each a
list of offers with `cloudId`, `gpuType`, `socket`, `provider` (the underlying cloud),
`dataCenter`, `country`, `gpuCount`, `disk`/`vcpu`/`memory` ({minCount, defaultCount, maxCount,
pricePerUnit, step, defaultIncludedInPrice, additionalInfo}), `stockStatus`, `security`,
`prices` ({onDemand, communityPrice, isVariable, currency}), `isSpot`, `prepaidTime`.

Our reading of an offer:

* identity: the underlying `provider`, `dataCenter` ("-" when null), `cloudId`, `gpuCount` and
  `security` (the same machine type may be sold in both clouds, at different prices), with
  "/spot" when `isSpot` is true: "runpod/US-TX-3/NVIDIA H100 80GB HBM3/8/secure_cloud". Never
  the stock: the key is the same in stock, low or sold out (rule of truth 11).
* card: `gpuType`, Prime Intellect's GPU-type token, with the `socket` ("PCIe", "SXM5") when it
  is one the schema lists: the socket gives the card's form factor and the `interconnect`
  host attribute (PCIe, or SXM modules). `gpuMemory` is not read: the schema says per GPU, a
  client's notes say the whole box, and the GPU type already names the card's memory.
* price: `prices.communityPrice` when not null, else `prices.onDemand` (the public CLI's
  reading; the schema: onDemand for secure_cloud, communityPrice for community_cloud), in
  `prices.currency` (USD or EUR), per hour for the whole configuration of `gpuCount` cards
  (basis instance). Both null: no public price (skipped, counted). A price of 0 is no price
  we rank: the offer is quarantined rather than ranked free.
* kind: `isSpot` true is a spot price; a `prepaidTime` of hours (charged up front whatever the
  use, the hourly rate after) is a commitment; else on demand.
* stock: `stockStatus`, the schema's words: "Available", "High", "Medium" (in stock), "Low"
  (low), "Unavailable" (sold out), read by `parse_availability`. Another word, or no word at
  all, is `unknown`, with the value set aside on its own quarantine line (rule of truth 1).
* hosting: `security` secure_cloud is Prime Intellect's vetted data-center capacity (secure),
  community_cloud community hosts (community), as RunPod's two clouds are read.
* host: `vcpu`, `memory` and `disk` `defaultCount` (vCPUs, GB, GB of the configuration) per
  card; `dataCenter` (else `country`) is the region.
* fee: `disk.pricePerUnit`, per GB per hour: mandatory for the default size unless
  `defaultIncludedInPrice`, which makes it a fee past that size. A bad value is set aside and
  the offer stands.
* skipped: the CPU_NODE type (no GPU), cards the catalog leaves out on purpose.

The answer as a whole:

* an empty answer (`{}`, or GPU types whose lists are all empty) is **unreadable, never "every
  offer gone"**: Prime Intellect's API is known to answer an empty 200 from a flaky replica,
  so the page carries an `api_error` (a failed request: every offer keeps its last state,
  stale) rather than an empty listing that would close them all (rules of truth 2, 10);
* `{"detail": ...}` (FastAPI's error body) and `{"errors": [{param, details}]}` (the schema's
  ErrorResponse) are API errors;
* an answer that is no object, or holds no list at all, is a layout change; keys beside the
  GPU-type lists that hold no list are noted and not read.

Contract (`OFFER`): identity `cloudId`, `gpuType`, `provider`, `dataCenter`, `gpuCount`,
`security`; price `prices.onDemand|prices.communityPrice`; stock `stockStatus`. A key gone from
one offer quarantines it; gone from every offer is a layout error (never "sold out").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gpurent_core.enums import Hosting, Interconnect
from gpurent_core.model import AddonFee, BillingUnit, PriceBasis, PriceKind, SkipKind
from gpurent_core.normalize.availability import UNKNOWN, Availability, parse_availability
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    PRICE_UNPARSED,
    FieldProblem,
    ParseContext,
    Record,
    Skip,
    gpu_offer,
    hourly_price,
    id_text,
    identify_gpu,
    measure,
    require,
    set_aside,
    to_price,
)
from spiders.parsers.contract import Contract, apply_check, check_items, contracted
from spiders.parsers.envelope import ApiPage, answer_keys, message_of
from spiders.parsers.fees import per_gb_fee

SITE_URL = "https://app.primeintellect.ai/"
STOCK_KEY = "stockStatus"
OFFER = Contract(
    "offer",
    identity=("cloudId", "gpuType", "provider", "dataCenter", "gpuCount", "security"),
    price=("prices.onDemand|prices.communityPrice",),
    stock=(STOCK_KEY,),
)
CONTRACTS: tuple[Contract, ...] = (OFFER,)

# The schema's StockStatus enum ("Available", "Low", "Medium", "High", "Unavailable"), casefolded:
# the only words read as a stock statement.
STOCK_WORDS = frozenset(("available", "low", "medium", "high", "unavailable"))
# The schema's GPUSocket enum: what the card is plugged into.
SOCKETS: dict[str, Interconnect] = {
    "PCIe": Interconnect.PCIE,
    **{f"SXM{n}": Interconnect.SXM for n in range(2, 7)},
}
HOSTING: dict[str, Hosting] = {
    "secure_cloud": Hosting.SECURE,
    "community_cloud": Hosting.COMMUNITY,
}
# Prime Intellect's GPU-type tokens the catalog does not read as written: the name of the card.
GPU_TYPE_NAMES = {"RTX_PRO_6000B_96GB": "RTX PRO 6000 Blackwell 96GB"}
# Configurations of 1 to 256 GPUs (the schema's description); a larger count is a bad value.
MAX_GPU_COUNT = 256
# Community price first: the public CLI's reading of `prices` (an offer carries the one its
# cloud sets; the other is null).
PRICE_FIELDS = ("communityPrice", "onDemand")
EMPTY_ANSWER = (
    "empty answer: no offer under any GPU type (Prime Intellect answers an empty 200 from a "
    "flaky replica: unread, never read as every offer gone)"
)


@dataclass
class AvailabilityPage(ApiPage):
    """The availability answer; an error body or an empty answer is an API error."""

    listed: int = 0
    """Offers the answer holds, across its GPU types (the spider pages on it)."""


def parse_gpu_availability(data: Any, ctx: ParseContext) -> AvailabilityPage:
    if not isinstance(data, dict):
        return AvailabilityPage(
            layout_error=f"answer is no object keyed by GPU type (got {answer_keys(data)})"
        )
    error = _error_answer(data)
    if error is not None:
        return AvailabilityPage(api_error=error)
    lists = {key: value for key, value in data.items() if isinstance(value, list)}
    if data and not lists:
        return AvailabilityPage(
            layout_error=f"no GPU-type list in the answer (got {answer_keys(data)})"
        )
    items = [item for offers in lists.values() for item in offers]
    if not items:
        return AvailabilityPage(api_error=EMPTY_ANSWER)
    page = AvailabilityPage(listed=len(items))
    others = sorted(str(key) for key in data if key not in lists)
    if others:
        page.notes.append(f"keys holding no offer list, not read: {', '.join(others[:8])}")
    for item in items:
        page.records.extend(offer_records(item, ctx))
    apply_check(page, check_items(items, OFFER))
    return page


def _error_answer(data: dict[str, Any]) -> str | None:
    """The message of an error body: the schema's ErrorResponse or FastAPI's `detail`."""
    errors = data.get("errors")
    if isinstance(errors, list):
        first = errors[0] if errors and isinstance(errors[0], dict) else {}
        where = message_of(first, "param")
        return f"errors: {where + ': ' if where else ''}{message_of(first, 'details')}"
    if "detail" in data:
        return f"detail: {message_of(data, 'detail')}"
    return None


def offer_key(item: Any) -> str | None:
    """Underlying provider, data center, cloud id, card count, cloud (and spot): never the
    stock. None when the provider, the cloud id or a whole card count is missing."""
    if not isinstance(item, Mapping):
        return None
    provider, cloud_id = id_text(item.get("provider")), id_text(item.get("cloudId"))
    count = _count_text(item.get("gpuCount"))
    if provider is None or cloud_id is None or count is None:
        return None
    data_center = id_text(item.get("dataCenter")) or "-"
    security = id_text(item.get("security")) or "-"
    key = f"{provider}/{data_center}/{cloud_id}/{count}/{security}"
    return f"{key}/spot" if item.get("isSpot") is True else key


def _count_text(value: Any) -> str | None:
    """A card count as the key writes it: a whole number, or its digits written as text (an
    offer whose count is text is still that offer, quarantined under its key)."""
    text = id_text(value)
    return text if text is not None and text.isdigit() else None


def offer_records(item: Any, ctx: ParseContext) -> list[Record]:
    return contracted(ctx, item, OFFER, offer_key=offer_key, build=lambda: _build(item, ctx))


def _build(item: dict[str, Any], ctx: ParseContext) -> list[Record]:
    gpu_type = require(item, "gpuType")
    if not isinstance(gpu_type, str):
        raise FieldProblem(INVALID_VALUE, "gpuType", "gpuType is not text")
    identity = identify_gpu(_card_name(gpu_type, item.get("socket")), field="gpuType")
    key = offer_key(item)
    if key is None:
        raise FieldProblem(
            MISSING_FIELD, "cloudId", "no identity: provider, cloudId and gpuCount needed"
        )
    count = item["gpuCount"]
    if not isinstance(count, int):
        raise FieldProblem(INVALID_VALUE, "gpuCount", f"gpuCount is no whole number: {count!r}")
    if not 1 <= count <= MAX_GPU_COUNT:
        raise FieldProblem(INVALID_VALUE, "gpuCount", f"gpuCount is no card count: {count}")
    prices = item.get("prices")
    if not isinstance(prices, Mapping):
        raise FieldProblem(INVALID_VALUE, "prices", "prices is not an object")
    price = _price(prices)
    currency = _currency(prices)
    stock, problem = _stock(item.get(STOCK_KEY))
    side: list[Record] = set_aside(ctx, problem, offer_key=key, item=item)
    fees = _disk_fee(item.get("disk"), currency, key, ctx, side)
    record = gpu_offer(
        ctx,
        offer_key=key,
        raw=item,
        gpu=identity,
        raw_gpu_name=gpu_type,
        gpu_count=count,
        stock=stock,
        price=price,
        currency=currency,
        price_basis=PriceBasis.INSTANCE,  # the whole configuration's hourly price
        price_kind=_price_kind(item),
        region=id_text(item.get("dataCenter")) or id_text(item.get("country")),
        url=SITE_URL,
        fees=fees,
        host=_host(item, count),
    )
    return [record, *side]


def _card_name(gpu_type: str, socket: Any) -> str:
    """The GPU type as the catalog reads it, with its socket when the schema lists it."""
    name = GPU_TYPE_NAMES.get(gpu_type.strip(), gpu_type)
    return f"{name} {socket}" if isinstance(socket, str) and socket in SOCKETS else name


def _price(prices: Mapping[str, Any]) -> Decimal:
    for name in PRICE_FIELDS:
        if prices.get(name) is None:
            continue
        price = hourly_price(prices[name], f"prices.{name}")
        if price == 0:
            raise FieldProblem(PRICE_UNPARSED, f"prices.{name}", f"prices.{name} is 0: no price")
        return price
    raise Skip(SkipKind.NO_PUBLIC_PRICE, "prices.onDemand and prices.communityPrice are null")


def _currency(prices: Mapping[str, Any]) -> str:
    currency = prices.get("currency")
    if isinstance(currency, str) and re.fullmatch(r"[A-Z]{3}", currency):
        return currency
    raise FieldProblem(
        INVALID_VALUE, "prices.currency", f"prices.currency is no currency: {str(currency)[:20]!r}"
    )


def _price_kind(item: Mapping[str, Any]) -> PriceKind:
    if item.get("isSpot") is True:
        return PriceKind.SPOT
    prepaid = item.get("prepaidTime")
    if isinstance(prepaid, int | Decimal) and not isinstance(prepaid, bool) and prepaid > 0:
        return PriceKind.COMMITMENT  # hours charged up front, whatever the use
    return PriceKind.ON_DEMAND


def _stock(value: Any) -> tuple[Availability, FieldProblem | None]:
    """The offer's stock, and the problem to set aside when its word is not the schema's."""
    if isinstance(value, str) and value.strip().casefold() in STOCK_WORDS:
        return parse_availability(value), None
    why = f"stockStatus is not a word Prime Intellect uses: {repr(value)[:40]}"
    return UNKNOWN, FieldProblem(INVALID_VALUE, STOCK_KEY, why)


def _host(item: Mapping[str, Any], count: int) -> dict[str, Any]:
    """What the offer says of its host, each None where it does not say it."""
    socket, security = item.get("socket"), item.get("security")
    return {
        "interconnect": SOCKETS.get(socket) if isinstance(socket, str) else None,
        "hosting": HOSTING.get(security) if isinstance(security, str) else None,
        "vcpus_per_gpu": measure(_default_count(item.get("vcpu")), 2, per=count),
        "ram_gb_per_gpu": measure(_default_count(item.get("memory")), 1, per=count),
        "disk_gb_per_gpu": measure(_default_count(item.get("disk")), 1, per=count),
    }


def _default_count(spec: Any) -> Any:
    return spec.get("defaultCount") if isinstance(spec, Mapping) else None


def _disk_fee(
    disk: Any, currency: str, key: str, ctx: ParseContext, side: list[Record]
) -> tuple[AddonFee, ...]:
    """`disk.pricePerUnit` per GB per hour; absent, null or 0: no fee."""
    if not isinstance(disk, Mapping) or disk.get("pricePerUnit") is None:
        return ()
    try:
        amount = to_price(disk["pricePerUnit"], "disk.pricePerUnit")
        included = disk.get("defaultIncludedInPrice") is True
        size = measure(disk.get("defaultCount"), 0) if included else None
        fee = per_gb_fee(
            amount,
            currency,
            BillingUnit.HOUR,
            mandatory=not included,
            note="disk per GB per hour" + (", past the default size" if included else ""),
            included_gb=size,
        )
    except FieldProblem as problem:
        shown = {"disk.pricePerUnit": disk.get("pricePerUnit")}
        side.extend(set_aside(ctx, problem, offer_key=key, item=shown))
        return ()
    return (fee,) if amount else ()
