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

import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from scrapy.http import Response

from spiders.base import ProviderSpider
from spiders.parsers.common import load_json
from spiders.parsers.jarvislabs import parse_server_meta

SERVER_META_PATH = "/misc/server_meta"
KEY_ENV = "JARVISLABS_API_KEY"


def jarvislabs_key() -> str | None:
    key = os.environ.get(KEY_ENV, "").strip()
    return key or None


class JarvislabsSpider(ProviderSpider):
    name = "jarvislabs"
    home = "IN"
    auth_env = (KEY_ENV,)
    needs_auth = True
    default_base_url = "https://backendn.jarvislabs.net"
    custom_settings = {  # noqa: RUF012 (Scrapy reads it as a class attribute)
        # The JSON API JarvisLabs' own SDK calls, behind a key; robots.txt is for page crawlers.
        "ROBOTSTXT_OBEY": False,
    }

    async def start(self) -> AsyncIterator[Any]:
        key = jarvislabs_key()
        if key is None:
            self.note_auth("missing", f"{KEY_ENV} not set: JarvisLabs publishes nothing without it")
            return
        yield scrapy.Request(
            self.url(SERVER_META_PATH),
            headers={"Accept": "application/json", "Authorization": f"Bearer {key}"},
            # A refused key is an answer to read, not an error to retry.
            meta={"handle_httpstatus_list": [401, 403]},
            callback=self.parse_server_meta,
            errback=self.on_request_failed,
            dont_filter=True,
        )

    def parse_server_meta(self, response: Response) -> Iterator[Any]:
        if response.status in (401, 403):
            self.note_auth("rejected", f"HTTP {response.status} from {SERVER_META_PATH}")
            return
        try:
            data = load_json(response.body)
        except ValueError:
            self.note_layout_error(f"{SERVER_META_PATH}: answer is not JSON")
            return
        self.note_auth("ok")
        yield from self.emit_page(parse_server_meta(data, self.context()), SERVER_META_PATH)
