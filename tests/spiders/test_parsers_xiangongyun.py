"""仙宫云 pricing-page parser: the recorded page, broken rows, a changed layout."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from parser_registry import parse
from spider_fixture_cases import cases

from gpurent_core.model import FeeType, OfferRecord, QuarantineRecord, SkipKind, StockStatus
from spiders.parsers.common import PageResult, ParseContext
from spiders.providers.xiangongyun.parser import CELLS, parse_pricing

CTX = ParseContext("xiangongyun", "test-run", datetime(2026, 10, 4, 12, 0, tzinfo=UTC))


def pricing(*rows: tuple[str, str, str, str, str]) -> str:
    """A pricing page holding `rows` of (name, memory, region, price, stock)."""
    cells = "".join(
        "<tr class='gpu-row'>"
        + "".join(f"<td class='{n}'>{v}</td>" for n, v in zip(CELLS, row, strict=True))
        + "</tr>"
        for row in rows
    )
    return f"<table class='gpu-price-table'><tbody>{cells}</tbody></table>"


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
    # 面议 ("price on request") is no public price: the H100 row is skipped, not quarantined,
    # so the recorded page holds no unreadable offer at all.
    assert not any(isinstance(r, QuarantineRecord) for r in page.records)
    [skipped] = page.skipped
    assert (skipped.offer_key, skipped.skip_kind) == ("宁波一区/H100", SkipKind.NO_PUBLIC_PRICE)
    assert "面议" in skipped.detail


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
    assert reasons["宁波一区/L20"].startswith("gpu_unresolved")  # 24 GB is no L20
    assert reasons[None].startswith("missing_field")
    # A Kepler card is outside the catalog on purpose: skipped, never an unreadable offer.
    assert "宁波一区/Tesla K80" not in reasons
    assert {r.offer_key: r.skip_kind for r in page.skipped} == {
        "宁波一区/Tesla K80": SkipKind.OUTSIDE_CATALOG
    }


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
    from spiders.providers.xiangongyun import parser as xiangongyun

    assert xiangongyun.CONTRACTS == (xiangongyun.ROW,)
    assert xiangongyun.ROW.stock == ("gpu-stock",)


def test_ask_us_wordings_are_skipped_and_other_priceless_text_is_quarantined() -> None:
    page = parse_pricing(
        pricing(
            ("H100", "80GB", "宁波一区", "面议", "充足"),
            ("H200", "141GB", "宁波一区", "联系客服询价", "充足"),
            ("H20", "96GB", "宿迁二区", "Contact sales", "充足"),
            ("A800", "80GB", "宿迁二区", "¥--/时", "充足"),
        ),
        CTX,
    )
    assert {r.offer_key: r.skip_kind for r in page.skipped} == {
        "宁波一区/H100": SkipKind.NO_PUBLIC_PRICE,
        "宁波一区/H200": SkipKind.NO_PUBLIC_PRICE,
        "宿迁二区/H20": SkipKind.NO_PUBLIC_PRICE,
    }
    assert list(reasons_of(page)) == ["宿迁二区/A800"]  # an offer whose price cannot be read
    assert reasons_of(page)["宿迁二区/A800"].startswith("price_unparsed")


def test_offer_key_does_not_follow_the_stock_word() -> None:
    """Rule of truth 11: 充足, 紧张, 售罄 and a word we cannot read give one key."""
    seen = {}
    for stock in ("充足", "紧张", "售罄", "维护中"):
        row = ("RTX 4090", "24GB", "宁波一区", "¥1.98/时", stock)
        [offer] = parse_pricing(pricing(row), CTX).offers
        seen[offer.status] = offer.offer_key
    assert len(seen) == 4 and set(seen.values()) == {"宁波一区/RTX 4090"}


def test_a_row_without_its_center_cell_names_no_offer() -> None:
    """The key is center/GPU: a row whose center cell is gone is quarantined without a key
    rather than under the GPU alone, which would name another offer."""
    rows = [
        ("RTX 4090", "24GB", "宁波一区", "¥1.98/时", "充足"),
        ("L40S", "48GB", "宿迁二区", "¥4.20/时", "紧张"),
    ]
    html = pricing(*rows).replace("<td class='gpu-region'>宁波一区</td>", "")
    page = parse_pricing(html, CTX)
    assert [o.offer_key for o in page.offers] == ["宿迁二区/L40S"]
    assert reasons_of(page) == {None: "missing_field: key gone: gpu-region"}
