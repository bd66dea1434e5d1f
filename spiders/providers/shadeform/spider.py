"""Shadeform: one GET of every instance type, at every cloud, with its regions' availability.

`GET {base}/instances/types` with `X-API-KEY: <key>` (env `SHADEFORM_API_KEY`), Shadeform's
documented API (docs.shadeform.ai/api-reference/instances/instances-types; base
https://api.shadeform.ai/v1). No query parameters: without filters the answer holds every
instance type Shadeform supports, sold-out regions included. No pagination is documented.

Every call of the API needs the key: without it the run reports `auth: missing` and asks
nothing (it ends `auth_required`, never sold out). HTTP 401/403 (documented: no or invalid
key, and account mismatch) reports `auth: rejected`.

The key is read from the environment, sent in one header and never logged, stored in
settings or written to the feed or the run report.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from scrapy.http import Response

from gpurent_core.providers import provider
from spiders.base import KEY_REFUSED, ApiSpider, env_secret
from spiders.providers.shadeform.parser import parse_instance_types

INSTANCE_TYPES_PATH = "/instances/types"
KEY_HEADER = "X-API-KEY"
# The credentials it reads, from its line in gpurent_core.providers.
(KEY_ENV,) = provider("shadeform").auth_env


class ShadeformSpider(ApiSpider):
    """Reads Shadeform's documented API behind a key."""

    name = "shadeform"
    needs_auth = True

    async def start(self) -> AsyncIterator[Any]:
        key = env_secret(KEY_ENV)
        if key is None:
            self.note_auth("missing", f"{KEY_ENV} not set: every Shadeform API call needs it")
            return
        yield self.json_request(
            self.url(INSTANCE_TYPES_PATH),
            headers={KEY_HEADER: key},
            refusals=KEY_REFUSED,
            callback=self.parse_instance_types,
        )

    def parse_instance_types(self, response: Response) -> Iterator[Any]:
        if self.key_refused(response, INSTANCE_TYPES_PATH):
            return
        page = self.json_page(response, INSTANCE_TYPES_PATH, parse_instance_types)
        if page is None:
            return
        if page.api_error is not None:
            self.note_api_error(INSTANCE_TYPES_PATH, page.api_error)
            return
        self.note_auth("ok")
        yield from self.emit_page(page, INSTANCE_TYPES_PATH)
