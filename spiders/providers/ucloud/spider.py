"""UCloud 优刻得 UHost: signed UCloud API calls for GPU machine types and their prices.

With `UCLOUD_PUBLIC_KEY` and `UCLOUD_PRIVATE_KEY` in the environment, each call is
`POST {base}/` with a JSON body of signed parameters (`spiders.parsers.ucloud`):

1. `DescribeAvailableInstanceTypes` for the region: the machine types per zone, their
   MachineClass (GPU types listed, the others skipped as no GPU offer) and Status
   (Normal/Beta in stock without a count, Soldout sold out, Hidden skipped);
2. per zone and GPU type, `GetUHostInstancePrice` with ChargeType `Dynamic` (the hourly
   headline), then `Month` (a commitment plan); the offer is emitted when both are in.

What a failure leaves unread (rule of truth 10) is what that request decides, by key
(`UNREAD_META`): the one offer for a price request. A failed Dynamic price leaves that offer
out of the run, kept stale; a failed Month price still emits the offer without that plan
(the run is partial). Only the instance-types request decides every offer.

Every call needs a signature, so without keys nothing is public: the run report says
`auth: missing` and no request is made. RetCode 171/172 or HTTP 401/403 mean the keys were
refused (`auth: rejected`). The private key only signs; it is never sent, logged, stored in
settings or written to the feed or the run report.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from scrapy.http import Response
from twisted.python.failure import Failure

from gpurent_core.providers import provider
from spiders.parsers.common import FieldProblem
from spiders.providers.ucloud.parser import (
    CHARGE_UNITS,
    DEFAULT_REGION,
    DYNAMIC,
    GpuListing,
    PriceQuote,
    instance_types_params,
    offer_records,
    parse_instance_types,
    parse_price_answer,
    price_params,
)
from spiders.ucloud_api import UCloudApiSpider

# The credentials it reads, from its line in gpurent_core.providers (the tests set them).
PUBLIC_KEY_ENV, PRIVATE_KEY_ENV = provider("ucloud").auth_env
CHARGE_ORDER = tuple(CHARGE_UNITS)  # Dynamic, Month

Quotes = dict[str, PriceQuote | FieldProblem]


class UcloudSpider(UCloudApiSpider):
    """Reads a signed JSON API for programs (UCloud OpenAPI, UHost actions)."""

    name = "ucloud"
    default_region = DEFAULT_REGION

    async def start(self) -> AsyncIterator[Any]:
        if self.keys_missing():
            return
        yield self.api_request(
            instance_types_params(self.region), callback=self.parse_types, where="instance types"
        )

    # -- 1. instance types -----------------------------------------------------------

    def parse_types(self, response: Response) -> Iterator[Any]:
        where = response.meta["gpurent_where"]
        data = self.read(response)
        if data is None:
            return
        page = parse_instance_types(data, self.context())
        if page.auth_rejected:
            self.rejected(f"RetCode signature/user error from {where}")
            return
        if page.api_error is not None:
            self.note_api_error(where, page.api_error)
            return
        self.note_auth("ok")
        yield from self.emit_page(page, where)
        for listing in page.listings:
            yield self.price_request(listing, {}, DYNAMIC)

    # -- 2. prices ----------------------------------------------------------------------

    def price_request(
        self, listing: GpuListing, quotes: Quotes, charge_type: str
    ) -> scrapy.Request:
        return self.api_request(
            price_params(listing, self.region, charge_type),
            callback=self.parse_price,
            errback=self.on_price_failed,
            where=f"{listing.offer_key} {charge_type}",
            decides=[listing.offer_key],
            cb_kwargs={"listing": listing, "quotes": quotes, "charge_type": charge_type},
        )

    def parse_price(
        self, response: Response, listing: GpuListing, quotes: Quotes, charge_type: str
    ) -> Iterator[Any]:
        where = response.meta["gpurent_where"]
        data = self.read(response)
        if self._rejected:
            return
        if data is None:  # not JSON: noted as a layout error
            yield from self.next_quote(listing, quotes, charge_type, None)
            return
        page = parse_price_answer(data, charge_type)
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
        self,
        listing: GpuListing,
        quotes: Quotes,
        charge_type: str,
        got: PriceQuote | FieldProblem | None,
    ) -> Iterator[Any]:
        """Store this quote, then ask the next ChargeType or emit the offer."""
        quotes = dict(quotes)
        if got is not None:
            quotes[charge_type] = got
        if charge_type == DYNAMIC and not isinstance(got, PriceQuote):
            # No headline price: a failed request is already noted; an untrustworthy
            # price quarantines the offer without asking for its plan.
            if got is not None:
                yield from self.emit(offer_records(self.context(), listing, quotes).records)
            return
        following = CHARGE_ORDER.index(charge_type) + 1
        if following < len(CHARGE_ORDER):
            yield self.price_request(listing, quotes, CHARGE_ORDER[following])
            return
        result = offer_records(self.context(), listing, quotes)
        for note in result.notes:
            self.note(note)
        yield from self.emit(result.records)
