"""Shadeform instance types (`GET /v1/instances/types` -> `{"instance_types": [...]}`).

The shape is Shadeform's documented one (its OpenAPI `InstanceTypesResponse`, github.com/
shadeform/docs openapi.yaml, and the examples of docs.shadeform.ai/getting-started/quickstart;
recordings/PROVENANCE). Per item: `cloud` (the underlying cloud that supplies the machine),
`shade_instance_type` (Shadeform's standard name, "H100_sxm5x8"), `cloud_instance_type`,
`configuration: {memory_in_gb, storage_in_gb, vcpus, num_gpus, gpu_type, interconnect,
nvlink?, vram_per_gpu_in_gb, os_options, gpu_manufacturer}`, `hourly_price`,
`deployment_type`, `availability: [{region, available, display_name}]` and `boot_time`.

Our reading of an item:

* identity: Shadeform is a marketplace over many clouds, and "the combination of cloud and
  shade instance type uniquely denotes a GPU instance type" (its Core Concepts page); an
  instance is created from `cloud`, `region` and `shade_instance_type`. So one offer is one
  type at one cloud in one region, key `<cloud>/<shade_instance_type>/<region>`: the same
  card at two clouds is two offers. The key never depends on the stock answer.
* price: `hourly_price`, "the hourly price of the instance in cents" (schema): US cents per
  hour for the whole instance, so the basis is `instance` and `gpu_count` is `num_gpus`. A
  fraction of a cent means the unit changed (quarantined); 0 is no price anyone pays (skipped
  as no public price, never ranked as free).
* stock: each `availability` entry says per region whether the type "is available in the
  region": `true` is in stock (no count given), `false` is sold out there. The list names
  sold-out regions too, so a region no longer listed is gone, not sold out, and a type
  listed in no region at all offers nothing (skipped as not offered). A flag that is not
  true or false (null, "yes"), or a region listed both ways, is unknown stock, with a line
  saying why.
* GPU: `gpu_type` ("A100_80G", "H100"), with `vram_per_gpu_in_gb` as the VRAM hint. An
  `interconnect` of "sxm…" or "pcie" states the card's form factor, so it is read with the
  name ("H100 sxm5" is an H100 SXM): a form factor the card does not come in is a
  quarantine, never a guess. `num_gpus` 0 is no GPU offer (skipped).
* host: `interconnect` "sxm…" is SXM; `nvlink: true` on other cards states NVLink; "pcie"
  without NVLink is PCIe. Shadeform publishes no NVLink bandwidth (`nvlink_gbps` unknown).
  `vcpus`, `memory_in_gb` and `storage_in_gb` are the instance's, given per card. Shadeform
  says every GPU it lists sits in a Tier 3 or Tier 4 data center (its FAQ): hosting
  `secure`. The CUDA of `os_options` is an image's, not the host driver's: not read.

Unreadable parts (rule of truth 10): a type that cannot be read at all (a key gone, a bad
price, a card outside the catalog's known names) is quarantined under `<cloud>/<type>` and
its regions are unread (prefix `<cloud>/<type>/`, each keeps its last state, stale); a
region entry without a name does the same to its type; an entry whose `available` key is
gone is quarantined under that region's own key. A type without a key (no cloud, say)
gets one line per region it lists, none of them keyed. A type listed twice at one cloud
keeps the first (noted), and so does a region listed twice with one answer. Whole-answer problems: no `instance_types` list is a layout error, and so is
an empty one (Shadeform lists every type, sold out or not); an answer of the documented
error form `{"message": ...}` is an API error (a failed request, never "nothing for rent").

Contracts: `TYPE` (identity `cloud`, `shade_instance_type`, `configuration.gpu_type`,
`configuration.num_gpus`, `configuration.interconnect`; price `hourly_price`; stock
`availability`) and `REGION` (identity `region`, stock `available`) over every entry of
every type. A key gone from one item quarantines it; gone from every item is a layout error.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from gpurent_core.enums import Hosting, Interconnect
from gpurent_core.model import PriceBasis, QuarantineRecord, SkipKind
from gpurent_core.normalize.availability import UNKNOWN, Availability, availability_from_flag
from gpurent_core.normalize.price import CENTS
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    PRICE_UNPARSED,
    FieldProblem,
    ParseContext,
    Record,
    Skip,
    gpu_offer,
    guarded,
    id_text,
    identify_gpu,
    make_quarantine,
    measure,
    minor_units,
    not_an_object,
    set_aside,
    to_int,
    to_price,
)
from spiders.parsers.contract import (
    Contract,
    apply_check,
    check_items,
    drift_quarantine,
)
from spiders.parsers.envelope import ApiPage, answer_keys, message_of

CURRENCY = "USD"
# The console where an instance is launched; the API gives no per-offer page.
PLATFORM_URL = "https://platform.shadeform.ai/"
TYPE = Contract(
    "instance type",
    identity=(
        "cloud",
        "shade_instance_type",
        "configuration.gpu_type",
        "configuration.num_gpus",
        "configuration.interconnect",
    ),
    price=("hourly_price",),
    stock=("availability",),
)
REGION = Contract("region availability", identity=("region",), stock=("available",))
CONTRACTS: tuple[Contract, ...] = (TYPE, REGION)
# More cards than any one machine holds: a broken count, not an instance.
MAX_GPUS = 256


class InstanceTypesPage(ApiPage):
    """The instance types (a `{"message": ...}` answer is an API error)."""


def parse_instance_types(data: Any, ctx: ParseContext) -> InstanceTypesPage:
    problem = _answer_problem(data)
    if problem is not None:
        return problem
    items: list[Any] = data["instance_types"]
    page = InstanceTypesPage()
    seen: set[str] = set()
    for item in items:
        page.records.extend(type_records(item, ctx, page, seen))
    apply_check(page, check_items(items, TYPE))
    apply_check(page, check_items(_region_entries(items), REGION))
    return page


def _answer_problem(data: Any) -> InstanceTypesPage | None:
    """The page of an answer that holds no instance types to read (None when it does)."""
    documented_error = isinstance(data, dict) and isinstance(data.get("message"), str)
    if documented_error and "instance_types" not in data:
        return InstanceTypesPage(api_error=message_of(data, "message"))
    items = data.get("instance_types") if isinstance(data, dict) else None
    if not isinstance(items, list):
        keys = answer_keys(data)
        return InstanceTypesPage(
            layout_error=f"no 'instance_types' list in the answer (got {keys})"
        )
    if not items:
        return InstanceTypesPage(layout_error="'instance_types' is empty")
    return None


def _region_entries(items: list[Any]) -> list[Any]:
    """Every availability entry of every type (the `REGION` contract's items)."""
    return [
        entry
        for item in items
        if isinstance(item, dict) and isinstance(item.get("availability"), list)
        for entry in item["availability"]
    ]


def type_key(item: Mapping[str, Any]) -> str | None:
    """`<cloud>/<shade_instance_type>`: the type at one cloud (None when either is unread)."""
    cloud, name = id_text(item.get("cloud")), id_text(item.get("shade_instance_type"))
    return f"{cloud}/{name}" if cloud and name else None


def offer_key(type_id: str, region: str) -> str:
    return f"{type_id}/{region}"


def type_records(
    item: Any, ctx: ParseContext, page: InstanceTypesPage, seen: set[str]
) -> list[Record]:
    """One type's records; a type that cannot be read declares its regions unread."""
    if not isinstance(item, dict):
        return not_an_object(ctx, item)
    key = type_key(item)
    gone = TYPE.gone(item)
    if gone:
        records = [drift_quarantine(ctx, item, gone, offer_key=key)]
    elif key is not None and key in seen:
        # Two entries for one type at one cloud: the first one read stands.
        page.notes.append(f"{key}: listed twice, first kept")
        return []
    else:
        if key is not None:
            seen.add(key)
        records = guarded(ctx, offer_key=key, raw=item, build=lambda: _build(item, key, ctx, page))
    unread = [r for r in records if isinstance(r, QuarantineRecord) and r.offer_key == key]
    if unread:
        _declare_unread(page, item, key)
        if key is None:
            return _line_per_region(ctx, item, unread[0])
    return records


def _line_per_region(
    ctx: ParseContext, item: dict[str, Any], line: QuarantineRecord
) -> list[Record]:
    """A type without a key stands for as many offers as it lists regions: one line each
    (no key can name them), so none of them vanishes unaccounted."""
    regions = item.get("availability")
    if not isinstance(regions, list) or len(regions) < 2:
        return [line]
    return [
        make_quarantine(
            ctx,
            reason=f"{line.reason} (region {_region_name(entry) or '?'})",
            field=line.field,
            raw=item,
            offer_key=None,
        )
        for entry in regions
    ]


def _declare_unread(page: InstanceTypesPage, item: dict[str, Any], key: str | None) -> None:
    """The type's regions keep their last state: under its key, or (type name unread)
    under its cloud's; with no cloud either nothing can be named."""
    if key is not None:
        prefix = f"{key}/"
    else:
        cloud = id_text(item.get("cloud"))
        if cloud is None:
            return
        prefix = f"{cloud}/"
    if prefix not in page.unread_prefixes:
        page.unread_prefixes.append(prefix)


def _build(
    item: dict[str, Any], key: str | None, ctx: ParseContext, page: InstanceTypesPage
) -> list[Record]:
    if key is None:
        unread = "cloud" if id_text(item.get("cloud")) is None else "shade_instance_type"
        raise FieldProblem(MISSING_FIELD, unread, f"{unread} is missing")
    config = item["configuration"]
    if not isinstance(config, dict):
        raise FieldProblem(INVALID_VALUE, "configuration", "configuration is not an object")
    count = _gpu_count(config)
    raw_name = _gpu_name(config)
    identity = identify_gpu(raw_name, field="configuration.gpu_type", vram_gb=_vram(config))
    price = _price(item["hourly_price"])
    entries = _entries_by_region(item["availability"], key, page)
    # What every region offer of the type shares.
    shared: dict[str, Any] = {
        "raw": item,
        "gpu": identity,
        "raw_gpu_name": raw_name,
        "gpu_count": count,
        "price": price,
        "currency": CURRENCY,
        "price_basis": PriceBasis.INSTANCE,
        "url": PLATFORM_URL,
        "host": _host(config, count),
    }
    records: list[Record] = []
    for region, listed in entries.items():
        records.extend(_region_records(ctx, offer_key(key, region), region, listed, shared))
    return records


def _region_records(
    ctx: ParseContext,
    key: str,
    region: str,
    listed: list[dict[str, Any]],
    shared: dict[str, Any],
) -> list[Record]:
    """The offer of one region (its entries: one, or the same region listed again)."""
    gone = list(dict.fromkeys(path for entry in listed for path in REGION.gone(entry)))
    if gone:
        return [drift_quarantine(ctx, listed[0], gone, offer_key=key)]
    stock, problem = _stock(listed)
    offer = gpu_offer(ctx, offer_key=key, stock=stock, region=region, **shared)
    return [offer, *set_aside(ctx, problem, offer_key=key, item=listed[0])]


def _entries_by_region(
    regions: Any, key: str, page: InstanceTypesPage
) -> dict[str, list[dict[str, Any]]]:
    """The type's availability entries by region name, in the answer's order."""
    if not isinstance(regions, list):
        # null or retyped says nothing about any region: unread, not sold out.
        raise FieldProblem(INVALID_VALUE, "availability", "availability is not a list")
    if not regions:
        # Listed, but in no region: nothing anyone can rent (its old regions are gone).
        raise Skip(SkipKind.NOT_OFFERED, "instance type listed in no region")
    by_region: dict[str, list[dict[str, Any]]] = {}
    for entry in regions:
        region = _region_name(entry)
        if region is None:
            # Which region this was is unknown: every region of the type stays as it was.
            raise FieldProblem(MISSING_FIELD, "availability.region", "a region has no name")
        by_region.setdefault(region, []).append(entry)
    for region, listed in by_region.items():
        if len(listed) > 1:
            page.notes.append(f"{key}: region {region} listed {len(listed)} times")
    return by_region


def _region_name(entry: Any) -> str | None:
    return id_text(entry.get("region")) if isinstance(entry, dict) else None


def _stock(listed: list[dict[str, Any]]) -> tuple[Availability, FieldProblem | None]:
    """`available` true: in stock (no count); false: sold out. Anything else, or one region
    listed as both, is unknown, with the problem to set aside beside the offer (rule of
    truth 1)."""
    flags = [entry["available"] for entry in listed]
    odd = [flag for flag in flags if not isinstance(flag, bool)]
    if odd:
        detail = f"available is not true or false: {odd[0]!r:.40}"
        return UNKNOWN, FieldProblem(INVALID_VALUE, "available", detail)
    if len(set(flags)) > 1:
        detail = "the region is listed as available and as not available"
        return UNKNOWN, FieldProblem(INVALID_VALUE, "available", detail)
    return availability_from_flag(flags[0]), None


def _gpu_count(config: dict[str, Any]) -> int:
    value = config["num_gpus"]
    if value is None:
        raise FieldProblem(MISSING_FIELD, "configuration.num_gpus", "num_gpus is null")
    count = to_int(value, "configuration.num_gpus")
    if count == 0:
        raise Skip(SkipKind.NOT_A_GPU_OFFER, "instance type without a GPU (num_gpus 0)")
    if not 1 <= count <= MAX_GPUS:
        raise FieldProblem(INVALID_VALUE, "configuration.num_gpus", f"no card count: {count}")
    return count


def _gpu_name(config: dict[str, Any]) -> str:
    """`gpu_type`, with the form factor its `interconnect` states ("H100 sxm5")."""
    gpu_type = config["gpu_type"]
    if not isinstance(gpu_type, str) or not gpu_type.strip():
        raise FieldProblem(MISSING_FIELD, "configuration.gpu_type", "gpu_type is missing")
    form = _interconnect_text(config)
    if form.startswith("sxm") or form == "pcie":
        return f"{gpu_type.strip()} {form}"
    return gpu_type.strip()


def _interconnect_text(config: dict[str, Any]) -> str:
    value = config.get("interconnect")
    return value.strip().casefold() if isinstance(value, str) else ""


def _vram(config: dict[str, Any]) -> int | None:
    value = config.get("vram_per_gpu_in_gb")
    return None if value is None else to_int(value, "configuration.vram_per_gpu_in_gb")


def _price(cents: Any) -> Decimal:
    # The schema says an integer of cents: a fraction would mean the unit changed. to_price
    # first, so a wrong type, a negative or a huge value is refused with the field's name.
    number = to_price(cents, "hourly_price")
    if number != number.to_integral_value():
        raise FieldProblem(PRICE_UNPARSED, "hourly_price", f"not a whole number of cents: {cents}")
    if number == 0:
        raise Skip(SkipKind.NO_PUBLIC_PRICE, "hourly_price 0: no price a renter pays")
    return minor_units(number, CENTS, "hourly_price")


def _host(config: dict[str, Any], count: int) -> dict[str, Any]:
    """What the type says of its machine (module docstring), each None where it does not."""
    return {
        "interconnect": _interconnect(config),
        "hosting": Hosting.SECURE,
        "vcpus_per_gpu": measure(config.get("vcpus"), 2, per=count),
        "ram_gb_per_gpu": measure(config.get("memory_in_gb"), 1, per=count),
        "disk_gb_per_gpu": measure(config.get("storage_in_gb"), 1, per=count),
    }


def _interconnect(config: dict[str, Any]) -> Interconnect | None:
    text = _interconnect_text(config)
    if text.startswith("sxm"):
        return Interconnect.SXM  # SXM modules carry NVLink whatever `nvlink` says
    if config.get("nvlink") is True:
        return Interconnect.NVLINK
    if text == "pcie":
        return Interconnect.PCIE
    return None  # left to the card's form factor (gpu_offer)
