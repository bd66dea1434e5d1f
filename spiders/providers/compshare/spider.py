"""优云智算 Compshare: signed UCloud API calls for GPU types, free cards and prices.

With `COMPSHARE_PUBLIC_KEY` and `COMPSHARE_PRIVATE_KEY` in the environment, each call is
`POST {base}/` with a JSON body of signed parameters (`spiders.parsers.ucloud`):

1. `DescribeAvailableCompShareInstanceTypes` for the region: the GPU types per zone and
   their Status (Normal/Beta in stock, Soldout sold out, Hidden skipped);
2. per zone, `DescribeCompShareGpuInventory`: free cards per GPU type (Exclusive pool).
   A zone whose inventory cannot be read (the request failed, an API error, not JSON, or
   `GpuInventoryByZone` gone) yields no offers this run: its offers keep their last good
   state, shown stale (rules of truth 2 and 10), rather than a free count flipped to
   unknown; the failure or layout error is in the run report;
3. per zone and GPU type, `GetCompShareInstancePrice` with ChargeType `Dynamic` (the
   hourly headline), then `Day` and `Month` (commitment plans); the offer is emitted
   when its three quotes are in.

What a failure leaves unread (rule of truth 10) is what that request decides, by key
(`UNREAD_META`): the zone's offers for an inventory request, the one offer for a price
request. A failed Dynamic price leaves that offer out of the run, kept stale; a failed Day or
Month price still emits the offer, without that plan (the run is partial). Only the
instance-types request decides every offer.

Every call needs a signature, so without keys nothing is public: the run report says
`auth: missing` and no request is made. RetCode 171/172 or HTTP 401/403 mean the keys
were refused (`auth: rejected`). The private key only signs; it is never sent, logged,
stored in settings or written to the feed or the run report.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from scrapy.http import Response
from twisted.python.failure import Failure

from spiders.parsers.common import PageResult
from spiders.parsers.ucloud import ParamValue
from spiders.providers.compshare.parser import (
    CHARGE_UNITS,
    DEFAULT_REGION,
    GpuListing,
    QuotePage,
    TypesPage,
    instance_types_params,
    inventory_params,
    offer_records,
    parse_instance_types,
    parse_inventory,
    parse_price_answer,
    price_params,
)
from spiders.ucloud_api import Quotes, UCloudApiSpider


class CompshareSpider(UCloudApiSpider):
    """Reads a signed JSON API for programs (UCloud OpenAPI)."""

    name = "compshare"
    default_region = DEFAULT_REGION
    charge_order = tuple(CHARGE_UNITS)  # Dynamic, Day, Month

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Offer key -> the free cards its zone's inventory told (None: no count).
        self.free_cards: dict[str, int | None] = {}

    def types_params(self) -> Mapping[str, ParamValue]:
        return instance_types_params(self.region)

    def read_types(self, data: Any) -> TypesPage:
        return parse_instance_types(data, self.context())

    def after_types(self, page: TypesPage) -> Iterator[Any]:
        for zone in page.zones():
            listings = [item for item in page.listings if item.zone == zone]
            yield self.api_request(
                inventory_params(self.region, zone),
                callback=self.parse_inventory,
                errback=self.on_inventory_failed,
                where=zone,
                decides=[listing.offer_key for listing in listings],
                cb_kwargs={"zone": zone, "listings": listings},
            )

    # -- the inventory, between the types and the prices --------------------------------

    def parse_inventory(
        self, response: Response, zone: str, listings: list[GpuListing]
    ) -> Iterator[Any]:
        where = response.meta["gpurent_where"]
        data = self.read(response)
        if self._rejected or data is None:  # refused, or not JSON (a layout error noted)
            self.note_zone_unread(zone, listings)
            return
        page = parse_inventory(data, zone)
        if page.auth_rejected:
            self.rejected(f"RetCode signature/user error from {where}")
            return
        if page.api_error is not None:
            self.note_api_error(where, page.api_error, keys=self.decided(response))
            self.note_zone_unread(zone, listings)
            return
        yield from self.emit_answer(page, where, response)
        if page.layout_error is not None:
            self.note_zone_unread(zone, listings)
            return
        # An answer without this zone's counts (several zones in the pool, a documented
        # shape) is no drift: those offers carry their Status with the count unknown.
        yield from self.price_chains(listings, page.free)

    def on_inventory_failed(self, failure: Failure) -> None:
        self.on_request_failed(failure)
        kwargs = failure.request.cb_kwargs  # type: ignore[attr-defined]
        self.note_zone_unread(kwargs["zone"], kwargs["listings"])

    def note_zone_unread(self, zone: str, listings: list[GpuListing]) -> None:
        """A zone whose inventory was not read is not priced: a free count read as unknown
        would flip its offers' state on a failed fetch; their last good state stays (the
        request's keys are declared unread where the failure is noted: `UNREAD_META`)."""
        if not self._rejected:
            keys = ", ".join(listing.offer_key for listing in listings)
            self.note(f"{zone}: inventory not read, its offers keep their last state: {keys}")

    def price_chains(
        self, listings: list[GpuListing], free: dict[str, int] | None
    ) -> Iterator[Any]:
        for listing in listings:
            self.free_cards[listing.offer_key] = (
                None if free is None else free.get(listing.gpu_type)
            )
            yield self.price_request(listing, {}, self.charge_order[0])

    # -- the prices ----------------------------------------------------------------------

    def price_params(self, listing: GpuListing, charge_type: str) -> Mapping[str, ParamValue]:
        return price_params(listing, self.region, charge_type)

    def read_price(self, data: Any, charge_type: str) -> QuotePage:
        return parse_price_answer(data, charge_type)

    def offer_page(self, listing: GpuListing, quotes: Quotes) -> PageResult:
        free = self.free_cards.get(listing.offer_key)
        return offer_records(self.context(), listing, free, quotes)
