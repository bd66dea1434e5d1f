"""The spider side of the signed UCloud API that UCloud UHost and 优云智算 Compshare share:
keys from the environment, one signed POST per call, refusals and layout errors noted
against the offers each call decides, and the two steps both take: the instance types of
the region, then per listing one price call per ChargeType, the hourly headline first
(`charge_order`), the offer emitted when its quotes are in.

Each provider's spider says which actions it calls and how its parser reads them, through
the hooks `types_params`, `read_types`, `price_params`, `read_price` and `offer_page`
(and `after_types`, where Compshare asks its inventory before the prices).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any, ClassVar

import scrapy
from scrapy.http import Response
from twisted.python.failure import Failure

from gpurent_core.providers import provider
from spiders.base import KEY_REFUSED, UNREAD_META, ApiSpider, env_secret
from spiders.feed_batch import RecordBatch
from spiders.parsers.common import FieldProblem, PageResult, load_json
from spiders.parsers.ucloud import Listing, ParamValue, signed_params

API_PATH = "/"


Quotes = dict[str, Any]
"""ChargeType -> the parser's quote, or the FieldProblem that made it untrustworthy."""


class UCloudApiSpider(ApiSpider):
    """A spider of a signed UCloud API; ``default_region`` is the provider's."""

    needs_auth = True
    default_region = ""
    charge_order: ClassVar[tuple[str, ...]] = ()
    """The ChargeTypes asked per listing, in order: the hourly headline first, then plans."""

    def __init__(self, *args: Any, region: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.region = region or self.default_region
        # The credentials it reads, from its line in gpurent_core.providers.
        self.key_envs: tuple[str, ...] = provider(self.name).auth_env
        public, private = (env_secret(name) for name in self.key_envs)
        keys = (public, private) if public and private else None
        self._public_key = keys[0] if keys else None
        self._private_key = keys[1] if keys else None
        self._rejected = False

    def keys_missing(self) -> bool:
        """Whether the keys are missing (then noted: every call is signed, nothing is public)."""
        if self._public_key is not None:
            return False
        self.note_auth("missing", " / ".join(self.key_envs) + " not set: every call is signed")
        return True

    # -- requests ----------------------------------------------------------------

    def api_request(
        self,
        params: Mapping[str, ParamValue],
        *,
        callback: Any,
        where: str,
        decides: list[str] | None = None,
        cb_kwargs: dict[str, Any] | None = None,
        errback: Any = None,
    ) -> scrapy.Request:
        """A signed call; `decides`: the offer keys its answer decides (what its failure
        leaves unread), None for every offer."""
        assert self._public_key is not None and self._private_key is not None
        body = signed_params(params, public_key=self._public_key, private_key=self._private_key)
        meta: dict[str, Any] = {
            "handle_httpstatus_list": list(KEY_REFUSED),
            "gpurent_where": f"{params['Action']} ({where})",
        }
        if decides is not None:
            meta[UNREAD_META] = {"keys": list(decides)}
        return scrapy.Request(
            self.url(API_PATH),
            method="POST",
            body=json.dumps(body, ensure_ascii=False),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
            meta=meta,
            callback=callback,
            errback=errback or self.on_request_failed,
            cb_kwargs=cb_kwargs or {},
            dont_filter=True,
        )

    @staticmethod
    def decided(response: Response) -> list[str]:
        """The offer keys the request of `response` decides; [] for every offer."""
        unread = response.meta.get(UNREAD_META)
        return list(unread["keys"]) if isinstance(unread, dict) else []

    def read(self, response: Response) -> Any | None:
        """The decoded answer, or None when it is a refusal or not JSON (already noted)."""
        where = response.meta.get("gpurent_where", API_PATH)
        if response.status in KEY_REFUSED:
            self.rejected(f"HTTP {response.status} from {where}")
            return None
        try:
            return load_json(response.body)
        except ValueError:
            self.note_layout_error(f"{where}: answer is not JSON", keys=self.decided(response))
            return None

    def emit_answer(
        self, page: PageResult, where: str, response: Response
    ) -> Iterator[dict[str, Any] | RecordBatch]:
        """`emit_page` for an answer that decides only some offers: a layout error there
        leaves those offers unread, not every offer (the base class cannot know them)."""
        keys = self.decided(response)
        if page.layout_error is None or not keys:
            yield from self.emit_page(page, where)
            return
        for note in page.notes:
            self.note(note)
        for path in page.missing_fields:
            self.ledger.add_missing_field(f"{where}: {path}")
        self.note_layout_error(f"{where}: {page.layout_error}", keys=keys)
        yield from self.emit(page.records)

    def rejected(self, detail: str) -> None:
        self._rejected = True
        self.note_auth("rejected", detail)

    # -- the two steps --------------------------------------------------------------------

    async def start(self) -> AsyncIterator[Any]:
        if self.keys_missing():
            return
        yield self.api_request(
            self.types_params(), callback=self.parse_types, where="instance types"
        )

    def parse_types(self, response: Response) -> Iterator[Any]:
        where = response.meta["gpurent_where"]
        data = self.read(response)
        if data is None:
            return
        page = self.read_types(data)
        if page.auth_rejected:
            self.rejected(f"RetCode signature/user error from {where}")
            return
        if page.api_error is not None:
            self.note_api_error(where, page.api_error)
            return
        self.note_auth("ok")
        yield from self.emit_page(page, where)
        yield from self.after_types(page)

    def after_types(self, page: Any) -> Iterator[Any]:
        """What follows the types: each listing's price chain."""
        for listing in page.listings:
            yield self.price_request(listing, {}, self.charge_order[0])

    def price_request(self, listing: Listing, quotes: Quotes, charge_type: str) -> scrapy.Request:
        return self.api_request(
            self.price_params(listing, charge_type),
            callback=self.parse_price,
            errback=self.on_price_failed,
            where=f"{listing.offer_key} {charge_type}",
            decides=[listing.offer_key],
            cb_kwargs={"listing": listing, "quotes": quotes, "charge_type": charge_type},
        )

    def parse_price(
        self, response: Response, listing: Listing, quotes: Quotes, charge_type: str
    ) -> Iterator[Any]:
        where = response.meta["gpurent_where"]
        data = self.read(response)
        if self._rejected:
            return
        if data is None:  # not JSON: noted as a layout error
            yield from self.next_quote(listing, quotes, charge_type, None)
            return
        page = self.read_price(data, charge_type)
        if page.auth_rejected:
            self.rejected(f"RetCode signature/user error from {where}")
            return
        if page.api_error is not None:
            self.note_api_error(where, page.api_error, keys=self.decided(response))
            yield from self.next_quote(listing, quotes, charge_type, None)
            return
        yield from self.emit_answer(page, where, response)
        yield from self.next_quote(listing, quotes, charge_type, page.quote or page.problem)

    def on_price_failed(self, failure: Failure) -> Iterator[Any]:
        self.on_request_failed(failure)
        kwargs = failure.request.cb_kwargs  # type: ignore[attr-defined]
        yield from self.next_quote(kwargs["listing"], kwargs["quotes"], kwargs["charge_type"], None)

    def next_quote(
        self, listing: Listing, quotes: Quotes, charge_type: str, got: Any
    ) -> Iterator[Any]:
        """Store this quote (None: the request failed, already noted), then ask the next
        ChargeType or emit the offer."""
        quotes = dict(quotes)
        if got is not None:
            quotes[charge_type] = got
        if charge_type == self.charge_order[0] and (got is None or isinstance(got, FieldProblem)):
            # No headline price: a failed request leaves the offer unread (kept stale); an
            # untrustworthy price quarantines it without asking for its plans.
            if got is not None:
                yield from self.emit(self.offer_page(listing, quotes).records)
            return
        following = self.charge_order.index(charge_type) + 1
        if following < len(self.charge_order):
            yield self.price_request(listing, quotes, self.charge_order[following])
            return
        result = self.offer_page(listing, quotes)
        for note in result.notes:
            self.note(note)
        yield from self.emit(result.records)

    # -- what each provider says ----------------------------------------------------------

    def types_params(self) -> Mapping[str, ParamValue]:
        raise NotImplementedError

    def read_types(self, data: Any) -> Any:
        """The parser's types page (an ApiPage with `listings`)."""
        raise NotImplementedError

    def price_params(self, listing: Any, charge_type: str) -> Mapping[str, ParamValue]:
        raise NotImplementedError

    def read_price(self, data: Any, charge_type: str) -> Any:
        """The parser's price page (an ApiPage with `quote` and `problem`)."""
        raise NotImplementedError

    def offer_page(self, listing: Any, quotes: Quotes) -> PageResult:
        """The offer of a listing from its quotes (the headline one required)."""
        raise NotImplementedError
