"""The Chinese market listings that come in numbered pages: AutoDL, GPUShare (恒源云), Matpool
(矩池云). Shapes from their default recordings; a lost page leaves every offer unread (a
paginated listing shifts its items between pages, so no page vouches for another's)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, ClassVar

from benchmarks.market_sim.adapters.base import (
    Adapter,
    Answer,
    Item,
    Layout,
    SimOffer,
    minor,
    number,
)

HOST_CARDS = 8
"""Cards on every simulated host (the free count moves between 0 and this)."""


class Autodl(Adapter):
    """`POST /api/v1/user/machine/list` (token), `data.max_page` pages asked at once;
    price `payg_price` in 1/1000 CNY per card, stock `gpu_idle_num` / `gpu_order_num`."""

    name = "autodl"
    layout = Layout.PAGES
    SCALE: ClassVar[int] = 1000

    def load_templates(self) -> list[Any]:
        pages = (self.read(f"machine_list_page{n}.json") for n in (1, 2))
        return [m for page in pages for m in page["data"]["list"] if m.get("payg") is True]

    def base_price(self, template: int) -> Decimal:
        return Decimal(self.templates[template]["payg_price"]) / self.SCALE

    def offer_key(self, offer: SimOffer) -> str:
        return f"5a{offer.sid:08x}"

    def render(self, item: Item) -> dict[str, Any]:
        machine = self.template(item)
        key = self.offer_key(item.offer)
        free = item.offer.free
        machine.update(
            machine_id=key,
            machine_name=f"agent-{key[-6:]}",
            gpu_name=self.gpu_name(item, machine["gpu_name"]),
            gpu_number=HOST_CARDS,
            gpu_all_num=HOST_CARDS,
            gpu_idle_num=free,
            gpu_order_num=free,
            payg_price=self.price_cell(item, minor(item.offer.price, self.SCALE)),
        )
        return machine

    def answers(self, pages: list[list[Item]]) -> list[Answer]:
        total = sum(len(p) for p in pages)
        out = []
        for index, items in enumerate(pages, start=1):
            match = self.default_route(json={"page_index": 1})
            match["json"]["page_index"] = index
            body = {
                "code": "Success",
                "msg": "",
                "data": {
                    "list": [self.render(i) for i in items],
                    "page_index": index,
                    "page_size": self.page_items,
                    "offset": (index - 1) * self.page_items,
                    "max_page": len(pages),
                    "result_total": total,
                },
            }
            out.append(Answer(match, body, items))
        return out


class Gpushare(Adapter):
    """`GET /app/api/market/machine/list?...&pn=<n>` (token), page after page until
    `data.total` machines are seen; price `skuList[payg].price` CNY per card, stock
    `gpuNum - gpuUsed` on an online host."""

    name = "gpushare"
    layout = Layout.PAGES_SEQUENTIAL

    def load_templates(self) -> list[Any]:
        pages = (self.read(f"machine_list_page{n}.json") for n in (1, 2))
        # "Tesla V100" leaves the size open (16 or 32 GB): no VRAM, no watch would match it.
        return [
            m
            for page in pages
            for m in page["data"]["list"]
            if m["baseInfo"]["gpuName"] != "Tesla V100" and m["isOnline"] is True
        ]

    def base_price(self, template: int) -> Decimal:
        skus = self.templates[template]["skuList"]
        return Decimal(str(next(s["price"] for s in skus if s["skuName"] == "payg")))

    def offer_key(self, offer: SimOffer) -> str:
        return str(60_000 + offer.sid)

    def render(self, item: Item) -> dict[str, Any]:
        machine = self.template(item)
        machine.update(
            id=60_000 + item.offer.sid,
            machineName=f"S区-{item.offer.sid}",
            isOnline=True,
            gpuNum=HOST_CARDS,
            gpuUsed=HOST_CARDS - item.offer.free,
        )
        machine["baseInfo"]["gpuName"] = self.gpu_name(item, machine["baseInfo"]["gpuName"])
        for sku in machine["skuList"]:
            if sku["skuName"] == "payg":
                sku["price"] = self.price_cell(item, number(item.offer.price))
        return machine

    def answers(self, pages: list[list[Item]]) -> list[Answer]:
        total = sum(len(p) for p in pages)
        out = []
        for index, items in enumerate(pages, start=1):
            match = self.default_route(query={"pn": ["1"]})
            match["query"]["pn"] = [str(index)]
            body = {"data": {"list": [self.render(i) for i in items], "total": total}}
            out.append(Answer(match, body, items))
        return out


class Matpool(Adapter):
    """`GET /api/machines?page=<n>&per_page=20&machine_category=0` (public),
    `pagination.numPages` pages asked at once; price `hardware.priceMillicent` per unit
    (one card here), stock `gpu.available`."""

    name = "matpool"
    layout = Layout.PAGES
    per_card = False  # priced per allocation unit (basis instance), one card per unit here
    unreadable_by = "price"
    SCALE: ClassVar[int] = 100_000

    def load_templates(self) -> list[Any]:
        pages = (self.read(f"machines_page{n}.json") for n in (1, 2))
        # One card per unit, and names that pin the card's memory ("A100-PCIE" does not).
        return [
            m
            for page in pages
            for m in page["machines"]
            if m["gpu"]["total"] == m["unit"]["total"]
            and m["hardware"]["gpu"]["gpuName"] != "A100-PCIE"
        ]

    def base_price(self, template: int) -> Decimal:
        return Decimal(self.templates[template]["hardware"]["priceMillicent"]) / self.SCALE

    def offer_key(self, offer: SimOffer) -> str:
        return f"{7_000 + offer.sid}/{offer.sid}"

    def render(self, item: Item) -> dict[str, Any]:
        machine = self.template(item)
        free = item.offer.free
        machine.update(agentId=7_000 + item.offer.sid, resourceID=item.offer.sid)
        machine["gpu"].update(available=free, total=HOST_CARDS, max=HOST_CARDS)
        machine["unit"].update(available=free, total=HOST_CARDS, max=HOST_CARDS)
        hardware = machine["hardware"]
        hardware["gpu"]["gpuName"] = self.gpu_name(item, hardware["gpu"]["gpuName"])
        hardware["priceMillicent"] = self.price_cell(item, minor(item.offer.price, self.SCALE))
        hardware.pop("discountPriceMillicent", None)  # no member price: one price to follow
        return machine

    def answers(self, pages: list[list[Item]]) -> list[Answer]:
        total = sum(len(p) for p in pages)
        out = []
        for index, items in enumerate(pages, start=1):
            match = self.default_route(query={"page": ["1"]})
            match["query"]["page"] = [str(index)]
            body = {
                "code": 0,
                "msg": "",
                "machines": [self.render(i) for i in items],
                "pagination": {
                    "total": total,
                    "numPages": len(pages),
                    "page": index,
                    "perPage": int(match["query"]["per_page"][0]),
                },
            }
            out.append(Answer(match, body, items))
        return out
