"""Verda parser: each recorded answer, the offers they make together, documented shapes, bad input.

How a case's `args.json` says which answer its input is, and which others go with it:
`parser_registry`.
"""

from __future__ import annotations

from decimal import Decimal

from parser_registry import VERDA_RECORDED, parse, verda_answer
from spider_fixture_cases import OBSERVED_AT, RUN_ID, cases

from gpurent_core.model import OfferRecord, PriceKind, QuarantineRecord, SkipKind, StockStatus
from spiders.parsers.common import ParseContext, load_json
from spiders.providers.verda.parser import (
    CONTRACTS,
    Inputs,
    build_offers,
    read_availability,
    read_instance_types,
    read_token,
    token_body,
)

CTX = ParseContext("verda", RUN_ID, OBSERVED_AT)


def offers_of(case_name: str) -> dict[str, OfferRecord]:
    case = next(c for c in cases("verda") if c.name == case_name)
    return {r.offer_key: r for r in parse(case).records if isinstance(r, OfferRecord)}


def test_offer_per_type_and_location_in_stock_where_listed() -> None:
    offers = offers_of("recorded_instance_types")
    assert len(offers) == 8 * 3  # GPU types x locations (the CPU type is skipped)
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


def lines_of(case_name: str) -> dict[str | None, list[str]]:
    """The quarantine reasons of a case, by offer key."""
    case = next(c for c in cases("verda") if c.name == case_name)
    lines: dict[str | None, list[str]] = {}
    for r in parse(case).records:
        if isinstance(r, QuarantineRecord):
            lines.setdefault(r.offer_key, []).append(r.reason)
    return lines


GPU_TYPES = (
    "1H100.80S.30V",
    "8H100.80S.176V",
    "1H200.141S.44V",
    "1B200.31V",
    "1A100.22V",
    "1RTX6000ADA.10V",
    "1L40S.20V",
    "1V100.6V",
)
LOCATIONS = ("FIN-01", "FIN-02", "ICE-01")
FAILED_ON_DEMAND = "missing_field: stock unreadable: on-demand availability answer failed"


def test_missing_on_demand_answer_keeps_every_offer_out_one_line_each() -> None:
    """No stock `unknown` over the last good state: each offer is a quarantine line instead,
    so the warehouse keeps it, stale (rules of truth 2 and 10)."""
    case = next(c for c in cases("verda") if c.name == "missing_answers")
    page = parse(case)
    assert not any(isinstance(r, OfferRecord) for r in page.records)
    # No answer names a location: one line per type; the CPU-only type is a skip, no line.
    assert lines_of("missing_answers") == {name: [FAILED_ON_DEMAND] for name in GPU_TYPES}
    assert "on-demand availability missing: offers kept out, last good state stays" in page.notes


def test_missing_on_demand_answer_leaves_each_gpu_type_unread_by_prefix() -> None:
    """A location only the on-demand answer would have named keeps its offers too: every
    GPU type read is declared unread as `<type>/` (the CPU-only type makes no offer)."""
    case = next(c for c in cases("verda") if c.name == "recorded_instance_types")
    types = read_instance_types(load_json(case.input_bytes()))
    others = {s: verda_answer({}, s) for s in VERDA_RECORDED}
    page = build_offers(
        Inputs(types, **{**others, "on_demand": None}, why_missing={"on_demand": "failed"}), CTX
    )
    assert page.unread_prefixes == [f"{name}/" for name in GPU_TYPES]
    assert page.offers == []
    keys = {r.offer_key for r in page.records if isinstance(r, QuarantineRecord)}
    assert keys == set(offers_of("recorded_instance_types"))  # each offer's own key
    answered = build_offers(Inputs(types, **others), CTX)
    assert answered.unread_prefixes == []


def test_cpu_only_type_is_skipped_not_quarantined() -> None:
    page = parse(next(c for c in cases("verda") if c.name == "recorded_instance_types"))
    assert [(r.offer_key, r.skip_kind) for r in page.skipped] == [
        ("CPU.4V.16G", SkipKind.NOT_A_GPU_OFFER)
    ]
    assert not any(isinstance(r, QuarantineRecord) for r in page.records)


def test_documented_shapes_without_and_with_an_on_demand_answer() -> None:
    # Types, spot and locations answers in the documented shapes, no on-demand availability:
    # every offer is kept out, per location (FIN-03 named by the locations answer only).
    assert offers_of("doc_shape_offers_without_on_demand") == {}
    lines = lines_of("doc_shape_offers_without_on_demand")
    for name in ("1A100.22V", "4A6000.40V", "1V100.6V"):
        for location in (*LOCATIONS, "FIN-03"):
            assert lines[f"{name}/{location}"] == [FAILED_ON_DEMAND]
    # With our recorded on-demand answer beside them, the same types read into offers.
    offers = offers_of("doc_shape_offers_with_recorded_on_demand")
    a6000 = offers["4A6000.40V/FIN-02"]
    assert a6000.status is StockStatus.SOLD_OUT  # not listed on demand: a real signal
    assert (a6000.gpu_model, a6000.gpu_vram_gb, a6000.gpu_count) == ("RTX A6000", 48, 4)
    # The spot answer names FIN-02 for 4A6000.40V: the spot plan follows it alone.
    assert [p.price for p in a6000.plans] == [Decimal("1.60")]
    assert offers["4A6000.40V/FIN-01"].plans == ()
    assert offers["1A100.22V/FIN-01"].status is StockStatus.IN_STOCK
    # A location the on-demand answer does not name at all: sold out there.
    assert offers["1A100.22V/FIN-03"].status is StockStatus.SOLD_OUT
    assert sorted({str(o.region) for o in offers.values()}) == [
        "FIN-01",
        "FIN-02",
        "FIN-03",
        "ICE-01",
    ]


def test_token_body_is_client_credentials() -> None:
    body = token_body("id-1", "secret-1")
    assert body == {
        "grant_type": "client_credentials",
        "client_id": "id-1",
        "client_secret": "secret-1",
    }
    assert read_token({"access_token": ""}) is None and read_token([]) is None


def test_an_entry_without_its_list_keeps_its_location_out() -> None:
    offers = offers_of("offers_availability_renamed_in_one")
    recorded = offers_of("recorded_instance_types")
    # FIN-02's offers are kept out (their last good state stays), one line per offer...
    assert not any(key.endswith("/FIN-02") for key in offers)
    lines = lines_of("offers_availability_renamed_in_one")
    for name in GPU_TYPES:
        assert lines[f"{name}/FIN-02"] == [
            "missing_field: stock unreadable: key gone: availabilities"
        ]
    # ... and elsewhere the page is as recorded.
    assert offers == {k: o for k, o in recorded.items() if not k.endswith("/FIN-02")}
    case = next(c for c in cases("verda") if c.name == "availability_renamed_in_one")
    page = parse(case)
    assert [(r.offer_key, r.reason) for r in page.records if isinstance(r, QuarantineRecord)] == [
        ("on-demand-availability/FIN-02", "missing_field: key gone: availabilities")
    ]
    assert page.missing_fields == ["availabilities"] and page.layout_error is None


def test_every_entry_without_its_list_is_a_layout_error() -> None:
    case = next(c for c in cases("verda") if c.name == "availability_renamed_everywhere")
    page = parse(case)
    assert page.layout_error is not None and "availabilities (stock)" in page.layout_error
    # The answer is then missing: every offer is kept out, one line each.
    assert offers_of("offers_availability_renamed_everywhere") == {}
    lines = lines_of("offers_availability_renamed_everywhere")
    assert all(lines[f"{n}/{loc}"] == [FAILED_ON_DEMAND] for n in GPU_TYPES for loc in LOCATIONS)


def test_unreadable_entries_make_their_location_unknown() -> None:
    case = next(c for c in cases("verda") if c.name == "availability_bad_cells")
    availability = read_availability(load_json(case.input_bytes()), CTX)
    assert availability.listed("1H100.80S.30V", "FIN-01") is True  # readable names count
    assert availability.listed("1A100.22V", "FIN-01") is None  # beside a garbled name
    assert availability.listed("1H100.80S.30V", "FIN-02") is None  # null list
    assert availability.listed("CPU.4V.16G", "ICE-01") is None  # text, not a list
    # An entry without a readable location: a location no entry names cannot say either.
    assert availability.listed("1B200.31V", "FIN-03") is None
    assert len(availability.records) == 4
    # Built into offers: what an entry readably lists stays in stock, the rest of an
    # unreadable location is kept out with the entry's reason (never unknown, never sold out).
    offers = offers_of("offers_availability_bad_cells")
    assert {k: o.status for k, o in offers.items()} == {
        "1H100.80S.30V/FIN-01": StockStatus.IN_STOCK,
        "1V100.6V/FIN-01": StockStatus.IN_STOCK,
    }
    lines = lines_of("offers_availability_bad_cells")
    assert lines["1A100.22V/FIN-01"] == [
        "invalid_value: stock unreadable: availabilities is not a list of type names at FIN-01"
    ]
    assert lines["1H100.80S.30V/ICE-01"] == [
        "invalid_value: stock unreadable: availabilities is not a list of type names at ICE-01"
    ]
    kept_out = {k for k in lines if k and "/" in k}
    assert len(kept_out) == len(GPU_TYPES) * len(LOCATIONS) - len(offers)


def test_an_unreadable_location_entry_keeps_unnamed_locations_out() -> None:
    """An entry whose location cannot be read may have been any location's list: the
    locations no readable entry names are kept out; the named ones read as they say."""
    data = [
        {"location_code": "FIN-01", "availabilities": ["1H100.80S.30V"]},
        {"location_code": None, "availabilities": ["1H100.80S.30V"]},
    ]
    on_demand = read_availability(data, CTX)
    case = next(c for c in cases("verda") if c.name == "recorded_instance_types")
    types = read_instance_types(load_json(case.input_bytes()))
    others = {s: verda_answer({}, s) for s in VERDA_RECORDED}
    page = build_offers(Inputs(types, **{**others, "on_demand": on_demand}), CTX)
    offers = {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}
    assert offers["1H100.80S.30V/FIN-01"].status is StockStatus.IN_STOCK
    assert offers["1A100.22V/FIN-01"].status is StockStatus.SOLD_OUT  # readably not listed
    assert not any(k.endswith("/ICE-01") for k in offers)  # only /locations names it
    reasons = {r.offer_key: r.reason for r in page.records if isinstance(r, QuarantineRecord)}
    assert reasons["1H100.80S.30V/ICE-01"] == (
        "invalid_value: stock unreadable: location_code is None"
    )


def test_spot_plan_follows_the_spot_answer_not_on_demand() -> None:
    offers = offers_of("recorded_instance_types")
    # In stock on demand, not listed for spot: no spot plan copied from on demand.
    assert offers["1RTX6000ADA.10V/FIN-01"].status is StockStatus.IN_STOCK
    assert offers["1RTX6000ADA.10V/FIN-01"].plans == ()
    # A spot entry that lost its list: its location's plans are left out rather than
    # guessed, one line per offer; the on-demand offers stand, with the on-demand stock
    # (never copied onto spot); the other locations follow the spot answer as before.
    spot_blind = offers_of("offers_spot_renamed_in_one")
    assert spot_blind["1RTX6000ADA.10V/FIN-02"].plans == ()
    assert spot_blind["1RTX6000ADA.10V/FIN-01"].plans == ()
    assert spot_blind["1RTX6000ADA.10V/FIN-02"].status is StockStatus.SOLD_OUT  # on demand
    assert spot_blind["1H100.80S.30V/FIN-02"].status is StockStatus.IN_STOCK  # on demand
    recorded = offers_of("recorded_instance_types")
    assert {k: stock_of(o) for k, o in spot_blind.items()} == {
        k: stock_of(o) for k, o in recorded.items()
    }
    assert {k: o for k, o in spot_blind.items() if not k.endswith("/FIN-02")} == {
        k: o for k, o in recorded.items() if not k.endswith("/FIN-02")
    }
    lines = lines_of("offers_spot_renamed_in_one")
    for name in GPU_TYPES:  # each recorded GPU type publishes a spot price
        assert lines[f"{name}/FIN-02"] == [
            "missing_field: spot plan left out: key gone: availabilities"
        ]


def test_missing_spot_answer_leaves_the_plans_out_not_the_offers() -> None:
    case = next(c for c in cases("verda") if c.name == "recorded_instance_types")
    types = read_instance_types(load_json(case.input_bytes()))
    others = {s: verda_answer({}, s) for s in VERDA_RECORDED}
    page = build_offers(
        Inputs(types, **{**others, "spot": None}, why_missing={"spot": "failed"}), CTX
    )
    offers = {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}
    recorded = offers_of("recorded_instance_types")
    assert {k: stock_of(o) for k, o in offers.items()} == {
        k: stock_of(o) for k, o in recorded.items()
    }
    assert all(o.plans == () for o in offers.values())
    reasons = {r.offer_key: r.reason for r in page.records if isinstance(r, QuarantineRecord)}
    assert reasons["1B200.31V/FIN-02"] == (
        "missing_field: spot plan left out: spot availability answer failed"
    )
    assert "spot availability missing: spot plans left out" in page.notes


def test_a_type_that_lost_a_field_costs_its_offers_alone() -> None:
    case = next(c for c in cases("verda") if c.name == "instance_types_renamed_in_one")
    page = parse(case)
    lost = {"1H200.141S.44V", "1B200.31V"}
    lines = {r.offer_key: r.reason for r in page.records if isinstance(r, QuarantineRecord)}
    for name in lost:
        for location in ("FIN-01", "FIN-02", "ICE-01"):
            assert lines[f"{name}/{location}"].startswith("missing_field: key gone: ")
    recorded = offers_of("recorded_instance_types")
    kept = {k: o for k, o in recorded.items() if k.split("/")[0] not in lost}
    assert offers_of("instance_types_renamed_in_one") == kept
    assert page.missing_fields == ["price_per_hour", "currency"]


def test_card_count_gone_is_read_from_the_description() -> None:
    """`number_of_gpus` may be derived ("8x H100 SXM5 80GB"), so its loss is no drift; a
    description without a count cannot stand in for it."""
    case = next(c for c in cases("verda") if c.name == "recorded_instance_types")
    data = load_json(case.input_bytes())
    for item in data:
        if item["instance_type"] in ("8H100.80S.176V", "1L40S.20V"):
            del item["gpu"]["number_of_gpus"]
        if item["instance_type"] == "1L40S.20V":
            item["gpu"]["description"] = "L40S 48GB"
    types = read_instance_types(data)
    assert types.layout_error is None and types.missing_fields == []
    others = {s: verda_answer({}, s) for s in VERDA_RECORDED}
    page = build_offers(Inputs(types, **others), CTX)
    offers = {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}
    assert (
        offers["8H100.80S.176V/FIN-02"]
        == offers_of("recorded_instance_types")["8H100.80S.176V/FIN-02"]
    )
    lines = {r.offer_key: r.reason for r in page.records if isinstance(r, QuarantineRecord)}
    assert lines["1L40S.20V/FIN-02"] == (
        "missing_field: no number_of_gpus and no count in the name"
    )


def test_offer_keys_do_not_follow_the_stock_answer() -> None:
    """Rule of truth 11: one type at one location is the same key in stock, sold out, or
    where the answer cannot say (then its quarantine line carries that key)."""
    case = next(c for c in cases("verda") if c.name == "recorded_instance_types")
    types = read_instance_types(load_json(case.input_bytes()))
    others = {s: verda_answer({}, s) for s in VERDA_RECORDED}

    def keys(listing: object) -> dict[str, str]:
        on_demand = read_availability(listing, CTX)
        page = build_offers(Inputs(types, **{**others, "on_demand": on_demand}), CTX)
        return {
            r.offer_key: r.status.value if isinstance(r, OfferRecord) else "unread"
            for r in page.records
            if isinstance(r, OfferRecord | QuarantineRecord) and r.offer_key
            and r.offer_key.startswith("1H100.80S.30V/")
        }  # fmt: skip

    in_stock = keys([{"location_code": loc, "availabilities": ["1H100.80S.30V"]}
                     for loc in LOCATIONS])  # fmt: skip
    sold_out = keys([{"location_code": loc, "availabilities": []} for loc in LOCATIONS])
    unknown = keys([{"location_code": loc, "availabilities": None} for loc in LOCATIONS])
    expected = {f"1H100.80S.30V/{loc}" for loc in LOCATIONS}
    assert set(in_stock) == set(sold_out) == set(unknown) == expected
    assert set(in_stock.values()) == {"in_stock"} and set(sold_out.values()) == {"sold_out"}
    assert set(unknown.values()) == {"unread"}


def test_every_contract_is_listed() -> None:
    assert {c.noun for c in CONTRACTS} == {"instance type", "location", "volume type"}
    assert len(CONTRACTS) == 4


def stock_of(offer: OfferRecord) -> tuple[StockStatus, int | None]:
    return (offer.status, offer.available_count)
