"""仙宫云 Xiangongyun: the public pricing page, a server-rendered table (no API needed).

No public market or inventory API is documented (the platform's open API reference only
lists one's own instances), so we read `https://www.xiangongyun.com/pricing` as HTML. The real
page's structure is unknown to us: this parser reads the table of our recording (one row
per GPU and data center: GPU, VRAM, data center, price per card such as "¥1.98/时", and a
stock word such as 充足 / 紧张 / 售罄). When the live page is captured, this is the one
place to adapt.

Contract (`ROW`): a row is read by its cell labels. The GPU name, its memory cell (a 48 GB
4090 is another card than a 24 GB one) and the data center (the offer's key is
center/GPU) name the offer; the price and the stock cells must be there. An empty data
center cell is a row without a region (not checked for blanks); an empty stock cell is
`unknown`.

Set aside (rule of truth 9): a row whose price cell only says "ask us" (面议, 询价, 联系客服:
`page_table.on_request`) has no public price and is skipped, counted by kind; a card the
catalog leaves out on purpose is skipped by `identify_gpu`. A price cell with another text
that holds no price, an unknown card or an unknown stock word is an offer that cannot be
read: quarantined under its key, its last state kept.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpurent_core.billing_facts import platform_fees
from gpurent_core.model import AddonFee
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

PRICING_URL = "https://www.xiangongyun.com/pricing"
ROW_SELECTOR = "table.gpu-price-table tbody tr.gpu-row"
CELLS = ("gpu-name", "gpu-memory", "gpu-region", "gpu-price", "gpu-stock")
ROW = Contract(
    "price row",
    identity=("gpu-name", "gpu-memory", "gpu-region"),
    price=("gpu-price",),
    stock=("gpu-stock",),
)
CONTRACTS: tuple[Contract, ...] = (ROW,)

# After shutdown_release_gpu (关机释放GPU) the used system-disk space stays billed; the fee
# lives with the other billing facts (billing_facts.toml in this folder). Platform-wide, so
# every offer carries it.
ADDON_FEES: tuple[AddonFee, ...] = platform_fees("xiangongyun")


def parse_pricing(html: str, ctx: ParseContext) -> PageResult:
    return table_page(
        html,
        ctx,
        row_selector=ROW_SELECTOR,
        cell_names=CELLS,
        contract=ROW,
        filled=("gpu-name", "gpu-memory", "gpu-price", "gpu-stock"),
        no_rows=f"no price rows ({ROW_SELECTOR}) in the page",
        offer_key=offer_key,
        build=_build,
    )


def offer_key(cells: Mapping[str, str]) -> str | None:
    """`<center>/<GPU>` (the GPU alone in a row whose center cell is empty); None when the
    center cell is gone: the row's key cannot be told, and a guess would name another offer."""
    name, region = cell(cells, "gpu-name"), cell(cells, "gpu-region")
    if not name or "gpu-region" not in cells:
        return None
    return f"{region}/{name}" if region else name


def _build(cells: Cells, ctx: ParseContext) -> list[Record]:
    raw_name = cell(cells, "gpu-name")
    key = offer_key(cells)
    if not raw_name or key is None:
        raise FieldProblem(MISSING_FIELD, "gpu-name", "gpu-name is empty")
    # The VRAM cell ("24GB") is read together with the name, by the catalog's resolver.
    identity = identify_gpu(f"{raw_name} {cell(cells, 'gpu-memory')}".strip(), field="gpu-name")
    price = listed_price(cell(cells, "gpu-price"), "gpu-price")
    stock, bad_count = read_stock(cell(cells, "gpu-stock"), "gpu-stock")
    return [
        card_offer(
            ctx,
            offer_key=key,
            cells=cells,
            gpu=identity,
            raw_gpu_name=raw_name,
            stock=stock,
            price=price,
            region=cell(cells, "gpu-region") or None,
            url=PRICING_URL,
            fees=ADDON_FEES,
        ),
        *set_aside(ctx, bad_count, offer_key=key, item=cells),
    ]
