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

from collections.abc import AsyncIterator, Iterator
from typing import Any

from scrapy.http import Response

from gpurent_core.providers import provider
from spiders.base import KEY_REFUSED, ApiSpider, env_secret
from spiders.providers.featurize.parser import parse_instances

INSTANCES_PATH = "/bus/api/v1/available_instances"
# The credentials it reads, from its line in gpurent_core.providers.
(TOKEN_ENV,) = provider("featurize").auth_env


class FeaturizeSpider(ApiSpider):
    """Reads the API the official SDK calls."""

    name = "featurize"
    needs_auth = True

    async def start(self) -> AsyncIterator[Any]:
        token = env_secret(TOKEN_ENV)
        if token is None:
            self.note_auth("missing", f"{TOKEN_ENV} not set: the instance list needs a token")
            return
        yield self.json_request(
            self.url(INSTANCES_PATH),
            headers={"Token": token},
            refusals=KEY_REFUSED,
            callback=self.parse_instances,
        )

    def parse_instances(self, response: Response) -> Iterator[Any]:
        if self.key_refused(response, "the instance list"):
            return
        result = self.json_page(response, INSTANCES_PATH, parse_instances)
        if result is None:
            return
        if result.api_error is not None:
            self.note_api_error(INSTANCES_PATH, result.api_error)
            return
        self.note_auth("ok")
        yield from self.emit_page(result, INSTANCES_PATH)
