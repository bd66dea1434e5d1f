"""Paperspace machine types (`GET /vmTypes/getVmTypesByClusters` -> `{<clusterId>: [...]}`).

Field meanings (Paperspace's public API; the shape of the gradient-cli test fixtures):

* each cluster's list holds one entry per machine type offered there: `isAvailable`
  (can be started now), `isPreemptible`, `vmType{label, cpus, ram (bytes, a string),
  gpuCount, gpuModel{label, memInGb}, defaultUsageRates[...]}`, `clusters[{id, name, region}]`;
* `defaultUsageRates[].type` says how the machine is billed: `hourly` (metered: the
  `usageRate.rateHourly` USD per hour) or `monthly` (a flat monthly subscription:
  `usageRate.rateMonthly` USD per month). Rates are for the whole machine (all
  `gpuCount` cards): basis `instance`. Rates flagged `isEmployeeOnly` are staff rates,
  not a public price, and are ignored.

Our offer is one machine type in one cluster: the hourly rate is the headline (on demand,
or spot for a preemptible type) and the monthly rate is a commitment plan beside it.
Each entry must carry what `CONTRACT` names: a key gone (drift) quarantines that entry, never
reads as "not available", and no entry carrying it is a layout error. `isPreemptible` is part
of the offer's key (`<cluster>/<label>`, `/preemptible` added for a preemptible type), never of
its stock; an entry that lost it is quarantined under the on-demand key and declares the
preemptible one unread (`<cluster>/<label>/`), so neither offer closes on a guess. A type with
its `gpuModel` key gone is not taken for a CPU-only type.
A null or non-boolean `isAvailable` is unknown stock, with a quarantine line saying why.

What is not an offer gpurent ranks is skipped with its kind (rule of truth 9), counted in the
run report and never a quarantine line: CPU-only types (a GPU model labelled "None") and the
free notebook tier (`Free-*` labels, capped sessions) are no GPU rental (`not_a_gpu_offer`);
a card the catalog leaves out on purpose (a Maxwell Quadro M4000, a Kepler K80) is
`outside_catalog` (`identify_gpu` says so); a type whose only rates are staff rates
(`isEmployeeOnly`) has no rate offered to the public (`not_offered`). A type with no readable
rate at all is an offer that cannot be read: quarantined.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from gpurent_core.billing_facts import platform_fees
from gpurent_core.model import AddonFee, BillingUnit, PriceBasis, PriceKind, PricePlan, SkipKind
from gpurent_core.normalize.availability import availability_from_flag
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    Skip,
    gpu_offer,
    guarded,
    identify_gpu,
    make_quarantine,
    make_skip,
    measure,
    not_an_object,
    price_plan,
    require,
    set_aside,
    to_int,
    to_price,
)
from spiders.parsers.contract import Contract, apply_check, check_items, drift_quarantine
from spiders.parsers.envelope import answer_keys

CURRENCY = "USD"
ENDPOINT_URL = "https://api.paperspace.io/vmTypes/getVmTypesByClusters"
# What every machine type entry must carry.
CONTRACT = Contract(
    "machine type entry",
    identity=("vmType.label", "vmType.gpuModel", "vmType.gpuCount", "isPreemptible"),
    price=("vmType.defaultUsageRates",),
    stock=("isAvailable",),
)
CONTRACTS: tuple[Contract, ...] = (CONTRACT,)
FREE_TIER_PREFIX = "Free-"
# GPU model labels Paperspace gives CPU-only machine types.
# An empty label is not among them: it is a name gone, quarantined, never read as CPU-only.
NO_GPU_LABELS = frozenset({"none", "none (cpu)"})

# Every Core machine's boot volume fee, from the billing facts (billing_facts.toml in this folder).
ADDON_FEES: tuple[AddonFee, ...] = platform_fees("paperspace")


def parse_vm_types(data: Any, ctx: ParseContext) -> PageResult:
    if (
        not isinstance(data, dict)
        or not data
        or not all(isinstance(v, list) for v in data.values())
    ):
        shown = answer_keys(data)
        return PageResult(layout_error=f"not a map of cluster id to machine type lists ({shown})")
    page = PageResult()
    entries: list[Any] = []
    seen: set[str] = set()
    for cluster_id, items in data.items():
        for item in items:
            entries.append(item)
            page.records.extend(_entry_records(str(cluster_id), item, ctx, seen))
            page.unread_prefixes.extend(_preemptible_unread(str(cluster_id), item))
    apply_check(page, check_items(entries, CONTRACT))
    return page


def offer_key(cluster_id: str, item: dict[str, Any]) -> str | None:
    vm_type = item.get("vmType")
    label = vm_type.get("label") if isinstance(vm_type, dict) else None
    if not isinstance(label, str) or not label.strip():
        return None
    suffix = "/preemptible" if item.get("isPreemptible") is True else ""
    return f"{cluster_id}/{label.strip()}{suffix}"


def _preemptible_unread(cluster_id: str, item: Any) -> list[str]:
    """An entry whose `isPreemptible` key is gone cannot say which of its type's two offers
    it is: its line carries the on-demand key, and `<cluster>/<label>/` (the preemptible
    one) is unread, so neither closes on a guess."""
    key = offer_key(cluster_id, item) if isinstance(item, dict) else None
    if key is None or "isPreemptible" in item:
        return []
    return [f"{key}/"]


def _entry_records(cluster_id: str, item: Any, ctx: ParseContext, seen: set[str]) -> list[Record]:
    if not isinstance(item, dict):
        return not_an_object(ctx, item)
    key = offer_key(cluster_id, item)
    vm_type = item.get("vmType")
    if isinstance(vm_type, dict) and "gpuModel" in vm_type:
        if _is_cpu_only(vm_type):
            why = "CPU-only machine type (GPU model labelled None)"
            return [make_skip(ctx, SkipKind.NOT_A_GPU_OFFER, why, offer_key=key)]
        if str(vm_type.get("label") or "").startswith(FREE_TIER_PREFIX):
            why = "free notebook tier (capped sessions), not a rental"
            return [make_skip(ctx, SkipKind.NOT_A_GPU_OFFER, why, offer_key=key)]
    gone = CONTRACT.gone(item)
    if gone:
        # The entry still holds its key: a twin after it is set aside as before.
        if key is not None:
            seen.add(key)
        return [drift_quarantine(ctx, item, gone, offer_key=key)]
    if key is not None and key in seen:
        # Two entries for one machine type and cluster (staff and public rate lists, as in
        # the gradient-cli fixture): keep the first, set the other aside.
        return [
            make_quarantine(
                ctx, reason=f"{INVALID_VALUE}: machine type listed twice in the cluster",
                field="vmType.label", raw=item, offer_key=key,
            )
        ]  # fmt: skip
    if key is not None:
        seen.add(key)
    return guarded(ctx, offer_key=key, raw=item, build=lambda: _build(item, key, ctx))


def _is_cpu_only(vm_type: dict[str, Any]) -> bool:
    """Paperspace marks a CPU-only type with a GPU model labelled "None" (the recordings and
    the gradient-cli fixture); a null or garbled `gpuModel` is not that signal, so such an
    entry is quarantined by `_build`, never skipped as CPU-only."""
    model = vm_type.get("gpuModel")
    label = model.get("label") if isinstance(model, dict) else None
    return isinstance(label, str) and label.strip().lower() in NO_GPU_LABELS


def _build(item: dict[str, Any], key: str | None, ctx: ParseContext) -> list[Record]:
    vm_type: dict[str, Any] = item["vmType"] if isinstance(item.get("vmType"), dict) else {}
    if key is None:
        raise FieldProblem(MISSING_FIELD, "vmType.label", "vmType.label is missing")
    model = vm_type.get("gpuModel")
    if not isinstance(model, dict):
        raise FieldProblem(
            INVALID_VALUE, "vmType.gpuModel", f"vmType.gpuModel is not an object: {model!r}"
        )
    raw_name = require(model, "label")
    mem = model.get("memInGb")
    identity = identify_gpu(
        raw_name,
        field="vmType.gpuModel.label",
        vram_gb=to_int(mem, "vmType.gpuModel.memInGb") if mem not in (None, "", "0", 0) else None,
    )
    count = to_int(require(vm_type, "gpuCount"), "vmType.gpuCount")
    hourly, monthly = _rates(vm_type)
    preemptible = item.get("isPreemptible") is True
    plans: list[PricePlan] = []
    if hourly is not None:
        price, unit = hourly, BillingUnit.HOUR
        kind = PriceKind.SPOT if preemptible else PriceKind.ON_DEMAND
        if monthly is not None:
            plans.append(
                price_plan(
                    monthly, CURRENCY, PriceBasis.INSTANCE, PriceKind.COMMITMENT, BillingUnit.MONTH
                )
            )
    elif monthly is not None:
        # Only a monthly subscription: that is the price of the row.
        price, unit, kind = monthly, BillingUnit.MONTH, PriceKind.COMMITMENT
    elif _staff_rates_only(vm_type):
        raise Skip(SkipKind.NOT_OFFERED, "only staff rates (isEmployeeOnly): no public rate")
    else:
        raise FieldProblem(
            MISSING_FIELD,
            "vmType.defaultUsageRates",
            "no public hourly or monthly rate (employee-only rates ignored)",
        )
    flag = item.get("isAvailable")
    problem = None
    if not isinstance(flag, bool):
        # Null or not a yes/no: nothing can be read, so unknown, with a line saying why.
        problem = FieldProblem(INVALID_VALUE, "isAvailable", f"isAvailable is not a flag: {flag!r}")
    return [
        gpu_offer(
            ctx,
            offer_key=key,
            raw=item,
            gpu=identity,
            raw_gpu_name=raw_name,
            gpu_count=count,
            stock=availability_from_flag(flag if isinstance(flag, bool) else None),
            price=price,
            currency=CURRENCY,
            billing_unit=unit,
            price_basis=PriceBasis.INSTANCE,
            price_kind=kind,
            region=_region(item),
            url=ENDPOINT_URL,
            fees=ADDON_FEES,
            plans=plans,
            host=_host(vm_type, count),
        ),
        *set_aside(ctx, problem, offer_key=key, item=item),
    ]


def _host(vm_type: dict[str, Any], count: int) -> dict[str, Any]:
    """`vmType.cpus` and `ram` (bytes) are the whole VM's: per card, divided by its GPUs."""
    return {
        "vcpus_per_gpu": measure(vm_type.get("cpus"), 2, per=count),
        "ram_gb_per_gpu": measure(vm_type.get("ram"), 1, per=count * 2**30),
    }


def _rates(vm_type: dict[str, Any]) -> tuple[Decimal | None, Decimal | None]:
    """The public hourly and monthly rates (staff-only rates ignored)."""
    rates = vm_type.get("defaultUsageRates")
    if not isinstance(rates, list):
        raise FieldProblem(
            MISSING_FIELD, "vmType.defaultUsageRates", "vmType.defaultUsageRates is missing"
        )
    hourly: Decimal | None = None
    monthly: Decimal | None = None
    for entry in rates:
        if not isinstance(entry, dict) or not isinstance(entry.get("usageRate"), dict):
            continue
        rate: dict[str, Any] = entry["usageRate"]
        if rate.get("isEmployeeOnly") is True:
            continue
        if entry.get("type") == "hourly" and hourly is None:
            hourly = to_price(rate.get("rateHourly"), "usageRate.rateHourly")
        elif entry.get("type") == "monthly" and monthly is None:
            monthly = to_price(rate.get("rateMonthly"), "usageRate.rateMonthly")
    return hourly, monthly


def _staff_rates_only(vm_type: dict[str, Any]) -> bool:
    """Every rate the type lists is flagged staff-only: Paperspace rents it to no one else."""
    rates = vm_type.get("defaultUsageRates")
    flags = [
        entry["usageRate"].get("isEmployeeOnly") is True
        for entry in rates or ()
        if isinstance(entry, dict) and isinstance(entry.get("usageRate"), dict)
    ]
    return bool(flags) and all(flags)


def _region(item: dict[str, Any]) -> str | None:
    clusters = item.get("clusters")
    if isinstance(clusters, list) and clusters and isinstance(clusters[0], dict):
        region = clusters[0].get("region")
        if isinstance(region, str) and region.strip():
            return region.strip()
    return None
