"""Paperspace: every machine type of every cluster, with its hourly and monthly rates.

One `GET {base}/vmTypes/getVmTypesByClusters?includePublicClusters=true` with the header
`x-api-key: <PAPERSPACE_API_KEY>`; there is no public price list to fall back on, so a
missing key is reported (`auth: missing`) and nothing is requested, and a refused key
(HTTP 401/403) is reported as `auth: rejected`.

The key is read from the environment, sent in that one header and never logged, stored
in settings or written to the feed or the run report.
"""

from __future__ import annotations

from typing import Any

from spiders.keyed_list import KeyedListSpider
from spiders.parsers.common import PageResult, ParseContext
from spiders.providers.paperspace.parser import parse_vm_types


class PaperspaceSpider(KeyedListSpider):
    """Reads a JSON API for programs (the gradient CLI calls it)."""

    name = "paperspace"
    list_path = "/vmTypes/getVmTypesByClusters"
    list_query = "?includePublicClusters=true"

    def key_headers(self, key: str) -> dict[str, str]:
        return {"x-api-key": key}

    def parse_list(self, data: Any, ctx: ParseContext) -> PageResult:
        return parse_vm_types(data, ctx)
