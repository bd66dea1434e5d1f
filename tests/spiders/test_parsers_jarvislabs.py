"""JarvisLabs parser: the recorded server meta, the real gpuhunt fixture, broken inputs."""

from __future__ import annotations

from decimal import Decimal

import pytest
from spider_fixture_cases import (
    OBSERVED_AT,
    RUN_ID,
    Case,
    assert_matches_case,
    cases,
    covered_recordings,
    recorded_bodies,
)

from gpurent.model import OfferRecord, PriceKind, StockStatus
from spiders.parsers.common import PageResult, ParseContext, load_json
from spiders.parsers.jarvislabs import parse_server_meta

CTX = ParseContext("jarvislabs", RUN_ID, OBSERVED_AT)


def parse(case: Case) -> PageResult:
    return parse_server_meta(load_json(case.input_bytes()), CTX)


@pytest.mark.parametrize("case", cases("jarvislabs"), ids=lambda c: c.name)
def test_page_parses_to_expected_records(case: Case) -> None:
    assert_matches_case(parse(case), case)


def test_every_recorded_page_has_a_parse_case() -> None:
    assert recorded_bodies("jarvislabs") <= covered_recordings("jarvislabs")


def offers_of(case_name: str) -> dict[str, OfferRecord]:
    case = next(c for c in cases("jarvislabs") if c.name == case_name)
    return {r.offer_key: r for r in parse(case).records if isinstance(r, OfferRecord)}


def test_one_card_per_region_type_and_workload_with_free_counts() -> None:
    offers = offers_of("recorded_server_meta")
    l4 = offers["india-noida-01/L4/vm"]
    assert (l4.status, l4.available_count) == (StockStatus.IN_STOCK, 3)
    assert (l4.price, l4.price_basis.value, l4.gpu_count) == (Decimal("0.44"), "gpu", 1)
    assert "india-noida-01/L4/container" in offers
    a100 = offers["india-noida-01/A100-80GB/vm"]
    assert (a100.gpu_model, a100.gpu_vram_gb) == ("A100", 80)
    assert (a100.status, a100.available_count) == (StockStatus.SOLD_OUT, 0)
    # workload_type null (older VM rows): "any" in the key
    assert offers["europe-01/H200/any"].status is StockStatus.SOLD_OUT
    assert offers["india-01/A100/container"].gpu_vram_gb == 40


def test_spot_plan_unless_no_spot_card_is_free() -> None:
    offers = offers_of("recorded_server_meta")
    assert [(p.price_kind, p.price) for p in offers["india-noida-01/L4/vm"].plans] == [
        (PriceKind.SPOT, Decimal("0.29"))
    ]
    assert offers["india-01/A6000/container"].plans == ()  # spot_num_free_devices 0


def test_unknown_type_is_quarantined() -> None:
    case = next(c for c in cases("jarvislabs") if c.name == "recorded_server_meta")
    quarantined = [r for r in parse(case).records if not isinstance(r, OfferRecord)]
    assert [q.offer_key for q in quarantined] == ["india-01/A5000Pro/container"]
    # JarvisLabs' SDK lists "A5000Pro" beside "A5000" as its own type and no public source
    # says which card it is (the row's vram "24" fits RTX A5000 and RTX A5500): not guessed.
    assert quarantined[0].reason == (
        "gpu_unresolved: 'A5000Pro': unknown GPU model 'a5000pro': not in the catalog"
    )


def test_missing_or_bad_free_count_is_unknown_not_sold_out() -> None:
    offers = offers_of("bad_fields")
    assert offers["europe-01/H100/any"].status is StockStatus.UNKNOWN  # no num_free_devices
    assert offers["india-01/A100/container"].status is StockStatus.UNKNOWN  # -1
    # "RTX5000" with 16 GB is the Turing Quadro RTX 5000, not the 32 GB RTX 5000 Ada.
    assert offers["india-01/RTX5000/container"].gpu_model == "Quadro RTX 5000"
