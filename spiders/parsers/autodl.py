"""AutoDL: the market machine list (token) and the public homepage price table (no token).

Machine list, `POST /api/v1/user/machine/list` (PROVIDERS.md A1): envelope
`{code, msg, data: {list, page_index, page_size, max_page, ...}}`; per machine
`machine_id`, `region_name`, `gpu_name`, `gpu_idle_num` (free cards), `gpu_all_num` or
`gpu_number` (cards on the host), `gpu_order_num` (cards orderable at once), `payg`
and `payg_price` (1/1000 CNY per card per hour). `code: "AuthorizeFailed"` means the
token was refused.

Homepage (`/home`): a table rendered by JavaScript from the bundle's per-GPU
`originalPrice` data; it has prices but no stock, so its rows are `unknown`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from parsel import Selector

from gpurent.billing_facts import platform_fees
from gpurent.model import AddonFee, PriceBasis, PriceKind, PricePlan
from gpurent.normalize.availability import UNKNOWN, Availability, availability_from_counts
from gpurent.normalize.price import ParsedPrice
from spiders.parsers.common import (
    PRICE_UNPARSED,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    counted_stock,
    gpu_offer,
    guarded,
    identify_gpu,
    minor_units,
    not_an_object,
    optional_int,
    price_plan,
    renamed_fields,
    require,
    set_aside,
)
from spiders.parsers.envelope import ApiPage, code_envelope, listing_size
from spiders.parsers.page_table import Cells, card_offer, read_price

CURRENCY = "CNY"
PAYG_PRICE_SCALE = 1000  # payg_price 2720 is ¥2.72
MARKET_URL = "https://www.autodl.com/market/list"
HOME_URL = "https://www.autodl.com/home"
# Keys every machine carries (the free count included: without it all stock is unknown).
CORE_KEYS = ("machine_id", "gpu_name", "payg_price", "gpu_idle_num")
# The machine list names the card but not its memory. Where the catalog holds several
# sizes of a model, AutoDL's own homepage price table says which one it rents under that
# name ("RTX 4090 24GB", "V100 32GB"; _cross_provider/cn_and_intl_price_observations).
VRAM_BY_NAME: dict[str, int] = {"RTX 4090": 24, "V100": 32}

# Platform-wide add-on terms (system disk, file storage, no-GPU mode) live with the other
# billing facts, with their sources (gpurent/data/billing_facts.toml); every offer carries them.
ADDON_FEES: tuple[AddonFee, ...] = platform_fees("autodl")


# -- machine list (API) --------------------------------------------------------


@dataclass
class MachineListPage(ApiPage):
    """A machine-list page (a `code` other than Success/AuthorizeFailed is an API error)."""

    max_page: int | None = None


def machine_list_body(*, page_index: int, page_size: int) -> dict[str, Any]:
    """The web console's request form, every region and card type, sold-out hosts included.

    `gpu_idle_num: 0` asks for hosts with at least 0 free cards, i.e. all of them; an empty
    `region_sign_list` and `gpu_type_name` mean no filter (as the console sends before a
    region or card is picked).
    """
    return {
        "charge_type": "payg",
        "region_sign": "",
        "gpu_type_name": [],
        "machine_tag_name": [],
        "gpu_idle_num": 0,
        "mount_net_disk": False,
        "instance_disk_size_order": "",
        "date_range": "",
        "date_from": "",
        "date_to": "",
        "page_index": page_index,
        "page_size": page_size,
        "pay_price_order": "",
        "gpu_idle_type": "",
        "default_order": True,
        "region_sign_list": [],
    }


def parse_machine_list(data: Any, ctx: ParseContext) -> MachineListPage:
    problem = code_envelope(
        data, code_key="code", ok="Success", message_key="msg", auth_codes=("AuthorizeFailed",)
    )
    if problem is not None:
        return MachineListPage.unanswered(problem)
    payload = data.get("data")
    machines = payload.get("list") if isinstance(payload, dict) else None
    if not isinstance(payload, dict) or not isinstance(machines, list):
        return MachineListPage(layout_error="no 'data.list' in a Success answer")
    page = MachineListPage()
    page.max_page = listing_size(payload.get("max_page"), least=1)
    if page.max_page is None:
        page.notes.append("machine list without a usable data.max_page: read one page only")
    for machine in machines:
        page.records.extend(machine_records(machine, ctx))
    page.layout_error = renamed_fields(machines, CORE_KEYS, "machine")
    return page


def machine_records(machine: Any, ctx: ParseContext) -> list[Record]:
    if not isinstance(machine, dict):
        return not_an_object(ctx, machine, "machine entry is not an object")
    key = machine.get("machine_id")
    key = str(key) if isinstance(key, str | int) and not isinstance(key, bool) else None
    return guarded(ctx, offer_key=key, raw=machine, build=lambda: _build_machine(machine, ctx))


def _build_machine(machine: dict[str, Any], ctx: ParseContext) -> list[Record]:
    machine_id = str(require(machine, "machine_id"))
    raw_name = require(machine, "gpu_name")
    identity = identify_gpu(raw_name, vram_gb=VRAM_BY_NAME.get(str(raw_name).strip()))
    if machine.get("payg") is False:
        raise FieldProblem(PRICE_UNPARSED, "payg", "pay-as-you-go not offered on this machine")
    price = minor_units(require(machine, "payg_price"), PAYG_PRICE_SCALE, "payg_price")
    availability, problem = counted_stock("gpu_idle_num", lambda: _availability(machine))
    return [
        gpu_offer(
            ctx,
            offer_key=machine_id,
            raw=machine,
            gpu=identity,
            raw_gpu_name=raw_name,
            # One card is the unit rented (price per card); available_count says how many.
            gpu_count=1,
            stock=availability,
            price=price,
            currency=CURRENCY,
            price_basis=PriceBasis.GPU,
            region=machine.get("region_name") or None,
            url=MARKET_URL,
            fees=ADDON_FEES,
        ),
        *set_aside(ctx, problem, offer_key=machine_id, item=machine),
    ]


def _availability(machine: dict[str, Any]) -> Availability:
    """Stock from the counts; missing counts are `unknown` (rule of truth 1), and so are
    counts that contradict each other, whose field is then quarantined beside the offer
    (`counted_stock`)."""
    idle = optional_int(machine, "gpu_idle_num")
    total = optional_int(machine, "gpu_all_num")
    if total is None:
        total = optional_int(machine, "gpu_number")
    orderable = optional_int(machine, "gpu_order_num")
    if idle is None:
        return UNKNOWN
    # A free card that cannot be ordered (gpu_order_num) is not rentable (gpuhunter's reading).
    free = idle if orderable is None else min(idle, orderable)
    return availability_from_counts(free, total)


# -- homepage price table (browser) ----------------------------------------------

ROW_SELECTOR = "#gpu-price-body tr.gpu-row"
"""What the spider waits for in the browser: rows exist only once the script has run."""


def parse_home(html: str, ctx: ParseContext) -> PageResult:
    rows = Selector(text=html).css(ROW_SELECTOR)
    if not rows:
        return PageResult(layout_error=f"no price rows ({ROW_SELECTOR}) in the rendered page")
    page = PageResult(notes=["public price table: prices without stock (status unknown)"])
    for row in rows:
        cells = {
            name: " ".join(row.css(f"td.{name} ::text").getall()).strip()
            for name in ("gpu-name", "gpu-memory", "gpu-price", "gpu-member-price")
        }
        raw_name = cells["gpu-name"]
        key = f"home:{raw_name}" if raw_name else None
        page.records.extend(guarded(ctx, offer_key=key, raw=cells, build=_row_builder(cells, ctx)))
    return page


def _row_builder(cells: Cells, ctx: ParseContext) -> Callable[[], list[Record]]:
    return lambda: _build_home_row(cells, ctx)


def _build_home_row(cells: Cells, ctx: ParseContext) -> list[Record]:
    raw_name = cells["gpu-name"]
    identity = identify_gpu(raw_name, field="gpu-name", vram_gb=_vram_gb(cells["gpu-memory"]))
    price = _price(cells["gpu-price"], "gpu-price")
    plans: list[PricePlan] = []
    member_text = cells["gpu-member-price"]
    if member_text and member_text not in ("-", "—"):
        member = _price(member_text, "gpu-member-price")
        plans.append(
            price_plan(
                member.amount, member.currency, PriceBasis.GPU, PriceKind.MEMBER, member.unit
            )
        )
    return [
        card_offer(
            ctx,
            offer_key=f"home:{raw_name}",
            cells=cells,
            gpu=identity,
            raw_gpu_name=raw_name,
            stock=UNKNOWN,  # a price list without stock
            price=price,
            url=HOME_URL,
            fees=ADDON_FEES,
            plans=plans,
        )
    ]


def _price(text: str, field: str) -> ParsedPrice:
    # Only an empty cell is missing here: a dash in the price column is an unreadable price.
    return read_price(text, field, empty_marks={""})


def _vram_gb(text: str) -> int | None:
    digits = "".join(ch for ch in text if ch.isdigit())
    return int(digits) if digits and text.upper().rstrip().endswith("GB") else None
