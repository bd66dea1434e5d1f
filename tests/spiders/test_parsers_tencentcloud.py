"""Tencent Cloud CVM parser: the TC3 signature against Tencent's worked example, the recorded
zone configurations (whole-instance CNY hourly price, SELL / SOLD_OUT, cards from the family
table), drift, broken cells and items, and the error envelope."""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

import pytest
from parser_registry import parse
from spider_fixture_cases import OBSERVED_AT, RUN_ID, Case, cases

from gpurent_core.model import OfferRecord, QuarantineRecord, SkipRecord, StockStatus
from gpurent_core.normalize.gpu import UnresolvedGpuName, resolve_gpu
from spiders.parsers.common import PageResult, ParseContext, load_json
from spiders.providers.tencentcloud import tc3
from spiders.providers.tencentcloud.families import FAMILIES_OUTSIDE_CATALOG, FAMILY_CARDS
from spiders.providers.tencentcloud.parser import (
    ZoneConfigPage,
    parse_zone_configs,
    request_body,
)

CTX = ParseContext("tencentcloud", RUN_ID, OBSERVED_AT)
T4 = "ap-guangzhou-3/GN7.2XLARGE32"
T4_X4 = "ap-guangzhou-3/GN7.20XLARGE320"
A100 = "ap-guangzhou-4/GT4.4XLARGE96"
A100_X8 = "ap-guangzhou-4/GT4.41XLARGE948"
V100 = "ap-guangzhou-4/GN10Xp.2XLARGE40"
A10 = "ap-guangzhou-7/PNV4.7XLARGE116"
A10_X4 = "ap-guangzhou-7/PNV4.28XLARGE466"
VGPU = "ap-guangzhou-3/GN7.LARGE20"

# Tencent's worked example of "Signature v3" (the CVM DescribeInstances call of its docs and
# of TencentCloud/signature-process-demo): inputs and the values the docs publish.
EXAMPLE_SECRET_ID = "AKIDz8krbsJ5yKBZQpn74WFkmLPx3*******"
EXAMPLE_SECRET_KEY = "Gu5t9xGARNpq86cd98joQYCN3*******"
EXAMPLE_TIMESTAMP = 1551113065
EXAMPLE_PAYLOAD = (
    b'{"Limit": 1, "Filters": [{"Values": ["\\u672a\\u547d\\u540d"], "Name": "instance-name"}]}'
)
EXAMPLE_HOST = "cvm.tencentcloudapi.com"
EXAMPLE_PAYLOAD_HASH = "35e9c5b0e3ae67532d3c9f17ead6c90222632e5b1ff7f6e89887f1398934f064"
EXAMPLE_REQUEST_HASH = "5ffe6a04c0664d6b969fab9a13bdab201d63ee709638e2749d62a09ca18d7031"
EXAMPLE_SIGNATURE = "2230eefd229f582d8b1b891af7107b91597240707d778ab3738f756258d7652c"


def case_named(name: str) -> Case:
    return next(c for c in cases("tencentcloud") if c.name == name)


def offers_of(page: PageResult) -> dict[str, OfferRecord]:
    return {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}


def reasons_of(page: PageResult) -> dict[str | None, list[str]]:
    found: dict[str | None, list[str]] = {}
    for r in page.records:
        if isinstance(r, QuarantineRecord):
            found.setdefault(r.offer_key, []).append(r.reason)
    return found


def skips_of(page: PageResult) -> dict[str | None, str]:
    return {r.offer_key: r.skip_kind.value for r in page.records if isinstance(r, SkipRecord)}


def recorded_items(region: str = "ap-guangzhou") -> list[dict[str, Any]]:
    doc = load_json(case_named(f"recorded_zone_configs_{region}").input_bytes())
    items: list[dict[str, Any]] = doc["Response"]["InstanceTypeQuotaSet"]
    return items


def answer(*items: dict[str, Any]) -> dict[str, Any]:
    return {"Response": {"InstanceTypeQuotaSet": list(items), "RequestId": "r-1"}}


def parse_items(*items: dict[str, Any], region: str = "ap-guangzhou") -> ZoneConfigPage:
    return parse_zone_configs(answer(*items), CTX, region=region)


# -- the TC3-HMAC-SHA256 signature -------------------------------------------------


def test_the_signature_reproduces_tencents_worked_example() -> None:
    assert tc3.sha256_hex(EXAMPLE_PAYLOAD) == EXAMPLE_PAYLOAD_HASH
    canonical = tc3.canonical_request(EXAMPLE_PAYLOAD, EXAMPLE_HOST)
    assert canonical == (
        "POST\n/\n\ncontent-type:application/json; charset=utf-8\n"
        f"host:{EXAMPLE_HOST}\n\ncontent-type;host\n{EXAMPLE_PAYLOAD_HASH}"
    )
    to_sign = tc3.string_to_sign(canonical, EXAMPLE_TIMESTAMP, "cvm")
    assert to_sign == (
        f"TC3-HMAC-SHA256\n{EXAMPLE_TIMESTAMP}\n2019-02-25/cvm/tc3_request\n{EXAMPLE_REQUEST_HASH}"
    )
    assert tc3.signature(EXAMPLE_SECRET_KEY, to_sign, EXAMPLE_TIMESTAMP, "cvm") == (
        EXAMPLE_SIGNATURE
    )
    assert tc3.authorization(
        secret_id=EXAMPLE_SECRET_ID,
        secret_key=EXAMPLE_SECRET_KEY,
        service="cvm",
        host=EXAMPLE_HOST,
        payload=EXAMPLE_PAYLOAD,
        timestamp=EXAMPLE_TIMESTAMP,
    ) == (
        f"TC3-HMAC-SHA256 Credential={EXAMPLE_SECRET_ID}/2019-02-25/cvm/tc3_request, "
        f"SignedHeaders=content-type;host, Signature={EXAMPLE_SIGNATURE}"
    )


def test_the_scope_date_is_utc_and_the_secret_key_goes_nowhere() -> None:
    # 1551113065 is 2019-02-26 00:44 in Beijing: the scope takes the UTC day.
    assert tc3.utc_date(EXAMPLE_TIMESTAMP) == "2019-02-25"
    headers = tc3.signed_headers(
        secret_id="id",
        secret_key="the-secret-key",
        service="cvm",
        host=EXAMPLE_HOST,
        action="DescribeZoneInstanceConfigInfos",
        version="2017-03-12",
        region="ap-nanjing",
        payload=b"{}",
        timestamp=EXAMPLE_TIMESTAMP,
    )
    assert {k: v for k, v in headers.items() if k != "Authorization"} == {
        "Content-Type": "application/json; charset=utf-8",
        "X-TC-Action": "DescribeZoneInstanceConfigInfos",
        "X-TC-Timestamp": str(EXAMPLE_TIMESTAMP),
        "X-TC-Version": "2017-03-12",
        "X-TC-Region": "ap-nanjing",
    }
    assert not any("the-secret-key" in v for v in headers.values())
    # The body is signed: another body, another signature.
    other = tc3.authorization(
        secret_id="id",
        secret_key="the-secret-key",
        service="cvm",
        host=EXAMPLE_HOST,
        payload=b"{ }",
        timestamp=EXAMPLE_TIMESTAMP,
    )
    assert other != headers["Authorization"]


def test_the_request_asks_for_pay_as_you_go_types_of_the_known_families() -> None:
    filters = {f["Name"]: f["Values"] for f in request_body()["Filters"]}
    assert filters["instance-charge-type"] == ["POSTPAID_BY_HOUR"]
    assert filters["instance-family"] == list(FAMILY_CARDS)
    assert len(filters["instance-family"]) <= 100  # the documented Filter.Values limit


# -- the family table ---------------------------------------------------------------


def test_every_family_card_is_one_the_catalog_knows_and_the_others_are_not() -> None:
    for family, card in FAMILY_CARDS.items():
        assert resolve_gpu(card.card).vendor == "NVIDIA", family
    for family, card_name in FAMILIES_OUTSIDE_CATALOG.items():
        # When the catalog learns one of them, it moves to FAMILY_CARDS.
        with pytest.raises(UnresolvedGpuName):
            resolve_gpu(card_name)
        assert family not in FAMILY_CARDS


# -- the recorded answers ---------------------------------------------------------------


def test_whole_instance_price_in_cny_with_cards_from_the_family_table() -> None:
    offers = offers_of(parse(case_named("recorded_zone_configs_ap-guangzhou")))
    t4 = offers[T4]
    assert (t4.price, t4.currency, t4.billing_unit.value, t4.price_basis.value) == (
        Decimal("7.96"),
        "CNY",
        "hour",
        "instance",
    )
    assert (t4.gpu_model, t4.gpu_vram_gb, t4.gpu_count, t4.region) == (
        "T4",
        16,
        1,
        "ap-guangzhou-3",
    )
    assert (t4.vcpus_per_gpu, t4.ram_gb_per_gpu, t4.interconnect) == (8, 32, "pcie")
    box = offers[A100_X8]
    assert (box.gpu_model, box.gpu_vram_gb, box.gpu_count, box.price) == (
        "A100",
        40,
        8,
        Decimal("229.12"),
    )
    # 164 cores and 948 GB over 8 cards; NVLink as the GT4 page states it.
    assert (box.vcpus_per_gpu, box.ram_gb_per_gpu) == (Decimal("20.5"), Decimal("118.5"))
    assert (box.interconnect, box.nvlink_gbps) == ("nvlink", 600)
    assert (offers[V100].gpu_model, offers[V100].gpu_vram_gb, offers[V100].nvlink_gbps) == (
        "V100",
        32,
        300,
    )
    assert (offers[A10_X4].gpu_model, offers[A10_X4].gpu_count) == ("A10", 4)


def test_sell_is_in_stock_without_a_count_narrowed_by_its_category() -> None:
    page = parse(case_named("recorded_zone_configs_ap-guangzhou"))
    stock = {k: (o.status, o.available_count) for k, o in offers_of(page).items()}
    assert stock == {
        T4: (StockStatus.IN_STOCK, None),
        T4_X4: (StockStatus.SOLD_OUT, 0),
        A100: (StockStatus.IN_STOCK, None),
        A100_X8: (StockStatus.SOLD_OUT, 0),
        V100: (StockStatus.IN_STOCK, None),
        A10: (StockStatus.IN_STOCK, None),
        A10_X4: (StockStatus.LOW, None),  # SELL, StatusCategory UnderStock
    }
    assert reasons_of(page) == {} and page.layout_error is None


def test_a_type_on_sale_without_stock_is_sold_out() -> None:
    """StatusCategory WithoutStock is Tencent's "none to sell", whatever Status says."""
    page = parse(case_named("recorded_zone_configs_ap-guangzhou"))
    body = load_json(case_named("recorded_zone_configs_ap-guangzhou").input_bytes())
    item = next(i for i in body["Response"]["InstanceTypeQuotaSet"] if i["InstanceType"] in T4)
    item["StatusCategory"] = "WithoutStock"
    key = f"{item['Zone']}/{item['InstanceType']}"
    changed = parse_zone_configs(body, CTX, region="ap-guangzhou")
    assert offers_of(changed)[key].status is StockStatus.SOLD_OUT
    assert offers_of(page)[key].status is not StockStatus.SOLD_OUT


def test_vgpu_slices_are_skipped_and_counted_never_offers() -> None:
    page = parse(case_named("recorded_zone_configs_ap-guangzhou"))
    assert skips_of(page) == {VGPU: "outside_catalog"}
    beijing = parse(case_named("recorded_zone_configs_ap-beijing"))
    assert skips_of(beijing) == {"ap-beijing-6/GNV4v.XLARGE24": "outside_catalog"}


def test_a_lower_account_price_is_a_member_plan_and_usage_steps_are_noted() -> None:
    page = parse(case_named("recorded_zone_configs_ap-guangzhou"))
    offers = offers_of(page)
    plans = [(p.price, p.price_kind.value, p.price_basis.value) for p in offers[A100].plans]
    assert plans == [(Decimal("25.78"), "member", "instance")]
    assert offers[T4].plans == ()  # UnitPriceDiscount equal to UnitPrice: no plan
    # GN10Xp.2XLARGE40 is cheaper after 96 h: the first step is its price, and noted.
    assert offers[V100].price == Decimal("16.2") and page.stepped == [V100]
    assert any("usage steps" in note for note in page.notes)


def test_every_region_reads_whole() -> None:
    counts = {}
    for region in ("ap-guangzhou", "ap-shanghai", "ap-beijing", "ap-nanjing"):
        page = parse(case_named(f"recorded_zone_configs_{region}"))
        assert page.layout_error is None and reasons_of(page) == {}, region
        assert all(k.startswith(f"{region}-") for k in offers_of(page)), region
        counts[region] = len(offers_of(page))
    assert counts == {"ap-guangzhou": 7, "ap-shanghai": 4, "ap-beijing": 2, "ap-nanjing": 2}


def test_the_offer_key_does_not_follow_the_stock() -> None:
    """Rule of truth 11: one key whatever Status says; an undocumented one is unknown."""
    [item] = [i for i in recorded_items() if i["InstanceType"] == "GN7.2XLARGE32"]
    seen = {}
    for status in ("SELL", "SOLD_OUT", "PRESALE", None, 1):
        page = parse_items({**item, "Status": status})
        [offer] = page.offers
        seen[status] = (offer.offer_key, offer.status)
    assert {key for key, _ in seen.values()} == {T4}
    assert seen["SELL"][1] is StockStatus.IN_STOCK and seen["SOLD_OUT"][1] is StockStatus.SOLD_OUT
    for status in ("PRESALE", None, 1):
        assert seen[status][1] is StockStatus.UNKNOWN, status


# -- drift, broken cells and items ---------------------------------------------------


def test_status_renamed_everywhere_is_a_layout_change_never_sold_out() -> None:
    page = parse(case_named("drift_stock_renamed_everywhere"))
    assert offers_of(page) == {}
    assert {r for rs in reasons_of(page).values() for r in rs} == {
        "missing_field: key gone: Status"
    }
    assert page.layout_error is not None and "Status (stock)" in page.layout_error


def test_status_renamed_in_one_item_costs_that_item_only() -> None:
    before = offers_of(parse(case_named("recorded_zone_configs_ap-guangzhou")))
    page = parse(case_named("drift_stock_renamed_in_one"))
    after = offers_of(page)
    assert set(before) - set(after) == {T4}
    assert all(after[key] == before[key] for key in after)
    assert reasons_of(page) == {T4: ["missing_field: key gone: Status"]}
    assert page.layout_error is None and page.missing_fields == ["Status"]


def test_a_family_renamed_everywhere_is_a_layout_change() -> None:
    page = parse(case_named("layout_family_renamed"))
    assert offers_of(page) == {}
    assert page.layout_error == (
        "no instance type carries InstanceFamily (identity): field renamed or removed"
    )


def test_one_bad_cell_costs_one_offer_or_one_side_fact() -> None:
    page = parse(case_named("bad_cells"))
    offers, reasons = offers_of(page), reasons_of(page)
    assert reasons[T4] == ["price_unparsed: Price.UnitPrice is not a number: '面议'"]
    assert reasons[T4_X4] == ["price_unparsed: ChargeUnit 'MONTH' is no hourly unit"]
    assert reasons[V100] == ["invalid_value: GpuCount is no whole card count: 1.5"]
    assert not {T4, T4_X4, V100} & set(offers)
    # A bad account price costs the plan; an undocumented Status the stock: offers stand.
    assert offers[A100].plans == () and reasons[A100][0].startswith("price_unparsed")
    assert offers[A100_X8].status is StockStatus.UNKNOWN
    assert reasons[A100_X8] == [
        "invalid_value: Status 'PRESALE' is not SELL or SOLD_OUT: stock unknown"
    ]
    # An unreadable host figure leaves that figure unknown, nothing else.
    assert offers[A10].vcpus_per_gpu is None and offers[A10].ram_gb_per_gpu == 116
    assert A10 not in reasons


def test_unreadable_items_are_quarantined_and_the_rest_skipped_by_kind() -> None:
    page = parse(case_named("bad_items"))
    assert set(offers_of(page)) == {A100}
    reasons = reasons_of(page)
    assert sorted(reasons[None]) == [
        "missing_field: Zone or InstanceType is missing",
        "not_an_offer: not an object",
    ]
    assert reasons["ap-shanghai-2/GN7.2XLARGE32"] == [
        "invalid_value: zone 'ap-shanghai-2' is not in region ap-guangzhou"
    ]
    assert skips_of(page) == {
        "ap-guangzhou-3/GN99.4XLARGE64": "outside_catalog",  # not in the family table
        "ap-guangzhou-3/GN6S.LARGE20": "outside_catalog",  # Tesla P4
        "ap-guangzhou-3/S5.LARGE8": "not_a_gpu_offer",  # GpuCount 0
        "ap-guangzhou-3/GN7.5XLARGE80": "not_offered",  # SPOTPAID
        "ap-guangzhou-3/GN7.8XLARGE128": "no_public_price",  # UnitPrice 0
    }
    assert page.notes == ["instance family GN99 is not in the family table: its types are skipped"]
    assert page.layout_error is None


def test_a_gpu_count_is_whole_cards_or_nothing() -> None:
    [item] = [i for i in recorded_items() if i["InstanceType"] == "GN7.2XLARGE32"]
    assert parse_items({**item, "GpuCount": Decimal("2.0")}).offers[0].gpu_count == 2
    assert skips_of(parse_items({**item, "GpuCount": Decimal("0.5")})) == {T4: "outside_catalog"}
    assert reasons_of(parse_items({**item, "GpuCount": -1})) == {
        T4: ["invalid_value: GpuCount is negative: -1"]
    }


# -- the envelope ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "code",
    [
        "AuthFailure.SecretIdNotFound",
        "AuthFailure.SignatureFailure",
        "AuthFailure.SignatureExpire",
        "AuthFailure.InvalidAuthorization",
        "UnauthorizedOperation",
    ],
)
def test_a_refused_key_is_auth_rejected(code: str) -> None:
    error = {"Response": {"Error": {"Code": code, "Message": "no"}, "RequestId": "r"}}
    page = parse_zone_configs(error, CTX, region="ap-guangzhou")
    assert (page.auth_rejected, page.error_code, page.api_error, page.layout_error) == (
        True,
        code,
        None,
        None,
    )


def test_other_errors_are_failed_requests_and_odd_envelopes_layout_changes() -> None:
    assert parse(case_named("api_error")).api_error == (
        "RequestLimitExceeded: 请求的次数超过了频率限制。"
    )
    assert parse(case_named("recorded_auth_failure")).auth_rejected
    for name in ("error_without_code", "layout_no_list", "layout_no_response"):
        page = parse(case_named(name))
        assert page.layout_error is not None and not page.auth_rejected, name
        assert page.api_error is None and page.records == [], name


def test_an_item_of_the_region_keeps_its_key_when_another_region_is_asked() -> None:
    # A zone outside the region asked is unreadable there, under its own key.
    items = copy.deepcopy(recorded_items("ap-nanjing"))
    page = parse_items(*items, region="ap-beijing")
    assert page.offers == []
    assert set(reasons_of(page)) == {
        "ap-nanjing-1/GN7.5XLARGE80",
        "ap-nanjing-1/GN10Xp.20XLARGE320",
    }
