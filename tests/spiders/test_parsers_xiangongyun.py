"""仙宫云 pricing-page parser: the recorded page, broken rows, a changed layout."""

from __future__ import annotations

from decimal import Decimal

from parser_registry import parse
from spider_fixture_cases import cases

from gpurent_core.model import FeeType, OfferRecord, QuarantineRecord, StockStatus
from spiders.parsers.common import PageResult


def _parsed(name: str) -> PageResult:
    return parse(next(c for c in cases("xiangongyun") if c.name == name))


def offers_of(page: PageResult) -> dict[str, OfferRecord]:
    return {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}


def test_recorded_page_reads_price_stock_words_and_the_stopped_disk_fee() -> None:
    page = _parsed("recorded_pricing")
    offers = offers_of(page)
    assert len(offers) == 8
    rtx = offers["宁波一区/RTX 4090"]
    assert (rtx.price, rtx.currency, rtx.billing_unit.value) == (Decimal("1.98"), "CNY", "hour")
    assert (rtx.price_basis.value, rtx.gpu_count, rtx.region) == ("gpu", 1, "宁波一区")
    assert rtx.status is StockStatus.IN_STOCK and rtx.available_count is None
    assert offers["宿迁二区/RTX 4090"].status is StockStatus.LOW  # 紧张
    assert offers["宁波一区/RTX 4090D"].status is StockStatus.SOLD_OUT  # 售罄
    assert offers["宁波一区/RTX A6000"].status is StockStatus.UNKNOWN  # 维护中: no stock word
    assert offers["宁波一区/A800"].gpu_vram_gb == 80
    assert offers["宿迁二区/L40S"].gpu_vram_gb == 48
    (fee,) = rtx.fees
    assert (fee.fee_type, fee.amount, fee.unit.value if fee.unit else None) == (
        FeeType.STORAGE_STOPPED,
        Decimal("0.00003"),
        "hour",
    )
    assert fee.charged_while_stopped and fee.basis.value == "gb"
    assert fee.mandatory  # the way to keep a stopped instance without paying for its GPU
    [quarantined] = [r for r in page.records if isinstance(r, QuarantineRecord)]
    assert quarantined.offer_key == "宁波一区/H100" and "面议" in quarantined.reason


def test_broken_rows_are_quarantined_one_by_one() -> None:
    page = _parsed("bad_rows")
    offers = offers_of(page)
    assert offers["宁波一区/RTX 4090"].price == Decimal("1.98")  # full-width ￥１．９８／时
    assert offers["宁波一区/RTX 4090"].status is StockStatus.LOW  # 库存紧张
    modded = offers["宿迁二区/RTX 4090"]
    assert (modded.gpu_vram_gb, modded.price_basis.value) == (48, "instance")  # 整机
    assert offers["宁波一区/A100"].status is StockStatus.UNKNOWN  # empty stock cell
    reasons = {r.offer_key: r.reason for r in page.records if isinstance(r, QuarantineRecord)}
    assert reasons["宁波一区/RTX 3090"].startswith("price_unparsed")  # no unit
    assert reasons["宁波一区/Tesla K80"].startswith("gpu_unresolved")
    assert reasons["宁波一区/L20"].startswith("gpu_unresolved")  # 24 GB is no L20
    assert reasons[None].startswith("missing_field")


def test_a_page_without_the_table_is_a_layout_error_not_sold_out() -> None:
    page = _parsed("layout_renamed")
    assert page.records == [] and page.layout_error is not None


# -- drift and bad cells: the table's contract is its cell labels (rule of truth 9) ------


def reasons_of(page: PageResult) -> dict[str | None, str]:
    return {r.offer_key: r.reason for r in page.records if isinstance(r, QuarantineRecord)}


def test_stock_label_renamed_in_every_row_is_a_layout_error_naming_it() -> None:
    page = _parsed("drift_stock_renamed_everywhere")
    assert page.layout_error == ("no price row carries gpu-stock (stock): field renamed or removed")
    assert offers_of(page) == {}  # never a market of unknown or sold-out cards
    assert set(reasons_of(page).values()) == {"missing_field: key gone: gpu-stock"}
    assert len(page.records) == 9 and page.missing_fields == ["gpu-stock"]


def test_stock_label_renamed_in_one_row_costs_that_row_only() -> None:
    recorded = offers_of(_parsed("recorded_pricing"))
    page = _parsed("drift_stock_renamed_in_one")
    row = "宿迁二区/RTX 4090"
    assert reasons_of(page)[row] == "missing_field: key gone: gpu-stock"
    assert offers_of(page) == {k: o for k, o in recorded.items() if k != row}
    assert page.layout_error is None and page.missing_fields == ["gpu-stock"]


def test_one_bad_cell_costs_its_row_or_its_stock_only() -> None:
    recorded = offers_of(_parsed("recorded_pricing"))
    page = _parsed("bad_cells")
    reasons = reasons_of(page)
    assert reasons["宿迁二区/L40S"].startswith("price_unparsed: '¥1e400/时'")
    assert reasons["宁波一区/RTX 5090"].startswith("gpu_unresolved: 'RTX 5090 -1GB'")
    tight = offers_of(page)["宿迁二区/RTX 4090"]
    assert (tight.status, tight.price) == (StockStatus.UNKNOWN, Decimal("1.88"))
    assert reasons["宿迁二区/RTX 4090"].startswith("invalid_value: ")
    bad = ("宿迁二区/L40S", "宁波一区/RTX 5090", "宿迁二区/RTX 4090")
    assert {k: o for k, o in offers_of(page).items() if k not in bad} == {
        k: o for k, o in recorded.items() if k not in bad
    }


def test_the_contract_is_declared() -> None:
    from spiders.parsers import xiangongyun

    assert xiangongyun.CONTRACTS == (xiangongyun.ROW,)
    assert xiangongyun.ROW.stock == ("gpu-stock",)
