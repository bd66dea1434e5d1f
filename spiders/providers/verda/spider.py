"""Verda (ex-DataCrunch): OAuth2 token, then instance types, availability and locations.

1. `POST {base}/v1/oauth2/token` with a client-credentials JSON body built from
   `VERDA_CLIENT_ID` and `VERDA_CLIENT_SECRET`.
2. With `Authorization: Bearer <access_token>`, five GETs: `/v1/instance-types`,
   `/v1/instance-availability?is_spot=false` and `?is_spot=true`, `/v1/locations` and
   `/v1/volume-types`. When all five have answered (or failed), the offers are built
   (spiders.providers.verda.parser): a missing instance-types answer means no offers; a missing
   on-demand availability answer keeps every offer out, one quarantine line per offer (so
   the warehouse keeps their last good state, stale; never stock `unknown` over it); a
   missing spot answer leaves the spot plans out, with a line per offer; missing locations
   or volume types cost only their part (locations the availability answers name, storage
   fees). Each answer's unreadable entries are quarantine lines, and the declared fields
   gone from some of its entries go into the run report (`missing_fields`, named by path).

What a failed or unreadable answer leaves unread (rule of truth 10): the instance types
and the locations decide which offers exist, so their failure leaves every offer unread
(kept stale). The on-demand answer decides stock only: its failure keeps each offer out
behind a quarantine line with the offer's key, and `<type>/` of every type read is unread
(a location only that answer would have named keeps its offers); a type the instance types
no longer list is closed. The spot answer and the volume types decide plans and fees of
offers that are still emitted, so their failure leaves nothing unread.

Either variable unset: nothing is sent and the report says `auth: missing` (Verda publishes
no prices without credentials). The token endpoint refusing them (HTTP 400/401/403, as the
SDK's `invalid_request` / `unauthorized_request`) or a data endpoint answering 401/403:
`auth: rejected`. Neither the client secret nor the access token is ever logged or stored.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from scrapy.http import Response
from twisted.python.failure import Failure

from gpurent_core.providers import provider
from spiders.base import KEY_REFUSED, UNREAD_META, ApiSpider, env_secret
from spiders.parsers.common import ParseContext, load_json
from spiders.providers.verda.parser import (
    Inputs,
    build_offers,
    read_availability,
    read_instance_types,
    read_locations,
    read_token,
    read_volume_types,
    token_body,
)

TOKEN_PATH = "/v1/oauth2/token"
# The token endpoint refuses credentials with 400 too (the SDK's `invalid_request`).
TOKEN_REFUSED = (400, *KEY_REFUSED)
# The credentials it reads, from its line in gpurent_core.providers.
ID_ENV, SECRET_ENV = provider("verda").auth_env
# Source name -> path (with query). Each answer is read by its reader in `_readers`.
SOURCES: dict[str, str] = {
    "instance_types": "/v1/instance-types",
    "on_demand": "/v1/instance-availability?is_spot=false",
    "spot": "/v1/instance-availability?is_spot=true",
    "locations": "/v1/locations",
    "volume_types": "/v1/volume-types",
}


NOTHING_UNREAD: dict[str, list[str]] = {"keys": [], "prefixes": []}
# What a failure of each answer leaves unread (`UNREAD_META`); absent: every offer. The
# on-demand answer's own unread prefixes come from the offers built without it.
SOURCE_UNREAD: dict[str, dict[str, list[str]]] = {
    "on_demand": NOTHING_UNREAD,
    "spot": NOTHING_UNREAD,
    "volume_types": NOTHING_UNREAD,
}


def verda_credentials() -> tuple[str, str] | None:
    client_id, secret = env_secret(ID_ENV), env_secret(SECRET_ENV)
    return (client_id, secret) if client_id and secret else None


def _readers(ctx: ParseContext) -> dict[str, Callable[[Any], Any]]:
    return {
        "instance_types": read_instance_types,
        "on_demand": lambda data: read_availability(data, ctx, kind="on-demand"),
        "spot": lambda data: read_availability(data, ctx, kind="spot"),
        "locations": lambda data: read_locations(data, ctx),
        "volume_types": lambda data: read_volume_types(data, ctx),
    }


class VerdaSpider(ApiSpider):
    """Reads a documented JSON API behind OAuth2."""

    name = "verda"
    needs_auth = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._answers: dict[str, Any] = {}
        self._why_missing: dict[str, str] = {}

    async def start(self) -> AsyncIterator[Any]:
        credentials = verda_credentials()
        if credentials is None:
            self.note_auth("missing", f"{ID_ENV} or {SECRET_ENV} not set: nothing is public")
            return
        yield self.json_request(
            self.url(TOKEN_PATH),
            json_body=token_body(*credentials),
            refusals=TOKEN_REFUSED,
            callback=self.parse_token,
        )

    def parse_token(self, response: Response) -> Iterator[Any]:
        if self.key_refused(response, TOKEN_PATH, TOKEN_REFUSED):
            return
        try:
            token = read_token(load_json(response.body))
        except ValueError:
            token = None
        if token is None:
            self.note_layout_error(f"{TOKEN_PATH}: no access_token in the answer")
            return
        self.note_auth("ok")
        for source, path in SOURCES.items():
            yield self.json_request(
                self.url(path),
                headers={"Authorization": f"Bearer {token}"},
                refusals=KEY_REFUSED,
                callback=self.parse_source,
                errback=self.on_source_failed,
                meta={UNREAD_META: SOURCE_UNREAD[source]} if source in SOURCE_UNREAD else None,
                cb_kwargs={"source": source},
            )

    def parse_source(self, response: Response, source: str) -> Iterator[Any]:
        path = SOURCES[source].split("?", 1)[0]
        where = SOURCES[source]
        answer: Any = None
        why = "refused"
        if not self.key_refused(response, path):
            why = "unreadable"
            answer = self.json_page(response, where, lambda data, ctx: _readers(ctx)[source](data))
            if answer is not None:
                self.note_missing_fields(where, answer.missing_fields)
            if answer is not None and answer.layout_error is not None:
                self.note_layout_error(
                    f"{where}: {answer.layout_error}", **self.unread_if_missing(source)
                )
                answer = None
            elif answer is not None:
                self.note_page_parsed()
        yield from self.settle(source, answer, why=why)

    @staticmethod
    def unread_if_missing(source: str) -> dict[str, Any]:
        """`note_layout_error`'s keys and prefixes for an unreadable `source` (none given:
        every offer), as its request's `UNREAD_META` says for a failure."""
        return dict(SOURCE_UNREAD.get(source, {}))

    def on_source_failed(self, failure: Failure) -> Iterator[Any]:
        self.on_request_failed(failure)
        request = getattr(failure, "request", None)
        source = request.cb_kwargs.get("source") if request is not None else None
        if isinstance(source, str):
            yield from self.settle(source, None, why="failed")

    def note_missing_fields(self, where: str, paths: list[str]) -> None:
        """Declared paths gone from some items of one answer, into the run report (as
        `emit_page` does for a page)."""
        for path in paths:
            self.ledger.add_missing_field(f"{where}: {path}")

    def settle(self, source: str, answer: Any, *, why: str) -> Iterator[Any]:
        """Keep one answer (None: missing, `why` says how); once all are in, build and yield
        the offers."""
        self._answers[source] = answer
        if answer is None:
            self._why_missing[source] = why
        if len(self._answers) < len(SOURCES):
            return
        types = self._answers["instance_types"]
        volumes = self._answers["volume_types"]
        for side in ("on_demand", "spot", "locations", "volume_types"):
            # The quarantine lines of the entries an answer could not read.
            if self._answers[side] is not None:
                yield from self.emit(self._answers[side].records)
        if types is None:
            return  # nothing to price; the failure or layout error is already noted
        inputs = Inputs(
            instance_types=types,
            on_demand=self._answers["on_demand"],
            spot=self._answers["spot"],
            locations=self._answers["locations"],
            volume_types=volumes,
            why_missing=dict(self._why_missing),
        )
        page = build_offers(inputs, self.context())
        for note in page.notes:
            self.note(note)
        if page.unread_prefixes:
            self.note_unread(prefixes=page.unread_prefixes)
        yield from self.emit(page.records)
