"""Azure parser: the recorded price list pages (one USD price per VM hour, on demand and spot
as separate offers, the card and count from the VM size table), stock always unknown, the
meters that are no offer skipped by kind, drift and broken meters, and the size table."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from parser_registry import parse
from spider_fixture_cases import OBSERVED_AT, RUN_ID, Case, cases

from gpurent_core.model import (
    OfferRecord,
    PriceKind,
    QuarantineRecord,
    SkipKind,
    SkipRecord,
    StockStatus,
)
from spiders.parsers.common import PageResult, ParseContext, load_json
from spiders.providers.azure import sizes
from spiders.providers.azure.parser import PricesPage, offer_key, parse_prices

CTX = ParseContext("azure", RUN_ID, OBSERVED_AT)
NC40_EAST = "Standard_NC40ads_H100_v5/eastus/on_demand"
NC40_EAST_SPOT = "Standard_NC40ads_H100_v5/eastus/spot"
ND96_EAST = "Standard_ND96isr_H100_v5/eastus/on_demand"
ND96_WEST = "Standard_ND96isr_H100_v5/westeurope/on_demand"
NC8_T4 = "Standard_NC8as_T4_v3/eastus/on_demand"


def case_named(name: str) -> Case:
    return next(c for c in cases("azure") if c.name == name)


def page_of(name: str) -> PricesPage:
    page = parse(case_named(name))
    assert isinstance(page, PricesPage)
    return page


def offers_of(page: PageResult) -> dict[str, OfferRecord]:
    return {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}


def reasons_of(page: PageResult) -> dict[str | None, str]:
    return {r.offer_key: r.reason for r in page.records if isinstance(r, QuarantineRecord)}


def skips_of(page: PageResult) -> list[tuple[SkipKind, str]]:
    return [(r.skip_kind, r.detail) for r in page.records if isinstance(r, SkipRecord)]


def recorded_pages() -> list[PricesPage]:
    return [page_of(c.name) for c in cases("azure") if c.name.startswith("recorded_")]


def test_a_price_per_vm_hour_in_usd_for_every_card_of_the_size() -> None:
    offers = offers_of(page_of("recorded_prices_ncads_h100_v5_page1"))
    nc40 = offers[NC40_EAST]
    assert (nc40.price, nc40.currency, nc40.billing_unit.value, nc40.price_basis.value) == (
        Decimal("7.02"),
        "USD",
        "hour",
        "instance",
    )
    assert (nc40.gpu_model, nc40.gpu_vram_gb, nc40.gpu_form_factor, nc40.gpu_count) == (
        "H100",
        94,
        "NVL",
        1,
    )
    assert (nc40.region, nc40.vcpus_per_gpu, nc40.ram_gb_per_gpu) == ("eastus", 40, 320)
    nc80 = offers["Standard_NC80adis_H100_v5/eastus/on_demand"]
    assert (nc80.gpu_count, nc80.price) == (2, Decimal("14.04"))
    nd = offers_of(page_of("recorded_prices_nd_h100_v5"))[ND96_EAST]
    # 8 H100 80GB joined by NVLink, as the size pages say; no form factor is guessed.
    assert (nd.gpu_model, nd.gpu_vram_gb, nd.gpu_form_factor, nd.gpu_count) == ("H100", 80, None, 8)
    assert (nd.interconnect.value if nd.interconnect else None, nd.vcpus_per_gpu) == ("nvlink", 12)
    assert nd.ram_gb_per_gpu == Decimal("237.5")


def test_spot_is_an_offer_of_its_own_never_a_plan_of_the_on_demand_one() -> None:
    offers = offers_of(page_of("recorded_prices_ncads_h100_v5_page1"))
    on_demand, spot = offers[NC40_EAST], offers[NC40_EAST_SPOT]
    assert (on_demand.price_kind, spot.price_kind) == (PriceKind.ON_DEMAND, PriceKind.SPOT)
    assert spot.price == Decimal("2.116") and on_demand.plans == () and spot.plans == ()
    everywhere = [o for page in recorded_pages() for o in offers_of(page).values()]
    assert {o.offer_key.rsplit("/", 1)[1] for o in everywhere} == {"on_demand", "spot"}
    assert all(o.offer_key.endswith(o.price_kind.value) for o in everywhere)


def test_every_offer_of_a_price_list_has_unknown_stock() -> None:
    pages = recorded_pages()
    offers = [o for page in pages for o in offers_of(page).values()]
    assert len(offers) == 32 and not [r for p in pages for r in reasons_of(p)]
    assert {(o.status, o.available_count) for o in offers} == {(StockStatus.UNKNOWN, None)}
    skipped = [kind for page in pages for kind, _ in skips_of(page)]
    assert (skipped.count(SkipKind.NOT_OFFERED), skipped.count(SkipKind.OUTSIDE_CATALOG)) == (9, 4)


def test_the_next_page_link_is_read_and_the_last_page_has_none() -> None:
    first = page_of("recorded_prices_ncads_h100_v5_page1")
    assert first.next_link is not None and first.next_link.endswith("&$skip=100")
    assert first.next_link.startswith("https://prices.azure.com:443/api/retail/prices?$filter=")
    assert page_of("recorded_prices_ncads_h100_v5_page2").next_link is None
    broken = page_of("layout_next_link_not_a_link")
    assert broken.next_link is None and "NextPageLink is no link" in (broken.layout_error or "")


def test_meters_that_are_no_offer_are_skipped_by_kind() -> None:
    page = page_of("skipped_meters")
    assert set(offers_of(page)) == {NC8_T4} and reasons_of(page) == {}
    kinds = [kind for kind, _ in skips_of(page)]
    assert kinds == [SkipKind.NOT_OFFERED] * 5 + [SkipKind.OUTSIDE_CATALOG] * 2
    details = " | ".join(detail for _, detail in skips_of(page))
    for words in ("Reservation meter", "DevTestConsumption meter", "Windows meter",
                  "Low Priority meter", "non-primary meter",
                  "Standard_NC8as_T4_v4: not in the VM size table",
                  "Standard_NV6ads_A10_v5: 1/6 of an A10"):  # fmt: skip
        assert words in details


def test_fractional_a10_sizes_are_vgpu_slices_and_whole_ones_are_listed() -> None:
    page = page_of("recorded_prices_nvads_a10_v5")
    assert {k.split("/")[0] for k in offers_of(page)} == {
        "Standard_NV36ads_A10_v5",
        "Standard_NV36adms_A10_v5",
        "Standard_NV72ads_A10_v5",
    }
    fractions = [d for kind, d in skips_of(page) if kind is SkipKind.OUTSIDE_CATALOG]
    assert [d.split(": ")[1] for d in fractions] == [
        "1/6 of an A10",
        "1/3 of an A10",
        "1/2 of an A10",
    ]
    assert offers_of(page)["Standard_NV72ads_A10_v5/eastus/on_demand"].gpu_count == 2


def test_meter_name_renamed_everywhere_is_a_layout_change_that_keeps_the_offers() -> None:
    page = page_of("drift_meter_renamed_everywhere")
    assert offers_of(page) == {} and skips_of(page) == []
    assert set(reasons_of(page).values()) == {"missing_field: key gone: meterName"}
    assert page.layout_error is not None and "meterName (identity)" in page.layout_error
    # Without meterName on demand and spot cannot be told apart: each size and region stays.
    assert page.unread_prefixes == [
        "Standard_ND96isr_H100_v5/eastus/",
        "Standard_ND96isr_H100_v5/westeurope/",
        "Standard_ND96isr_H100_v5/southcentralus/",
    ]


def test_meter_name_gone_from_one_meter_costs_that_meter_only() -> None:
    before = offers_of(page_of("recorded_prices_nd_h100_v5"))
    page = page_of("drift_meter_renamed_in_one")
    after = offers_of(page)
    assert set(before) - set(after) == {ND96_EAST}
    assert all(after[key] == before[key] for key in after)
    assert reasons_of(page) == {None: "missing_field: key gone: meterName"}
    assert page.unread_prefixes == ["Standard_ND96isr_H100_v5/eastus/"]
    assert page.layout_error is None and page.missing_fields == ["meterName"]


def test_one_bad_cell_costs_one_offer() -> None:
    page = page_of("bad_cells")
    reasons = reasons_of(page)
    assert set(offers_of(page)) == {"Standard_NC64as_T4_v3/eastus/spot"}
    assert reasons["Standard_NC4as_T4_v3/eastus/on_demand"].startswith(
        "price_unparsed: retailPrice"
    )
    assert reasons["Standard_NC4as_T4_v3/eastus/spot"].startswith("price_unparsed: retailPrice")
    assert reasons[NC8_T4] == "invalid_value: unitOfMeasure '1/Month' is not hourly"
    assert reasons["Standard_NC16as_T4_v3/eastus/on_demand"].startswith("invalid_record: currency")
    assert reasons["Standard_NC64as_T4_v3/eastus/on_demand"].startswith(
        "price_unparsed: retailPrice is negative"
    )
    assert page.layout_error is None and page.unread_prefixes == []


def test_unreadable_meters_are_quarantined_and_the_rest_kept() -> None:
    page = page_of("bad_items")
    assert set(offers_of(page)) == {ND96_EAST}
    reasons = [(r.offer_key, r.reason) for r in page.records if isinstance(r, QuarantineRecord)]
    assert reasons == [
        ("Standard_ND96isr_H100_v5/eastus/spot", "missing_field: key gone: retailPrice"),
        (None, "missing_field: armSkuName is missing"),
        (None, "missing_field: armRegionName is missing"),
        (None, "not_an_offer: not an object"),
    ]
    # The meter without a region may have been any region's offer of its size: all stay.
    assert page.unread_prefixes == ["Standard_ND96isr_H100_v5/"]
    assert (SkipKind.OUTSIDE_CATALOG, "Standard_ND96is_flex_H100_v5: not in the VM size table") in (
        skips_of(page)
    )


def test_an_answer_without_items_is_a_layout_error() -> None:
    page = page_of("layout_no_items")
    assert page.records == [] and "no 'Items' list" in (page.layout_error or "")
    assert parse_prices([], CTX).layout_error is not None
    assert parse_prices({"Items": [], "NextPageLink": None}, CTX).layout_error is None


def nd_meter() -> dict[str, Any]:
    data = load_json(case_named("recorded_prices_nd_h100_v5").input_bytes())
    return dict(data["Items"][0])


def test_the_offer_key_is_the_size_region_and_kind_only() -> None:
    """Rule of truth 11: no stock to follow; price, dates and ids never move the key."""
    meter = nd_meter()
    keys = set()
    for change in (
        {},
        {"retailPrice": Decimal("101.5"), "unitPrice": Decimal("101.5")},
        {"effectiveStartDate": "2026-11-01T00:00:00Z", "meterId": "another"},
        {"location": "US East (renamed)", "skuName": "ND96isr H100 v5 (new)"},
    ):
        [offer] = parse_prices({"Items": [{**meter, **change}]}, CTX).offers
        keys.add((offer.offer_key, offer.status))
    assert keys == {(ND96_EAST, StockStatus.UNKNOWN)}
    spot = {**meter, "meterName": "ND96isr H100 v5 Spot"}
    assert offer_key(spot) == "Standard_ND96isr_H100_v5/eastus/spot"
    windows = {**meter, "productName": "Virtual Machines ND H100 v5 Series Windows"}
    assert offer_key(windows) is None  # no offer: a broken Windows meter makes none stale


@pytest.mark.parametrize("series", sizes.series_table(), ids=lambda s: s.name)
def test_each_size_is_asked_for_by_its_own_series_only(series: sizes.Series) -> None:
    for size in series.sizes:
        owners = [s.name for s in sizes.series_table() if s.matches(size.name)]
        assert owners == [series.name], size.name
        assert sizes.vm_size(size.name) == size
    assert series.odata_filter().startswith(
        "serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and contains(armSkuName, '"
    )
    assert series.offer_prefixes() == [f"{size.name}/" for size in series.sizes]


def test_the_size_table_holds_the_documented_series_and_refuses_bad_rows() -> None:
    table = {s.name: s for s in sizes.series_table()}
    assert set(table) == {
        "NCads H100 v5",
        "ND H100 v5",
        "NC A100 v4",
        "NDasrA100 v4",
        "NCasT4 v3",
        "NVadsA10 v5",
    }
    counts = {size.name: size.gpus for size in table["NC A100 v4"].sizes}
    assert counts == {
        "Standard_NC24ads_A100_v4": 1,
        "Standard_NC48ads_A100_v4": 2,
        "Standard_NC96ads_A100_v4": 4,
    }
    assert sizes.vm_size("Standard_NC6s_v3") is None
    good = {"name": "X", "match": ["_X_"], "card": "T4", "sources": ["u"], "sizes": []}
    with pytest.raises(sizes.SizeTableError, match="do not contain"):
        sizes._series({**good, "sizes": [{"name": "Standard_Y", "gpus": 1, "vcpus": 4,
                                          "memory_gb": 8}]})  # fmt: skip
    with pytest.raises(sizes.SizeTableError, match="gpus or gpu_fraction"):
        sizes._series({**good, "sizes": [{"name": "Standard_X_1", "gpus": 1, "gpu_fraction": "1/2",
                                          "vcpus": 4, "memory_gb": 8}]})  # fmt: skip
    with pytest.raises(sizes.SizeTableError, match="sources"):
        sizes._series({**good, "sources": []})
    one = sizes.VmSize("Standard_X_1", "X", "T4", 1, None, 4, 8, None)
    x, y = sizes.Series("X", ("_X",), (one,)), sizes.Series("Y", ("Standard_",), ())
    sizes._check_no_overlap((x,))
    with pytest.raises(sizes.SizeTableError, match="also matches"):
        sizes._check_no_overlap((x, y))
