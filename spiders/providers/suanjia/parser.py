"""算家云 SuanJia: the GPU market table of the price page, built in the browser by a script.

No public API is known (no public scraper or monitor names one), and the page renders its
table with JavaScript,
so the spider reads the DOM after Chromium has run the script. The real page was never
captured: the table read here is the one of our recording (region, GPU with its memory
such as "RTX 4090 24G", price per card such as "¥1.88/小时", stock such as "剩余3卡" or
"已租满"). No add-on fee of 算家云 is known to us, so offers carry none.

Contract (`ROW`): a row is read by its cell labels. The region and the GPU cells name the
offer (its key is region/GPU: without the region cell, two regions' cards would share one
key), the price and the stock cells must be there. An empty region cell is a row without a
region (not checked for blanks); an empty stock cell is `unknown`.

Set aside (rule of truth 9): a virtual slice ("vGPU-32G") names no physical card, so
`identify_gpu` skips it (`outside_catalog`); a price cell that only says "ask us" (询价,
联系客服: `page_table.on_request`) is skipped as having no public price. Both are counted by
kind, never quarantined. An unknown card or a price that is no number is an offer that cannot
be read: quarantined under its key.
"""

from __future__ import annotations

from collections.abc import Mapping

from spiders.parsers.common import (
    MISSING_FIELD,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    identify_gpu,
    set_aside,
)
from spiders.parsers.contract import Contract
from spiders.parsers.page_table import (
    Cells,
    card_offer,
    cell,
    listed_price,
    read_stock,
    table_page,
)

PRICING_URL = "https://www.suanjiayun.com/pricing"
ROW_SELECTOR = "#gpu-market tbody tr.gpu-row"
"""What the spider waits for in the browser: rows exist only once the script has run."""
CELLS = ("region", "gpu", "price", "stock")
ROW = Contract("market row", identity=("region", "gpu"), price=("price",), stock=("stock",))
CONTRACTS: tuple[Contract, ...] = (ROW,)


def parse_market(html: str, ctx: ParseContext) -> PageResult:
    return table_page(
        html,
        ctx,
        row_selector=ROW_SELECTOR,
        cell_names=CELLS,
        contract=ROW,
        filled=("gpu", "price", "stock"),
        no_rows=f"no market rows ({ROW_SELECTOR}) in the rendered page",
        offer_key=offer_key,
        build=_build,
    )


def offer_key(cells: Mapping[str, str]) -> str | None:
    """`<region>/<gpu>` (the GPU alone in a row whose region cell is empty); None when the
    region cell is gone: the row's key cannot be told, and a guess would name another offer."""
    gpu, region = cell(cells, "gpu"), cell(cells, "region")
    if not gpu or "region" not in cells:
        return None
    return f"{region}/{gpu}" if region else gpu


def _build(cells: Cells, ctx: ParseContext) -> list[Record]:
    raw_name = cell(cells, "gpu")
    key = offer_key(cells)
    if not raw_name or key is None:
        raise FieldProblem(MISSING_FIELD, "gpu", "gpu is empty")
    identity = identify_gpu(raw_name, field="gpu")  # "RTX 4090 24G": memory in the name
    price = listed_price(cell(cells, "price"), "price")
    stock, bad_count = read_stock(cell(cells, "stock"), "stock")
    return [
        card_offer(
            ctx,
            offer_key=key,
            cells=cells,
            gpu=identity,
            raw_gpu_name=raw_name,
            stock=stock,
            price=price,
            region=cell(cells, "region") or None,
            url=PRICING_URL,
        ),
        *set_aside(ctx, bad_count, offer_key=key, item=cells),
    ]
