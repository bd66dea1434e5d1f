"""DigitalOcean Droplet sizes (`GET /v2/sizes?page=N&per_page=M` -> `{sizes, links, meta}`).

The shape is DigitalOcean's documented one (its public OpenAPI description, `digitalocean/
openapi` `specification/resources/sizes/`, and the API reference page "Sizes",
docs.digitalocean.com/reference/api/reference/sizes/; recordings/PROVENANCE): each size has
`slug`, `memory` (MiB), `vcpus`, `disk` (GB), `transfer` (TB of outbound traffic a month),
`price_monthly` and `price_hourly` (USD, the whole Droplet), `regions` (region slugs "where
this size is available for Droplet creates"), `available` ("whether new Droplets can be
created with this size"), `description`, `disk_info` and, for GPU sizes, `gpu_info: {count,
vram: {amount, unit}, model}` (the documented example: `nvidia_h100`, 80 `gib`, count 1).
Errors are `{id, message}` (`id` "unauthorized" on a refused token). Paged by `page` and
`per_page` (at most 200); `meta.total` counts every size, `links.pages.next` names the next
page.

Our reading of a size:

* a GPU size is one with a `gpu_info` object, or a slug starting `gpu-` (every documented GPU
  slug does: so a `gpu_info` gone from a GPU size is drift, quarantined, never a CPU size);
  any other size is no GPU rental: skipped (`not_a_gpu_offer`), counted, and so is a GPU
  size whose `gpu_info.count` is 0. A GPU size priced 0 an hour is `no_public_price`;
* one offer per (size, region listed): key `<slug>/<region>`, never dependent on the stock
  answer (rule of truth 11). The price is `price_hourly`, USD per hour for the whole
  Droplet (basis `instance`, `gpu_info.count` cards);
* stock: `available: true` makes every listed region `in_stock`; `available: false` is
  DigitalOcean saying no new Droplet of the size can be created, anywhere: every listed
  region is `sold_out` (the provider's own words, not an unknown). A region not listed is
  not an offer there; the size's prefix `<slug>/` is declared sold-out-unlisted, so a region
  DigitalOcean stopped listing for a size it still lists turns that offer `sold_out`, and a
  size listed with no region at all makes no offer but turns its earlier ones `sold_out`.
  An `available` that is null or not a flag says nothing: the listed regions are `unknown`
  (a quarantine line per offer says why) and the prefix is declared unread instead, so the
  regions not listed keep their last state;
* a `regions` null or not a list of slugs says nothing of any region: the size is
  quarantined under its slug and its prefix is unread (its offers stay, stale); so is a size
  whose price, card or key cannot be read;
* the GPU: `gpu_info.model` read by the catalog's normaliser (`nvidia_h100` is the H100),
  with `vram.amount / count` GiB per card when the unit is `gib` (counted as GB, as the
  other providers' figures are); a card the catalog does not know is quarantined
  (`gpu_unresolved`), one it leaves out on purpose is skipped (`identify_gpu`);
* a slug ending `-spot` is a spot (interruptible) size: its price is of kind `spot`. The
  API reference says nothing of spot sizes; the suffix is our reading of the slugs public
  projects create (recordings/PROVENANCE);
* `price_monthly`: DigitalOcean bills a Droplet by the hour up to a monthly cap, "the
  monthly cost of this Droplet size if the Droplet is kept for an entire month" (the
  schema's words; billing_facts.toml). It is a month plan of the same kind as the headline
  price (never a commitment: nothing is prepaid), which the cost engine takes when a month
  of hours would cost more. A bad one is set aside and the offer stands without the plan;
* fees: the egress fee of billing_facts.toml (the one place its rate lives), on every
  offer as declared. The size's `transfer` allowance is not subtracted from it: it accrues
  with the hours the Droplet exists and is pooled across the team's Droplets, which no fixed
  allowance of one offer can say, so the fee counts from the first GiB (never the cheap
  reading; the billing fact says the allowance in words);
* host: `vcpus`, `memory` (MiB) and `disk` are the Droplet's, given per card.

Contracts: every size carries `slug` (`SIZE`); every GPU size carries `GPU_SIZE`'s paths
(the card, the hourly price, `regions` and `available`). A key gone from one size
quarantines it; gone from every size is a layout error (never "sold out").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpurent_core.billing_facts import platform_fees
from gpurent_core.model import (
    AddonFee,
    BillingUnit,
    OfferRecord,
    PriceBasis,
    PriceKind,
    PricePlan,
    QuarantineRecord,
    SkipKind,
    SkipRecord,
)
from gpurent_core.normalize.availability import UNKNOWN, Availability, availability_from_flag
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    FieldProblem,
    ParseContext,
    Record,
    Skip,
    field_quarantine,
    gpu_offer,
    guarded,
    hourly_price,
    id_text,
    identify_gpu,
    kept_price,
    make_skip,
    measure,
    not_an_object,
    price_plan,
    to_int,
)
from spiders.parsers.contract import Contract, apply_check, check_items, drift_quarantine
from spiders.parsers.envelope import ApiPage, list_at, listing_size, no_list

CURRENCY = "USD"
PRODUCT_URL = "https://www.digitalocean.com/products/gpu-droplets"
GPU_SLUG_PREFIX = "gpu-"
SPOT_SLUG_SUFFIX = "-spot"
UNAUTHORIZED_ID = "unauthorized"
MIB_PER_GIB = 1024
VRAM_UNITS = frozenset({"gib", "gb"})

SIZE = Contract("size", identity=("slug",))
GPU_SIZE = Contract(
    "GPU size",
    identity=("gpu_info.model", "gpu_info.count"),
    price=("price_hourly",),
    stock=("regions", "available"),
)
CONTRACTS: tuple[Contract, ...] = (SIZE, GPU_SIZE)

# The fees every offer carries, from billing_facts.toml (the egress fee).
PLATFORM_FEES: tuple[AddonFee, ...] = platform_fees("digitalocean")


@dataclass
class SizesPage(ApiPage):
    """One page of the size list; `total` (`meta.total`) says how many sizes all pages hold."""

    total: int | None = None
    has_next: bool = False
    """`links.pages.next` names a next page."""


def parse_sizes(data: Any, ctx: ParseContext) -> SizesPage:
    refusal = error_page(data)
    if refusal is not None:
        return refusal
    items = list_at(data, "sizes")
    if items is None:
        return SizesPage(layout_error=no_list(data, "sizes"))
    page = SizesPage(total=_total(data), has_next=_has_next(data))
    for item in items:
        records = size_records(item, ctx)
        page.records.extend(records)
        declare_regions(page, item, records)
    apply_check(page, check_items(items, SIZE))
    apply_check(page, check_items([i for i in items if is_gpu_size(i)], GPU_SIZE))
    return page


def error_page(data: Any) -> SizesPage | None:
    """The page of an error body (`{id, message}` instead of `sizes`), else None."""
    if not isinstance(data, dict) or "sizes" in data or not isinstance(data.get("id"), str):
        return None
    if data["id"] == UNAUTHORIZED_ID:
        return SizesPage(auth_rejected=True)
    message = data.get("message")
    shown = message[:80] if isinstance(message, str) else ""
    return SizesPage(api_error=f"{data['id']}: {shown}")


def _total(data: dict[str, Any]) -> int | None:
    meta = data.get("meta")
    return listing_size(meta.get("total"), least=0) if isinstance(meta, dict) else None


def _has_next(data: dict[str, Any]) -> bool:
    links = data.get("links")
    pages = links.get("pages") if isinstance(links, dict) else None
    following = pages.get("next") if isinstance(pages, dict) else None
    return isinstance(following, str) and bool(following.strip())


def size_slug(item: Mapping[str, Any]) -> str | None:
    return id_text(item.get("slug"))


def region_prefix(slug: str) -> str:
    """The start of the key of every offer of one size."""
    return f"{slug}/"


def is_gpu_size(item: Any) -> bool:
    if not isinstance(item, Mapping):
        return False
    slug = item.get("slug")
    return isinstance(item.get("gpu_info"), Mapping) or (
        isinstance(slug, str) and slug.startswith(GPU_SLUG_PREFIX)
    )


def size_records(item: Any, ctx: ParseContext) -> list[Record]:
    """One size's records: its offers (one per region listed) with their side lines, a skip,
    or the size's quarantine line under its slug."""
    if not isinstance(item, Mapping):
        return not_an_object(ctx, item)
    slug = size_slug(item)
    if not is_gpu_size(item):
        return [make_skip(ctx, SkipKind.NOT_A_GPU_OFFER, "size without GPU", offer_key=slug)]
    gone = [*SIZE.gone(item), *GPU_SIZE.gone(item)]
    if gone:
        return [drift_quarantine(ctx, item, gone, offer_key=slug)]
    return guarded(ctx, offer_key=slug, raw=item, build=lambda: _build(item, slug, ctx))


def declare_regions(page: SizesPage, item: Any, records: Sequence[Record]) -> None:
    """What the regions a size does not list mean: sold out when the size was read whole
    (a stock flag read, its offers built), unread otherwise (its quarantine line, or a flag
    that says nothing). A skipped size has no regions to speak of."""
    slug = size_slug(item) if isinstance(item, Mapping) else None
    if slug is None or any(isinstance(r, SkipRecord) for r in records):
        return
    offers = any(isinstance(r, OfferRecord) for r in records)
    unreadable = not offers and any(isinstance(r, QuarantineRecord) for r in records)
    if unreadable or not isinstance(item.get("available"), bool):
        page.unread_prefixes.append(region_prefix(slug))
    else:
        page.sold_out_unlisted.append(region_prefix(slug))


def _build(item: Mapping[str, Any], slug: str | None, ctx: ParseContext) -> list[Record]:
    if slug is None:
        raise FieldProblem(INVALID_VALUE, "slug", f"slug is not an id: {item.get('slug')!r:.40}")
    info = item["gpu_info"]
    if not isinstance(info, Mapping):
        raise FieldProblem(INVALID_VALUE, "gpu_info", f"gpu_info is not an object: {info!r:.40}")
    count = _card_count(info)
    raw_name = info.get("model")
    if not isinstance(raw_name, str):
        raise FieldProblem(MISSING_FIELD, "gpu_info.model", "gpu_info.model is not text")
    identity = identify_gpu(raw_name, field="gpu_info.model", vram_gb=_vram_per_card(info, count))
    price = hourly_price(item["price_hourly"], "price_hourly")
    if price == 0:
        raise Skip(SkipKind.NO_PUBLIC_PRICE, f"{slug}: price_hourly 0")
    regions = _regions(item["regions"])
    if not regions:
        return []  # no region to create it in: its prefix says sold out (declare_regions)
    kind = PriceKind.SPOT if slug.endswith(SPOT_SLUG_SUFFIX) else PriceKind.ON_DEMAND
    side: list[Record] = []
    plans = _monthly_cap(item, slug, kind, ctx, side)
    stock, stock_problem = _stock(item["available"])
    offers: list[Record] = []
    for region in regions:
        key = region_prefix(slug) + region
        offers.append(
            gpu_offer(
                ctx,
                offer_key=key,
                raw=item,
                gpu=identity,
                raw_gpu_name=raw_name,
                gpu_count=count,
                stock=stock,
                price=price,
                currency=CURRENCY,
                price_basis=PriceBasis.INSTANCE,
                price_kind=kind,
                region=region,
                url=PRODUCT_URL,
                fees=PLATFORM_FEES,
                plans=plans,
                host=_host(item, count),
            )
        )
        if stock_problem is not None:
            # Each offer whose stock went unknown says why, under its own key.
            offers.append(field_quarantine(ctx, stock_problem, offer_key=key, item=item))
    return [*offers, *side]


def _card_count(info: Mapping[str, Any]) -> int:
    count = to_int(info.get("count"), "gpu_info.count")
    if count < 0:
        raise FieldProblem(INVALID_VALUE, "gpu_info.count", f"negative card count: {count}")
    if count == 0:
        raise Skip(SkipKind.NOT_A_GPU_OFFER, "gpu_info.count 0: a size without GPU")
    return count


def _vram_per_card(info: Mapping[str, Any], count: int) -> int | None:
    """GiB per card, when `vram` says it in whole GiB; else None and the name decides (an
    optional figure: a bad one costs the offer nothing but its VRAM)."""
    vram = info.get("vram")
    if not isinstance(vram, Mapping):
        return None
    amount, unit = vram.get("amount"), vram.get("unit")
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        return None
    if not isinstance(unit, str) or unit.strip().lower() not in VRAM_UNITS:
        return None
    return amount // count if amount % count == 0 else None


def _regions(value: Any) -> list[str]:
    """The region slugs listed, in order, once each; a list that cannot be read is a
    problem of the whole size (it says nothing of any region)."""
    if value is None:
        raise FieldProblem(MISSING_FIELD, "regions", "regions is null: says nothing of any region")
    if not isinstance(value, list):
        raise FieldProblem(INVALID_VALUE, "regions", f"regions is not a list: {value!r:.40}")
    regions: list[str] = []
    for region in value:
        if not isinstance(region, str) or not region.strip():
            raise FieldProblem(INVALID_VALUE, "regions", f"a region is no slug: {region!r:.40}")
        if region.strip() not in regions:
            regions.append(region.strip())
    return regions


def _stock(available: Any) -> tuple[Availability, FieldProblem | None]:
    """`available` true: the listed regions are in stock; false: sold out (no new Droplet
    can be created with the size). Anything else says nothing: unknown, with the reason."""
    if isinstance(available, bool):
        return availability_from_flag(available), None
    problem = FieldProblem(
        INVALID_VALUE, "available", f"available is {available!r:.40}: stock unknown"
    )
    return UNKNOWN, problem


def _monthly_cap(
    item: Mapping[str, Any], slug: str, kind: PriceKind, ctx: ParseContext, side: list[Record]
) -> tuple[PricePlan, ...]:
    """The month's cap as a month plan of the headline's kind; none when absent or 0."""
    cap = kept_price(ctx, item, "price_monthly", offer_key=slug, side=side)
    if not cap:
        return ()
    return (price_plan(cap, CURRENCY, PriceBasis.INSTANCE, kind, BillingUnit.MONTH),)


def _host(item: Mapping[str, Any], count: int) -> dict[str, Any]:
    """The Droplet's vCPUs, RAM (MiB) and disk (GB), per card."""
    return {
        "vcpus_per_gpu": measure(item.get("vcpus"), 2, per=count),
        "ram_gb_per_gpu": measure(item.get("memory"), 1, per=count * MIB_PER_GIB),
        "disk_gb_per_gpu": measure(item.get("disk"), 1, per=count),
    }
