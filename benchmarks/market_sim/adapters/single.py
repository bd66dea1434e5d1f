"""Providers whose whole listing is one answer: Cudo, Featurize, JarvisLabs, PPIO, TensorDock.
A lost answer leaves every offer unread; an answer read whole closes what it no longer lists."""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any, ClassVar

from benchmarks.market_sim.adapters.base import (
    Adapter,
    Answer,
    Item,
    ItemKind,
    SimOffer,
    minor,
    number,
)


class Cudo(Adapter):
    """`GET /v1/vms/machine-types`: one offer per (data center, machine type, GPU model),
    price `gpuPriceHr.value` USD per card, stock `totalGpuFree` (and `maxGpuFree`)."""

    name = "cudo"

    def load_templates(self) -> list[Any]:
        return list(self.read("machine_types.json")["machineTypes"])

    def base_price(self, template: int) -> Decimal:
        return Decimal(self.templates[template]["gpuPriceHr"]["value"])

    def machine_type(self, offer: SimOffer) -> str:
        return f"sim-{offer.sid:05d}-{self.templates[offer.template]['machineType']}"

    def offer_key(self, offer: SimOffer) -> str:
        item = self.templates[offer.template]
        return f"{item['dataCenterId']}/{self.machine_type(offer)}/{item['gpuModelId']}"

    def render(self, item: Item) -> dict[str, Any]:
        entry = self.template(item)
        free = item.offer.free
        entry.update(
            machineType=self.machine_type(item.offer),
            gpuModel=self.gpu_name(item, entry["gpuModel"]),
            gpuPriceHr={"value": self.price_cell(item, f"{item.offer.price:.6f}")},
            totalGpuFree=free,
            maxGpuFree=min(free, 4),
        )
        return entry

    def answers(self, pages: list[list[Item]]) -> list[Answer]:
        (items,) = pages
        body = {"machineTypes": [self.render(i) for i in items]}
        return [Answer(self.default_route(path="/v1/vms/machine-types"), body, items)]


class Featurize(Adapter):
    """`GET /bus/api/v1/available_instances` (token): one machine per record, price
    `unit_price` CNY per machine, stock `status` ("online" free, "busy" taken), no count."""

    name = "featurize"
    counts = False
    per_card = False
    unreadable_by = "price"

    def load_templates(self) -> list[Any]:
        records = self.read("available_instances.json")["data"]["records"]
        return [r for r in records if r["status"] in ("online", "busy")]

    def base_price(self, template: int) -> Decimal:
        return Decimal(str(self.templates[template]["unit_price"]))

    def offer_key(self, offer: SimOffer) -> str:
        return f"f5{offer.sid:06x}"

    def render(self, item: Item) -> dict[str, Any]:
        record = self.template(item)
        record.update(
            id=self.offer_key(item.offer),
            name=f"sim-{item.offer.sid:03d}",
            gpu=self.gpu_name(item, record["gpu"], skip="Tesla K80, 12GB, Xeon E5-2680 x 6 cores"),
            unit_price=self.price_cell(item, number(item.offer.price)),
            status="online" if item.offer.free > 0 else "busy",
        )
        return record

    def answers(self, pages: list[list[Item]]) -> list[Answer]:
        (items,) = pages
        body = self.read("available_instances.json")
        body["data"]["records"] = [self.render(i) for i in items]
        match = self.default_route(headers={"Token": "*"})
        return [Answer(match, body, items)]


class Jarvislabs(Adapter):
    """`GET /misc/server_meta` (key): one offer per (region, GPU type, workload type),
    price `price_per_hour` USD per card, stock `num_free_devices`."""

    name = "jarvislabs"

    def load_templates(self) -> list[Any]:
        rows = self.read("server_meta.json")["server_meta"]
        return [r for r in rows if r["gpu_type"] != "A5000Pro"]  # the recording's unknown card

    def base_price(self, template: int) -> Decimal:
        return Decimal(str(self.templates[template]["price_per_hour"]))

    def region(self, offer: SimOffer) -> str:
        return f"sim-{offer.sid:05d}"

    def offer_key(self, offer: SimOffer) -> str:
        row = self.templates[offer.template]
        return f"{self.region(offer)}/{row['gpu_type']}/{row['workload_type'] or 'any'}"

    def render(self, item: Item) -> dict[str, Any]:
        row = self.template(item)
        free = item.offer.free
        row.update(
            region=self.region(item.offer),
            gpu_type=self.gpu_name(item, row["gpu_type"]),
            price_per_hour=self.price_cell(item, number(item.offer.price)),
            num_free_devices=free,
            effective_num_free_devices=free,
        )
        if item.kind is ItemKind.SKIP:
            row["vram"] = "12"
        return row

    def answers(self, pages: list[list[Item]]) -> list[Answer]:
        (items,) = pages
        body = self.read("server_meta.json")
        body["server_meta"] = [self.render(i) for i in items]
        match = self.default_route(headers={"Authorization": "*"})
        return [Answer(match, body, items)]


class Ppio(Adapter):
    """`GET /gpu-instance/openapi/v1/products` (key): price `price` in 1/100000 CNY per
    card, stock `availableDeploy` (and `canBuy`), no count."""

    name = "ppio"
    counts = False
    SCALE: ClassVar[int] = 100_000

    def load_templates(self) -> list[Any]:
        products = self.read("products.json")["data"]
        return [p for p in products if p["name"] != "RTX 3080"]  # 10 or 12 GB: size open

    def base_price(self, template: int) -> Decimal:
        return Decimal(self.templates[template]["price"]) / self.SCALE

    def offer_key(self, offer: SimOffer) -> str:
        return f"b7e0c1d2-{offer.sid:04d}"

    def render(self, item: Item) -> dict[str, Any]:
        product = self.template(item)
        product.update(
            id=self.offer_key(item.offer),
            name=self.gpu_name(item, product["name"]),
            price=self.price_cell(item, minor(item.offer.price, self.SCALE)),
            availableDeploy=item.offer.free > 0,
            canBuy=True,
        )
        return product

    def answers(self, pages: list[list[Item]]) -> list[Answer]:
        (items,) = pages
        body = {"data": [self.render(i) for i in items]}
        match = self.default_route(headers={"Authorization": "*"})
        return [Answer(match, body, items)]


class Tensordock(Adapter):
    """`GET /api/v0/client/deploy/hostnodes`: one offer per (host node, GPU slug), price
    `specs.gpu.<slug>.price` USD per card, stock its `amount` (free cards)."""

    name = "tensordock"
    unreadable_by = "price"

    def load_templates(self) -> list[Any]:
        nodes = self.read("hostnodes.json")["hostnodes"]
        return [
            {"node": node, "slug": slug} for node in nodes.values() for slug in node["specs"]["gpu"]
        ]

    def base_price(self, template: int) -> Decimal:
        chosen = self.templates[template]
        return Decimal(str(chosen["node"]["specs"]["gpu"][chosen["slug"]]["price"]))

    def node_id(self, offer: SimOffer) -> str:
        return f"5e1c0d2e-0000-4000-8000-{offer.sid:012d}"

    def offer_key(self, offer: SimOffer) -> str:
        return f"{self.node_id(offer)}/{self.templates[offer.template]['slug']}"

    def render(self, item: Item) -> dict[str, Any]:
        chosen = self.templates[item.offer.template]
        node = copy.deepcopy(chosen["node"])
        # Room on the node for the smallest VM (vCPUs, RAM, disk): a card free there is
        # rentable, so its free count is the offer's stock.
        for part, least in (("cpu", 32), ("ram", 256), ("storage", 2000)):
            node["specs"][part]["amount"] = max(node["specs"][part]["amount"], least)
        gpu = dict(node["specs"]["gpu"][chosen["slug"]])
        gpu.update(amount=item.offer.free, price=self.price_cell(item, number(item.offer.price)))
        slug = self.gpu_name(item, chosen["slug"], skip="teslak80-pcie-12gb")
        if item.kind is ItemKind.SKIP:
            gpu["vram"] = 12
        node["specs"]["gpu"] = {slug: gpu}
        return node

    def answers(self, pages: list[list[Item]]) -> list[Answer]:
        (items,) = pages
        body = {"hostnodes": {self.node_id(i.offer): self.render(i) for i in items}}
        match = self.default_route(path="/api/v0/client/deploy/hostnodes")
        return [Answer(match, body, items)]
