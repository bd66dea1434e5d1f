"""Lambda: one GET of every instance type with the regions that have capacity now.

`GET {base}/api/v1/instance-types` with `Authorization: Bearer <LAMBDA_API_KEY>` (the API
has no public part). Without the key the spider sends nothing and the report says
`auth: missing`; a refused key (HTTP 401/403 or `global/invalid-api-key`) gives
`auth: rejected`. The key is never logged, stored or written anywhere.

(The module is `lambdalabs`, not `lambda`, which is a Python keyword; the spider is `lambda`.)
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from scrapy.http import Response

from spiders.base import ProviderSpider
from spiders.parsers.common import load_json
from spiders.parsers.lambdalabs import parse_instance_types

INSTANCE_TYPES_PATH = "/api/v1/instance-types"
KEY_ENV = "LAMBDA_API_KEY"


def lambda_key() -> str | None:
    key = os.environ.get(KEY_ENV, "").strip()
    return key or None


class LambdaSpider(ProviderSpider):
    name = "lambda"
    home = "US"
    auth_env = (KEY_ENV,)
    needs_auth = True
    default_base_url = "https://cloud.lambdalabs.com"
    custom_settings = {  # noqa: RUF012 (Scrapy reads it as a class attribute)
        # A documented JSON API behind a key; robots.txt is for page crawlers.
        "ROBOTSTXT_OBEY": False,
    }

    async def start(self) -> AsyncIterator[Any]:
        key = lambda_key()
        if key is None:
            self.note_auth("missing", f"{KEY_ENV} not set: Lambda publishes nothing without it")
            return
        yield scrapy.Request(
            self.url(INSTANCE_TYPES_PATH),
            headers={"Accept": "application/json", "Authorization": f"Bearer {key}"},
            # A refused key is an answer to read, not an error to retry.
            meta={"handle_httpstatus_list": [401, 403]},
            callback=self.parse_instance_types,
            errback=self.on_request_failed,
            dont_filter=True,
        )

    def parse_instance_types(self, response: Response) -> Iterator[Any]:
        if response.status in (401, 403):
            self.note_auth("rejected", f"HTTP {response.status} from {INSTANCE_TYPES_PATH}")
            return
        try:
            data = load_json(response.body)
        except ValueError:
            self.note_layout_error(f"{INSTANCE_TYPES_PATH}: answer is not JSON")
            return
        page = parse_instance_types(data, self.context())
        if page.auth_rejected:
            self.note_auth("rejected", f"invalid API key error from {INSTANCE_TYPES_PATH}")
            return
        if page.api_error is not None:
            self.ledger.requests_gave_up += 1
            self.ledger.add_error(f"api error on {INSTANCE_TYPES_PATH}: {page.api_error}")
            return
        self.note_auth("ok")
        yield from self.emit_page(page, INSTANCE_TYPES_PATH)
