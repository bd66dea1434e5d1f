"""Vast.ai (keyset pages on the offer id, ended by an empty page) and RunPod (a GraphQL
catalog, then one price query per cloud, each deciding the offers of its cloud)."""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

from benchmarks.market_sim.adapters.base import (
    Adapter,
    Answer,
    Expect,
    Item,
    ItemKind,
    Layout,
    SimOffer,
    number,
)

VAST_ID_BASE = 40_000_000


class Vastai(Adapter):
    """`POST /api/v0/bundles/` with `{"id": {"gt": <last id>}}`, until a page comes back
    empty; price `dph_base` USD per machine, stock `rentable` / `rented` (one card each)."""

    name = "vastai"
    layout = Layout.PAGES_SEQUENTIAL
    per_card = False  # a bundle is rented whole
    unreadable_by = "price"

    def load_templates(self) -> list[Any]:
        pages = (self.read(f"bundles_page{n}.json") for n in (1, 2, 3, 4))
        return [o for page in pages for o in page["offers"] if o["num_gpus"] == 1]

    def base_price(self, template: int) -> Decimal:
        return Decimal(str(self.templates[template]["dph_base"])).quantize(Decimal("0.01"))

    def offer_key(self, offer: SimOffer) -> str:
        return str(VAST_ID_BASE + offer.sid)

    def expect(self, offer: SimOffer) -> Expect:
        # A rentable bundle's cards are all free together: its count is num_gpus (1).
        base = super().expect(offer)
        return Expect(base.status, 1 if offer.free > 0 else None, base.price, 1, False)

    def render(self, item: Item) -> dict[str, Any]:
        bundle = self.template(item)
        offer_id = VAST_ID_BASE + item.offer.sid
        price = self.price_cell(item, number(item.offer.price))
        bundle.update(
            id=offer_id,
            ask_contract_id=offer_id,
            gpu_name=self.gpu_name(item, bundle["gpu_name"]),
            num_gpus=1,
            dph_base=price,
            dph_total=price,
            rentable=True,
            rented=item.offer.free == 0,
        )
        bundle.pop("search", None)  # a derived cost breakdown: not read, and stale otherwise
        bundle.pop("discounted_dph_total", None)
        return bundle

    def pages(self, items: list[Item]) -> list[list[Item]]:
        # The crawl ends at the first empty page: it is part of the listing (its loss
        # leaves the spider unable to tell that nothing follows).
        return [*super().pages(items), []]

    def answers(self, pages: list[list[Item]]) -> list[Answer]:
        out = []
        after = 0
        first = self.default_route(json={"id": {"gt": 0}})
        for items in pages:
            match = copy.deepcopy(first)
            match["json"] = {"id": {"gt": after}}
            out.append(Answer(match, {"offers": [self.render(i) for i in items]}, items))
            if items:
                after = max(VAST_ID_BASE + i.offer.sid for i in items)
        return out


CLOUDS = ("secure", "community")
LIST_PRICE = {"secure": "securePrice", "community": "communityPrice"}


class Runpod(Adapter):
    """`POST /graphql`: the `GpuTypes` catalog, then `GpuPrices` once per cloud; each
    simulated type is offered in one cloud (`<type id>/<cloud>`); stock `stockStatus`
    ("High", or null: sold out where the catalog lists the type), price the cloud's list
    price in USD per card."""

    name = "runpod"
    layout = Layout.SPLIT
    variants = CLOUDS
    variant_weights = (0.3, 0.7)
    counts = False
    catalog_lists_all = True  # the GpuTypes catalog names every type of either cloud

    def load_templates(self) -> list[Any]:
        catalog = {t["id"]: t for t in self.read("gpu_types.json")["data"]["gpuTypes"]}
        prices = self.read("prices_community.json")["data"]["gpuTypes"]
        return [
            {"catalog": catalog[p["id"]], "prices": p}
            for p in prices
            if p["id"] in catalog and p.get("communityPrice")
        ]

    def base_price(self, template: int) -> Decimal:
        return Decimal(str(self.templates[template]["prices"]["communityPrice"]))

    def type_id(self, offer: SimOffer) -> str:
        return f"SIM-{offer.sid:05d} {self.templates[offer.template]['prices']['id']}"

    def offer_key(self, offer: SimOffer) -> str:
        return f"{self.type_id(offer)}/{offer.variant}"

    def render(self, item: Item) -> dict[str, Any]:
        offer = item.offer
        entry = copy.deepcopy(self.templates[offer.template]["prices"])
        price = self.price_cell(item, number(offer.price))
        entry.update(
            id=self.type_id(offer),
            displayName=self.gpu_name(item, entry["displayName"]),
            securePrice=price,
            communityPrice=price,
            oneMonthPrice=None,
            threeMonthPrice=None,
            sixMonthPrice=None,
        )
        if item.kind is ItemKind.SKIP:
            entry["memoryInGb"] = 12
        lowest = entry.get("lowestPrice") or {}
        in_stock = offer.free > 0
        entry["lowestPrice"] = {
            **lowest,
            "minimumBidPrice": None,
            "uninterruptablePrice": price if in_stock else None,
            "minVcpu": lowest.get("minVcpu") if in_stock else None,
            "minMemory": lowest.get("minMemory") if in_stock else None,
            "stockStatus": "High" if in_stock else None,
            "countryCode": (lowest.get("countryCode") or "US") if in_stock else None,
            "__typename": "LowestPrice",
        }
        return entry

    def catalog_entry(self, item: Item) -> dict[str, Any]:
        entry = copy.deepcopy(self.templates[item.offer.template]["catalog"])
        entry.update(
            id=self.type_id(item.offer),
            displayName=self.gpu_name(item, entry["displayName"]),
            secureCloud=item.offer.variant == "secure",
            communityCloud=item.offer.variant == "community",
        )
        return entry

    def answers(self, pages: list[list[Item]]) -> list[Answer]:
        out = []
        for cloud, items in zip(self.variants, pages, strict=True):
            match = self.default_route(
                json={"variables": {"lowestPriceInput": {"secureCloud": cloud == "secure"}}}
            )
            body = {"data": {"gpuTypes": [self.render(i) for i in items]}}
            out.append(Answer(match, body, items))
        return out

    def extra(self, items: list[Item]) -> list[Answer]:
        catalog = self.read("gpu_types.json")
        catalog["data"]["gpuTypes"] = [self.catalog_entry(i) for i in items]
        return [Answer(self.default_route(json={"operationName": "GpuTypes"}), catalog)]
