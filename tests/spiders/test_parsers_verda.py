"""Verda parser: each recorded answer, the offers they make together, real fixtures, bad input.

Every case holds `args.json` with `source`: the answer its input is (`instance_types`,
`on_demand`, `spot`, `locations`, `volume_types`, `token`). An `instance_types` case builds
the offers with the other answers taken from the recordings, unless `args.json` names
another file for one (`recording:...` / `shared:...`) or null (that answer missing).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
from spider_fixture_cases import (
    OBSERVED_AT,
    RECORDINGS,
    RUN_ID,
    SHARED_SAMPLES,
    Case,
    assert_matches_case,
    cases,
    covered_recordings,
    recorded_bodies,
)

from gpurent.model import OfferRecord, PriceKind, StockStatus
from spiders.parsers.common import PageResult, ParseContext, load_json
from spiders.parsers.verda import (
    Inputs,
    build_offers,
    read_availability,
    read_instance_types,
    read_locations,
    read_token,
    read_volume_types,
    token_body,
)

CTX = ParseContext("verda", RUN_ID, OBSERVED_AT)
RECORDED = {
    "on_demand": "recording:verda/availability_on_demand.json",
    "spot": "recording:verda/availability_spot.json",
    "locations": "recording:verda/locations.json",
    "volume_types": "recording:verda/volume_types.json",
}


@dataclass
class VerdaPage(PageResult):
    """A parse result with what a non-offer answer says (checked through page.json)."""

    by_location: dict[str, list[str]] | None = None
    codes: list[str] | None = None
    volume_prices: list[list[str]] | None = None
    token: str | None = None


def load_ref(ref: str) -> Any:
    kind, _, rel = ref.partition(":")
    base = {"recording": RECORDINGS, "shared": SHARED_SAMPLES}[kind]
    return load_json((base / rel).read_bytes())


def case_args(case: Case) -> dict[str, Any]:
    return json.loads((case.folder / "args.json").read_text(encoding="utf-8"))


def answer(args: dict[str, Any], source: str) -> Any:
    ref = args.get(source, RECORDED[source])
    if ref is None:
        return None
    data = load_ref(ref)
    if source in ("on_demand", "spot"):
        return read_availability(data)
    if source == "locations":
        return read_locations(data)
    return read_volume_types(data, CTX)


def parse(case: Case) -> VerdaPage:
    args = case_args(case)
    data = load_json(case.input_bytes())
    source = args["source"]
    if source == "instance_types":
        types = read_instance_types(data)
        if types.layout_error is not None:
            return VerdaPage(layout_error=types.layout_error)
        inputs = Inputs(types, *(answer(args, s) for s in RECORDED))
        built = build_offers(inputs, CTX)
        return VerdaPage(records=built.records, notes=built.notes)
    if source in ("on_demand", "spot"):
        availability = read_availability(data)
        shown = {k: sorted(v) for k, v in sorted(availability.by_location.items())}
        return VerdaPage(layout_error=availability.layout_error, by_location=shown)
    if source == "locations":
        locations = read_locations(data)
        return VerdaPage(layout_error=locations.layout_error, codes=locations.codes)
    if source == "volume_types":
        volumes = read_volume_types(data, CTX)
        prices = [[v.volume_type, str(v.amount), v.currency] for v in volumes.prices]
        return VerdaPage(
            records=volumes.records, layout_error=volumes.layout_error, volume_prices=prices
        )
    assert source == "token"
    return VerdaPage(token=read_token(data))


@pytest.mark.parametrize("case", cases("verda"), ids=lambda c: c.name)
def test_page_parses_to_expected_records(case: Case) -> None:
    assert_matches_case(parse(case), case)


def test_every_recorded_page_has_a_parse_case() -> None:
    assert recorded_bodies("verda") <= covered_recordings("verda")


def offers_of(case_name: str) -> dict[str, OfferRecord]:
    case = next(c for c in cases("verda") if c.name == case_name)
    return {r.offer_key: r for r in parse(case).records if isinstance(r, OfferRecord)}


def test_offer_per_type_and_location_in_stock_where_listed() -> None:
    offers = offers_of("recorded_instance_types")
    assert len(offers) == 8 * 3  # GPU types x locations (the CPU type is quarantined)
    assert offers["1H100.80S.30V/FIN-01"].status is StockStatus.IN_STOCK
    assert offers["1H100.80S.30V/ICE-01"].status is StockStatus.SOLD_OUT
    h100x8 = offers["8H100.80S.176V/FIN-02"]
    assert (h100x8.price, h100x8.price_basis.value, h100x8.gpu_count) == (
        Decimal("21.20"),
        "instance",
        8,
    )
    assert (h100x8.gpu_model, h100x8.gpu_vram_gb, h100x8.gpu_form_factor) == ("H100", 80, "SXM")


def test_spot_plan_only_where_spot_is_available() -> None:
    offers = offers_of("recorded_instance_types")
    b200_fin2 = offers["1B200.31V/FIN-02"]
    assert b200_fin2.status is StockStatus.SOLD_OUT  # on demand
    assert [(p.price_kind, p.price) for p in b200_fin2.plans] == [(PriceKind.SPOT, Decimal("1.99"))]
    assert offers["1B200.31V/FIN-01"].plans == ()
    # Spot answer missing: unknown is not sold out, so the published spot price stays.
    missing = offers_of("missing_answers")
    assert [p.price for p in missing["1B200.31V"].plans] == [Decimal("1.99")]


def test_boot_volume_is_mandatory_only_without_local_disk() -> None:
    offers = offers_of("recorded_instance_types")
    dynamic = {f.note: f for f in offers["1H100.80S.30V/FIN-01"].fees}
    assert [f.mandatory for f in dynamic.values()] == [True, False, False]
    nvme = next(iter(dynamic.values()))
    assert (nvme.amount, nvme.unit.value if nvme.unit else None, nvme.basis.value) == (
        Decimal("0.2"),
        "month",
        "gb",
    )
    assert nvme.charged_while_stopped
    local_disk = offers["1V100.6V/FIN-01"]  # 225GB NVME of its own
    assert not any(f.mandatory for f in local_disk.fees)


def test_missing_answers_make_stock_unknown_never_sold_out() -> None:
    case = next(c for c in cases("verda") if c.name == "missing_answers")
    page = parse(case)
    offers = [r for r in page.records if isinstance(r, OfferRecord)]
    assert offers and all(o.status is StockStatus.UNKNOWN and o.region is None for o in offers)
    assert all(o.fees == () for o in offers)
    assert "on-demand availability missing: stock unknown" in page.notes


def test_real_fixtures_read_in_place() -> None:
    offers = offers_of("shared_fixtures")
    # No on-demand answer here: stock unknown; the spot answer names FIN-01 for 2A6000.20V.
    a6000 = offers["2A6000.20V/FIN-01"]
    assert a6000.status is StockStatus.UNKNOWN
    assert (a6000.gpu_model, a6000.gpu_vram_gb, a6000.gpu_count) == ("RTX A6000", 48, 2)
    assert [p.price for p in a6000.plans] == [Decimal("0.70")]
    assert offers["2A6000.20V/FIN-02"].plans == ()
    assert sorted({o.region for o in offers.values()}) == ["FIN-01", "FIN-02", "ICE-01"]


def test_token_body_is_client_credentials() -> None:
    body = token_body("id-1", "secret-1")
    assert body == {
        "grant_type": "client_credentials",
        "client_id": "id-1",
        "client_secret": "secret-1",
    }
    assert read_token({"access_token": ""}) is None and read_token([]) is None
