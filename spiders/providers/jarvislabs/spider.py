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

from collections.abc import AsyncIterator, Iterator
from typing import Any

from scrapy.http import Response

from gpurent_core.providers import provider
from spiders.base import KEY_REFUSED, ApiSpider, env_secret
from spiders.providers.jarvislabs.parser import parse_server_meta

SERVER_META_PATH = "/misc/server_meta"
# The credentials it reads, from its line in gpurent_core.providers.
(KEY_ENV,) = provider("jarvislabs").auth_env


class JarvislabsSpider(ApiSpider):
    """Reads the JSON API JarvisLabs' own SDK calls, behind a key."""

    name = "jarvislabs"
    needs_auth = True

    async def start(self) -> AsyncIterator[Any]:
        key = env_secret(KEY_ENV)
        if key is None:
            self.note_auth("missing", f"{KEY_ENV} not set: JarvisLabs publishes nothing without it")
            return
        yield self.json_request(
            self.url(SERVER_META_PATH),
            headers={"Authorization": f"Bearer {key}"},
            refusals=KEY_REFUSED,
            callback=self.parse_server_meta,
        )

    def parse_server_meta(self, response: Response) -> Iterator[Any]:
        if self.key_refused(response, SERVER_META_PATH):
            return
        page = self.json_page(response, SERVER_META_PATH, parse_server_meta)
        if page is None:
            return
        self.note_auth("ok")
        yield from self.emit_page(page, SERVER_META_PATH)
