"""晨羽智云 Chenyu: the platform's GPU models with their prices (API key).

`GET {base}/api/open/v2/gpu/list` with `Authorization: Bearer <key>` (env `CHENYU_API_KEY`),
Chenyu's documented open API ("获取平台GPU列表", enterprise.chenyu.cn/api-reference/gpu/list).
One answer; the reference documents no request parameters and no pagination.

Without the key the run reports `auth: missing` and asks nothing (it ends `auth_required`,
never sold out). HTTP 401/403 reports `auth: rejected`. An envelope `code` other than 0 is an
API error (a failed request); which codes mean a bad key is not in the reference.

The key is read from the environment, sent in one header and never logged, stored in
settings or written to the feed or the run report.
"""

from __future__ import annotations

from typing import Any

from spiders.keyed_list import KeyedListSpider
from spiders.parsers.common import PageResult, ParseContext
from spiders.providers.chenyu.parser import parse_gpu_list


class ChenyuSpider(KeyedListSpider):
    """Reads Chenyu's documented open API."""

    name = "chenyu"
    list_path = "/api/open/v2/gpu/list"

    def parse_list(self, data: Any, ctx: ParseContext) -> PageResult:
        return parse_gpu_list(data, ctx)
