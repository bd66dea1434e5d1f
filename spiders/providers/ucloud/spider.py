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

from collections.abc import Mapping
from typing import Any

from spiders.parsers.common import PageResult
from spiders.parsers.ucloud import ParamValue
from spiders.providers.ucloud.parser import (
    CHARGE_UNITS,
    DEFAULT_REGION,
    GpuListing,
    QuotePage,
    TypesPage,
    instance_types_params,
    offer_records,
    parse_instance_types,
    parse_price_answer,
    price_params,
)
from spiders.ucloud_api import Quotes, UCloudApiSpider


class UcloudSpider(UCloudApiSpider):
    """Reads a signed JSON API for programs (UCloud OpenAPI, UHost actions)."""

    name = "ucloud"
    default_region = DEFAULT_REGION
    charge_order = tuple(CHARGE_UNITS)  # Dynamic, Month

    def types_params(self) -> Mapping[str, ParamValue]:
        return instance_types_params(self.region)

    def read_types(self, data: Any) -> TypesPage:
        return parse_instance_types(data, self.context())

    def price_params(self, listing: GpuListing, charge_type: str) -> Mapping[str, ParamValue]:
        return price_params(listing, self.region, charge_type)

    def read_price(self, data: Any, charge_type: str) -> QuotePage:
        return parse_price_answer(data, charge_type)

    def offer_page(self, listing: GpuListing, quotes: Quotes) -> PageResult:
        return offer_records(self.context(), listing, quotes)
