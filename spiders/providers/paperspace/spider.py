"""Paperspace: every machine type of every cluster, with its hourly and monthly rates.

One `GET {base}/vmTypes/getVmTypesByClusters?includePublicClusters=true` with the header
`x-api-key: <PAPERSPACE_API_KEY>`; there is no public price list to fall back on, so a
missing key is reported (`auth: missing`) and nothing is requested, and a refused key
(HTTP 401/403) is reported as `auth: rejected`.

The key is read from the environment, sent in that one header and never logged, stored
in settings or written to the feed or the run report.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from scrapy.http import Response

from gpurent_core.providers import provider
from spiders.base import KEY_REFUSED, ApiSpider, env_secret
from spiders.providers.paperspace.parser import parse_vm_types

VM_TYPES_PATH = "/vmTypes/getVmTypesByClusters"
# The credentials it reads, from its line in gpurent_core.providers.
(KEY_ENV,) = provider("paperspace").auth_env


class PaperspaceSpider(ApiSpider):
    """Reads a JSON API for programs (the gradient CLI calls it)."""

    name = "paperspace"
    needs_auth = True

    async def start(self) -> AsyncIterator[Any]:
        key = env_secret(KEY_ENV)
        if key is None:
            self.note_auth("missing", f"{KEY_ENV} not set: Paperspace publishes no keyless list")
            return
        yield self.json_request(
            self.url(VM_TYPES_PATH) + "?includePublicClusters=true",
            headers={"x-api-key": key},
            refusals=KEY_REFUSED,
            callback=self.parse_vm_types,
        )

    def parse_vm_types(self, response: Response) -> Iterator[Any]:
        if self.key_refused(response, VM_TYPES_PATH):
            return
        page = self.json_page(response, VM_TYPES_PATH, parse_vm_types)
        if page is None:
            return
        self.note_auth("ok")
        yield from self.emit_page(page, VM_TYPES_PATH)
