"""AutoDL: the market machine list (token) and the public homepage price table (no token).

Machine list, `POST /api/v1/user/machine/list` (the web console's API, as public
card-grabbing scripts such as mfznttkx/autodl-gpuhunter call it): envelope
`{code, msg, data: {list, page_index, page_size, max_page, ...}}`; per machine
`machine_id`, `region_name`, `gpu_name`, `gpu_idle_num` (free cards), `gpu_all_num` or
`gpu_number` (cards on the host), `gpu_order_num` (cards orderable at once), `payg`
and `payg_price` (1/1000 CNY per card per hour). `code: "AuthorizeFailed"` means the
token was refused. Host attributes where a machine carries them: `highest_cuda_version`
(the highest CUDA its driver runs), `cpu_per_gpu` (vCPUs per card), `mem_per_gpu` (bytes of
RAM per card); a `-NVLink` machine type (AutoDL lists those apart) states NVLink.

Homepage (`/home`): a table rendered by JavaScript from the bundle's per-GPU
`originalPrice` data; it has prices but no stock, so its rows are `unknown`.

A machine with `payg: false` is not rented by the hour: skipped (`not_offered`), not
quarantined. An offer's key (the machine id, or `home:<GPU name>`) never depends on its stock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from parsel import Selector

from gpurent_core.billing_facts import platform_fees
from gpurent_core.enums import Interconnect
from gpurent_core.host import cuda_version
from gpurent_core.model import AddonFee, PriceBasis, PriceKind, PricePlan, SkipKind
from gpurent_core.normalize.availability import UNKNOWN, Availability, availability_from_counts
from gpurent_core.normalize.price import ParsedPrice
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    Skip,
    counted_stock,
    gpu_offer,
    guarded,
    id_text,
    identify_gpu,
    measure,
    minor_units,
    optional_int,
    price_plan,
    require,
    set_aside,
)
from spiders.parsers.contract import Contract, apply_check, check_items, contracted
from spiders.parsers.envelope import ApiPage, code_envelope, listing_size
from spiders.parsers.page_table import Cells, card_offer, listed_price, on_request

CURRENCY = "CNY"
PAYG_PRICE_SCALE = 1000  # payg_price 2720 is ¥2.72
MARKET_URL = "https://www.autodl.com/market/list"
HOME_URL = "https://www.autodl.com/home"
# The fields of a machine the offer cannot be trusted without (rule of truth 9), the three
# counts included: a renamed `gpu_idle_num` read as "no count" would turn the market
# unknown; a renamed `gpu_order_num` would put idle cards that cannot be ordered in stock;
# a renamed total would hide a free count that contradicts it. A null count is not drift
# (the key is there): stock unknown, the count set aside. Region and `payg` are side fields.
MACHINE_CONTRACT = Contract(
    "machine",
    identity=("machine_id", "gpu_name"),
    price=("payg_price",),
    stock=("gpu_idle_num", "gpu_all_num|gpu_number", "gpu_order_num"),
)
CONTRACTS: tuple[Contract, ...] = (MACHINE_CONTRACT,)
# The machine list names the card but not its memory. Where the catalog holds several
# sizes of a model, AutoDL's own homepage price table says which one it rents under that
# name ("RTX 4090 24GB", "V100 32GB", as a third-party report of 2026-10 transcribes it).
VRAM_BY_NAME: dict[str, int] = {"RTX 4090": 24, "V100": 32}

# Platform-wide add-on terms (system disk, file storage, no-GPU mode) live with the other
# billing facts, with their sources (billing_facts.toml in this folder); every offer carries them.
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
    if not machines:
        page.layout_error = _empty_page_error(payload)
    for machine in machines:
        page.records.extend(machine_records(machine, ctx))
    apply_check(page, check_items(machines, MACHINE_CONTRACT))
    return page


def _empty_page_error(payload: dict[str, Any]) -> str | None:
    """An empty `data.list` on a page the listing says holds machines (`result_total`
    beyond this page's `offset`) is not an empty market: the offers of that page are not
    to vanish (they stay, stale, from their last good run). None when it may be real."""
    total = listing_size(payload.get("result_total"), least=1)
    offset = listing_size(payload.get("offset"), least=0) or 0
    if total is None or offset >= total:
        return None
    return f"empty data.list, but data.result_total says {total} machines from offset {offset}"


def machine_records(machine: Any, ctx: ParseContext) -> list[Record]:
    return contracted(
        ctx,
        machine,
        MACHINE_CONTRACT,
        offer_key=lambda m: id_text(m.get("machine_id")),
        build=lambda: _build_machine(machine, ctx),
    )


def _build_machine(machine: dict[str, Any], ctx: ParseContext) -> list[Record]:
    machine_id = id_text(require(machine, "machine_id"))
    if machine_id is None:
        raise FieldProblem(INVALID_VALUE, "machine_id", "machine_id is not an id")
    raw_name = require(machine, "gpu_name")
    if not isinstance(raw_name, str):
        raise FieldProblem(INVALID_VALUE, "gpu_name", f"gpu_name is not text: {raw_name!r}")
    identity = identify_gpu(raw_name, vram_gb=VRAM_BY_NAME.get(raw_name.strip()))
    if machine.get("payg") is False:
        # AutoDL says this host is not rented by the hour: no hourly rate to read, so no
        # offer we rank (skipped, counted), rather than an offer we failed to read.
        raise Skip(SkipKind.NOT_OFFERED, "payg false: pay-as-you-go not offered on this machine")
    price = _payg_price(require(machine, "payg_price"))
    availability, problem = counted_stock("gpu_idle_num", lambda: _availability(machine))
    region, region_problem = _region(machine.get("region_name"))
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
            region=region,
            url=MARKET_URL,
            fees=ADDON_FEES,
            host=_host(machine, raw_name),
        ),
        *set_aside(ctx, problem, offer_key=machine_id, item=machine),
        *set_aside(ctx, region_problem, offer_key=machine_id, item=machine),
    ]


def _host(machine: dict[str, Any], raw_name: str) -> dict[str, Any]:
    """What the machine says of its host, each None where it does not."""
    nvlink = "nvlink" in raw_name.replace(" ", "").casefold()
    return {
        "cuda_version": cuda_version(machine.get("highest_cuda_version")),
        "interconnect": Interconnect.NVLINK if nvlink else None,
        "vcpus_per_gpu": measure(machine.get("cpu_per_gpu"), 2),
        "ram_gb_per_gpu": measure(machine.get("mem_per_gpu"), 1, per=2**30),
    }


def _payg_price(value: Any) -> Decimal:
    """`payg_price` in CNY (1/1000 CNY counted); a bad cell such as `1e400` or `10**30` costs
    this item, never the page (`minor_units`)."""
    return minor_units(value, PAYG_PRICE_SCALE, "payg_price")


def _region(value: Any) -> tuple[str | None, FieldProblem | None]:
    """The region name, a side field: absent or blank is no region; any other non-text
    value is set aside (the offer stands without a region)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, None
    if isinstance(value, str):
        return value.strip(), None
    return None, FieldProblem(
        INVALID_VALUE, "region_name", f"region_name is not text: {value!r}"[:120]
    )


def _availability(machine: dict[str, Any]) -> Availability:
    """Stock from the three counts. A null or unreadable count, or counts that contradict
    each other, make the stock `unknown` (rule of truth 1) with that field quarantined
    beside the offer (`counted_stock`): AutoDL documents no meaning for a null count, and
    reading one as "no cap" or "no total" could put cards in stock."""
    idle = _count(machine, "gpu_idle_num")
    total = optional_int(machine, "gpu_all_num")
    if total is None:
        total = _count(machine, "gpu_number", also="gpu_all_num")
    orderable = _count(machine, "gpu_order_num")
    # A free card that cannot be ordered (gpu_order_num) is not rentable (gpuhunter's reading).
    return availability_from_counts(min(idle, orderable), total)


def _count(machine: dict[str, Any], key: str, *, also: str | None = None) -> int:
    value = optional_int(machine, key)
    if value is None:
        named = f"{also} and {key} are" if also else f"{key} is"
        raise FieldProblem(MISSING_FIELD, key, f"{named} null: stock unknown")
    return value


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
    # No member price, or "ask us" for it: no member plan (the headline offer stands).
    if member_text and member_text not in ("-", "—") and not on_request(member_text):
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
    # Only an empty cell is missing here: a dash in the price column is an unreadable price;
    # an "ask us" wording ("询价") is no public price: a skip (`listed_price`).
    return listed_price(text, field, empty_marks={""})


def _vram_gb(text: str) -> int | None:
    digits = "".join(ch for ch in text if ch.isdigit())
    return int(digits) if digits and text.upper().rstrip().endswith("GB") else None
