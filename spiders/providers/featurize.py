"""Featurize: the instance list with idle status, developer token only.

`GET {base}/bus/api/v1/available_instances` with the header `Token: <developer token>`
(env `FEATURIZE_TOKEN`), as the official SDK calls it. One answer lists every instance;
no pagination is documented.

Nothing is public: without the token the run reports `auth: missing` and asks nothing (it
ends `auth_required`, never sold out). HTTP 401/403 reports `auth: rejected`. An envelope
`status` other than 0 is an API error (a failed request); which status codes mean a bad
token is not known from our sources.

The token is read from the environment, sent in one header and never logged, stored in
settings or written to the feed or the run report.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from scrapy.http import Response

from spiders.base import ProviderSpider
from spiders.parsers.common import load_json
from spiders.parsers.featurize import parse_instances

INSTANCES_PATH = "/bus/api/v1/available_instances"
TOKEN_ENV = "FEATURIZE_TOKEN"


def featurize_token() -> str | None:
    token = os.environ.get(TOKEN_ENV, "").strip()
    return token or None


class FeaturizeSpider(ProviderSpider):
    name = "featurize"
    home = "CN"
    auth_env = (TOKEN_ENV,)
    needs_auth = True
    default_base_url = "https://featurize.cn"
    custom_settings = {  # noqa: RUF012 (Scrapy reads it as a class attribute)
        # The API the official SDK calls; robots.txt is for page crawlers.
        "ROBOTSTXT_OBEY": False,
    }

    async def start(self) -> AsyncIterator[Any]:
        token = featurize_token()
        if token is None:
            self.note_auth("missing", f"{TOKEN_ENV} not set: the instance list needs a token")
            return
        yield scrapy.Request(
            self.url(INSTANCES_PATH),
            headers={"Accept": "application/json", "Token": token},
            # A refused token is an answer to read, not an error to retry.
            meta={"handle_httpstatus_list": [401, 403]},
            callback=self.parse_instances,
            errback=self.on_request_failed,
            dont_filter=True,
        )

    def parse_instances(self, response: Response) -> Iterator[Any]:
        if response.status in (401, 403):
            self.note_auth("rejected", f"HTTP {response.status} from the instance list")
            return
        try:
            data = load_json(response.body)
        except ValueError:
            self.note_layout_error(f"{INSTANCES_PATH}: answer is not JSON")
            return
        result = parse_instances(data, self.context())
        if result.api_error is not None:
            # HTTP 200 but no data: a failed request, not a layout change.
            self.ledger.requests_gave_up += 1
            self.ledger.add_error(f"api error on {INSTANCES_PATH}: {result.api_error}")
            return
        self.note_auth("ok")
        yield from self.emit_page(result, INSTANCES_PATH)
