"""蓝耘 Lanyun: the container market's hosts, per region, with free cards (login token).

`GET {base}/api/d/region/list`, then per region `POST {base}/api/d/dev/list` with the body
`dev_list_body` (every card type, one card, pay as you go), page 1, then pages up to
`total / pageSize`, as the web client calls them (the "browser-cloud-lanyun" skill's
`api-reference.md`). Every call sends `Authorization: Bearer <access_token>`, the token of a
logged-in session (env `LANYUN_TOKEN`).

Nothing is public: without the token the run reports `auth: missing` and asks nothing (it
ends `auth_required`, never sold out). HTTP 401/403 (or an envelope code 401/403, assumed)
reports `auth: rejected`. A failed host request leaves only that region's offers unread.

The token is read from the environment, sent in one header and never logged, stored in
settings or written to the feed or the run report.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from scrapy.http import Response

from gpurent_core.providers import provider
from spiders.base import KEY_REFUSED, UNREAD_META, ApiSpider, env_secret
from spiders.providers.lanyun.parser import (
    dev_list_body,
    parse_hosts,
    parse_regions,
    region_prefix,
)

REGIONS_PATH = "/api/d/region/list"
HOSTS_PATH = "/api/d/dev/list"
# The credentials it reads, from its line in gpurent_core.providers.
(TOKEN_ENV,) = provider("lanyun").auth_env


class LanyunSpider(ApiSpider):
    """Reads the web client's JSON API (a public reverse-engineered reference)."""

    name = "lanyun"
    needs_auth = True
    default_page_size = 20  # the reference's pageSize

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._token = env_secret(TOKEN_ENV)

    def _auth(self) -> dict[str, str]:
        assert self._token is not None
        return {"Authorization": f"Bearer {self._token}"}

    async def start(self) -> AsyncIterator[Any]:
        if self._token is None:
            self.note_auth("missing", f"{TOKEN_ENV} not set: the market needs a login token")
            return
        yield self.json_request(
            self.url(REGIONS_PATH),
            headers=self._auth(),
            refusals=KEY_REFUSED,
            callback=self.parse_regions,
        )

    def parse_regions(self, response: Response) -> Iterator[Any]:
        if self.key_refused(response, "the region list"):
            return
        result = self.json_page(response, REGIONS_PATH, parse_regions)
        if result is None:
            return
        if result.auth_rejected:
            self.note_auth("rejected", "token refused by the region list")
            return
        if result.api_error is not None:
            self.note_api_error(REGIONS_PATH, result.api_error)
            return
        if result.layout_error is not None:
            self.note_layout_error(f"{REGIONS_PATH}: {result.layout_error}")
            return
        self.note_auth("ok")
        self.note_page_parsed()
        for region in result.regions:
            yield self.hosts_request(region, 1)

    def hosts_request(self, region: tuple[int, str], page: int) -> scrapy.Request:
        prefix = region_prefix(str(region[0]))
        return self.json_request(
            self.url(HOSTS_PATH),
            headers=self._auth(),
            json_body=dev_list_body(region_id=region[0], page=page, page_size=self.page_size),
            refusals=KEY_REFUSED,
            meta={UNREAD_META: {"prefixes": [prefix]}},
            callback=self.parse_hosts,
            cb_kwargs={"region": region, "page": page},
        )

    def parse_hosts(self, response: Response, region: tuple[int, str], page: int) -> Iterator[Any]:
        where = f"{HOSTS_PATH} region {region[0]} page {page}"
        prefixes = [region_prefix(str(region[0]))]
        if response.status in KEY_REFUSED:
            self.note_auth("rejected", f"HTTP {response.status} from the host list")
            self.note_unread(prefixes=prefixes)
            return
        result = self.json_page(
            response, where, lambda data, ctx: parse_hosts(data, ctx, region=region)
        )
        if result is None:
            self.note_unread(prefixes=prefixes)
            return
        if result.auth_rejected:
            self.note_auth("rejected", "token refused by the host list")
            self.note_unread(prefixes=prefixes)
            return
        if result.api_error is not None:
            self.note_api_error(where, result.api_error, prefixes=prefixes)
            return
        yield from self.emit_page(result, where)
        if page != 1 or result.layout_error is not None or result.total is None:
            return
        for index in self.later_pages(math.ceil(result.total / self.page_size)):
            yield self.hosts_request(region, index)
