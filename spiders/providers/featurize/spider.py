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

from typing import Any

from spiders.keyed_list import KeyedListSpider
from spiders.parsers.common import PageResult, ParseContext
from spiders.providers.featurize.parser import parse_instances


class FeaturizeSpider(KeyedListSpider):
    """Reads the API the official SDK calls."""

    name = "featurize"
    list_path = "/bus/api/v1/available_instances"

    def key_headers(self, key: str) -> dict[str, str]:
        return {"Token": key}

    def parse_list(self, data: Any, ctx: ParseContext) -> PageResult:
        return parse_instances(data, ctx)
