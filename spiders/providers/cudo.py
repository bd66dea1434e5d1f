"""Cudo Compute: one GET of every machine type, priced by component, with free-GPU counts."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from scrapy.http import Response

from spiders.base import ProviderSpider
from spiders.parsers.common import load_json
from spiders.parsers.cudo import parse_machine_types

MACHINE_TYPES_PATH = "/v1/vms/machine-types"


class CudoSpider(ProviderSpider):
    name = "cudo"
    home = "GB"
    default_base_url = "https://rest.compute.cudo.org"
    custom_settings = {  # noqa: RUF012 (Scrapy reads it as a class attribute)
        # A public JSON API (no key) meant for programs; robots.txt is for page crawlers.
        "ROBOTSTXT_OBEY": False,
    }

    async def start(self) -> AsyncIterator[Any]:
        yield scrapy.Request(
            self.url(MACHINE_TYPES_PATH),
            headers={"Accept": "application/json"},
            callback=self.parse_machine_types,
            errback=self.on_request_failed,
            dont_filter=True,
        )

    def parse_machine_types(self, response: Response) -> Iterator[Any]:
        try:
            data = load_json(response.body)
        except ValueError:
            self.note_layout_error(f"{MACHINE_TYPES_PATH}: answer is not JSON")
            return
        yield from self.emit_page(parse_machine_types(data, self.context()), MACHINE_TYPES_PATH)
