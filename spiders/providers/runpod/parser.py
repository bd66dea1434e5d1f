"""RunPod GraphQL catalog (`POST /graphql`) to records: one offer per (GPU type, cloud).

Two queries (RunPod's public GraphQL API; field names as gpuhunt and runpod-python send
them):

1. `GpuTypes`: `countryCodes`, `dataCenters{id name listed}` and
   `gpuTypes{id displayName memoryInGb secureCloud communityCloud maxGpuCount ...}`: the
   catalog, which says in which cloud each type is offered at all.
2. `GpuPrices`, once per cloud (`lowestPriceInput: {gpuCount: 1, secureCloud: true|false}`):
   `gpuTypes{id displayName memoryInGb securePrice communityPrice oneMonthPrice
   threeMonthPrice sixMonthPrice lowestPrice(input){minimumBidPrice uninterruptablePrice
   minVcpu minMemory stockStatus countryCode}}`. RunPod answers every GPU type in one list,
   so two requests price the whole catalog (our choice: one per cloud rather than one per
   type, and not both clouds aliased into one query, so a failed cloud costs only its rows).

Meanings:

* price: `securePrice` / `communityPrice`, USD per GPU-hour, list price of the cloud asked;
  `lowestPrice.uninterruptablePrice` (the cheapest on-demand card of that query) when the
  list price is missing or 0. Our offer is one card (`gpuCount: 1`), basis `gpu`.
* spot: `lowestPrice.minimumBidPrice` (interruptible), a spot plan per GPU-hour.
* commitment: `oneMonthPrice`, `threeMonthPrice`, `sixMonthPrice`, per GPU-hour rates of
  RunPod's savings plans (paid for the whole term). Savings plans are sold for Secure Cloud
  pods, so they are attached to secure offers only.
* stock: `lowestPrice.stockStatus` "High" / "Medium" (in stock), "Low" (low), read by
  `parse_availability`. RunPod answers null when nothing is free; gpuhunt skips those. Our
  decision: null for a type the catalog lists in that cloud is `sold_out` (RunPod's way of
  saying so); null for a type the catalog does not know, or a null `lowestPrice`, is
  `unknown` (rule of truth 1). A type the catalog says is not offered in that cloud is
  skipped (`not_offered`, counted) whatever its stock says: whether an offer exists never
  follows the stock answer (rule of truth 11), and its key `<type id>/<cloud>` is the same
  in stock, low, sold out or unknown. A
  `stockStatus` key that is gone is drift, never null: the contract quarantines that type
  (`PRICES_CONTRACTS`). A word we cannot read, or a value that is not text, is `unknown`
  with the value set aside on its own quarantine line.
* region: `lowestPrice.countryCode`, where the cheapest card of the query sits.
* errors: a GraphQL answer with `errors` and no data is a failed request (`error`), or a
  refused key; HTTP 400 with the extensions code `GRAPHQL_VALIDATION_FAILED` means a field we
  query no longer exists in RunPod's schema: a layout change (`validation_failed`), never a
  network failure.
* add-ons (SECONDARY, a third-party transcription of RunPod's pricing page): pod volume and
  container disk $0.10/GB/month while running, volume disk $0.20/GB/month while stopped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from gpurent_core.billing_facts import platform_fees
from gpurent_core.enums import Hosting
from gpurent_core.model import AddonFee, PriceBasis, PriceKind, PricePlan, SkipKind
from gpurent_core.normalize.availability import (
    UNKNOWN,
    Availability,
    availability_from_flag,
    parse_availability,
)
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    gpu_offer,
    hourly_price,
    identify_gpu,
    kept_price,
    make_skip,
    measure,
    price_plan,
    require,
    set_aside,
    to_decimal,
)
from spiders.parsers.contract import Contract, apply_check, check_items, contracted
from spiders.parsers.envelope import answer_keys

CURRENCY = "USD"
ENDPOINT_URL = "https://api.runpod.io/graphql"
CLOUDS = ("secure", "community")
# The cloud's own list price per GPU-hour.
LIST_PRICE_FIELD = {"secure": "securePrice", "community": "communityPrice"}

# What the catalog must say of each type: which clouds list it (a null stock means sold out
# only where the type is listed, so a lost flag must not read as "listed").
CATALOG_CONTRACT = Contract(
    "GPU type in the catalog", identity=("id",), stock=("secureCloud", "communityCloud")
)


def _prices_contract(cloud: str) -> Contract:
    # The list price may be absent or 0 when the cheapest on-demand card prices the type;
    # a null `lowestPrice` is RunPod saying "nothing to quote", so its children hold then.
    return Contract(
        "GPU type",
        identity=("id", "displayName", "memoryInGb"),
        price=(f"{LIST_PRICE_FIELD[cloud]}|lowestPrice.uninterruptablePrice",),
        stock=("lowestPrice.stockStatus",),
    )


PRICES_CONTRACTS: dict[str, Contract] = {cloud: _prices_contract(cloud) for cloud in CLOUDS}
CONTRACTS: tuple[Contract, ...] = (CATALOG_CONTRACT, *PRICES_CONTRACTS.values())
# Larger than any card sold: a bigger "size" is a wrong value, not a hint.
MAX_VRAM_GB = 4096
COMMITMENT_FIELDS = ("oneMonthPrice", "threeMonthPrice", "sixMonthPrice")
# Words in a GraphQL error that mean the key was refused.
_AUTH_WORDS = ("unauthorized", "unauthenticated", "api key", "forbidden")
# The extensions code of a query the schema refuses (a field renamed or removed): Apollo's
# and graphql-js's name for it, answered with HTTP 400.
VALIDATION_FAILED = "GRAPHQL_VALIDATION_FAILED"

# Volume fees while running and while stopped, from the billing facts
# (billing_facts.toml in this folder).
VOLUME_FEES: tuple[AddonFee, ...] = platform_fees("runpod")

CATALOG_QUERY = """query GpuTypes {
  countryCodes
  dataCenters { id name listed __typename }
  gpuTypes {
    id displayName manufacturer memoryInGb secureCloud communityCloud
    maxGpuCount maxGpuCountCommunityCloud maxGpuCountSecureCloud minPodGpuCount __typename
  }
}"""

PRICES_QUERY = """query GpuPrices($lowestPriceInput: GpuLowestPriceInput) {
  gpuTypes {
    id displayName memoryInGb maxGpuCount
    securePrice communityPrice oneMonthPrice threeMonthPrice sixMonthPrice
    lowestPrice(input: $lowestPriceInput) {
      minimumBidPrice uninterruptablePrice minVcpu minMemory stockStatus countryCode __typename
    }
    __typename
  }
}"""


def catalog_body() -> dict[str, Any]:
    return {"operationName": "GpuTypes", "query": CATALOG_QUERY, "variables": {}}


def prices_body(cloud: str) -> dict[str, Any]:
    """One card of every type in one cloud: the per-card offer we track."""
    if cloud not in CLOUDS:
        raise ValueError(f"cloud must be one of {CLOUDS}, got {cloud!r}")
    return {
        "operationName": "GpuPrices",
        "query": PRICES_QUERY,
        "variables": {"lowestPriceInput": {"gpuCount": 1, "secureCloud": cloud == "secure"}},
    }


# -- GraphQL envelope ------------------------------------------------------------


@dataclass
class GraphqlAnswer:
    data: dict[str, Any] | None
    error: str | None = None
    """The first GraphQL error message, when the answer carries `errors`."""
    auth_rejected: bool = False
    layout_error: str | None = None
    code: str = ""
    """The first error's `extensions.code` ("" when none)."""

    @property
    def validation_failed(self) -> bool:
        """The schema refused our query (a field we ask for is gone): a layout change."""
        return self.code == VALIDATION_FAILED


def read_envelope(answer: Any) -> GraphqlAnswer:
    """`{"data": ..., "errors": [...]}`: data (possibly partial), the error, a refused key."""
    if not isinstance(answer, dict) or not ("data" in answer or "errors" in answer):
        keys = answer_keys(answer)
        return GraphqlAnswer(None, layout_error=f"no GraphQL 'data' in the answer (got {keys})")
    errors = answer.get("errors")
    message: str | None = None
    rejected = False
    code = ""
    if isinstance(errors, list) and errors:
        first = errors[0] if isinstance(errors[0], dict) else {}
        message = str(first.get("message") or "GraphQL error")[:120]
        if isinstance(first.get("extensions"), dict):
            code = str(first["extensions"].get("code") or "")
        text = f"{message} {code}".lower()
        rejected = any(word in text for word in _AUTH_WORDS)
    data = answer.get("data")
    if data is not None and not isinstance(data, dict) and message is None:
        # Neither data nor an error to report: the answer's shape changed.
        kind = type(data).__name__
        return GraphqlAnswer(None, layout_error=f"GraphQL 'data' is a {kind}, not an object")
    return GraphqlAnswer(data if isinstance(data, dict) else None, message, rejected, code=code)


# -- step 1: the catalog ---------------------------------------------------------


@dataclass(frozen=True)
class CatalogEntry:
    listed: dict[str, bool | None]
    """Cloud name to whether the catalog offers the type there (None: not said)."""


@dataclass
class Catalog:
    types: dict[str, CatalogEntry] = field(default_factory=dict)
    ids: list[str] = field(default_factory=list)
    """Every type id the catalog answer names (those left out of `types` too)."""
    layout_error: str | None = None
    missing_fields: list[str] = field(default_factory=list)
    """`CATALOG_CONTRACT` paths gone from some type (those types are left out)."""

    def listed(self, type_id: str, cloud: str) -> bool | None:
        entry = self.types.get(type_id)
        return None if entry is None else entry.listed.get(cloud)

    def offer_keys(self, cloud: str) -> list[str]:
        """The keys of the offers `cloud`'s prices answer decides: every type the catalog
        names but those it says are not offered there (what its failure leaves unread)."""
        return [f"{i}/{cloud}" for i in self.ids if self.listed(i, cloud) is not False]


def parse_catalog(data: dict[str, Any] | None) -> Catalog:
    """Step 1's `data`: which cloud lists which GPU type."""
    types = data.get("gpuTypes") if isinstance(data, dict) else None
    if not isinstance(types, list):
        return Catalog(layout_error="no 'data.gpuTypes' list in the GpuTypes answer")
    catalog = Catalog()
    for item in types:
        type_id = item.get("id") if isinstance(item, Mapping) else None
        if isinstance(type_id, str) and type_id and type_id not in catalog.ids:
            catalog.ids.append(type_id)
        entry = _catalog_entry(item)
        if entry is not None:
            catalog.types[item["id"]] = entry
    check = check_items(types, CATALOG_CONTRACT)
    catalog.layout_error, catalog.missing_fields = check.layout_error, check.missing_fields
    return catalog


def _catalog_entry(item: Any) -> CatalogEntry | None:
    """A type whose contract holds; one that lost a cloud flag stays out of the catalog, so
    its null stock reads as unknown rather than as sold out."""
    if not isinstance(item, Mapping) or CATALOG_CONTRACT.gone(item):
        return None
    if not isinstance(item.get("id"), str) or not item["id"]:
        return None
    return CatalogEntry(
        listed={
            "secure": _flag(item.get("secureCloud")),
            "community": _flag(item.get("communityCloud")),
        }
    )


# -- step 2: prices and stock per cloud -------------------------------------------


def parse_prices(
    data: dict[str, Any] | None, cloud: str, catalog: Catalog, ctx: ParseContext
) -> PageResult:
    """Step 2's `data` for one cloud: an offer per GPU type offered there."""
    types = data.get("gpuTypes") if isinstance(data, dict) else None
    if not isinstance(types, list):
        return PageResult(layout_error=f"no 'data.gpuTypes' list in the {cloud} prices answer")
    page = PageResult()
    for item in types:
        page.records.extend(gpu_type_records(item, cloud, catalog, ctx))
    apply_check(page, check_items(types, PRICES_CONTRACTS[cloud]))
    return page


def offer_key(item: Mapping[str, Any], cloud: str) -> str | None:
    type_id = item.get("id")
    return f"{type_id}/{cloud}" if isinstance(type_id, str) and type_id else None


def gpu_type_records(item: Any, cloud: str, catalog: Catalog, ctx: ParseContext) -> list[Record]:
    key = offer_key(item, cloud) if isinstance(item, Mapping) else None
    if key is not None and catalog.listed(item["id"], cloud) is False:
        # RunPod answers every type for every cloud; this one is not rented in this cloud.
        why = f"not offered in the {cloud} cloud (catalog)"
        return [make_skip(ctx, SkipKind.NOT_OFFERED, why, offer_key=key)]
    return contracted(
        ctx,
        item,
        PRICES_CONTRACTS[cloud],
        offer_key=lambda i: offer_key(i, cloud),
        build=lambda: _build(item, cloud, catalog, ctx),
    )


def _build(item: dict[str, Any], cloud: str, catalog: Catalog, ctx: ParseContext) -> list[Record]:
    key = offer_key(item, cloud)
    if key is None:
        raise FieldProblem(MISSING_FIELD, "id", "id is missing")
    lowest = item.get("lowestPrice")
    listed = catalog.listed(item["id"], cloud)
    raw_name = require(item, "displayName")
    identity = identify_gpu(raw_name, field="displayName", vram_gb=_vram(item))
    price = _price(item, lowest, cloud)
    availability, problem = _availability(lowest, listed)
    side: list[Record] = set_aside(ctx, problem, offer_key=key, item=_stock_view(lowest))
    plans = (*_spot_plan(lowest, key, ctx, side), *_commitment_plans(item, cloud, key, ctx, side))
    country = lowest.get("countryCode") if isinstance(lowest, dict) else None
    record = gpu_offer(
        ctx,
        offer_key=key,
        raw=item,
        gpu=identity,
        raw_gpu_name=raw_name,
        gpu_count=1,
        stock=availability,
        price=price,
        currency=CURRENCY,
        price_basis=PriceBasis.GPU,
        region=country if isinstance(country, str) and country else None,
        url=ENDPOINT_URL,
        fees=VOLUME_FEES,
        plans=plans,
        host=_host(lowest, cloud),
    )
    return [record, *side]


def _host(lowest: Any, cloud: str) -> dict[str, Any]:
    """The cloud says who hosts the pod (Secure Cloud: RunPod's data centers; Community
    Cloud: vetted third-party hosts, not RunPod's own); `lowestPrice.minVcpu` and
    `minMemory` (GB) are what one card's pod comes with at that price."""
    quoted = lowest if isinstance(lowest, dict) else {}
    return {
        "hosting": Hosting.SECURE if cloud == "secure" else Hosting.COMMUNITY,
        "vcpus_per_gpu": measure(quoted.get("minVcpu"), 2),
        "ram_gb_per_gpu": measure(quoted.get("minMemory"), 1),
    }


def _availability(lowest: Any, listed: bool | None) -> tuple[Availability, FieldProblem | None]:
    """The type's stock, and the problem to set aside when its stock value is unreadable."""
    if lowest is None:
        return UNKNOWN, None  # nothing quoted for the type: unknown (rule of truth 1)
    if not isinstance(lowest, dict):
        return UNKNOWN, _unreadable("lowestPrice", lowest, "not an object")
    stock = lowest.get("stockStatus")
    if stock is None:
        # RunPod's null stock: sold out where the catalog lists the type, else unknown.
        return (availability_from_flag(False) if listed else UNKNOWN), None
    if not isinstance(stock, str):
        return UNKNOWN, _unreadable("stockStatus", stock, "not a stock word")
    availability = parse_availability(stock)
    if availability == UNKNOWN:
        return UNKNOWN, _unreadable("stockStatus", stock, "not a stock word RunPod uses")
    return availability, None


def _unreadable(name: str, value: Any, why: str) -> FieldProblem:
    return FieldProblem(INVALID_VALUE, name, f"{name} {why}: {str(value)[:40]!r}")


def _stock_view(lowest: Any) -> dict[str, Any]:
    # What a set-aside stock line shows: the stock value itself, or the odd lowestPrice.
    return lowest if isinstance(lowest, dict) else {"lowestPrice": str(lowest)[:80]}


def _price(item: dict[str, Any], lowest: Any, cloud: str) -> Decimal:
    name = LIST_PRICE_FIELD[cloud]
    candidates = [(name, item.get(name))]
    if isinstance(lowest, dict):
        candidates.append(("uninterruptablePrice", lowest.get("uninterruptablePrice")))
    for where, value in candidates:
        if value is None:
            continue
        price = hourly_price(value, where)
        if price > 0:  # RunPod answers 0 for a cloud without the type
            return price
    raise FieldProblem(MISSING_FIELD, name, f"no {name} or uninterruptablePrice above 0")


def _spot_plan(
    lowest: Any, key: str, ctx: ParseContext, side: list[Record]
) -> tuple[PricePlan, ...]:
    if not isinstance(lowest, dict):
        return ()
    bid = kept_price(ctx, lowest, "minimumBidPrice", offer_key=key, side=side)
    return (_plan(bid, PriceKind.SPOT),) if bid else ()  # None or 0: no spot plan


def _commitment_plans(
    item: dict[str, Any], cloud: str, key: str, ctx: ParseContext, side: list[Record]
) -> tuple[PricePlan, ...]:
    if cloud != "secure":
        return ()
    plans: list[PricePlan] = []
    for name in COMMITMENT_FIELDS:
        price = kept_price(ctx, item, name, offer_key=key, side=side)
        if price:  # None (absent, or set aside) or 0: no plan
            plans.append(_plan(price, PriceKind.COMMITMENT))
    return tuple(plans)


def _plan(price: Decimal, kind: PriceKind) -> PricePlan:
    return price_plan(price, CURRENCY, PriceBasis.GPU, kind)


def _vram(item: dict[str, Any]) -> int | None:
    """`memoryInGb` as a VRAM hint (None when null); a value that is no size quarantines the
    type, since the hint decides which variant of a name the card is."""
    value = item.get("memoryInGb")
    if value is None:
        return None
    size = to_decimal(value, "memoryInGb")
    if size <= 0 or size > MAX_VRAM_GB:
        raise FieldProblem(INVALID_VALUE, "memoryInGb", f"memoryInGb is no card size: {value}")
    # A hint only (the catalog snaps it to a nominal size): whole GB are enough.
    return int(size.to_integral_value())


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None
