"""TensorDock marketplace host nodes (`GET /api/v0/client/deploy/hostnodes`).

Answer (the legacy v0 marketplace API, no auth; shape as in gpuhunt's TensorDock fixture):
`{"hostnodes": {<id>: {"location": {country, region, city}, "specs": {cpu, gpu, ram,
storage}}}}`. TensorDock prices a VM by component, each `price` in USD per unit per hour:

* `specs.gpu.<slug>` (e.g. `l40-pcie-48gb`): `price` per GPU, `amount` = cards free now,
  `vram` GB per card;
* `specs.cpu`: `price` per vCPU, `amount` vCPUs free; `specs.ram`: per GB, `amount` GB free;
* `specs.storage`: per GB of disk, `amount` GB free.

Our offer is one card of a (host node, GPU slug): a VM takes 1..`amount` cards at the same
per-GPU price, so the one-card VM is the comparable unit and `available_count` says how
many cards are free. The smallest VM that carries one card adds mandatory fees. TensorDock
publishes no minimum in this answer; we use the minimums gpuhunt's TensorDock provider
applied when it sized the cheapest VM (its last version, before the provider was dropped
in Feb 2026): 1 vCPU, RAM in whole pairs of GB so at least 2 GB, and a disk of at least
30 GB (an Ubuntu image needs it). Disk size beyond that is the renter's choice.

A card free on a node whose free vCPUs, RAM or disk cannot hold that smallest VM cannot be
rented: counted as 0 free (sold out) rather than in stock.

Contracts (`CONTRACTS`): a host node carries `specs.gpu` and the free `amount` of each part
(read to tell whether a card can be rented at all); each GPU entry carries `price` and
`amount`. `vram` is only a hint: the slug names the memory ("l40-pcie-48gb"), so an entry
without it is read from the slug (a slug that does not pin the size keeps VRAM unknown). A
key gone is drift: the card is quarantined under its key (`<node>/<slug>`), never read as
"no count"; gone from every node or card it is the page's layout error.

A host node that cannot be read at all (drift in its specs, no card list) is one quarantine
line, and since a node makes one offer per card, the page declares `<node>/` unread
(`PageResult.unread_prefixes`): its offers keep their last state, stale, rather than close.
Keys never follow the stock answer: a card with no free unit is the same `<node>/<slug>`,
sold out.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from gpurent_core.model import AddonFee, BillingUnit, FeeType, PriceBasis, QuarantineRecord
from gpurent_core.normalize.availability import Availability, availability_from_counts
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    counted_stock,
    gpu_offer,
    guarded,
    hourly_price,
    identify_gpu,
    make_quarantine,
    optional_int,
    set_aside,
    to_decimal,
    to_price,
)
from spiders.parsers.contract import (
    Contract,
    apply_check,
    check_items,
    contracted,
    drift_quarantine,
)
from spiders.parsers.envelope import answer_keys
from spiders.parsers.fees import per_gb_fee, vm_part_fee

CURRENCY = "USD"
ENDPOINT_URL = "https://marketplace.tensordock.com/api/v0/client/deploy/hostnodes"
MIN_VCPUS = Decimal(1)
MIN_RAM_GB = Decimal(2)
MIN_DISK_GB = Decimal(30)
# Parts every host node's specs carry.
SPEC_PARTS = ("cpu", "gpu", "ram", "storage")
NODE_CONTRACT = Contract(
    "host node",
    stock=("specs.gpu", "specs.cpu.amount", "specs.ram.amount", "specs.storage.amount"),
)
GPU_CONTRACT = Contract("GPU entry", price=("price",), stock=("amount",))
CONTRACTS: tuple[Contract, ...] = (NODE_CONTRACT, GPU_CONTRACT)


def parse_hostnodes(data: Any, ctx: ParseContext) -> PageResult:
    if not isinstance(data, dict) or not isinstance(data.get("hostnodes"), dict):
        keys = answer_keys(data)
        return PageResult(layout_error=f"no 'hostnodes' object in the answer (got {keys})")
    nodes: dict[str, Any] = data["hostnodes"]
    page = PageResult()
    for node_id, node in nodes.items():
        records = hostnode_records(str(node_id), node, ctx)
        page.records.extend(records)
        if _node_unread(str(node_id), records):
            page.unread_prefixes.append(f"{node_id}/")
    apply_check(page, check_items(nodes.values(), NODE_CONTRACT))
    apply_check(page, check_items(_gpu_entries(nodes.values()), GPU_CONTRACT))
    return page


def _node_unread(node_id: str, records: list[Record]) -> bool:
    """The node itself could not be read: its one line carries the node's id, which is no
    offer's key (each card's is `<node>/<slug>`)."""
    return any(isinstance(r, QuarantineRecord) and r.offer_key == node_id for r in records)


def _gpu_entries(nodes: Any) -> list[Any]:
    """Every card entry of the nodes whose own contract holds (the others are one line)."""
    entries: list[Any] = []
    for node in nodes:
        if isinstance(node, dict) and not NODE_CONTRACT.gone(node):
            specs = node.get("specs")
            gpus = specs.get("gpu") if isinstance(specs, dict) else None
            entries.extend(gpus.values() if isinstance(gpus, dict) else ())
    return entries


def hostnode_records(node_id: str, node: Any, ctx: ParseContext) -> list[Record]:
    """One offer per GPU slug of the node; a node without usable specs is one quarantine line."""
    gone = NODE_CONTRACT.gone(node) if isinstance(node, dict) else []
    if gone:
        return [drift_quarantine(ctx, node, gone, offer_key=node_id)]
    specs = node.get("specs") if isinstance(node, dict) else None
    if not isinstance(specs, dict) or not isinstance(specs.get("gpu"), dict):
        return [
            make_quarantine(
                ctx, reason=f"{MISSING_FIELD}: host node without specs.gpu", field="specs.gpu",
                raw=node if isinstance(node, dict) else str(node), offer_key=node_id,
            )
        ]  # fmt: skip
    records: list[Record] = []
    for slug, gpu in specs["gpu"].items():
        key = f"{node_id}/{slug}"
        # What a quarantine line shows: the node, and its specs with this card only.
        raw = {
            "hostnode": node_id,
            "location": node.get("location"),
            "specs": {**specs, "gpu": {slug: gpu}},
        }
        build = _builder(str(slug), gpu, key, raw, node, ctx)
        if isinstance(gpu, dict):
            records.extend(contracted(ctx, gpu, GPU_CONTRACT, offer_key=key, build=build))
        else:
            records.extend(guarded(ctx, offer_key=key, raw=raw, build=build))
    return records


def _builder(
    slug: str, gpu: Any, key: str, raw: dict[str, Any], node: dict[str, Any], ctx: ParseContext
) -> Callable[[], list[Record]]:
    return lambda: _build(slug, gpu, key, raw, node, ctx)


def _build(
    slug: str,
    gpu: Any,
    key: str,
    raw: dict[str, Any],
    node: dict[str, Any],
    ctx: ParseContext,
) -> list[Record]:
    specs: dict[str, Any] = node["specs"]
    if not isinstance(gpu, dict):
        raise FieldProblem(MISSING_FIELD, f"specs.gpu.{slug}", "GPU entry is not an object")
    vram = optional_int(gpu, "vram")
    identity = identify_gpu(slug, field=f"specs.gpu.{slug}", vram_gb=vram)
    price = hourly_price(gpu.get("price"), f"specs.gpu.{slug}.price")
    fees = _fees(specs)
    availability, problem = counted_stock("amount", lambda: _availability(gpu, specs))
    return [
        gpu_offer(
            ctx,
            offer_key=key,
            raw=raw,
            gpu=identity,
            raw_gpu_name=slug,
            gpu_count=1,
            stock=availability,
            price=price,
            currency=CURRENCY,
            price_basis=PriceBasis.GPU,
            region=_region(node.get("location")),
            url=ENDPOINT_URL,
            fees=fees,
        ),
        *set_aside(ctx, problem, offer_key=key, item=gpu),
    ]


def _part(specs: dict[str, Any], name: str) -> dict[str, Any]:
    part = specs.get(name)
    if not isinstance(part, dict):
        raise FieldProblem(MISSING_FIELD, f"specs.{name}", f"specs.{name} is missing")
    return part


def _fees(specs: dict[str, Any]) -> tuple[AddonFee, ...]:
    # A bad component price makes the card's true cost unknowable: the offer is quarantined.
    return (
        vm_part_fee(
            FeeType.VCPU,
            _part_price(specs, "cpu"),
            CURRENCY,
            quantity=MIN_VCPUS,
            note="least vCPUs per VM (gpuhunt's TensorDock minimum: 1)",
        ),
        vm_part_fee(
            FeeType.MEMORY,
            _part_price(specs, "ram"),
            CURRENCY,
            quantity=MIN_RAM_GB,
            note="least RAM per VM, in GB (gpuhunt's TensorDock minimum: 2, even sizes)",
        ),
        per_gb_fee(
            _part_price(specs, "storage"),
            CURRENCY,
            BillingUnit.HOUR,
            mandatory=True,
            note="per GB of the VM disk, size chosen when renting (at least 30 GB)",
        ),
    )


def _part_price(specs: dict[str, Any], name: str) -> Decimal:
    return to_price(_part(specs, name).get("price"), f"specs.{name}.price")


def _availability(gpu: dict[str, Any], specs: dict[str, Any]) -> Availability:
    """Free cards from `amount`; a null or bad count is `unknown` (rule of truth 1), with
    its field quarantined beside the offer (`counted_stock`)."""
    free = optional_int(gpu, "amount")
    if free is None:  # present (the contract holds) but null: no count to read
        raise FieldProblem(INVALID_VALUE, "amount", "amount is null")
    if free > 0 and not _room_for_smallest_vm(specs):
        free = 0
    return availability_from_counts(free)


def _room_for_smallest_vm(specs: dict[str, Any]) -> bool:
    """The node has the vCPUs, RAM and disk left for a one-card VM (unknown: assume so)."""
    for name, least in (("cpu", MIN_VCPUS), ("ram", MIN_RAM_GB), ("storage", MIN_DISK_GB)):
        amount = _part(specs, name).get("amount")
        if amount is not None and to_decimal(amount, f"specs.{name}.amount") < least:
            return False
    return True


def _region(location: Any) -> str | None:
    if not isinstance(location, dict):
        return None
    parts = [location.get(k) for k in ("city", "region", "country")]
    text = ", ".join(p.strip() for p in parts if isinstance(p, str) and p.strip())
    return text or None
