"""RunPod parser: the recorded catalog and per-cloud prices, a real fragment, broken inputs.

How a case's `args.json` picks the parser and the catalog: `parser_registry`.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from parser_registry import parse, recorded_runpod_catalog
from spider_fixture_cases import OBSERVED_AT, RUN_ID, cases, recordings_of

from gpurent_core.model import (
    FeeType,
    OfferRecord,
    PriceKind,
    QuarantineRecord,
    SkipKind,
    StockStatus,
)
from replay.matching import json_subset_diff
from spiders.parsers.common import ParseContext
from spiders.providers.runpod.parser import (
    VALIDATION_FAILED,
    VOLUME_FEES,
    catalog_body,
    parse_catalog,
    parse_prices,
    prices_body,
    read_envelope,
)

CTX = ParseContext("runpod", RUN_ID, OBSERVED_AT)


def offers_of(case_name: str) -> dict[str, OfferRecord]:
    case = next(c for c in cases("runpod") if c.name == case_name)
    return {r.offer_key: r for r in parse(case).records if isinstance(r, OfferRecord)}


def test_catalog_says_which_cloud_lists_each_type() -> None:
    catalog = recorded_runpod_catalog()
    assert catalog.layout_error is None and len(catalog.types) == 13
    assert catalog.listed("NVIDIA H100 80GB HBM3", "secure") is True
    assert catalog.listed("NVIDIA H100 80GB HBM3", "community") is False
    assert catalog.listed("no such type", "secure") is None


def test_stock_status_words_and_null() -> None:
    secure = offers_of("recorded_prices_secure")
    community = offers_of("recorded_prices_community")
    assert secure["NVIDIA GeForce RTX 4090/secure"].status is StockStatus.IN_STOCK  # High
    assert secure["NVIDIA L4/secure"].status is StockStatus.IN_STOCK  # Medium
    assert secure["NVIDIA H100 80GB HBM3/secure"].status is StockStatus.LOW  # Low
    # null for a type the catalog lists in that cloud: sold out
    assert secure["NVIDIA B200/secure"].status is StockStatus.SOLD_OUT
    assert community["NVIDIA L4/community"].status is StockStatus.SOLD_OUT
    # a type the catalog does not offer in that cloud: no offer at all, a skip
    assert "NVIDIA H100 80GB HBM3/community" not in community
    assert not any(key.startswith("NVIDIA GeForce RTX 3080") for key in {**secure, **community})
    # RunPod gives words, not counts: no free count, except sold out, which is 0 free.
    assert all(
        o.available_count == (0 if o.status is StockStatus.SOLD_OUT else None)
        for o in secure.values()
    )


def test_price_per_card_plans_and_fees() -> None:
    h100 = offers_of("recorded_prices_secure")["NVIDIA H100 80GB HBM3/secure"]
    assert (h100.gpu_model, h100.gpu_vram_gb, h100.gpu_form_factor) == ("H100", 80, "SXM")
    assert (h100.price, h100.price_basis.value, h100.gpu_count) == (Decimal("2.69"), "gpu", 1)
    assert h100.region == "US"
    plans = [(p.price_kind, p.price) for p in h100.plans]
    assert plans == [
        (PriceKind.SPOT, Decimal("1.75")),
        (PriceKind.COMMITMENT, Decimal("2.39")),
        (PriceKind.COMMITMENT, Decimal("2.29")),
        (PriceKind.COMMITMENT, Decimal("2.19")),
    ]
    assert h100.fees == VOLUME_FEES
    fees = {f.fee_type: f for f in h100.fees}
    assert fees[FeeType.DATA_DISK].amount == Decimal("0.10")
    assert fees[FeeType.STORAGE_STOPPED].amount == Decimal("0.20")
    # Savings plans are a Secure Cloud product: community offers carry only the spot bid.
    a100 = offers_of("recorded_prices_community")["NVIDIA A100-SXM4-80GB/community"]
    assert [p.price_kind for p in a100.plans] == [PriceKind.SPOT]
    assert a100.price == Decimal("1.39")


def test_pascal_geforce_resolves_and_nothing_is_quarantined() -> None:
    case = next(c for c in cases("runpod") if c.name == "recorded_prices_community")
    quarantined = [r for r in parse(case).records if isinstance(r, QuarantineRecord)]
    assert quarantined == []
    # GTX 1070 (memoryInGb 8): a Pascal GeForce card the catalog holds, so a real offer.
    gtx = offers_of("recorded_prices_community")["NVIDIA GeForce GTX 1070/community"]
    assert (gtx.gpu_model, gtx.gpu_vram_gb, gtx.gpu_form_factor) == ("GTX 1070", 8, None)
    assert (gtx.price, gtx.status) == (Decimal("0.09"), StockStatus.IN_STOCK)
    # "WK" is RunPod's Workstation Edition suffix: the card resolves and is a real offer.
    pro = offers_of("recorded_prices_community")[
        "NVIDIA RTX PRO 6000 Blackwell Workstation Edition/community"
    ]
    assert (pro.gpu_model, pro.gpu_vram_gb, pro.gpu_form_factor) == ("RTX PRO 6000", 96, "PCIe")
    assert (pro.price, pro.status) == (Decimal("1.69"), StockStatus.IN_STOCK)


def test_fragment_without_stock_is_a_layout_change() -> None:
    """An answer in the shape of a query that did not ask for `stockStatus` (as public
    examples show it); from our query that key gone is drift: never unknown-but-ok, never
    sold out. The list price may be absent: `uninterruptablePrice` is its declared
    alternative, so only the stock is named."""
    case = next(c for c in cases("runpod") if c.name == "doc_shape_lowest_price_without_stock")
    page = parse(case)
    assert page.offers == [] and page.missing_fields == ["lowestPrice.stockStatus"]
    assert page.layout_error is not None and "lowestPrice.stockStatus (stock)" in page.layout_error
    (line,) = page.records
    assert line.offer_key == "NVIDIA RTX A4000/community"
    assert line.reason == "missing_field: key gone: lowestPrice.stockStatus"


def test_stock_key_gone_from_one_type_costs_that_type_only() -> None:
    before = offers_of("recorded_prices_secure")
    page = parse(next(c for c in cases("runpod") if c.name == "stock_renamed_in_one"))
    after = {o.offer_key: o for o in page.offers}
    assert set(before) - set(after) == {"NVIDIA GeForce RTX 4090/secure"}
    assert all(after[k].status is before[k].status for k in after)
    assert page.layout_error is None and page.missing_fields == ["lowestPrice.stockStatus"]


def test_unreadable_stock_word_is_unknown_and_set_aside() -> None:
    data = {"gpuTypes": [{"id": "NVIDIA L4", "displayName": "L4", "memoryInGb": 24,
                          "securePrice": "0.49", "lowestPrice": {"stockStatus": stock}}
                         for stock in ("Moderate", {})]}  # fmt: skip
    records = parse_prices(data, "secure", recorded_runpod_catalog(), CTX)
    statuses = [r.status for r in records.offers]
    assert statuses == [StockStatus.UNKNOWN, StockStatus.UNKNOWN]
    reasons = [r.reason for r in records.records if not isinstance(r, OfferRecord)]
    assert len(reasons) == 2 and all(r.startswith("invalid_value: stockStatus") for r in reasons)


def test_catalog_type_without_its_cloud_flag_is_left_out() -> None:
    """A type whose `secureCloud` is gone is not "listed": its null stock stays unknown."""
    types = [
        {"id": "NVIDIA L4", "secureCloud": True, "communityCloud": True},
        {"id": "NVIDIA B200", "communityCloud": False},
    ]
    catalog = parse_catalog({"gpuTypes": types})
    assert set(catalog.types) == {"NVIDIA L4"} and catalog.missing_fields == ["secureCloud"]
    assert catalog.layout_error is None
    assert parse_catalog({"gpuTypes": types[1:]}).layout_error is not None


def test_graphql_errors() -> None:
    refused = read_envelope({"errors": [{"message": "Unauthorized"}], "data": None})
    assert refused.auth_rejected and refused.data is None
    coded = read_envelope(
        {"errors": [{"message": "no", "extensions": {"code": "UNAUTHENTICATED"}}], "data": None}
    )
    assert coded.auth_rejected
    busy = read_envelope({"errors": [{"message": "Internal server error"}], "data": None})
    assert not busy.auth_rejected and busy.error == "Internal server error"
    assert read_envelope({"gpuTypes": []}).layout_error is not None


def test_request_bodies_match_the_recorded_routes() -> None:
    routes = json.loads((recordings_of("runpod") / "routes.json").read_text(encoding="utf-8"))
    bodies = [catalog_body(), prices_body("secure"), prices_body("community")]
    for route, body in zip(routes, bodies, strict=True):
        assert json_subset_diff(route["json"], json.loads(json.dumps(body))) is None
    with pytest.raises(ValueError):
        prices_body("private")


def test_types_the_catalog_does_not_offer_in_a_cloud_are_skipped_whatever_the_stock() -> None:
    """Whether an offer exists follows the catalog, never the stock answer (rule of truth
    11): a type not offered in the community cloud is a `not_offered` skip, even when RunPod
    quotes a stock word for it."""
    catalog = recorded_runpod_catalog()
    item = {"id": "NVIDIA H100 80GB HBM3", "displayName": "H100 SXM", "memoryInGb": 80,
            "communityPrice": "2.19", "lowestPrice": {"stockStatus": "High"}}  # fmt: skip
    page = parse_prices({"gpuTypes": [item]}, "community", catalog, CTX)
    assert page.offers == []
    assert [(r.offer_key, r.skip_kind) for r in page.skipped] == [
        ("NVIDIA H100 80GB HBM3/community", SkipKind.NOT_OFFERED)
    ]
    case = next(c for c in cases("runpod") if c.name == "recorded_prices_community")
    skipped = {r.offer_key for r in parse(case).skipped}
    assert skipped == {
        f"{type_id}/community"
        for type_id in ("NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA B200",
                        "AMD Instinct MI300X OAM", "NVIDIA GeForce RTX 3080")
    }  # fmt: skip


@pytest.mark.parametrize("cloud", ["secure", "community"])
def test_offer_key_does_not_follow_the_stock_answer(cloud: str) -> None:
    """One type in one cloud is one key in stock, low, sold out (null) or unknown (a null
    `lowestPrice`, or a word RunPod does not use)."""
    catalog = recorded_runpod_catalog()
    price = {"securePrice": "0.74", "communityPrice": "0.34"}
    lowest: list[dict[str, str | None] | None] = [
        {"stockStatus": word} for word in ("High", "Low", None, "Moderate")
    ] + [None]
    seen = {}
    for value in lowest:
        item = {"id": "NVIDIA GeForce RTX 4090", "displayName": "RTX 4090", "memoryInGb": 24,
                **price, "lowestPrice": value}  # fmt: skip
        page = parse_prices({"gpuTypes": [item]}, cloud, catalog, CTX)
        [offer] = page.offers
        seen[offer.status] = offer.offer_key
    assert set(seen) == {
        StockStatus.IN_STOCK,
        StockStatus.LOW,
        StockStatus.SOLD_OUT,
        StockStatus.UNKNOWN,
    }
    assert set(seen.values()) == {f"NVIDIA GeForce RTX 4090/{cloud}"}


def test_catalog_names_the_keys_each_cloud_decides() -> None:
    """What a failed prices request leaves unread: the keys of the types the catalog names
    in that cloud (a type it does not offer there makes no offer to keep)."""
    catalog = recorded_runpod_catalog()
    secure, community = catalog.offer_keys("secure"), catalog.offer_keys("community")
    assert len(secure) == 10 and len(community) == 8
    assert "NVIDIA H100 80GB HBM3/secure" in secure
    assert "NVIDIA H100 80GB HBM3/community" not in community
    assert {k.rsplit("/", 1)[0] for k in secure} | {k.rsplit("/", 1)[0] for k in community} == (
        set(catalog.ids) - {"NVIDIA GeForce RTX 3080"}
    )
    # A type the catalog holds but could not read (a cloud flag gone) still names its keys.
    drifted = parse_catalog({"gpuTypes": [{"id": "NVIDIA L4", "communityCloud": True}]})
    assert drifted.offer_keys("secure") == ["NVIDIA L4/secure"]


def test_a_query_the_schema_refuses_is_read_as_validation_failed() -> None:
    refused = read_envelope(
        {
            "errors": [
                {
                    "message": 'Cannot query field "stockStatus" on type "LowestPrice".',
                    "extensions": {"code": VALIDATION_FAILED},
                }
            ]
        }
    )
    assert refused.validation_failed and not refused.auth_rejected
    assert refused.error == 'Cannot query field "stockStatus" on type "LowestPrice".'
    assert refused.data is None and refused.layout_error is None
    other = read_envelope(
        {"errors": [{"message": "bad", "extensions": {"code": "BAD_USER_INPUT"}}]}
    )
    assert not other.validation_failed and other.code == "BAD_USER_INPUT"
