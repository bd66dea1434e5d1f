"""Cudo Compute: one GET of every machine type, priced by component, with free-GPU counts."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from scrapy.http import Response

from spiders.base import ApiSpider
from spiders.providers.cudo.parser import parse_machine_types

MACHINE_TYPES_PATH = "/v1/vms/machine-types"


class CudoSpider(ApiSpider):
    """Reads a public JSON API (no key) meant for programs."""

    name = "cudo"

    async def start(self) -> AsyncIterator[Any]:
        yield self.json_request(self.url(MACHINE_TYPES_PATH), callback=self.parse_machine_types)

    def parse_machine_types(self, response: Response) -> Iterator[Any]:
        page = self.json_page(response, MACHINE_TYPES_PATH, parse_machine_types)
        if page is not None:
            yield from self.emit_page(page, MACHINE_TYPES_PATH)
