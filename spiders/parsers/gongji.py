"""共绩算力 Gongji: the price page's GPU table, built in the browser by a script.

No public API is known (PROVIDERS.md A8, which has SECONDARY prices only: RTX 4090 ¥1.98/h,
preemptible ¥1.19/h, storage ¥0.2/GB/month), and the page renders its table with
JavaScript. The real page was never captured: the table read here is the one of our
recording (GPU, VRAM, on-demand price per card such as "¥1.98/时", preemptible price such as
"抢占式 ¥1.19/时", free cards such as "空闲 12/64"). The preemptible price becomes a spot plan.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from gpurent.model import AddonFee, BillingUnit, FeeBasis, FeeType, PriceKind, PricePlan
from gpurent.normalize.availability import parse_availability
from spiders.parsers.common import (
    MISSING_FIELD,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    field_quarantine,
    gpu_fields,
    guarded,
    identify_gpu,
    make_offer,
)
from spiders.parsers.page_table import (
    EMPTY_MARKS,
    Cells,
    card_basis,
    empty_columns,
    read_price,
    table_rows,
)

PRICING_URL = "https://www.gongjiyun.com/pricing"
ROW_SELECTOR = "#gpu-pricing tbody tr.gpu-row"
"""What the spider waits for in the browser: rows exist only once the script has run."""
CELLS = ("gpu-model", "gpu-vram", "price-on-demand", "price-spot", "stock")

# Published storage terms (third-party transcription, 2026-10; _cross_provider/
# addon_fee_observations.csv). Platform-wide, so every offer carries it.
STORAGE_FEE = AddonFee(
    fee_type=FeeType.DATA_DISK,
    amount=Decimal("0.2"),
    currency="CNY",
    unit=BillingUnit.MONTH,
    basis=FeeBasis.GB,
    mandatory=False,
    note=(
        "shared storage volume ¥0.2/GB/month; region cache ¥0.15/GB/month and object-storage "
        "traffic ¥0.2/GB not listed (Gongji published terms via third-party doc, 2026-10)"
    ),
)


def parse_pricing(html: str, ctx: ParseContext) -> PageResult:
    rows = table_rows(html, ROW_SELECTOR, CELLS)
    if not rows:
        return PageResult(layout_error=f"no price rows ({ROW_SELECTOR}) in the rendered page")
    page = PageResult()
    for cells in rows:
        key = cells["gpu-model"] or None
        page.records.extend(guarded(ctx, offer_key=key, raw=cells, build=_builder(cells, ctx)))
    empty = empty_columns(rows, ("gpu-model", "price-on-demand"))
    if empty:
        page.layout_error = f"no row has a {', '.join(empty)} cell"
    return page


def _builder(cells: Cells, ctx: ParseContext) -> Callable[[], list[Record]]:
    return lambda: _build(cells, ctx)


def _build(cells: Cells, ctx: ParseContext) -> list[Record]:
    raw_name = cells["gpu-model"]
    if not raw_name:
        raise FieldProblem(MISSING_FIELD, "gpu-model", "gpu-model is empty")
    # The VRAM cell ("24GB") is read together with the name, by the catalog's resolver.
    identity = identify_gpu(f"{raw_name} {cells['gpu-vram']}".strip(), field="gpu-model")
    price = read_price(cells["price-on-demand"], "price-on-demand")
    plans: tuple[PricePlan, ...] = ()
    side: list[Record] = []
    if cells["price-spot"] not in EMPTY_MARKS:
        try:
            spot = read_price(cells["price-spot"], "price-spot")
            plans = (
                PricePlan(
                    price=spot.amount,
                    currency=spot.currency,
                    billing_unit=spot.unit,
                    price_basis=card_basis(spot.basis),
                    # The preemptible column: interruptible whatever its label says.
                    price_kind=PriceKind.SPOT,
                ),
            )
        except FieldProblem as problem:
            # A bad preemptible price spoils that plan only, not the on-demand offer.
            side.append(field_quarantine(ctx, problem, offer_key=raw_name, item=cells))
    availability = parse_availability(cells["stock"])
    return [
        make_offer(
            ctx,
            offer_key=raw_name,
            raw=cells,
            **gpu_fields(identity, raw_name),
            gpu_count=1,
            status=availability.status,
            available_count=availability.available_count,
            price=price.amount,
            currency=price.currency,
            billing_unit=price.unit,
            price_basis=card_basis(price.basis),
            price_kind=price.kind,
            region=None,
            url=PRICING_URL,
            fees=(STORAGE_FEE,),
            plans=plans,
        ),
        *side,
    ]
