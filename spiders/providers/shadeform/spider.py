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

from typing import Any

from spiders.keyed_list import KeyedListSpider
from spiders.parsers.common import PageResult, ParseContext
from spiders.providers.shadeform.parser import parse_instance_types


class ShadeformSpider(KeyedListSpider):
    """Reads Shadeform's documented API behind a key."""

    name = "shadeform"
    list_path = "/instances/types"

    def key_headers(self, key: str) -> dict[str, str]:
        return {"X-API-KEY": key}

    def parse_list(self, data: Any, ctx: ParseContext) -> PageResult:
        return parse_instance_types(data, ctx)
