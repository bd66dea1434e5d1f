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

from collections.abc import AsyncIterator, Iterator
from typing import Any

from scrapy.http import Response

from gpurent_core.providers import provider
from spiders.base import KEY_REFUSED, ApiSpider, env_secret
from spiders.providers.chenyu.parser import parse_gpu_list

GPU_LIST_PATH = "/api/open/v2/gpu/list"
# The credentials it reads, from its line in gpurent_core.providers.
(KEY_ENV,) = provider("chenyu").auth_env


class ChenyuSpider(ApiSpider):
    """Reads Chenyu's documented open API."""

    name = "chenyu"
    needs_auth = True

    async def start(self) -> AsyncIterator[Any]:
        key = env_secret(KEY_ENV)
        if key is None:
            self.note_auth("missing", f"{KEY_ENV} not set: the GPU list needs an API key")
            return
        yield self.json_request(
            self.url(GPU_LIST_PATH),
            headers={"Authorization": f"Bearer {key}"},
            refusals=KEY_REFUSED,
            callback=self.parse_gpu_list,
        )

    def parse_gpu_list(self, response: Response) -> Iterator[Any]:
        if self.key_refused(response, "the GPU list"):
            return
        result = self.json_page(response, GPU_LIST_PATH, parse_gpu_list)
        if result is None:
            return
        if result.api_error is not None:
            self.note_api_error(GPU_LIST_PATH, result.api_error)
            return
        self.note_auth("ok")
        yield from self.emit_page(result, GPU_LIST_PATH)
