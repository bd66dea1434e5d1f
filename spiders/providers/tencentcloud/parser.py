"""腾讯云 CVM: `DescribeZoneInstanceConfigInfos`, the instance types of every zone of a region
with their sale state and hourly price.

The shape is Tencent Cloud's documented one (API 3.0, CVM 2017-03-12: the action's page
cloud.tencent.com/document/api/213/33254, the data structures InstanceTypeQuotaItem and
ItemPrice, cloud.tencent.com/document/api/213/15753, as Tencent's CLI describes them in
TencentCloud/tencentcloud-cli tccli/services/cvm/v20170312/api.json; recordings/PROVENANCE). Every answer is
``{"Response": {...}}``: on success ``InstanceTypeQuotaSet[]`` and ``RequestId``, on failure
``Error: {Code, Message}`` (sent with HTTP 200). Per item:

* `Zone`, `InstanceType` ("GN7.2XLARGE32"), `InstanceFamily` ("GN7"), `TypeName`, `Cpu`
  (cores), `Memory` (GB), `Gpu`, `GpuCount` ("physical GPU cards the type maps to; below 1
  for a vGPU type, at least 1 for a passthrough type"), `InstanceChargeType`;
* `Status`: SELL ("can be bought") or SOLD_OUT ("sold out"); `StatusCategory`
  (EnoughStock / NormalStock / UnderStock / WithoutStock); `SoldOutReason` is not read;
* `Price`: an ItemPrice. For pay-as-you-go (`InstanceChargeType` POSTPAID_BY_HOUR) the price
  is `UnitPrice` ("the original price of later charges, pay-as-you-go, unit 元") per
  `ChargeUnit` (HOUR) and `UnitPriceDiscount` (the discounted price). When the answer also
  gives `UnitPriceSecondStep` / `UnitPriceThirdStep`, `UnitPrice` covers the first 96 hours
  of use and the steps the hours 96..360 and from 360 on.

Our reading of an item (one offer per zone and instance type, key ``<Zone>/<InstanceType>``,
whatever its stock):

* the card: `InstanceFamily` looked up in `families.FAMILY_CARDS` (Tencent's instance-type
  pages); a family not in that table is skipped (`outside_catalog`, its name noted), never
  guessed. `GpuCount` is the card count: 0 is no GPU type (skipped), below 1 a vGPU slice
  (skipped), a fraction above 1 unreadable;
* the price: `UnitPrice`, CNY per hour for the whole instance (basis `instance`, `GpuCount`
  cards, its vCPUs and memory); a `ChargeUnit` other than HOUR is unreadable, a `UnitPrice`
  of 0 is no public price (skipped). A lower `UnitPriceDiscount` is this account's price, a
  plan of kind `member`. Where steps are given the headline stays the first step's price (the
  price calculator shows that one) and the page notes how many offers get cheaper later;
* the stock: SELL is in stock without a count, SOLD_OUT sold out; any other Status is
  unknown, with a quarantine line saying why; the offer stands. A SELL type's
  `StatusCategory` narrows it: WithoutStock is sold out (on sale, none to sell), UnderStock
  low; EnoughStock, NormalStock, another word or none leave it in stock;
* a `InstanceChargeType` other than POSTPAID_BY_HOUR (the request asks for that one only) is
  a rate gpurent does not read here: skipped (`not_offered`);
* host: `Cpu` and `Memory` per card; the interconnect and NVLink bandwidth where the family's
  page states them.

Contract (`ITEM`): identity `Zone`, `InstanceType`, `InstanceFamily`, `GpuCount`; price
`InstanceChargeType`, `Price.UnitPrice`, `Price.ChargeUnit`; stock `Status`. A key gone from
one item quarantines it under its key; gone from every item is a layout error (the region's
offers stay as they were, stale, never "sold out").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from gpurent_core.model import PriceBasis, PriceKind, PricePlan, SkipKind, StockStatus
from gpurent_core.normalize.availability import (
    SOLD_OUT,
    UNKNOWN,
    Availability,
    availability_from_flag,
)
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    PRICE_UNPARSED,
    FieldProblem,
    ParseContext,
    Record,
    Skip,
    field_quarantine,
    gpu_offer,
    hourly_price,
    identify_gpu,
    kept_price,
    measure,
    price_plan,
    to_decimal,
)
from spiders.parsers.contract import Contract, apply_check, check_items, contracted
from spiders.parsers.envelope import ApiPage, EnvelopeProblem, message_of, shown_code
from spiders.providers.tencentcloud.families import (
    FAMILIES_OUTSIDE_CATALOG,
    FAMILY_CARDS,
    FamilyCard,
)

ACTION = "DescribeZoneInstanceConfigInfos"
VERSION = "2017-03-12"
SERVICE = "cvm"
CURRENCY = "CNY"
PRODUCT_URL = "https://cloud.tencent.com/product/gpu"
DEFAULT_REGIONS: tuple[str, ...] = ("ap-guangzhou", "ap-shanghai", "ap-beijing", "ap-nanjing")
"""Mainland regions the GPU instance pages list most GPU families in (all four take this
action, by its region list); others can be passed to the spider."""

HOURLY = "POSTPAID_BY_HOUR"
HOUR_UNIT = "HOUR"
RENTABLE_BY_STATUS: dict[str, bool] = {"SELL": True, "SOLD_OUT": False}
STEP_PRICES = ("UnitPriceSecondStep", "UnitPriceThirdStep")

AUTH_CODE_PREFIXES = ("AuthFailure", "UnauthorizedOperation")
"""Error codes that refuse the credentials (a missing, wrong, expired or unpermitted key)."""

ITEM = Contract(
    "instance type",
    identity=("Zone", "InstanceType", "InstanceFamily", "GpuCount"),
    price=("InstanceChargeType", "Price.UnitPrice", "Price.ChargeUnit"),
    stock=("Status", "StatusCategory"),
)
CONTRACTS: tuple[Contract, ...] = (ITEM,)


# -- the request ------------------------------------------------------------------


def request_body(families: tuple[str, ...] = tuple(FAMILY_CARDS)) -> dict[str, Any]:
    """Pay-as-you-go types of the families whose card we know, every zone of the region."""
    return {
        "Filters": [
            {"Name": "instance-charge-type", "Values": [HOURLY]},
            {"Name": "instance-family", "Values": list(families)},
        ]
    }


def region_prefix(region: str) -> str:
    """The start of every offer key of a region (its zones are `<region>-<n>`). A finance
    region's zones (ap-shanghai-fsi-1) share its parent's prefix: a failed parent region
    keeps them too (stale, never closed); the default regions hold none."""
    return f"{region}-"


# -- the answer ---------------------------------------------------------------------


@dataclass
class ZoneConfigPage(ApiPage):
    """One region's answer; `error_code` is Tencent's `Error.Code` when it refused."""

    error_code: str | None = None
    stepped: list[str] = field(default_factory=list)
    """Offers whose later hours are priced lower than the headline (usage steps)."""


def parse_zone_configs(data: Any, ctx: ParseContext, *, region: str) -> ZoneConfigPage:
    response = data.get("Response") if isinstance(data, dict) else None
    if not isinstance(response, dict):
        return ZoneConfigPage(layout_error="no 'Response' object in the answer")
    if "Error" in response:
        return error_page(response)
    items = response.get("InstanceTypeQuotaSet")
    if not isinstance(items, list):
        return ZoneConfigPage(layout_error="no 'Response.InstanceTypeQuotaSet' list")
    page = ZoneConfigPage()
    for item in items:
        page.records.extend(item_records(item, ctx, region=region, page=page))
    apply_check(page, check_items(items, ITEM))
    if page.stepped:
        page.notes.append(
            f"{region}: usage steps price the later hours lower for {len(page.stepped)} "
            "offer(s); the first step's hourly price is the one read"
        )
    return page


def error_page(response: dict[str, Any]) -> ZoneConfigPage:
    problem, code = read_error(response.get("Error"))
    page = ZoneConfigPage.unanswered(problem)
    page.error_code = code
    return page


def read_error(error: Any) -> tuple[EnvelopeProblem, str | None]:
    """What `Response.Error` says: refused credentials, an API error, or (not an error
    object) a layout change."""
    code = error.get("Code") if isinstance(error, dict) else None
    if not isinstance(code, str) or not code.strip():
        shown = shown_code(code) if isinstance(error, dict) else shown_code(error)
        return EnvelopeProblem(layout_error=f"Response.Error carries no Code: {shown}"), None
    if code.startswith(AUTH_CODE_PREFIXES):
        return EnvelopeProblem(auth_rejected=True), code
    return EnvelopeProblem(api_error=f"{code}: {message_of(error, 'Message')}"), code


def offer_key(item: Mapping[str, Any]) -> str | None:
    """``<Zone>/<InstanceType>``: never dependent on the stock answer."""
    zone, instance_type = item.get("Zone"), item.get("InstanceType")
    if not (isinstance(zone, str) and zone.strip()):
        return None
    if not (isinstance(instance_type, str) and instance_type.strip()):
        return None
    return f"{zone.strip()}/{instance_type.strip()}"


def item_records(
    item: Any, ctx: ParseContext, *, region: str, page: ZoneConfigPage
) -> list[Record]:
    return contracted(
        ctx,
        item,
        ITEM,
        offer_key=offer_key,
        build=lambda: _build(item, ctx, region=region, page=page),
    )


def _build(
    item: Mapping[str, Any], ctx: ParseContext, *, region: str, page: ZoneConfigPage
) -> list[Record]:
    key = offer_key(item)
    if key is None:
        raise FieldProblem(MISSING_FIELD, "Zone", "Zone or InstanceType is missing")
    zone = key.split("/", 1)[0]
    if not zone.startswith(region_prefix(region)):
        raise FieldProblem(INVALID_VALUE, "Zone", f"zone {zone!r} is not in region {region}")
    charge_type = item["InstanceChargeType"]
    if charge_type != HOURLY:
        raise Skip(SkipKind.NOT_OFFERED, f"InstanceChargeType {charge_type!r}: not pay-as-you-go")
    cards = _card_count(item["GpuCount"])
    family = _family(item["InstanceFamily"], page)
    identity = identify_gpu(family.card, field="InstanceFamily")
    price = _hourly(item.get("Price"))
    side: list[Record] = []
    plans = _account_price(item["Price"], price, key, ctx, side)
    if _stepped(item["Price"], price):
        page.stepped.append(key)
    stock, problem = _stock(item["Status"], item.get("StatusCategory"))
    if problem is not None:
        side.append(field_quarantine(ctx, problem, offer_key=key, item=item))
    offer = gpu_offer(
        ctx,
        offer_key=key,
        raw=item,
        gpu=identity,
        raw_gpu_name=family.card,
        gpu_count=cards,
        stock=stock,
        price=price,
        currency=CURRENCY,
        # UnitPrice is the whole instance's: its cards, vCPUs and memory.
        price_basis=PriceBasis.INSTANCE,
        region=zone,
        url=PRODUCT_URL,
        plans=plans,
        host=_host(item, cards, family),
    )
    return [offer, *side]


def _card_count(value: Any) -> int:
    """`GpuCount` as whole cards; 0 and vGPU fractions are no offer we rank."""
    count = to_decimal(value, "GpuCount")
    if count < 0:
        raise FieldProblem(INVALID_VALUE, "GpuCount", f"GpuCount is negative: {value}")
    if count == 0:
        raise Skip(SkipKind.NOT_A_GPU_OFFER, "GpuCount 0: an instance type without GPU")
    if count < 1:
        raise Skip(SkipKind.OUTSIDE_CATALOG, f"GpuCount {count}: a vGPU slice of a card")
    if count != count.to_integral_value():
        raise FieldProblem(INVALID_VALUE, "GpuCount", f"GpuCount is no whole card count: {value}")
    return int(count)


def _family(value: Any, page: ZoneConfigPage) -> FamilyCard:
    if not isinstance(value, str) or not value.strip():
        raise FieldProblem(MISSING_FIELD, "InstanceFamily", "InstanceFamily is missing")
    name = value.strip()
    known = FAMILY_CARDS.get(name)
    if known is not None:
        return known
    outside = FAMILIES_OUTSIDE_CATALOG.get(name)
    if outside is not None:
        raise Skip(SkipKind.OUTSIDE_CATALOG, f"family {name}: {outside}, not in the catalog")
    note = f"instance family {name} is not in the family table: its types are skipped"
    if note not in page.notes:
        page.notes.append(note)
    raise Skip(SkipKind.OUTSIDE_CATALOG, f"family {name}: card unknown (not in the table)")


def _hourly(prices: Any) -> Decimal:
    """`Price.UnitPrice`, CNY per `ChargeUnit` HOUR; 0 is no public price."""
    if not isinstance(prices, Mapping):
        raise FieldProblem(MISSING_FIELD, "Price.UnitPrice", "Price is not an object")
    unit = prices["ChargeUnit"]
    if unit != HOUR_UNIT:
        raise FieldProblem(
            PRICE_UNPARSED, "Price.ChargeUnit", f"ChargeUnit {unit!r:.40} is no hourly unit"
        )
    price = hourly_price(prices["UnitPrice"], "Price.UnitPrice")
    if price == 0:
        raise Skip(SkipKind.NO_PUBLIC_PRICE, "Price.UnitPrice 0: no hourly price given")
    return price


def _account_price(
    prices: Mapping[str, Any], price: Decimal, key: str, ctx: ParseContext, side: list[Record]
) -> list[PricePlan]:
    """`UnitPriceDiscount` below the list price: this account's price (a member plan)."""
    discounted = kept_price(ctx, prices, "UnitPriceDiscount", offer_key=key, side=side)
    if discounted is None or not 0 < discounted < price:
        return []
    return [price_plan(discounted, CURRENCY, PriceBasis.INSTANCE, PriceKind.MEMBER)]


def _stepped(prices: Mapping[str, Any], price: Decimal) -> bool:
    """Whether a later usage step is priced below the first (a side fact: unreadable or
    absent steps say nothing)."""
    for name in STEP_PRICES:
        try:
            step = to_decimal(prices.get(name), name)
        except FieldProblem:
            continue
        if 0 < step < price:
            return True
    return False


def _stock(status: Any, category: Any) -> tuple[Availability, FieldProblem | None]:
    rentable = RENTABLE_BY_STATUS.get(status) if isinstance(status, str) else None
    if rentable is None:
        detail = f"Status {status!r:.40} is not SELL or SOLD_OUT: stock unknown"
        return UNKNOWN, FieldProblem(INVALID_VALUE, "Status", detail)
    if rentable and category == "WithoutStock":
        return SOLD_OUT, None  # on sale, but Tencent says it has none to sell
    if rentable and category == "UnderStock":
        return Availability(StockStatus.LOW, None), None
    return availability_from_flag(rentable), None


def _host(item: Mapping[str, Any], cards: int, family: FamilyCard) -> dict[str, Any]:
    """The instance's vCPUs and memory (GB) per card; the family page's NVLink."""
    return {
        "vcpus_per_gpu": measure(item.get("Cpu"), 2, per=cards),
        "ram_gb_per_gpu": measure(item.get("Memory"), 1, per=cards),
        "interconnect": family.interconnect,
        "nvlink_gbps": family.nvlink_gbps,
    }
