"""The GPU product list of PPIO's GPU-instance platform, which two providers serve: PPIO 派欧云
(`api.ppinfra.com`, CNY) and Novita AI, its international brand (`api.novita.ai`, USD).

One schema, `GET /gpu-instance/openapi/v1/products` -> `{data: [...]}`, read here once; each
provider's parser names what differs (`ProductList`: currency, endpoint, contract, platform
fees). Field meanings (skypilot's `fetch_ppio.py` and `fetch_novita.py`; Novita's API
reference, "List GPU Products"):

* `id`: the product; `name`: the card ("RTX 4090 24GB"); `cpuPerGpu`, `memoryPerGpu` (GiB
  of RAM per card, not VRAM); `minRootFS` / `maxRootFS`: root disk bounds.
* `price`: per card per hour in 1/100000 of the currency (both fetchers divide by 100000:
  `PPIO_PRICE_SCALE`); one card is the unit they list, so the price is per GPU.
* `spotPrice` (Novita documents it, a string in the same unit): a spot plan beside the
  offer when above zero. Absent, null, blank or zero: no spot plan. A value that is no price
  is set aside beside the offer, which stands without the plan.
* `availableDeploy` (bool): can be deployed now, our stock flag; `canBuy: false` also
  means it cannot be rented now. A null flag (the provider giving none) is `unknown`
  stock, with the flag's quarantine line beside the offer saying why. A product without a
  key its provider's contract lists is drift: it is quarantined, never read as sold out or
  in stock. A flag that is not a bool (`"true"`, `1`) is unknown stock, the flag set aside
  beside the offer. `canBuy` is read only where the provider's contract lists it (PPIO);
  Novita documents none, so there the stock is `availableDeploy` alone, and a `canBuy` in
  its answer is not read (a key its contract does not hold can never decide the stock).
* `regions[]`: where the product runs. The stock flag is per product, not per region, so
  the offer is one per product and `region` lists its regions.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gpurent_core.model import AddonFee, PriceBasis, PriceKind, PricePlan
from gpurent_core.normalize.availability import UNKNOWN, Availability, availability_from_flag
from gpurent_core.normalize.price import PPIO_PRICE_SCALE
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    gpu_offer,
    id_text,
    identify_gpu,
    minor_units,
    price_plan,
    require,
    set_aside,
)
from spiders.parsers.contract import Contract, contracted
from spiders.parsers.envelope import list_page


@dataclass(frozen=True)
class ProductList:
    """One provider's reading of the product list: what it is priced in, where it is asked,
    which keys a product cannot be trusted without, and the fees every offer carries."""

    currency: str
    endpoint_url: str
    contract: Contract
    fees: tuple[AddonFee, ...] = ()

    def parse(self, data: Any, ctx: ParseContext) -> PageResult:
        return list_page(data, "data", ctx, records=self.records, contract=self.contract)

    def records(self, product: Any, ctx: ParseContext) -> list[Record]:
        return contracted(
            ctx,
            product,
            self.contract,
            offer_key=lambda p: id_text(p.get("id")),
            build=lambda: self._build(product, id_text(product.get("id")), ctx),
        )

    def _build(self, product: dict[str, Any], key: str | None, ctx: ParseContext) -> list[Record]:
        if key is None:
            raise FieldProblem(MISSING_FIELD, "id", "id is missing")
        raw_name = require(product, "name")
        identity = identify_gpu(raw_name, field="name")
        price = _price(require(product, "price"), "price")
        stock, problem = _availability(product, read_can_buy="canBuy" in self.contract.stock)
        side = set_aside(ctx, problem, offer_key=key, item=product)
        plans = self._spot_plans(product, key, ctx, side)
        return [
            gpu_offer(
                ctx,
                offer_key=key,
                raw=product,
                gpu=identity,
                raw_gpu_name=raw_name,
                gpu_count=1,
                stock=stock,
                price=price,
                currency=self.currency,
                price_basis=PriceBasis.GPU,
                region=_regions(product.get("regions")),
                url=self.endpoint_url,
                fees=self.fees,
                plans=plans,
            ),
            *side,
        ]

    def _spot_plans(
        self, product: dict[str, Any], key: str, ctx: ParseContext, side: list[Record]
    ) -> tuple[PricePlan, ...]:
        """The spot price as a plan beside the offer; none when not offered (absent, null,
        blank, zero); a bad value set aside in `side`."""
        value = product.get("spotPrice")
        if value is None or (isinstance(value, str) and not value.strip()):
            return ()
        try:
            spot = _price(value, "spotPrice")
        except FieldProblem as problem:
            side.extend(set_aside(ctx, problem, offer_key=key, item=product))
            return ()
        if spot == 0:
            return ()
        return (price_plan(spot, self.currency, PriceBasis.GPU, PriceKind.SPOT),)


def _price(value: Any, field: str) -> Decimal:
    """A price per card-hour counted in 1/100000 of the currency; a bad cell such as `1e400`
    or `10**30` costs this item (or, for a side price, that price), never the page."""
    return minor_units(value, PPIO_PRICE_SCALE, field)


def _availability(
    product: dict[str, Any], *, read_can_buy: bool
) -> tuple[Availability, FieldProblem | None]:
    """The stock flag, narrowed by canBuy where it is read; a flag that is null or not a bool
    makes the stock unknown and is returned to be set aside (the quarantine line says why)."""
    deployable = product.get("availableDeploy")
    if not isinstance(deployable, bool):
        return UNKNOWN, _not_a_flag("availableDeploy", deployable)
    if not read_can_buy:
        return availability_from_flag(deployable), None
    # canBuy false: it cannot be ordered now. Null says neither (skypilot's default of true
    # is for a missing key, which here is drift): unknown, set aside.
    can_buy = product.get("canBuy")
    if not isinstance(can_buy, bool):
        return UNKNOWN, _not_a_flag("canBuy", can_buy)
    return availability_from_flag(deployable and can_buy), None


def _not_a_flag(field: str, value: Any) -> FieldProblem:
    code = MISSING_FIELD if value is None else INVALID_VALUE
    return FieldProblem(code, field, f"{field} is not true or false: {value!r}"[:120])


def _regions(value: Any) -> str | None:
    if not isinstance(value, list):
        return None
    names = [str(v).strip() for v in value if isinstance(v, str | int) and str(v).strip()]
    return ", ".join(names) or None
