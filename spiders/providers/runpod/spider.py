"""RunPod: the GraphQL GPU catalog, then prices and stock of one card per cloud.

Three `POST {base}/graphql` requests per run: `GpuTypes` (the catalog), then `GpuPrices`
for the secure cloud and for the community cloud (see spiders.providers.runpod.parser).

RunPod serves this catalog without a key (gpuhunt queries it so). With `RUNPOD_API_KEY`
set, the spider sends `Authorization: Bearer <key>`; if RunPod refuses the key (HTTP
401/403 or a GraphQL "Unauthorized" error) the report says `auth: rejected` and the
spider asks again without it, so the public prices still load. Without the key the run
is a plain public read: the report says `auth: not_needed` and notes the missing key,
because nothing is lost without it. Only if RunPod refuses the keyless query too does the
report say `auth: missing`. The key is never logged, stored or written anywhere.

HTTP 400 is read, not given up on: with the GraphQL extensions code
`GRAPHQL_VALIDATION_FAILED` RunPod's schema refused a field we query (renamed or removed),
which is a layout change naming RunPod's message; any other 400 is a failed request.

What a failed or unreadable answer leaves unread (rule of truth 10): the catalog decides
every offer (default: all of them); each cloud's prices answer decides the keys
`<type id>/<cloud>` of the types the catalog names there, so its failure keeps those, stale,
and nothing of the other cloud.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from scrapy.http import Response

from gpurent_core.providers import provider
from spiders.base import KEY_REFUSED, UNREAD_META, ApiSpider, env_secret
from spiders.parsers.common import load_json
from spiders.providers.runpod.parser import (
    CLOUDS,
    Catalog,
    catalog_body,
    parse_catalog,
    parse_prices,
    prices_body,
    read_envelope,
)

GRAPHQL_PATH = "/graphql"
BAD_REQUEST = 400
"""How RunPod answers a query its schema refuses: read (a layout change), not given up on."""
# The credentials it reads, from its line in gpurent_core.providers.
(KEY_ENV,) = provider("runpod").auth_env
CATALOG = "catalog"


class RunpodSpider(ApiSpider):
    """Reads a GraphQL API for programs (RunPod's own console and SDK call it)."""

    name = "runpod"

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
        meta: dict[str, Any] = {"runpod_keyed": self._key is not None}
        unread = self.unread_of(step)
        if unread:
            meta[UNREAD_META] = unread
        return self.json_request(
            self.url(GRAPHQL_PATH),
            json_body=catalog_body() if step == CATALOG else prices_body(step),
            headers=auth,
            # A refused key is an answer to read (and to ask again without the key), and so
            # is a query the schema refuses (HTTP 400).
            refusals=(*KEY_REFUSED, BAD_REQUEST),
            meta=meta,
            callback=self.parse_answer,
            cb_kwargs={"step": step},
        )

    def unread_of(self, step: str) -> dict[str, list[str]]:
        """What a failure of `step` leaves unread: one cloud's offers by key, once the
        catalog says which; empty (every offer) for the catalog itself."""
        if step == CATALOG or self._catalog is None:
            return {}
        return {"keys": self._catalog.offer_keys(step), "prefixes": []}

    def bad_request(self, response: Response, step: str, where: str) -> None:
        """HTTP 400: the schema refusing a field we query is a layout change; any other 400
        is a failed request. Either way what `step` decides is unread."""
        try:
            answer = read_envelope(load_json(response.body))
        except ValueError:
            answer = None
        unread = self.unread_of(step)
        if answer is not None and answer.validation_failed:
            self.note_layout_error(
                f"{where}: query refused by the schema ({answer.code}): {answer.error}", **unread
            )
            return
        detail = answer.error if answer is not None and answer.error else "no GraphQL error"
        self.note_api_error(where, f"HTTP 400: {detail}", **unread)

    def parse_answer(self, response: Response, step: str) -> Iterator[Any]:
        where = f"{GRAPHQL_PATH} {step}"
        keyed = bool(response.meta.get("runpod_keyed"))
        if response.status in KEY_REFUSED:
            yield from self.refused(step, keyed, f"HTTP {response.status}")
            return
        if response.status == BAD_REQUEST:
            self.bad_request(response, step, where)
            return
        answer = self.json_page(response, where, lambda data, _ctx: read_envelope(data))
        if answer is None:
            return
        if answer.layout_error is not None:
            self.note_layout_error(f"{where}: {answer.layout_error}", **self.unread_of(step))
            return
        if answer.auth_rejected:
            yield from self.refused(step, keyed, f"GraphQL error {answer.error!r}")
            return
        if answer.data is None:  # HTTP 200 with only errors
            self.note_api_error(where, str(answer.error), **self.unread_of(step))
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
