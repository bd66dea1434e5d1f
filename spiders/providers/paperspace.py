"""Paperspace: every machine type of every cluster, with its hourly and monthly rates.

One `GET {base}/vmTypes/getVmTypesByClusters?includePublicClusters=true` with the header
`x-api-key: <PAPERSPACE_API_KEY>`; there is no public price list to fall back on, so a
missing key is reported (`auth: missing`) and nothing is requested, and a refused key
(HTTP 401/403) is reported as `auth: rejected`.

The key is read from the environment, sent in that one header and never logged, stored
in settings or written to the feed or the run report.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from scrapy.http import Response

from spiders.base import ProviderSpider
from spiders.parsers.common import load_json
from spiders.parsers.paperspace import parse_vm_types

VM_TYPES_PATH = "/vmTypes/getVmTypesByClusters"
KEY_ENV = "PAPERSPACE_API_KEY"


def paperspace_key() -> str | None:
    key = os.environ.get(KEY_ENV, "").strip()
    return key or None


class PaperspaceSpider(ProviderSpider):
    name = "paperspace"
    home = "US"
    auth_env = (KEY_ENV,)
    needs_auth = True
    default_base_url = "https://api.paperspace.io"
    custom_settings = {  # noqa: RUF012 (Scrapy reads it as a class attribute)
        # A JSON API for programs (the gradient CLI calls it); robots.txt is for page crawlers.
        "ROBOTSTXT_OBEY": False,
    }

    async def start(self) -> AsyncIterator[Any]:
        key = paperspace_key()
        if key is None:
            self.note_auth("missing", f"{KEY_ENV} not set: Paperspace publishes no keyless list")
            return
        yield scrapy.Request(
            self.url(VM_TYPES_PATH) + "?includePublicClusters=true",
            headers={"Accept": "application/json", "x-api-key": key},
            # A refused key is an answer to read, not an error to retry.
            meta={"handle_httpstatus_list": [401, 403]},
            callback=self.parse_vm_types,
            errback=self.on_request_failed,
            dont_filter=True,
        )

    def parse_vm_types(self, response: Response) -> Iterator[Any]:
        if response.status in (401, 403):
            self.note_auth("rejected", f"HTTP {response.status} from {VM_TYPES_PATH}")
            return
        try:
            data = load_json(response.body)
        except ValueError:
            self.note_layout_error(f"{VM_TYPES_PATH}: answer is not JSON")
            return
        self.note_auth("ok")
        yield from self.emit_page(parse_vm_types(data, self.context()), VM_TYPES_PATH)
