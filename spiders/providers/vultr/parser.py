"""Vultr plan lists: Cloud GPU plans (`GET /v2/plans?type=vcg` -> `{plans, meta}`) and
bare-metal plans (`GET /v2/plans-metal` -> `{plans_metal, meta}`).

The shape is Vultr's documented one (the API reference, www.vultr.com/api/ "List Plans" and
"List Bare Metal Plans", as its generated clients vultr/vultr-ruby docs/PlansApi.md,
Plans.md, PlansMetal.md and vultr/govultr plans.go, meta.go write it down; the Terraform
data source docs.vultr.com/reference/terraform/data-sources/plan; recordings/PROVENANCE):
each plan has `id`, `vcpu_count` (bare metal: `cpu_count`, `cpu_threads`), `ram` (MB),
`disk` (GB), `disk_count`, `bandwidth` (GB a month), `monthly_cost` (USD), `type`
(`vcg` is Cloud GPU) and `locations` ("an array of Regions where this plan is valid for
use", "where the plan can be deployed"); Cloud GPU plans add `gpu_vram_gb` and `gpu_type`
("NVIDIA_A100", "AMD_MI300X"). `meta` is `{total, links: {next, prev}}`, `next` the cursor
of the next page ("" on the last). Errors are `{error, status}`. Public projects that read
the same lists (dstackai/gpuhunt, sc-crawler; recordings/PROVENANCE) show the fields the
reference leaves out: `hourly_cost`, `gpu_count`, `deploy_ondemand`, `deploy_preemptible`,
`hourly_cost_preemptible`, `monthly_cost_preemptible` and a per-region `location_cost`.

Our reading of a plan:

* a GPU plan is one with a `gpu_type` key, a Cloud GPU plan (`type` vcg) or a bare-metal
  plan whose id ends "-gpu" (every bare-metal GPU plan's does; Vultr says not to parse ids,
  and we read nothing else from them: the suffix only keeps a GPU plan whose `gpu_type` is
  gone from passing for a CPU plan). Any other plan is no GPU rental: skipped
  (`not_a_gpu_offer`);
* offers: one per (plan, rate, region listed), keyed by the list, the plan, the rate and
  the region: `cloud-gpu/<id>/on_demand/<region>` (bare metal: `bare-metal/<id>/...`) at
  `hourly_cost`, and `.../spot/<region>` at `hourly_cost_preemptible` where the plan has a
  preemptible rate (an interruptible rate, price kind `spot`). The list comes first so that
  a request that fails leaves that list's offers unread and no other's (the spider). USD per
  hour for the whole server (basis `instance`), or the region's own price where
  `location_cost` names the region. A price of 0 is no price anyone pays: skipped
  (`no_public_price`, under the plan's key `<list>/<id>`), and so its rate makes no offers;
* whole cards only. Vultr sells slices of a card as Cloud GPU plans (1/20 of an A100 with 4
  GB of its 80, 1/2 with 40); a slice is no card gpurent ranks, so such a plan is skipped as
  `outside_catalog`, as the other providers' vGPU slices are (Azure's NVadsA10 v5, Tencent
  Cloud's vGPU types). `gpu_vram_gb` is the plan's total; the cards are `gpu_count` when
  given (a count below one, "1/2" or 0.5, is a slice), else the one whole number of catalog
  cards the total makes (none or two readings: quarantined, never guessed). A card's share
  below the catalog's smallest size of that model is a slice, and so is a share that
  divides a larger size of the model: 40 GB of an A100 is half of Vultr's 80 GB card, never
  read as a whole A100 40GB (a whole smaller card is skipped with it: a lost offer rather
  than a slice ranked as a card);
* stock. The documented answer is `locations`: the regions where the plan "can be deployed"
  (Vultr's words), in the same answer as the price. `GET /v2/regions/{region}/availability`
  ("the available plans in Region") says the same region by region: it would cost a
  request per region and type, and add nothing, so it is not read. A region listed is
  deployable at a rate while the rate's flag (`deploy_ondemand`, `deploy_preemptible`) is
  true: `in_stock`; false is Vultr saying the plan cannot be deployed on that rate now:
  every listed region `sold_out` (its own words, not an unknown, as DigitalOcean's
  `available: false`). A flag that is null or no flag says nothing: the listed regions are
  `unknown` (a quarantine line per offer says why) and the rate's prefix is unread. Every
  plan carries `deploy_ondemand` (public projects read it on every plan): it is in the
  contract, so a plan without it is drift, never in stock; `deploy_preemptible` gone from a
  plan with a preemptible rate costs that rate (a line under the plan's key, its prefix
  unread);
* regions not listed. A plan read whole declares each priced rate's prefix
  (`<list>/<id>/<rate>/`) sold-out-unlisted: a region Vultr stopped listing for a plan it
  still lists is one where it cannot be deployed now, so that offer turns `sold_out` under
  the same key; a plan listed with no region at all makes no offer (skipped,
  `not_offered`) and turns its earlier ones `sold_out` (Vultr's "where the plan can be
  deployed": nowhere, as public projects read an empty list, "not currently orderable in
  any region"). What was not read changes nothing: a plan that is quarantined leaves its
  prefix `<list>/<id>/` unread (stale, rule of truth 10), a plan without a readable id gets
  one unkeyed line per offer it would have made, a plan no longer listed at all is closed
  (gone, not sold out), and a page that fails leaves its list's offers unread (the spider);
* `monthly_cost` (`monthly_cost_preemptible` for the spot rate) is the month's cap: Vultr
  bills by the hour up to it (billing_facts.toml: 730 hours for GPU instances, 672 for bare
  metal), a month plan of the rate's kind, never a commitment. A bad one is set aside and
  the offer stands without it;
* fees: the egress fee of billing_facts.toml, on every offer as declared. The plan's
  `bandwidth` allowance is pooled across the account and accrues by the hour, so it is not
  subtracted (the fact says so in words);
* host: `vcpu_count` (bare metal: `cpu_threads`), `ram` (MB) and `disk` per card; `disk`
  only where `disk_count` is absent or 1 (with several disks the reference leaves open
  whether `disk` is each one's size or their sum). The interconnect is the card's form
  factor's, if the name says one ("NVIDIA_A100_SXM").

Contracts: every plan carries `PLAN`'s `id`; every GPU plan `GPU_PLAN`'s card (`gpu_type`,
`gpu_vram_gb`), price (`hourly_cost`) and stock (`locations`, `deploy_ondemand`). A key gone
from one plan quarantines it (its prefix unread); gone from every GPU plan is a layout error
(never "sold out"). An empty plan list is a layout error too: Vultr lists every plan of the
type, deployable or not, so an empty answer says nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from gpurent_core.billing_facts import platform_fees
from gpurent_core.catalog import get_catalog
from gpurent_core.model import (
    AddonFee,
    BillingUnit,
    PriceBasis,
    PriceKind,
    PricePlan,
    SkipKind,
    SkipRecord,
)
from gpurent_core.normalize.availability import UNKNOWN, Availability, availability_from_flag
from gpurent_core.normalize.gpu import GpuIdentity, snap_vram_gb
from spiders.parsers.common import (
    GPU_UNRESOLVED,
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
    make_skip,
    measure,
    not_an_object,
    price_plan,
    to_decimal,
    to_int,
    to_price,
)
from spiders.parsers.contract import Contract, apply_check, check_items, drift_quarantine
from spiders.parsers.envelope import ApiPage, list_at, listing_size, no_list

CURRENCY = "USD"
CLOUD_GPU_TYPE = "vcg"
METAL_GPU_ID_SUFFIX = "-gpu"
MB_PER_GB = 1024
NO_REGION = "listed in no region: deployable nowhere now"

PLAN = Contract("plan", identity=("id",))
GPU_PLAN = Contract(
    "GPU plan",
    identity=("gpu_type", "gpu_vram_gb"),
    price=("hourly_cost",),
    stock=("locations", "deploy_ondemand"),
)
CONTRACTS: tuple[Contract, ...] = (PLAN, GPU_PLAN)

# The fees every offer carries, from billing_facts.toml (the egress fee).
PLATFORM_FEES: tuple[AddonFee, ...] = platform_fees("vultr")


@dataclass(frozen=True)
class Listing:
    """One of the two plan lists: where its plans are, what makes one a GPU plan, where a
    renter orders it, and which field counts its CPUs."""

    noun: str
    segment: str
    """The first part of its offers' keys, so that a request that fails leaves this list's
    offers unread and no other's."""
    key: str
    url: str
    vcpus: str
    is_gpu_plan: Callable[[Mapping[str, Any]], bool]

    @property
    def prefix(self) -> str:
        """The start of the key of every offer of the list."""
        return f"{self.segment}/"


def _cloud_gpu_plan(item: Mapping[str, Any]) -> bool:
    return "gpu_type" in item or item.get("type") == CLOUD_GPU_TYPE


def _metal_gpu_plan(item: Mapping[str, Any]) -> bool:
    plan_id = item.get("id")
    return "gpu_type" in item or (
        isinstance(plan_id, str) and plan_id.strip().endswith(METAL_GPU_ID_SUFFIX)
    )


CLOUD_GPU = Listing(
    "Cloud GPU plan",
    "cloud-gpu",
    "plans",
    "https://www.vultr.com/products/cloud-gpu/",
    "vcpu_count",
    _cloud_gpu_plan,
)
BARE_METAL = Listing(
    "bare-metal plan",
    "bare-metal",
    "plans_metal",
    "https://www.vultr.com/products/bare-metal/",
    "cpu_threads",
    _metal_gpu_plan,
)


@dataclass(frozen=True)
class Rate:
    """A way to rent a plan: its key segment, price fields and deploy flag."""

    segment: str
    kind: PriceKind
    hourly: str
    monthly: str
    deploy: str


ON_DEMAND = Rate("on_demand", PriceKind.ON_DEMAND, "hourly_cost", "monthly_cost", "deploy_ondemand")
PREEMPTIBLE = Rate(
    "spot",
    PriceKind.SPOT,
    "hourly_cost_preemptible",
    "monthly_cost_preemptible",
    "deploy_preemptible",
)
RATES: tuple[Rate, ...] = (ON_DEMAND, PREEMPTIBLE)


@dataclass
class PlansPage(ApiPage):
    """One page of a plan list; `total` (`meta.total`) counts the plans of every page."""

    total: int | None = None
    next_cursor: str | None = None
    """`meta.links.next`: the cursor of the next page; None on the last."""


def parse_plans(data: Any, ctx: ParseContext) -> PlansPage:
    """A page of `GET /v2/plans?type=vcg`."""
    return parse_listing(data, ctx, CLOUD_GPU)


def parse_metal_plans(data: Any, ctx: ParseContext) -> PlansPage:
    """A page of `GET /v2/plans-metal`."""
    return parse_listing(data, ctx, BARE_METAL)


def parse_listing(data: Any, ctx: ParseContext, listing: Listing) -> PlansPage:
    failed = error_page(data, listing)
    if failed is not None:
        return failed
    items = list_at(data, listing.key)
    if items is None:
        return PlansPage(layout_error=no_list(data, listing.key))
    if not items:
        empty = f"empty '{listing.key}' list: says nothing of any {listing.noun}"
        return PlansPage(layout_error=empty)
    page = PlansPage(total=_total(data), next_cursor=_next_cursor(data))
    for item in items:
        read = read_plan(item, ctx, listing)
        page.records.extend(read.records)
        page.sold_out_unlisted.extend(read.sold_out_unlisted)
        page.unread_prefixes.extend(read.unread)
    apply_check(page, check_items(items, PLAN))
    gpu_plans = [i for i in items if isinstance(i, Mapping) and listing.is_gpu_plan(i)]
    apply_check(page, check_items(gpu_plans, GPU_PLAN))
    return page


def error_page(data: Any, listing: Listing) -> PlansPage | None:
    """The page of an error body (`{error, status}` instead of the list), else None. The
    lists are public: no key is sent, so none is refused; an error is a failed request."""
    if not isinstance(data, dict) or listing.key in data or not isinstance(data.get("error"), str):
        return None
    status = data.get("status")
    shown = f"{status}: " if isinstance(status, int) and not isinstance(status, bool) else ""
    return PlansPage(api_error=f"{shown}{data['error'][:80]}")


def _total(data: dict[str, Any]) -> int | None:
    meta = data.get("meta")
    return listing_size(meta.get("total"), least=0) if isinstance(meta, dict) else None


def _next_cursor(data: dict[str, Any]) -> str | None:
    meta = data.get("meta")
    links = meta.get("links") if isinstance(meta, dict) else None
    following = links.get("next") if isinstance(links, dict) else None
    return following.strip() if isinstance(following, str) and following.strip() else None


def plan_key(listing: Listing, plan_id: str) -> str:
    """What a line about a whole plan (a skip, a quarantine) is keyed by: the start of its
    offers' keys, `<list>/<plan id>`."""
    return f"{listing.prefix}{plan_id}"


def plan_prefix(listing: Listing, plan_id: str) -> str:
    """The start of the key of every offer of one plan."""
    return f"{plan_key(listing, plan_id)}/"


def rate_prefix(listing: Listing, plan_id: str, rate: Rate) -> str:
    """The start of the key of every offer of one plan at one rate."""
    return f"{plan_prefix(listing, plan_id)}{rate.segment}/"


@dataclass
class PlanRead:
    """One plan's records, and what its unlisted regions mean (`PlansPage` prefixes)."""

    records: list[Record] = field(default_factory=list)
    sold_out_unlisted: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)
    read_whole: bool = False


def read_plan(item: Any, ctx: ParseContext, listing: Listing) -> PlanRead:
    """One plan: its offers (per rate and region listed) with their side lines, a skip, or
    its quarantine line under its id, whose prefix is then unread."""
    if not isinstance(item, Mapping):
        return PlanRead(not_an_object(ctx, item))
    plan_id = id_text(item.get("id"))
    key = plan_key(listing, plan_id) if plan_id is not None else None
    if not listing.is_gpu_plan(item):
        skip = make_skip(ctx, SkipKind.NOT_A_GPU_OFFER, "plan without GPU", offer_key=key)
        return PlanRead([skip])
    gone = [*PLAN.gone(item), *GPU_PLAN.gone(item)]
    if plan_id is None:
        return PlanRead(keyless_lines(ctx, item, gone))
    unread = [plan_prefix(listing, plan_id)]
    if gone:
        return PlanRead([drift_quarantine(ctx, item, gone, offer_key=key)], unread=unread)
    read = PlanRead()

    def build() -> list[Record]:
        records = _build(item, plan_id, listing, ctx, read)
        read.read_whole = True
        return records

    read.records = guarded(ctx, offer_key=key, raw=item, build=build)
    if not read.read_whole:
        # Skipped (no card we rank): nothing to say of its regions. Unreadable: unread.
        skipped = all(isinstance(r, SkipRecord) for r in read.records)
        read.sold_out_unlisted = []
        read.unread = [] if skipped else unread
    return read


def keyless_lines(ctx: ParseContext, item: Mapping[str, Any], gone: list[str]) -> list[Record]:
    """A GPU plan without a readable id names none of its offers: one line for each offer
    it would have made (each rate it lists, in each region it lists), none keyed, so that
    every one is accounted for; one line when its regions cannot be read either."""
    line = (
        drift_quarantine(ctx, item, gone, offer_key=None)
        if gone
        else field_quarantine(
            ctx,
            FieldProblem(INVALID_VALUE, "id", f"id is not a plan id: {item.get('id')!r:.40}"),
            offer_key=None,
            item=item,
        )
    )
    try:
        regions = regions_of(item.get("locations"))
    except FieldProblem:
        regions = ()
    rates = 2 if preemptible_listed(item) else 1
    return [line] * max(1, len(regions) * rates)


@dataclass(frozen=True)
class Plan:
    """What every offer of one GPU plan shares."""

    item: Mapping[str, Any]
    plan_id: str
    gpu: GpuIdentity
    raw_gpu_name: str
    count: int
    regions: tuple[str, ...]
    regional: Mapping[str, Any]
    """`location_cost`: the regions with their own prices."""
    listing: Listing

    @property
    def key(self) -> str:
        return plan_key(self.listing, self.plan_id)


def _build(
    item: Mapping[str, Any],
    plan_id: str,
    listing: Listing,
    ctx: ParseContext,
    read: PlanRead,
) -> list[Record]:
    raw_name = item["gpu_type"]
    if not isinstance(raw_name, str) or not raw_name.strip():
        raise FieldProblem(MISSING_FIELD, "gpu_type", f"gpu_type names no card: {raw_name!r:.40}")
    count, per_card = cards(item, raw_name)
    plan = Plan(
        item=item,
        plan_id=plan_id,
        gpu=identify_gpu(raw_name, field="gpu_type", vram_gb=per_card),
        raw_gpu_name=raw_name,
        count=count,
        regions=regions_of(item["locations"]),
        regional=_location_costs(item.get("location_cost")),
        listing=listing,
    )
    records: list[Record] = []
    for rate in RATES:
        records.extend(_rate_offers(plan, rate, ctx, read))
    if not plan.regions:
        # Deployable nowhere now: no offer, and its rates' prefixes turn earlier ones sold out.
        records.append(make_skip(ctx, SkipKind.NOT_OFFERED, NO_REGION, offer_key=plan.key))
    return records


# -- the cards --------------------------------------------------------------------------


def cards(item: Mapping[str, Any], raw_name: str) -> tuple[int, int]:
    """Whole cards and GB per card; a `Skip` when the plan rents a slice of one."""
    total = to_int(item["gpu_vram_gb"], "gpu_vram_gb")
    if total <= 0:
        raise FieldProblem(INVALID_VALUE, "gpu_vram_gb", f"gpu_vram_gb is {total}")
    model = identify_gpu(raw_name, field="gpu_type").model
    sizes = sorted({sku.vram_gb for sku in get_catalog().variants(model)})
    if not sizes:
        raise FieldProblem(GPU_UNRESOLVED, "gpu_type", f"{raw_name!r}: no catalog card sizes")
    count = stated_count(item.get("gpu_count"), raw_name)
    if count is None:
        count = count_from_vram(total, sizes, raw_name)
    if total % count:
        raise FieldProblem(
            INVALID_VALUE, "gpu_vram_gb", f"gpu_vram_gb {total} does not split over {count} cards"
        )
    per_card = total // count
    whole = slice_of(per_card, sizes)
    if whole is not None:
        raise Skip(
            SkipKind.OUTSIDE_CATALOG,
            f"{raw_name} with {per_card} GB: a vGPU slice of a {whole} GB card",
        )
    return count, per_card


def stated_count(value: Any, raw_name: str) -> int | None:
    """`gpu_count` as whole cards; None when absent; a `Skip` for a fraction of a card."""
    if value is None:
        return None
    if isinstance(value, str) and "/" in value:
        top, _, bottom = value.partition("/")
        if top.strip().isdigit() and bottom.strip().isdigit() and 0 < int(top) < int(bottom):
            raise Skip(SkipKind.OUTSIDE_CATALOG, f"{raw_name} x {value}: a vGPU slice of a card")
        raise FieldProblem(INVALID_VALUE, "gpu_count", f"gpu_count is no count: {value!r:.40}")
    number = to_decimal(value, "gpu_count")
    if 0 < number < 1:
        raise Skip(SkipKind.OUTSIDE_CATALOG, f"{raw_name} x {number}: a vGPU slice of a card")
    if number < 1 or number != number.to_integral_value():
        raise FieldProblem(INVALID_VALUE, "gpu_count", f"gpu_count is no card count: {number}")
    return int(number)


def count_from_vram(total: int, sizes: Sequence[int], raw_name: str) -> int:
    """The cards a plan's total VRAM makes when `gpu_count` is not sent: one (a slice, then)
    below the smallest card; else the one whole number of catalog cards it makes."""
    if total < sizes[0]:
        return 1
    readings = sorted({total // size for size in sizes if total % size == 0})
    if len(readings) != 1:
        said = " or ".join(f"{n}" for n in readings) or "no whole number of"
        raise FieldProblem(
            INVALID_VALUE,
            "gpu_count",
            f"no gpu_count, and {total} GB of {raw_name} makes {said} cards",
        )
    return readings[0]


def slice_of(per_card: int, sizes: Sequence[int]) -> int | None:
    """The card size a card's share of VRAM is a slice of; None for a whole card."""
    if per_card < sizes[0]:
        return sizes[-1]
    nominal = snap_vram_gb(Decimal(per_card), sizes)
    if nominal is None:
        return None  # fits no size: the card's name and the hint decide (a quarantine)
    larger = [size for size in sizes if size > nominal and size % nominal == 0]
    return larger[-1] if larger else None


# -- where and at what price ------------------------------------------------------------


def regions_of(value: Any) -> tuple[str, ...]:
    """The region ids listed, in order, once each; a list that cannot be read is a problem
    of the whole plan (it says nothing of any region)."""
    if value is None:
        raise FieldProblem(
            MISSING_FIELD, "locations", "locations is null: says nothing of any region"
        )
    if not isinstance(value, list):
        raise FieldProblem(INVALID_VALUE, "locations", f"locations is not a list: {value!r:.40}")
    regions: list[str] = []
    for region in value:
        if not isinstance(region, str) or not region.strip():
            raise FieldProblem(INVALID_VALUE, "locations", f"a region is no id: {region!r:.40}")
        if region.strip() not in regions:
            regions.append(region.strip())
    return tuple(regions)


def _location_costs(value: Any) -> Mapping[str, Any]:
    """`location_cost` by region; none when absent or empty (an empty list names no region
    either). Anything else leaves every region's price in doubt: a problem of the plan."""
    if value is None or value == [] or value == {}:
        return {}
    if not isinstance(value, Mapping):
        raise FieldProblem(
            INVALID_VALUE, "location_cost", f"location_cost is not an object: {value!r:.40}"
        )
    return value


def _rate_offers(plan: Plan, rate: Rate, ctx: ParseContext, read: PlanRead) -> list[Record]:
    """One rate's offers, one per region listed, with their side lines; what the rate's
    unlisted regions mean goes to `read`."""
    item, prefix = plan.item, rate_prefix(plan.listing, plan.plan_id, rate)
    price = base_price(plan, rate, ctx)
    if isinstance(price, RateAside):
        read.unread.extend([prefix] if price.unread else [])
        return price.records
    side: list[Record] = []
    month = _month_cap(item, rate.monthly, plan.key, side, ctx)
    stock, stock_problem = deployable(item, rate.deploy)
    (read.unread if stock_problem is not None else read.sold_out_unlisted).append(prefix)
    records: list[Record] = []
    for region in plan.regions:
        key = prefix + region
        try:
            hourly, cap = _regional_price(plan, rate, region, price, month)
        except FieldProblem as problem:  # this region's price: this offer, unread
            records.append(field_quarantine(ctx, problem, offer_key=key, item=item))
            continue
        records.append(_offer(plan, rate, region, key, hourly, cap, stock, ctx))
        if stock_problem is not None:
            # Each offer whose stock went unknown says why, under its own key.
            records.append(field_quarantine(ctx, stock_problem, offer_key=key, item=item))
    return [*records, *side]


@dataclass(frozen=True)
class RateAside:
    """A rate that makes no offer: its line (a skip, a bad price), and whether what it
    listed before is unread (a price that cannot be read) rather than no longer offered."""

    records: list[Record]
    unread: bool = False


def base_price(plan: Plan, rate: Rate, ctx: ParseContext) -> Decimal | RateAside:
    """The rate's plan-wide hourly price, or why the rate makes no offer. An on-demand
    price that cannot be read is the plan's problem (the contract's price); a preemptible
    rate that cannot be read (its price, or its flag gone) costs the spot rate only."""
    item = plan.item
    if rate is PREEMPTIBLE and not preemptible_listed(item):
        return RateAside([])
    try:
        if rate.deploy not in item:  # on demand: the contract's; preemptible: checked here
            raise FieldProblem(MISSING_FIELD, rate.deploy, f"key gone: {rate.deploy}")
        price = hourly_price(item.get(rate.hourly), rate.hourly)
    except FieldProblem as problem:
        if rate is ON_DEMAND:
            raise
        line = field_quarantine(ctx, problem, offer_key=plan.key, item=item)
        return RateAside([line], unread=True)
    if price == 0:
        detail = f"{plan.plan_id}: {rate.hourly} 0"
        return RateAside([make_skip(ctx, SkipKind.NO_PUBLIC_PRICE, detail, offer_key=plan.key)])
    return price


def preemptible_listed(item: Mapping[str, Any]) -> bool:
    """Whether the plan has a preemptible rate: deployable as such, or priced above 0 by the
    hour or the month (a price that is no number counts, so that it is reported rather than
    passed over; one of the two gone leaves the other to say the rate is there)."""
    if item.get(PREEMPTIBLE.deploy) is True:
        return True
    for key in (PREEMPTIBLE.hourly, PREEMPTIBLE.monthly):
        price = item.get(key)
        if price is None:
            continue
        try:
            if to_decimal(price, key) != 0:
                return True
        except FieldProblem:
            return True
    return False


def _month_cap(
    item: Mapping[str, Any], key: str, plan_key: str, side: list[Record], ctx: ParseContext
) -> Decimal | None:
    """The rate's month cap; None when absent or 0, set aside (in `side`) when bad."""
    if item.get(key) is None:
        return None
    try:
        cap = to_price(item[key], key)
    except FieldProblem as problem:
        side.append(field_quarantine(ctx, problem, offer_key=plan_key, item=item))
        return None
    return cap or None


def _regional_price(
    plan: Plan, rate: Rate, region: str, price: Decimal, month: Decimal | None
) -> tuple[Decimal, Decimal | None]:
    """The rate's hourly price and month cap in `region`: its `location_cost` entry where it
    names one (its own cap only: a plan-wide cap never goes with a regional price)."""
    entry = plan.regional.get(region)
    if entry is None:
        return price, month
    where = f"location_cost.{region}"
    if not isinstance(entry, Mapping):
        raise FieldProblem(INVALID_VALUE, where, f"{where} is not an object: {entry!r:.40}")
    if entry.get(rate.hourly) is None:
        return price, month
    regional = hourly_price(entry[rate.hourly], f"{where}.{rate.hourly}")
    if regional == 0:
        raise FieldProblem(INVALID_VALUE, where, f"{where}.{rate.hourly} is 0")
    cap = entry.get(rate.monthly)
    return regional, (to_price(cap, f"{where}.{rate.monthly}") or None) if cap is not None else None


def deployable(item: Mapping[str, Any], flag: str) -> tuple[Availability, FieldProblem | None]:
    """A listed region's stock at one rate: in stock while the rate's flag is true, sold out
    when it is false; anything else says nothing: unknown, with the reason."""
    value = item.get(flag)
    if isinstance(value, bool):
        return availability_from_flag(value), None
    return UNKNOWN, FieldProblem(INVALID_VALUE, flag, f"{flag} is {value!r:.40}: stock unknown")


def _offer(
    plan: Plan,
    rate: Rate,
    region: str,
    key: str,
    hourly: Decimal,
    cap: Decimal | None,
    stock: Availability,
    ctx: ParseContext,
) -> Record:
    plans: tuple[PricePlan, ...] = ()
    if cap is not None:
        plans = (price_plan(cap, CURRENCY, PriceBasis.INSTANCE, rate.kind, BillingUnit.MONTH),)
    return gpu_offer(
        ctx,
        offer_key=key,
        raw=plan.item,
        gpu=plan.gpu,
        raw_gpu_name=plan.raw_gpu_name,
        gpu_count=plan.count,
        stock=stock,
        price=hourly,
        currency=CURRENCY,
        price_basis=PriceBasis.INSTANCE,
        price_kind=rate.kind,
        region=region,
        url=plan.listing.url,
        fees=PLATFORM_FEES,
        plans=plans,
        host=host(plan.item, plan.count, plan.listing),
    )


def host(item: Mapping[str, Any], count: int, listing: Listing) -> dict[str, Any]:
    """The server's vCPUs (threads), RAM (MB) and disk (GB), per card; the disk only where
    the plan has one (`disk_count` absent or 1)."""
    disks = item.get("disk_count")
    one_disk = disks is None or (
        isinstance(disks, int) and not isinstance(disks, bool) and disks == 1
    )
    return {
        "vcpus_per_gpu": measure(item.get(listing.vcpus), 2, per=count),
        "ram_gb_per_gpu": measure(item.get("ram"), 1, per=count * MB_PER_GB),
        "disk_gb_per_gpu": measure(item.get("disk"), 1, per=count) if one_disk else None,
    }
