"""CloudRift instance types (`POST /api/v1/instance-types/list` -> `{"version": ..., "data":
{"instance_types": [...]}}`).

The shape is the one CloudRift's public API answers (recordings/PROVENANCE: its Swagger UI
at api.cloudrift.ai/swagger-ui, its changelog at docs.cloudrift.ai, and the field names the
public clients of the same call read). Per instance type: `name`, `brand_short` (the card,
"RTX 4090"), `manufacturer`, `nvidia_kernel_module_support`, `datacenters` and `variants`;
per variant (a machine size of the type): `name` (what a rental asks for), `gpu_count`,
`cpu_count`, `logical_cpu_count`, `dram`, `vram`, `disk` (bytes), `cost_per_hour`, `nodes`,
`nodes_per_dc`, `available_nodes`, `available_nodes_per_dc`, `cpu_sharing_policy`,
`ip_availability_per_dc` and `volume_types_per_dc`.

Our reading of a variant:

* identity: one offer is one variant in one data centre, key `<type>/<variant>/<dc>`: the
  same card in two data centres is two offers. The key never depends on the stock answer.
* listing: `nodes_per_dc` names the data centres that host the variant (its values, node
  counts, are not read). A data centre it no longer names is gone there, not sold out; a
  variant it names nowhere offers nothing (skipped as not offered).
* stock: `available_nodes_per_dc[<dc>]` is the number of free nodes that can take the
  variant there: 0 is sold out, more is in stock. It counts machines, not cards, so no
  free-card count is given. A count that is no whole number (null, text, negative) is
  unknown stock, with a line saying why; so is a whole map that is no object (rule of
  truth 1).
* price: `cost_per_hour` is in US cents per hour for the whole variant (basis `instance`,
  `gpu_count` cards); cents may carry a fraction ("139.36"). 0 or null is no price anyone
  pays (skipped as no public price, never ranked as free).
* GPU: `brand_short` ("RTX PRO 6000", "V100 SXM2"), with `vram` (bytes per card) as the
  VRAM hint. `gpu_count` 0 is no GPU offer (skipped).
* host: `logical_cpu_count` (the variant's vCPUs), `dram` and `disk` (bytes, read as GiB),
  per card. CloudRift states no interconnect (it comes from the card's form factor) and
  classes no hosting: both left to what the card says, or unknown.

Unreadable parts (rule of truth 10): a type that cannot be read at all (its `variants` gone
or no list, no `brand_short` key) is quarantined under `<type>` and its offers are unread
(prefix `<type>/`); a variant that cannot be read (a key gone, a bad price, a card outside
the catalog) is quarantined under `<type>/<variant>`, prefix `<type>/<variant>/`; a variant
without a name (or no object at all) is quarantined under its type, whose offers not read
here stay as they were. A data centre listed in one map and not in the other (an entry gone
from `available_nodes_per_dc`, or one `nodes_per_dc` does not name) is quarantined under its
own offer key. A type without a name gets one line per offer it lists, none of them keyed.
A type or a variant listed twice keeps the first (noted). Whole-answer problems: an answer
that is a bare JSON string is an API error (a failed request, never "nothing for rent"); no
`data.instance_types` list, or an empty one, is a layout error.

Contracts: `TYPE` (identity `name`, `brand_short`, `variants`) and `VARIANT` (identity
`name`, `gpu_count`, `nodes_per_dc`; price `cost_per_hour`; stock `available_nodes_per_dc`)
over every variant of every type. A key gone from one item quarantines it; gone from every
item is a layout error.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from gpurent_core.model import PriceBasis, QuarantineRecord, SkipKind, StockStatus
from gpurent_core.normalize.availability import (
    UNKNOWN,
    Availability,
    availability_from_counts,
)
from gpurent_core.normalize.price import CENTS
from spiders.parsers.common import (
    HOURLY_PRICE_MAX,
    INVALID_VALUE,
    MISSING_FIELD,
    NOT_AN_OFFER,
    PRICE_UNPARSED,
    FieldProblem,
    ParseContext,
    Record,
    Skip,
    counted_stock,
    gpu_offer,
    guarded,
    id_text,
    identify_gpu,
    make_quarantine,
    make_skip,
    measure,
    minor_units,
    set_aside,
    to_int,
    to_price,
)
from spiders.parsers.contract import Contract, apply_check, check_items, drift_quarantine
from spiders.parsers.envelope import ApiPage, answer_keys, no_list

CURRENCY = "USD"
# CloudRift's site, where the console is reached; the API gives no per-offer page.
SITE_URL = "https://www.cloudrift.ai/"
LISTING_KEY = "nodes_per_dc"
STOCK_KEY = "available_nodes_per_dc"
TYPE = Contract("instance type", identity=("name", "brand_short", "variants"))
VARIANT = Contract(
    "instance variant",
    identity=("name", "gpu_count", LISTING_KEY),
    price=("cost_per_hour",),
    stock=(STOCK_KEY,),
)
CONTRACTS: tuple[Contract, ...] = (TYPE, VARIANT)
# More cards than any one machine holds: a broken count, not a variant.
MAX_GPUS = 256
BYTES_PER_MIB = 2**20
BYTES_PER_GIB = 2**30


class InstanceTypesPage(ApiPage):
    """The instance types (a bare JSON string answer is an API error)."""


def parse_instance_types(data: Any, ctx: ParseContext) -> InstanceTypesPage:
    types = _instance_types(data)
    if isinstance(types, InstanceTypesPage):
        return types
    page = InstanceTypesPage()
    seen: set[str] = set()
    for item in types:
        page.records.extend(type_records(item, ctx, page, seen))
    apply_check(page, check_items(types, TYPE))
    apply_check(page, check_items(_variants_of(types), VARIANT))
    return page


def _instance_types(data: Any) -> list[Any] | InstanceTypesPage:
    """The answer's `data.instance_types`, or the page of an answer that holds none."""
    if isinstance(data, str):
        # CloudRift's clients read a bare string answer as its message: an error, not data.
        return InstanceTypesPage(api_error=data.strip()[:80] or "empty message")
    inner = data.get("data") if isinstance(data, dict) else None
    if not isinstance(inner, dict):
        return InstanceTypesPage(
            layout_error=f"no 'data' object in the answer (got {answer_keys(data)})"
        )
    items = inner.get("instance_types")
    if not isinstance(items, list):
        return InstanceTypesPage(layout_error=no_list(inner, "instance_types"))
    if not items:
        return InstanceTypesPage(layout_error="'instance_types' is empty")
    return items


def _variants_of(types: list[Any]) -> list[Any]:
    """Every variant of every type (the `VARIANT` contract's items)."""
    return [
        variant
        for item in types
        if isinstance(item, dict) and isinstance(item.get("variants"), list)
        for variant in item["variants"]
    ]


def type_records(
    item: Any, ctx: ParseContext, page: InstanceTypesPage, seen: set[str]
) -> list[Record]:
    """One type's records; a type that cannot be read declares its offers unread."""
    if not isinstance(item, dict):
        return [_not_an_object(ctx, item, "instance type is not an object", None)]
    key = id_text(item.get("name"))
    gone = TYPE.gone(item)
    if gone:
        return _type_unread(ctx, item, key, page, drift_quarantine(ctx, item, gone, offer_key=key))
    if key is None:
        line = make_quarantine(
            ctx, reason=f"{MISSING_FIELD}: name is missing", field="name", raw=item, offer_key=None
        )
        return _type_unread(ctx, item, None, page, line)
    if key in seen:
        # Two entries for one type: the first one read stands.
        page.notes.append(f"{key}: listed twice, first kept")
        return []
    seen.add(key)
    variants = item["variants"]
    if not isinstance(variants, list):
        # null or retyped says nothing about any variant: unread, not gone.
        line = make_quarantine(
            ctx,
            reason=f"{INVALID_VALUE}: variants is not a list",
            field="variants",
            raw=item,
            offer_key=key,
        )
        return _type_unread(ctx, item, key, page, line)
    if not variants:
        return [
            make_skip(ctx, SkipKind.NOT_OFFERED, "instance type without variants", offer_key=key)
        ]
    records: list[Record] = []
    seen_variants: set[str] = set()
    for variant in variants:
        records.extend(variant_records(item, variant, key, ctx, page, seen_variants))
    return records


def _type_unread(
    ctx: ParseContext,
    item: dict[str, Any],
    key: str | None,
    page: InstanceTypesPage,
    line: Record,
) -> list[Record]:
    """The type's offers keep their last state, under its key; a type without a name
    stands for as many offers as it lists: one line each, none of them keyed."""
    if key is not None:
        _declare_unread(page, f"{key}/")
        return [line]
    places = _listed_places(item)
    if len(places) < 2 or not isinstance(line, QuarantineRecord):
        return [line]
    return [
        make_quarantine(
            ctx, reason=f"{line.reason} ({place})", field=line.field, raw=item, offer_key=None
        )
        for place in places
    ]


def _listed_places(item: dict[str, Any]) -> list[str]:
    """`<variant>/<dc>` of every data centre the type's variants name in either map."""
    variants = item.get("variants")
    if not isinstance(variants, list):
        return []
    return [
        f"{id_text(variant.get('name')) or '?'}/{dc}"
        for variant in variants
        if isinstance(variant, dict)
        for dc in _datacenters(variant.get(LISTING_KEY), variant.get(STOCK_KEY))
    ]


def _declare_unread(page: InstanceTypesPage, prefix: str) -> None:
    if prefix not in page.unread_prefixes:
        page.unread_prefixes.append(prefix)


def variant_records(
    type_item: dict[str, Any],
    variant: Any,
    type_key: str,
    ctx: ParseContext,
    page: InstanceTypesPage,
    seen: set[str],
) -> list[Record]:
    """One variant's offers, one per data centre; a variant that cannot be read declares
    its offers unread (or its type's, when it has no name to key them)."""
    if not isinstance(variant, dict):
        _declare_unread(page, f"{type_key}/")
        return [_not_an_object(ctx, variant, "variant is not an object", type_key)]
    name = id_text(variant.get("name"))
    key = f"{type_key}/{name}" if name is not None else None
    gone = VARIANT.gone(variant)
    if gone or key is None:
        _declare_unread(page, f"{key or type_key}/")
        if gone:
            return [drift_quarantine(ctx, variant, gone, offer_key=key or type_key)]
        reason = f"{MISSING_FIELD}: variant name is missing"
        return [make_quarantine(ctx, reason=reason, field="name", raw=variant, offer_key=type_key)]
    if key in seen:
        page.notes.append(f"{key}: listed twice, first kept")
        return []
    seen.add(key)
    records = guarded(
        ctx, offer_key=key, raw=variant, build=lambda: _build(type_item, variant, key, ctx)
    )
    if any(isinstance(r, QuarantineRecord) and r.offer_key == key for r in records):
        _declare_unread(page, f"{key}/")
    return records


def _not_an_object(ctx: ParseContext, item: Any, detail: str, key: str | None) -> Record:
    return make_quarantine(
        ctx, reason=f"{NOT_AN_OFFER}: {detail}", field=None, raw=str(item), offer_key=key
    )


def _build(
    type_item: dict[str, Any], variant: dict[str, Any], key: str, ctx: ParseContext
) -> list[Record]:
    count = _gpu_count(variant)
    listing, stock_map = variant[LISTING_KEY], variant[STOCK_KEY]
    if not isinstance(listing, dict):
        # Which data centres host it is unknown: every one keeps its last state.
        raise FieldProblem(INVALID_VALUE, LISTING_KEY, f"{LISTING_KEY} is not an object")
    datacenters = _datacenters(listing, stock_map)
    if not datacenters:
        raise Skip(SkipKind.NOT_OFFERED, "variant hosted in no data centre")
    raw_name = _brand(type_item)
    identity = identify_gpu(raw_name, field="brand_short", vram_mb=_vram_mib(variant))
    # What every data-centre offer of the variant shares.
    shared: dict[str, Any] = {
        "raw": variant,
        "gpu": identity,
        "raw_gpu_name": raw_name,
        "gpu_count": count,
        "price": _price(variant["cost_per_hour"]),
        "currency": CURRENCY,
        "price_basis": PriceBasis.INSTANCE,
        "url": SITE_URL,
        "host": _host(variant, count),
    }
    records: list[Record] = []
    for dc in datacenters:
        records.extend(_dc_records(ctx, f"{key}/{dc}", dc, variant, shared))
    return records


def _datacenters(listing: Any, stock_map: Any) -> list[str]:
    """The data centres either map names, the listing's first (answer order)."""
    names: dict[str, None] = {}
    for table in (listing, stock_map):
        if isinstance(table, dict):
            names.update(dict.fromkeys(str(dc) for dc in table))
    return list(names)


def _dc_records(
    ctx: ParseContext, key: str, dc: str, variant: dict[str, Any], shared: dict[str, Any]
) -> list[Record]:
    """The offer of one data centre, or its quarantine line when the two maps disagree."""
    listing, stock_map = variant[LISTING_KEY], variant[STOCK_KEY]
    both = {LISTING_KEY: listing, STOCK_KEY: stock_map}
    if dc not in listing:
        detail = f"{dc} has a free-node count but {LISTING_KEY} does not list it"
        return [_dc_quarantine(ctx, INVALID_VALUE, LISTING_KEY, detail, both, key)]
    if isinstance(stock_map, dict) and dc not in stock_map:
        # An entry gone from the stock map is drift: unread, never sold out.
        detail = f"{STOCK_KEY} has no entry for {dc}"
        return [_dc_quarantine(ctx, MISSING_FIELD, STOCK_KEY, detail, both, key)]
    stock, problem = _stock(stock_map, dc)
    offer = gpu_offer(ctx, offer_key=key, stock=stock, region=dc, **shared)
    return [offer, *set_aside(ctx, problem, offer_key=key, item=variant)]


def _dc_quarantine(
    ctx: ParseContext, code: str, field: str, detail: str, raw: dict[str, Any], key: str
) -> Record:
    return make_quarantine(ctx, reason=f"{code}: {detail}", field=field, raw=raw, offer_key=key)


def _stock(stock_map: Any, dc: str) -> tuple[Availability, FieldProblem | None]:
    """Free nodes in `dc`: 0 is sold out, more is in stock (machines, not cards: no count).
    A map or a count that cannot be read is unknown, with the problem to set aside beside
    the offer (rule of truth 1)."""
    if not isinstance(stock_map, dict):
        detail = f"{STOCK_KEY} is not an object: {repr(stock_map)[:40]}"
        return UNKNOWN, FieldProblem(INVALID_VALUE, STOCK_KEY, detail)
    free = stock_map[dc]
    if isinstance(free, bool) or not isinstance(free, int):
        detail = f"free nodes in {dc} is no whole number: {repr(free)[:40]}"
        return UNKNOWN, FieldProblem(INVALID_VALUE, STOCK_KEY, detail)
    return counted_stock(STOCK_KEY, lambda: _from_free_nodes(free))


def _from_free_nodes(free: int) -> Availability:
    counted = availability_from_counts(free)  # refuses a negative or absurd count
    if counted.status is StockStatus.SOLD_OUT:
        return counted
    return Availability(StockStatus.IN_STOCK, None)


def _gpu_count(variant: dict[str, Any]) -> int:
    value = variant["gpu_count"]
    if value is None:
        raise FieldProblem(MISSING_FIELD, "gpu_count", "gpu_count is null")
    count = to_int(value, "gpu_count")
    if count == 0:
        raise Skip(SkipKind.NOT_A_GPU_OFFER, "variant without a GPU (gpu_count 0)")
    if not 1 <= count <= MAX_GPUS:
        raise FieldProblem(INVALID_VALUE, "gpu_count", f"no card count: {count}")
    return count


def _brand(type_item: dict[str, Any]) -> str:
    brand = type_item["brand_short"]
    if not isinstance(brand, str) or not brand.strip():
        raise FieldProblem(MISSING_FIELD, "brand_short", "brand_short is missing")
    return brand.strip()


def _vram_mib(variant: dict[str, Any]) -> int | None:
    """`vram`, bytes per card, in MiB (the catalog snaps it to the card's size); 0 or absent
    states nothing."""
    value = variant.get("vram")
    if value is None:
        return None
    size = to_int(value, "vram")
    if size < 0:
        raise FieldProblem(INVALID_VALUE, "vram", f"vram is negative: {size}")
    return size // BYTES_PER_MIB or None


def _price(cents: Any) -> Decimal:
    if cents is None:
        raise Skip(SkipKind.NO_PUBLIC_PRICE, "cost_per_hour is null")
    # to_price first, so a wrong type, a negative or a huge value is refused by its name.
    number = to_price(cents, "cost_per_hour")
    if number == 0:
        raise Skip(SkipKind.NO_PUBLIC_PRICE, "cost_per_hour 0: no price a renter pays")
    price = minor_units(number, CENTS, "cost_per_hour")
    if price > HOURLY_PRICE_MAX:
        raise FieldProblem(PRICE_UNPARSED, "cost_per_hour", f"no hourly price: {cents} cents")
    return price


def _host(variant: Mapping[str, Any], count: int) -> dict[str, Any]:
    """The variant's vCPUs, RAM and disk (bytes, as GiB), per card; None where unsaid."""
    return {
        "vcpus_per_gpu": measure(variant.get("logical_cpu_count"), 2, per=count),
        "ram_gb_per_gpu": measure(variant.get("dram"), 1, per=count * BYTES_PER_GIB),
        "disk_gb_per_gpu": measure(variant.get("disk"), 1, per=count * BYTES_PER_GIB),
    }
