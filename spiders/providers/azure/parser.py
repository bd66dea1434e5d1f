"""Azure Retail Prices (`GET /api/retail/prices` -> `{BillingCurrency, CustomerEntityId,
CustomerEntityType, Items, NextPageLink, Count}`), the Virtual Machines meters of GPU sizes.

The shape is Microsoft's documented one (learn.microsoft.com/rest/api/cost-management/
retail-prices/azure-retail-prices, read 2026-12-04; recordings/PROVENANCE): each item of
`Items` is one price meter, with `currencyCode`, `retailPrice` (the price without discount),
`unitPrice`, `unitOfMeasure` ("1 Hour"), `armRegionName` ("eastus"), `location` ("US East"),
`meterName` ("NC24ads A100 v4", "... Spot", "... Low Priority"), `productName` ("Virtual
Machines ... Series", "... Series Windows"), `skuName`, `armSkuName` (the VM size,
"Standard_NC24ads_A100_v4"), `serviceName`, `type` (Consumption, Reservation or
DevTestConsumption), `isPrimaryMeterRegion` and `effectiveStartDate`. `NextPageLink` is the
URL of the next page; null (or absent) on the last.

Our reading of an item:

* Only a Linux pay-as-you-go or spot meter of a VM size is an offer, one per size, region and
  kind: a `type` other than Consumption (a reservation, a dev/test rate), a Windows meter
  (`productName` says Windows: the same VM with a licence), a Low Priority meter (Batch's
  low-priority rate; Azure's compute API says to use Spot instead) and a non-primary meter
  are skipped (counted, `not_offered`).
* `armSkuName` names the size; `sizes.py` (Microsoft's VM size pages) says which card and
  how many. A size the table does not hold is skipped (`outside_catalog`), never guessed
  from its name; so is a size that rents a fraction of a card (NVadsA10 v5's 1/6, 1/3, 1/2
  of an A10: vGPU slices).
* `retailPrice` per `unitOfMeasure` "1 Hour" is the price of the whole VM (every card of the
  size) in `currencyCode`; another unit is no hourly price we can read: quarantined.
* `meterName` ending in "Spot" is the spot price, its own offer (`price_kind` spot): the two
  are rented separately and can be evicted apart.
* A price list says nothing about capacity: every offer's stock is `unknown` (listed, never
  ranked as in stock, never sold out).

Offer key: `<armSkuName>/<armRegionName>/<on_demand|spot>`, so the pages of one series leave
only that series' sizes unread when they fail (`sizes.Series.offer_prefixes`). An unreadable
meter whose kind (or region) cannot be read leaves the offers it may have been unread
(`page.unread_prefixes`: its size and region, or its size), so they stay stale, not closed.

Contract (`METER`): identity `armSkuName`, `armRegionName`, `meterName`, `productName`,
`type`; price `retailPrice`, `unitOfMeasure`, `currencyCode`. The price list has no stock
field. A key gone from one meter quarantines it; gone from every meter is a layout error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gpurent_core.model import PriceBasis, PriceKind, QuarantineRecord, SkipKind
from gpurent_core.normalize.availability import UNKNOWN
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    Skip,
    gpu_offer,
    hourly_price,
    identify_gpu,
    require,
)
from spiders.parsers.contract import Contract, apply_check, check_items, contracted
from spiders.parsers.envelope import list_at, no_list
from spiders.providers.azure.sizes import vm_size

PRICING_URL = "https://azure.microsoft.com/pricing/details/virtual-machines/linux/"
ITEMS_KEY = "Items"
NEXT_KEY = "NextPageLink"
PAY_AS_YOU_GO = "Consumption"
HOURLY = "1 Hour"
METER = Contract(
    "meter",
    identity=("armSkuName", "armRegionName", "meterName", "productName", "type"),
    price=("retailPrice", "unitOfMeasure", "currencyCode"),
)
CONTRACTS: tuple[Contract, ...] = (METER,)

_SPOT = re.compile(r"\bSpot\b")
_LOW_PRIORITY = re.compile(r"\bLow Priority\b", re.IGNORECASE)
_WINDOWS = re.compile(r"\bWindows\b", re.IGNORECASE)


@dataclass
class PricesPage(PageResult):
    """One page of the price list, and the link to the next (None on the last)."""

    next_link: str | None = None


def parse_prices(data: Any, ctx: ParseContext) -> PricesPage:
    items = list_at(data, ITEMS_KEY)
    if items is None:
        return PricesPage(layout_error=no_list(data, ITEMS_KEY))
    page = PricesPage()
    link = data.get(NEXT_KEY)
    if isinstance(link, str) and link.strip():
        page.next_link = link.strip()
    elif link not in (None, ""):
        page.layout_error = f"{NEXT_KEY} is no link: {link!r}"
    for item in items:
        records = meter_records(item, ctx)
        page.records.extend(records)
        prefix = _unread_prefix(item, records)
        if prefix is not None and prefix not in page.unread_prefixes:
            page.unread_prefixes.append(prefix)
    apply_check(page, check_items(items, METER))
    return page


def meter_kind(item: dict[str, Any]) -> PriceKind | None:
    """On demand or spot, for a Linux pay-as-you-go meter billed in its own region; None for
    any other meter."""
    meter, product, kind = (item.get(k) for k in ("meterName", "productName", "type"))
    if not (isinstance(meter, str) and isinstance(product, str) and isinstance(kind, str)):
        return None
    if kind.strip() != PAY_AS_YOU_GO or _WINDOWS.search(product) or _LOW_PRIORITY.search(meter):
        return None
    if item.get("isPrimaryMeterRegion") is False:
        return None
    return PriceKind.SPOT if _SPOT.search(meter) else PriceKind.ON_DEMAND


def offer_key(item: Any) -> str | None:
    """`<armSkuName>/<armRegionName>/<kind>` of an offer's meter; None for a meter that is no
    offer (Windows, Low Priority, a reservation, a non-primary meter) or whose identity is
    unreadable: a broken meter of that kind never makes an offer stale."""
    if not isinstance(item, dict):
        return None
    size, region, kind = item.get("armSkuName"), item.get("armRegionName"), meter_kind(item)
    if not (isinstance(size, str) and size and isinstance(region, str) and region and kind):
        return None
    return f"{size}/{region}/{kind.value}"


def meter_records(item: Any, ctx: ParseContext) -> list[Record]:
    return contracted(ctx, item, METER, offer_key=offer_key, build=lambda: _build(item, ctx))


def _unread_prefix(item: Any, records: list[Record]) -> str | None:
    """The offers an unreadable meter without a key may have been: its size and region's
    (the kind unreadable: on demand or spot), or its size's (the region unreadable too)."""
    unkeyed = [r for r in records if isinstance(r, QuarantineRecord) and r.offer_key is None]
    if not unkeyed or not isinstance(item, dict):
        return None
    size, region = item.get("armSkuName"), item.get("armRegionName")
    if not isinstance(size, str) or not size.strip():
        return None  # nothing says which offer it was
    if isinstance(region, str) and region.strip():
        return f"{size}/{region}/"
    return f"{size}/"


def _build(item: dict[str, Any], ctx: ParseContext) -> list[Record]:
    _skip_other_meters(item)
    size_name = _text(item, "armSkuName")
    size = vm_size(size_name)
    if size is None:
        raise Skip(SkipKind.OUTSIDE_CATALOG, f"{size_name}: not in the VM size table")
    if size.gpus is None:
        raise Skip(SkipKind.OUTSIDE_CATALOG, f"{size_name}: {size.gpu_fraction} of an {size.card}")
    region = _text(item, "armRegionName")
    kind, key = meter_kind(item), offer_key(item)
    if kind is None or key is None:  # the checks above read every part of both
        raise FieldProblem(MISSING_FIELD, "meterName", "the meter's kind is unreadable")
    unit = item.get("unitOfMeasure")
    if unit != HOURLY:
        raise FieldProblem(INVALID_VALUE, "unitOfMeasure", f"unitOfMeasure {unit!r} is not hourly")
    price = hourly_price(item.get("retailPrice"), "retailPrice")
    return [
        gpu_offer(
            ctx,
            offer_key=key,
            raw=item,
            gpu=identify_gpu(size.card, field="armSkuName"),
            raw_gpu_name=size.card,
            gpu_count=size.gpus,
            stock=UNKNOWN,  # a price list says nothing about capacity
            price=price,
            currency=_text(item, "currencyCode"),
            price_basis=PriceBasis.INSTANCE,
            price_kind=kind,
            region=region,
            url=PRICING_URL,
            host=size.host(),
        )
    ]


def _skip_other_meters(item: dict[str, Any]) -> None:
    """A meter that is no Linux pay-as-you-go or spot rate of the public price list."""
    kind = _text(item, "type")
    if kind != PAY_AS_YOU_GO:
        raise Skip(SkipKind.NOT_OFFERED, f"{kind} meter: only pay-as-you-go rates are listed")
    if _WINDOWS.search(_text(item, "productName")):
        raise Skip(SkipKind.NOT_OFFERED, "Windows meter: the Linux meter of the size is the offer")
    if _LOW_PRIORITY.search(_text(item, "meterName")):
        raise Skip(SkipKind.NOT_OFFERED, "Low Priority meter: Batch's rate, not a VM rental")
    if item.get("isPrimaryMeterRegion") is False:
        raise Skip(SkipKind.NOT_OFFERED, "non-primary meter: billed under another region's meter")


def _text(item: dict[str, Any], key: str) -> str:
    value = require(item, key)
    if not isinstance(value, str):
        raise FieldProblem(INVALID_VALUE, key, f"{key} is not text: {value!r}")
    return value.strip()
