"""CloudRift: one POST of every VM instance type, with its variants' free nodes per data centre.

`POST {base}/api/v1/instance-types/list` with the body `{"version": <API date>, "data":
{"selector": {"ByServiceAndLocation": {"services": ["vm"]}}}}`, CloudRift's public API
(api.cloudrift.ai/swagger-ui; base https://api.cloudrift.ai). Every call of that API is a
POST of `{version, data}` and answers `{version, data}`. The listing needs no key: the
instance types are public (dstack's and SkyPilot's CloudRift catalogs read them the same
way, without credentials), so no credential is read or sent. No pagination exists: one
answer holds every type, sold-out variants included.

The selector asks for the types rentable as virtual machines (`vm`), the catalog CloudRift's
own VM rentals and the public clients use; `docker` rentals run on the same nodes. No
datacentre filter is sent: a filtered answer would say nothing of the others.

An HTTP error (CloudRift answers errors as plain text with a 4xx/5xx status) is a failed
request: every offer keeps its last state, stale. So is a 200 whose body is a bare JSON
string (the parser's API error).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from scrapy.http import Response

from spiders.base import ApiSpider
from spiders.providers.cloudrift.parser import parse_instance_types

INSTANCE_TYPES_PATH = "/api/v1/instance-types/list"
# The protocol date sent with each call: the one dstack's CloudRift client pins for this
# listing (the server answers the listing in its own version whatever is sent).
API_VERSION = "2025-05-29"
SELECTOR = {"ByServiceAndLocation": {"services": ["vm"]}}


def request_body() -> dict[str, Any]:
    """The listing's request: the API date and the selector of every VM type."""
    return {"version": API_VERSION, "data": {"selector": SELECTOR}}


class CloudriftSpider(ApiSpider):
    """Reads CloudRift's public API (no key), as dstack's and SkyPilot's catalogs do."""

    name = "cloudrift"

    async def start(self) -> AsyncIterator[Any]:
        yield self.json_request(
            self.url(INSTANCE_TYPES_PATH),
            json_body=request_body(),
            callback=self.parse_instance_types,
        )

    def parse_instance_types(self, response: Response) -> Iterator[Any]:
        page = self.json_page(response, INSTANCE_TYPES_PATH, parse_instance_types)
        if page is None:
            return
        if page.api_error is not None:
            self.note_api_error(INSTANCE_TYPES_PATH, page.api_error)
            return
        yield from self.emit_page(page, INSTANCE_TYPES_PATH)
