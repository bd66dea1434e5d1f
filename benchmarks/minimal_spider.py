"""The crawl baseline: the least a Scrapy spider can do with the same pages.

Run by benchmarks.crawl with ``scrapy runspider`` outside the project (Scrapy's default
settings): it asks the synthetic GPUShare market page after page, as gpurent's spider does,
and yields one plain dict per machine, with no validation, no normalising and no report.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import scrapy
from scrapy.http import Response

PATH = "/app/api/market/machine/list"


class MinimalSpider(scrapy.Spider):
    name = "minimal"

    def __init__(self, base: str, page_size: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.base = base
        self.page_size = int(page_size)

    def request(self, page: int, seen: int) -> scrapy.Request:
        query = {
            "models": "-1",
            "gpuName": "",
            "priceOrder": "asc",
            "pn": page,
            "ps": self.page_size,
        }
        return scrapy.Request(
            f"{self.base}{PATH}?{urlencode(query)}",
            headers={"Authorization": "Bearer bench"},
            callback=self.parse_page,
            cb_kwargs={"page": page, "seen": seen},
        )

    async def start(self) -> Any:
        yield self.request(1, 0)

    def parse_page(self, response: Response, page: int, seen: int) -> Iterator[Any]:
        data = json.loads(response.body)["data"]
        for machine in data["list"]:
            yield {
                "id": machine["id"],
                "gpu": machine["baseInfo"]["gpuName"],
                "skus": machine["skuList"],
            }
        seen += len(data["list"])
        if data["list"] and seen < data["total"]:
            yield self.request(page + 1, seen)
