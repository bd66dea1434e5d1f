"""Drift kit: mutated copies of the default recordings, made at test time, one per scenario.

Each table below says, per provider, where the items of a response are and what to spoil:

* `RENAMES`: the stock field, renamed in every item of every body that carries it (for the
  HTML pages, the stock cell's class and its column header);
* `BREAKS`: one bad cell (a price `{}` or `1e400`, a count `-1`) in one item of one body;
* `FAILING_PAGES`: the body whose route answers HTTP 500 (a replay route fault), and the run
  statuses that honest parse health allows for it (`failed` when it was the only page).

Locators are dotted paths into a JSON body: a key, `[]` for every element of a list, `*`
for every value of an object ("data.list.[]" = each element of `data.list`). Nothing here is
committed as a copy: `mutated_recordings` writes the spoilt folder into a temp dir.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replay import copy_default_scene

REPO_ROOT = Path(__file__).resolve().parents[2]

# A JSON number no float can hold: written raw into the body, since json.dumps cannot.
HUGE = "__raw_number_1e400__"


@dataclass(frozen=True)
class Rename:
    """The stock field of a provider, renamed everywhere it appears."""

    bodies: str
    """Glob of the body files (in the provider's recording folder)."""
    items: str = ""
    """Locator of the items in each body ("" = the body itself)."""
    key: str = ""
    """Dotted path of the stock key inside an item; its last part is renamed."""
    swaps: tuple[tuple[str, str], ...] = ()
    """Text replacements instead (HTML and script pages): (old, new), each must occur."""
    named: str = ""
    """What the run report must name (a missing path or layout error containing it)."""

    @property
    def expected_name(self) -> str:
        return self.named or self.key.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class Break:
    """One bad cell in one item."""

    body: str
    items: str = ""
    index: int = 0
    field: str = ""
    value: Any = None
    swaps: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class FailingPage:
    body: str
    """The body file whose route answers 500."""
    statuses: frozenset[str]
    """Allowed run statuses: `partial` when other pages still parse, `failed` when not."""


PARTIAL = frozenset({"partial"})
FAILED = frozenset({"failed"})
EITHER = frozenset({"partial", "failed"})

RENAMES: dict[str, Rename] = {
    "autodl": Rename("machine_list_page*.json", "data.list.[]", "gpu_idle_num"),
    "azure": Rename("prices_*.json", "Items.[]", "meterName"),
    # Chenyu's `status` is read for no stock (its values are undocumented), but it is the
    # state field its contract holds it to: renamed everywhere, the layout changed.
    "chenyu": Rename("gpu_list.json", "data.gpu_list.[]", "status"),
    "cloudrift": Rename(
        "instance_types.json", "data.instance_types.[].variants.[]", "available_nodes_per_dc"
    ),
    "compshare": Rename("gpu_inventory_*.json", "", "GpuInventoryByZone"),
    "cudo": Rename("machine_types.json", "machineTypes.[]", "totalGpuFree"),
    "digitalocean": Rename("sizes_page*.json", "sizes.[]", "available"),
    "featurize": Rename("available_instances.json", "data.records.[]", "status"),
    "gongji": Rename(
        "pricing.*",
        swaps=(
            ('cell(row, "stock",', 'cell(row, "inventory",'),
            ("<th>库存</th>", "<th>余量</th>"),
        ),
        named="stock",
    ),
    "gpuez": Rename("machine_list_page*.json", "data.list.[]", "ended_at"),
    "gpushare": Rename("machine_list_page*.json", "data.list.[]", "gpuUsed"),
    "hyperstack": Rename("flavors.json", "data.[].flavors.[]", "stock_available"),
    "jarvislabs": Rename("server_meta.json", "server_meta.[]", "num_free_devices"),
    "lambda": Rename("instance_types.json", "data.*", "regions_with_capacity_available"),
    "lanyun": Rename("dev_list_region*.json", "data.[]", "unuseGpuNum"),
    "matpool": Rename("machines_page*.json", "machines.[]", "gpu.available"),
    "paperspace": Rename("vm_types_by_clusters.json", "*.[]", "isAvailable"),
    "novita": Rename("products.json", "data.[]", "availableDeploy"),
    "ppio": Rename("products.json", "data.[]", "availableDeploy"),
    "primeintellect": Rename("availability.json", "*.[]", "stockStatus"),
    "runpod": Rename("prices_*.json", "data.gpuTypes.[].lowestPrice", "stockStatus"),
    "shadeform": Rename("instance_types.json", "instance_types.[].availability.[]", "available"),
    "suanjia": Rename(
        "pricing.*",
        swaps=(
            ('cell(row, "stock",', 'cell(row, "inventory",'),
            ("<th>库存</th>", "<th>余量</th>"),
        ),
        named="stock",
    ),
    "tencentcloud": Rename("zone_configs_*.json", "Response.InstanceTypeQuotaSet.[]", "Status"),
    "tensordock": Rename("hostnodes.json", "hostnodes.*.specs.gpu.*", "amount"),
    "ucloud": Rename("instance_types.json", "AvailableInstanceTypes.[]", "Status"),
    "vastai": Rename("bundles_page*.json", "offers.[]", "rented"),
    "verda": Rename("availability_*.json", "[]", "availabilities"),
    "vultr": Rename("plans_*.json", "*.[]", "locations"),
    "xiangongyun": Rename(
        "pricing.html",
        swaps=(('class="gpu-stock"', 'class="gpu-inventory"'), ("<th>库存</th>", "<th>余量</th>")),
        named="gpu-stock",
    ),
}

BREAKS: dict[str, Break] = {
    "autodl": Break("machine_list_page1.json", "data.list.[]", 0, "payg_price", {}),
    "azure": Break("prices_ncads_h100_v5_page1.json", "Items.[]", 0, "retailPrice", {}),
    "compshare": Break(
        "instance_types.json", "AvailableInstanceTypes.[]", 0, "GraphicsMemory.Value", -1
    ),
    "chenyu": Break("gpu_list.json", "data.gpu_list.[]", 0, "price.hour", {}),
    "cloudrift": Break(
        "instance_types.json", "data.instance_types.[].variants.[]", 0, "cost_per_hour", {}
    ),
    "cudo": Break("machine_types.json", "machineTypes.[]", 0, "gpuPriceHr.value", {}),
    "digitalocean": Break("sizes_page1.json", "sizes.[]", 2, "price_hourly", {}),
    "featurize": Break("available_instances.json", "data.records.[]", 0, "unit_price", {}),
    "gongji": Break(
        "pricing.js",
        swaps=(
            (
                '{ model: "RTX 3090", vram: 24, onDemand: 1.3,',
                '{ model: "RTX 3090", vram: 24, onDemand: 1.3, onDemandText: "¥1e400/时",',
            ),
        ),
    ),
    "gpuez": Break("machine_list_page1.json", "data.list.[]", 0, "price_week", {}),
    "gpushare": Break("machine_list_page1.json", "data.list.[]", 0, "skuList.0.price", {}),
    "hyperstack": Break("flavors.json", "data.[].flavors.[]", 1, "gpu_count", -1),
    "jarvislabs": Break("server_meta.json", "server_meta.[]", 0, "price_per_hour", {}),
    "lambda": Break("instance_types.json", "data.*", 0, "instance_type.price_cents_per_hour", {}),
    "lanyun": Break("dev_list_region14.json", "data.[]", 0, "price", {}),
    "matpool": Break("machines_page1.json", "machines.[]", 0, "hardware.priceMillicent", HUGE),
    # Item 0 is a CPU machine (no offer to lose): break the hourly rate of the first GPU type.
    "paperspace": Break(
        "vm_types_by_clusters.json",
        "*.[]",
        2,
        "vmType.defaultUsageRates.0.usageRate.rateHourly",
        {},
    ),
    "novita": Break("products.json", "data.[]", 0, "price", {}),
    "ppio": Break("products.json", "data.[]", 0, "price", {}),
    "primeintellect": Break("availability.json", "*.[]", 0, "prices.onDemand", {}),
    "runpod": Break("prices_secure.json", "data.gpuTypes.[]", 0, "securePrice", {}),
    "shadeform": Break("instance_types.json", "instance_types.[]", 0, "hourly_price", {}),
    "suanjia": Break(
        "pricing.js",
        swaps=(
            (
                '{ region: "华东一区", gpu: "RTX 3090", memory: 24, price: 1.2,',
                '{ region: "华东一区", gpu: "RTX 3090", memory: 24, '
                'price: { toFixed: function () { return "1e400"; } },',
            ),
        ),
    ),
    "tencentcloud": Break(
        "zone_configs_ap-shanghai.json",
        "Response.InstanceTypeQuotaSet.[]",
        0,
        "Price.UnitPrice",
        {},
    ),
    "tensordock": Break("hostnodes.json", "hostnodes.*.specs.gpu.*", 0, "price", {}),
    "ucloud": Break("price_T4_dynamic.json", "PriceSet.[]", 0, "Price", {}),
    "vastai": Break("bundles_page1.json", "offers.[]", 0, "dph_base", {}),
    "verda": Break("instance_types.json", "[]", 0, "price_per_hour", {}),
    "vultr": Break("plans_page1.json", "plans.[]", 2, "hourly_cost", {}),
    "xiangongyun": Break("pricing.html", swaps=(("¥1.88/时", "¥1e400/时"),)),
}

FAILING_PAGES: dict[str, FailingPage] = {
    "autodl": FailingPage("machine_list_page2.json", PARTIAL),
    "azure": FailingPage("prices_nc_a100_v4_page2.json", PARTIAL),
    "compshare": FailingPage("gpu_inventory_cn-wlcb-02.json", EITHER),
    "chenyu": FailingPage("gpu_list.json", FAILED),
    "cloudrift": FailingPage("instance_types.json", FAILED),
    "cudo": FailingPage("machine_types.json", FAILED),
    "digitalocean": FailingPage("sizes_page2.json", PARTIAL),
    "featurize": FailingPage("available_instances.json", FAILED),
    "gongji": FailingPage("pricing.html", FAILED),
    "gpuez": FailingPage("machine_list_page2.json", PARTIAL),
    "gpushare": FailingPage("machine_list_page2.json", PARTIAL),
    "hyperstack": FailingPage("flavors.json", FAILED),
    "jarvislabs": FailingPage("server_meta.json", FAILED),
    "lambda": FailingPage("instance_types.json", FAILED),
    # One region's host list: the region list and the other region still answer.
    "lanyun": FailingPage("dev_list_region16.json", PARTIAL),
    "matpool": FailingPage("machines_page2.json", PARTIAL),
    "paperspace": FailingPage("vm_types_by_clusters.json", FAILED),
    "novita": FailingPage("products.json", FAILED),
    "ppio": FailingPage("products.json", FAILED),
    "primeintellect": FailingPage("availability.json", FAILED),
    "runpod": FailingPage("prices_community.json", EITHER),
    "shadeform": FailingPage("instance_types.json", FAILED),
    "suanjia": FailingPage("pricing.html", FAILED),
    # One region's call: the other three regions still answer.
    "tencentcloud": FailingPage("zone_configs_ap-nanjing.json", PARTIAL),
    "tensordock": FailingPage("hostnodes.json", FAILED),
    # One offer's hourly price: the types and the other offers' prices still answer.
    "ucloud": FailingPage("price_A100_dynamic.json", PARTIAL),
    # Page 3 of 4: the cursor stops there, so page 3's offers are the ones not seen.
    "vastai": FailingPage("bundles_page3.json", PARTIAL),
    # The on-demand availability is verda's stock page: without it no offer's stock can be
    # read, so all of them must stay as they were (the spot page only adds plans).
    "verda": FailingPage("availability_on_demand.json", EITHER),
    "vultr": FailingPage("plans_page2.json", PARTIAL),
    "xiangongyun": FailingPage("pricing.html", FAILED),
}


# -- locating items -------------------------------------------------------------


def select(doc: Any, locator: str) -> list[Any]:
    """The nodes a locator names (see the module docstring); missing keys select nothing."""
    nodes = [doc]
    for part in locator.split(".") if locator else []:
        if part == "[]":
            nodes = [x for n in nodes if isinstance(n, list) for x in n]
        elif part == "*":
            nodes = [x for n in nodes if isinstance(n, dict) for x in n.values()]
        else:
            nodes = [_child(n, part) for n in nodes if _has(n, part)]
    return nodes


def _has(node: Any, part: str) -> bool:
    if isinstance(node, dict):
        return part in node
    return isinstance(node, list) and part.isdigit() and int(part) < len(node)


def _child(node: Any, part: str) -> Any:
    return node[int(part)] if isinstance(node, list) else node[part]


def _parent_and_key(item: Any, dotted: str) -> tuple[Any, str]:
    *up, last = dotted.split(".")
    for part in up:
        item = _child(item, part)
    return item, last


# -- writing the mutated copy ---------------------------------------------------


def _dump(doc: Any) -> str:
    return json.dumps(doc, ensure_ascii=False, indent=1).replace(f'"{HUGE}"', "1e400")


def _edit_json(path: Path, edit: Callable[[Any], int]) -> int:
    doc = json.loads(path.read_text(encoding="utf-8"))
    changed = edit(doc)
    path.write_text(_dump(doc), encoding="utf-8")
    return changed


def _swap_text(path: Path, swaps: tuple[tuple[str, str], ...]) -> int:
    text = path.read_text(encoding="utf-8")
    changed = 0
    for old, new in swaps:
        changed += text.count(old)
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    return changed


def rename_stock(folder: Path, rename: Rename) -> int:
    """Rename the stock field everywhere in `folder`; the number of renames made."""
    done = 0
    for path in sorted(folder.glob(rename.bodies)):
        if rename.swaps:
            done += _swap_text(path, rename.swaps)
            continue

        def edit(doc: Any) -> int:
            count = 0
            for item in select(doc, rename.items):
                if item is None:
                    continue  # a documented null parent: nothing to rename there
                parent, key = _parent_and_key(item, rename.key)
                if isinstance(parent, dict) and key in parent:
                    parent[f"{key}_v2"] = parent.pop(key)
                    count += 1
            return count

        done += _edit_json(path, edit)
    return done


def break_item(folder: Path, spoil: Break) -> int:
    """Put one bad cell into one item; 1 when it was written."""
    path = folder / spoil.body
    if spoil.swaps:
        return _swap_text(path, spoil.swaps)

    def edit(doc: Any) -> int:
        item = select(doc, spoil.items)[spoil.index]
        parent, key = _parent_and_key(item, spoil.field)
        if isinstance(parent, list):
            parent[int(key)] = spoil.value
        else:
            parent[key] = spoil.value
        return 1

    return _edit_json(path, edit)


def fail_page(folder: Path, page: FailingPage) -> int:
    """Make the routes answering with `page.body` answer 500 (a recorded route fault)."""
    routes_file = folder / "routes.json"
    routes = json.loads(routes_file.read_text(encoding="utf-8"))
    hit = 0
    for route in routes:
        if route.get("body") == page.body:
            route["fault"] = {"status": 500}
            hit += 1
    routes_file.write_text(json.dumps(routes, ensure_ascii=False, indent=1), encoding="utf-8")
    return hit


SCENARIOS: dict[str, Callable[[Path, str], int]] = {
    "renamed": lambda folder, p: rename_stock(folder, RENAMES[p]),
    "broken": lambda folder, p: break_item(folder, BREAKS[p]),
    "failing": lambda folder, p: fail_page(folder, FAILING_PAGES[p]),
}


def mutated_recordings(tmp: Path, scenario: str, providers: list[str]) -> Path:
    """A copy of the default recordings with `scenario` applied to every provider; the root
    to serve (`--replay ROOT`). Raises when a table entry no longer matches its recording."""
    root = tmp / scenario
    copy_default_scene(root)
    apply = SCENARIOS[scenario]
    unmatched = [p for p in providers if apply(root / "default" / p, p) == 0]
    if unmatched:
        raise AssertionError(f"{scenario}: the drift table matches nothing for {unmatched}")
    return root
