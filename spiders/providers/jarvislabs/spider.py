"""JarvisLabs: one GET of the server meta (price and free cards per GPU type and region).

`GET {base}/misc/server_meta` with `Authorization: Bearer <JARVISLABS_API_KEY>`. One regional
API host answers for every region (its rows name india-01, india-chennai-01, india-noida-01
and europe-01), so the spider calls only the default, backendn (india-noida-01). The other
hosts, which JarvisLabs needs for provisioning in their regions, are
backendprod.jarvislabs.net (india-01), backendc.jarvislabs.net (india-chennai-01) and
backendeu.jarvislabs.net (europe-01); GPURENT_BASE_URL points the spider at another.

Without the key nothing is sent and the report says `auth: missing` (no public part); a
refused key (HTTP 401/403) gives `auth: rejected`. The key is never logged or stored.
"""

from __future__ import annotations

from typing import Any

from spiders.keyed_list import KeyedListSpider
from spiders.parsers.common import PageResult, ParseContext
from spiders.providers.jarvislabs.parser import parse_server_meta


class JarvislabsSpider(KeyedListSpider):
    """Reads the JSON API JarvisLabs' own SDK calls, behind a key."""

    name = "jarvislabs"
    list_path = "/misc/server_meta"

    def parse_list(self, data: Any, ctx: ParseContext) -> PageResult:
        return parse_server_meta(data, ctx)
