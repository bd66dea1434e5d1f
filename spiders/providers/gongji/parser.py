"""共绩算力 Gongji: the price page's GPU table, built in the browser by a script.

No public API is known (a third-party report of 2026-10 gives prices only: RTX 4090
¥1.98/h, preemptible ¥1.19/h, storage ¥0.2/GB/month), and the page renders its table with
JavaScript. The real page was never captured: the table read here is the one of our
recording (GPU, VRAM, on-demand price per card such as "¥1.98/时", preemptible price such as
"抢占式 ¥1.19/时", free cards such as "空闲 12/64"). The preemptible price becomes a spot plan.

Contract (`ROW`): a row is read by its cell labels. The GPU name and its VRAM cell (a 48 GB
4090 is another card than a 24 GB one), the on-demand price and the stock cell must be
there; the preemptible price is a side field (a row without it is an offer without a spot
plan). A row whose GPU name states the memory itself ("RTX 4090 48G") needs no VRAM cell:
the fact is read from the name, so its absence there is no drift (`RowContract`). The one
stock column counts the cards free for either way of renting: the spot plan is a price of
the same cards, not a stock of its own.

A row priced "询价" (or another "ask us" wording, `page_table.on_request`) has no public
price: skipped and counted (`no_public_price`), never a quarantine. A price cell that holds
no such wording and no readable price stays an unreadable offer (quarantined).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from gpurent_core.billing_facts import platform_fees
from gpurent_core.model import AddonFee, PriceKind, PricePlan
from spiders.parsers.common import (
    MISSING_FIELD,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    identify_gpu,
    price_plan,
    set_aside,
)
from spiders.parsers.contract import Contract
from spiders.parsers.page_table import (
    EMPTY_MARKS,
    Cells,
    card_basis,
    card_offer,
    cell,
    listed_price,
    on_request,
    read_price,
    read_stock,
    table_page,
)

PRICING_URL = "https://www.gongjiyun.com/pricing"
ROW_SELECTOR = "#gpu-pricing tbody tr.gpu-row"
"""What the spider waits for in the browser: rows exist only once the script has run."""
CELLS = ("gpu-model", "gpu-vram", "price-on-demand", "price-spot", "stock")
VRAM_CELL = "gpu-vram"
# A memory size written in the GPU name: "RTX 4090 48G", "H20 96GB".
NAME_MEMORY = re.compile(r"(?<![0-9a-z.])\d{1,4}\s*(?:gb|gib|g)(?![0-9a-z])", re.IGNORECASE)


class RowContract(Contract):
    """The row contract, except that the VRAM cell is no drift on a row whose GPU name
    states the memory (the resolver reads it there)."""

    def gone_paths(self, item: Mapping[str, Any]) -> list[str]:
        gone = super().gone_paths(item)
        name = item.get("gpu-model")
        if VRAM_CELL in gone and isinstance(name, str) and NAME_MEMORY.search(name):
            gone.remove(VRAM_CELL)
        return gone


ROW = RowContract(
    "GPU row",
    identity=("gpu-model", VRAM_CELL),
    price=("price-on-demand",),
    stock=("stock",),
)
CONTRACTS: tuple[Contract, ...] = (ROW,)

# The platform-wide storage fee, from the billing facts (billing_facts.toml in this folder).
ADDON_FEES: tuple[AddonFee, ...] = platform_fees("gongji")


def parse_pricing(html: str, ctx: ParseContext) -> PageResult:
    return table_page(
        html,
        ctx,
        row_selector=ROW_SELECTOR,
        cell_names=CELLS,
        contract=ROW,
        no_rows=f"no price rows ({ROW_SELECTOR}) in the rendered page",
        offer_key=lambda cells: cell(cells, "gpu-model") or None,
        build=_build,
    )


def _build(cells: Cells, ctx: ParseContext) -> list[Record]:
    raw_name = cell(cells, "gpu-model")
    if not raw_name:
        raise FieldProblem(MISSING_FIELD, "gpu-model", "gpu-model is empty")
    # The VRAM cell ("24GB") is read together with the name, by the catalog's resolver.
    identity = identify_gpu(f"{raw_name} {cell(cells, VRAM_CELL)}".strip(), field="gpu-model")
    # "询价": no public price, a skip (rule of truth 9); other text without a price: unreadable.
    price = listed_price(cell(cells, "price-on-demand"), "price-on-demand")
    stock, bad_count = read_stock(cell(cells, "stock"), "stock")
    side = set_aside(ctx, bad_count, offer_key=raw_name, item=cells)
    plans: list[PricePlan] = []
    spot_text = cell(cells, "price-spot")
    # An "ask us" preemptible price is no plan to read (the on-demand offer stands).
    if spot_text not in EMPTY_MARKS and not on_request(spot_text):
        try:
            spot = read_price(cell(cells, "price-spot"), "price-spot")
            # The preemptible column: interruptible whatever its label says.
            basis = card_basis(spot.basis)
            plans.append(price_plan(spot.amount, spot.currency, basis, PriceKind.SPOT, spot.unit))
        except FieldProblem as problem:
            # A bad preemptible price spoils that plan only, not the on-demand offer.
            side.extend(set_aside(ctx, problem, offer_key=raw_name, item=cells))
    return [
        card_offer(
            ctx,
            offer_key=raw_name,
            cells=cells,
            gpu=identity,
            raw_gpu_name=raw_name,
            stock=stock,
            price=price,
            url=PRICING_URL,
            fees=ADDON_FEES,
            plans=plans,
        ),
        *side,
    ]
