"""GpuEZ: the platform's bare-metal machines with their week and month prices (Basic auth).

`GET {base}/zsc/open/api/v2/machine/list?machine_type=4&page=N&page_size=10`, GpuEZ's
documented open API ("整机列表", developer.gpuez.com/release/API文档/整机列表), with HTTP Basic
authentication (env `GPUEZ_API_KEY`, see `basic_authorization`). `machine_type` is required
(4, bare metal, is the one type documented); no area or GPU filter is sent (0, every one, is
the default), since a filtered answer says nothing of the rest. The list is paged (`page`,
`page_size`, default 10) and its documentation shows no total: a page that holds
`page_size` machines asks for the next one, up to GPURENT_MAX_PAGES. The page size stays
at the documented default: a larger one that the server silently cut would end the listing
early, dropping machines without a word.

Without the key the run reports `auth: missing` and asks nothing (it ends `auth_required`,
never sold out). HTTP 401/403 reports `auth: rejected`. An envelope `code` other than 0 is an
API error (a failed request): which codes mean a bad key is not documented. A failed page
leaves every offer unread (which machines it held is not known before it answers).

The key is read from the environment, sent in one header and never logged, stored in
settings or written to the feed or the run report.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import scrapy

from spiders.keyed_list import KeyedListSpider
from spiders.parsers.common import ParseContext
from spiders.providers.gpuez.parser import BARE_METAL, MachinePage, parse_machine_list


def basic_authorization(secret: str) -> str:
    """The `Authorization` value of the documented Basic scheme for `GPUEZ_API_KEY`.

    The page that says what the Basic credential is made of (接口鉴权) is not in our sources,
    so both forms are taken: "<id>:<secret>" (RFC 7617's pair, which the scheme defines) is
    base64-encoded here; a value without a colon is taken as the credential already encoded
    (base64 text never holds a colon)."""
    if ":" in secret:
        return "Basic " + base64.b64encode(secret.encode("utf-8")).decode("ascii")
    return f"Basic {secret}"


class GpuezSpider(KeyedListSpider):
    """Reads GpuEZ's documented open API."""

    name = "gpuez"
    list_path = "/zsc/open/api/v2/machine/list"
    paged = True
    default_page_size = 10  # the documented default; its largest accepted size is not

    def key_headers(self, key: str) -> dict[str, str]:
        return {"Authorization": basic_authorization(key)}

    def page_query(self, page: int) -> str:
        return "?" + urlencode(
            {"machine_type": BARE_METAL, "page": page, "page_size": self.page_size}
        )

    def parse_list(self, data: Any, ctx: ParseContext) -> MachinePage:
        return parse_machine_list(data, ctx)

    def later_requests(self, page: int, result: MachinePage) -> Iterator[scrapy.Request]:
        full = result.layout_error is None and result.listed >= self.page_size
        if full and not self.page_limit_reached(page):
            yield self.list_request(page + 1)
