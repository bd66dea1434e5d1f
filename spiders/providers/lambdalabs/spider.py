"""Lambda: one GET of every instance type with the regions that have capacity now.

`GET {base}/api/v1/instance-types` with `Authorization: Bearer <LAMBDA_API_KEY>` (the API
has no public part). Without the key the spider sends nothing and the report says
`auth: missing`; a refused key (HTTP 401/403 or `global/invalid-api-key`) gives
`auth: rejected`. The key is never logged, stored or written anywhere.

(The module is `lambdalabs`, not `lambda`, which is a Python keyword; the spider is `lambda`.)
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from scrapy.http import Response

from gpurent_core.providers import provider
from spiders.base import KEY_REFUSED, ApiSpider, env_secret
from spiders.providers.lambdalabs.parser import parse_instance_types

INSTANCE_TYPES_PATH = "/api/v1/instance-types"
# The credentials it reads, from its line in gpurent_core.providers.
(KEY_ENV,) = provider("lambda").auth_env


class LambdaSpider(ApiSpider):
    """Reads a documented JSON API behind a key."""

    name = "lambda"
    needs_auth = True

    async def start(self) -> AsyncIterator[Any]:
        key = env_secret(KEY_ENV)
        if key is None:
            self.note_auth("missing", f"{KEY_ENV} not set: Lambda publishes nothing without it")
            return
        yield self.json_request(
            self.url(INSTANCE_TYPES_PATH),
            headers={"Authorization": f"Bearer {key}"},
            refusals=KEY_REFUSED,
            callback=self.parse_instance_types,
        )

    def parse_instance_types(self, response: Response) -> Iterator[Any]:
        if self.key_refused(response, INSTANCE_TYPES_PATH):
            return
        page = self.json_page(response, INSTANCE_TYPES_PATH, parse_instance_types)
        if page is None:
            return
        if page.auth_rejected:
            self.note_auth("rejected", f"invalid API key error from {INSTANCE_TYPES_PATH}")
            return
        if page.api_error is not None:
            self.note_api_error(INSTANCE_TYPES_PATH, page.api_error)
            return
        self.note_auth("ok")
        yield from self.emit_page(page, INSTANCE_TYPES_PATH)
