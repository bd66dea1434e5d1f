"""Lambda: one GET of every instance type with the regions that have capacity now.

`GET {base}/api/v1/instance-types` with `Authorization: Bearer <LAMBDA_API_KEY>` (the API
has no public part). Without the key the spider sends nothing and the report says
`auth: missing`; a refused key (HTTP 401/403 or `global/invalid-api-key`) gives
`auth: rejected`. The key is never logged, stored or written anywhere.

(The module is `lambdalabs`, not `lambda`, which is a Python keyword; the spider is `lambda`.)
"""

from __future__ import annotations

from typing import Any

from spiders.keyed_list import KeyedListSpider
from spiders.parsers.common import PageResult, ParseContext
from spiders.providers.lambdalabs.parser import parse_instance_types


class LambdaSpider(KeyedListSpider):
    """Reads a documented JSON API behind a key."""

    name = "lambda"
    list_path = "/api/v1/instance-types"

    def parse_list(self, data: Any, ctx: ParseContext) -> PageResult:
        return parse_instance_types(data, ctx)
