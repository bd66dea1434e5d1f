"""RunPod: the GraphQL GPU catalog, then prices and stock of one card per cloud.

Three `POST {base}/graphql` requests per run: `GpuTypes` (the catalog), then `GpuPrices`
for the secure cloud and for the community cloud (see spiders.parsers.runpod).

RunPod serves this catalog without a key (gpuhunt queries it so). With `RUNPOD_API_KEY`
set, the spider sends `Authorization: Bearer <key>`; if RunPod refuses the key (HTTP
401/403 or a GraphQL "Unauthorized" error) the report says `auth: rejected` and the
spider asks again without it, so the public prices still load. Without the key the run
is a plain public read: the report says `auth: not_needed` and notes the missing key,
because nothing is lost without it. Only if RunPod refuses the keyless query too does the
report say `auth: missing`. The key is never logged, stored or written anywhere.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from scrapy.http import Response

from spiders.base import KEY_REFUSED, ApiSpider, env_secret
from spiders.parsers.runpod import (
    CLOUDS,
    Catalog,
    catalog_body,
    parse_catalog,
    parse_prices,
    prices_body,
    read_envelope,
)

GRAPHQL_PATH = "/graphql"
KEY_ENV = "RUNPOD_API_KEY"
CATALOG = "catalog"


class RunpodSpider(ApiSpider):
    """Reads a GraphQL API for programs (RunPod's own console and SDK call it)."""

    name = "runpod"
    home = "US"
    auth_env = (KEY_ENV,)
    default_base_url = "https://api.runpod.io"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._key = env_secret(KEY_ENV)
        self._catalog: Catalog | None = None

    async def start(self) -> AsyncIterator[Any]:
        if self._key is None:
            self.note(f"{KEY_ENV} not set: public catalog query (RunPod serves it without a key)")
        yield self.graphql_request(CATALOG)

    def graphql_request(self, step: str) -> scrapy.Request:
        """The catalog query (`step` "catalog") or one cloud's prices ("secure", "community")."""
        auth = {} if self._key is None else {"Authorization": f"Bearer {self._key}"}
        return self.json_request(
            self.url(GRAPHQL_PATH),
            json_body=catalog_body() if step == CATALOG else prices_body(step),
            headers=auth,
            # A refused key is an answer to read (and to ask again without the key).
            refusals=KEY_REFUSED,
            meta={"runpod_keyed": self._key is not None},
            callback=self.parse_answer,
            cb_kwargs={"step": step},
        )

    def parse_answer(self, response: Response, step: str) -> Iterator[Any]:
        where = f"{GRAPHQL_PATH} {step}"
        keyed = bool(response.meta.get("runpod_keyed"))
        if response.status in KEY_REFUSED:
            yield from self.refused(step, keyed, f"HTTP {response.status}")
            return
        answer = self.json_page(response, where, lambda data, _ctx: read_envelope(data))
        if answer is None:
            return
        if answer.layout_error is not None:
            self.note_layout_error(f"{where}: {answer.layout_error}")
            return
        if answer.auth_rejected:
            yield from self.refused(step, keyed, f"GraphQL error {answer.error!r}")
            return
        if answer.data is None:  # HTTP 200 with only errors
            self.note_api_error(where, str(answer.error))
            return
        if answer.error is not None:
            self.note(f"{where}: partial answer, GraphQL error {answer.error!r}")
        if keyed:
            self.note_auth("ok")
        if step == CATALOG:
            yield from self.read_catalog(answer.data, where)
            return
        catalog = self._catalog if self._catalog is not None else Catalog()
        yield from self.emit_page(parse_prices(answer.data, step, catalog, self.context()), where)

    def read_catalog(self, data: dict[str, Any], where: str) -> Iterator[Any]:
        catalog = parse_catalog(data)
        for path in catalog.missing_fields:
            self.ledger.add_missing_field(f"{where}: {path}")
        if catalog.layout_error is not None:
            self.note_layout_error(f"{where}: {catalog.layout_error}")
        if not catalog.types:
            return
        if catalog.layout_error is None:
            self.note_page_parsed()
        self._catalog = catalog
        for cloud in CLOUDS:
            yield self.graphql_request(cloud)

    def refused(self, step: str, keyed: bool, detail: str) -> Iterator[Any]:
        if keyed:
            self.note_auth("rejected", f"{detail} on the {step} query; asked again without the key")
            self._key = None
            yield self.graphql_request(step)
            return
        self.ledger.requests_gave_up += 1
        self.note_auth("missing", f"{detail} on the keyless {step} query and {KEY_ENV} is not set")
