"""Verda: the real `scrapy crawl verda` process against the replay server."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from crawl_kit import (
    RUN_ID,
    Crawl,
    Routes,
    assert_api_spider,
    assert_auth_missing,
    assert_auth_rejected,
    assert_secrets_kept,
    crawl,
    crawl_scene,
    recordings_with_routes,
)
from spider_fixture_cases import recordings_of

from flows.health import classify_run
from gpurent_core.model import RunStatus
from replay import Fault, ReplayServer
from spiders.providers.verda.spider import ID_ENV, SECRET_ENV, VerdaSpider

CLIENT_ID = "verda-test-client-4a1f"
SECRET = "verda-test-secret-8b2e-not-real"
ACCESS_TOKEN = "replay-access-token-not-a-secret"  # what token.json hands out


@pytest.fixture
def credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ID_ENV, CLIENT_ID)
    monkeypatch.setenv(SECRET_ENV, SECRET)


@pytest.mark.usefixtures("credentials")
def test_token_then_types_availability_and_locations(server: ReplayServer, tmp_path: Path) -> None:
    result = crawl("verda", server, tmp_path, settings={"LOG_LEVEL": "DEBUG"})
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 24
    assert result.quarantined == []
    h100 = offers["1H100.80S.30V/FIN-01"]
    assert (h100["status"], h100["price"], h100["price_basis"]) == ("in_stock", "2.65", "instance")
    assert [(p["price_kind"], p["price"]) for p in h100["plans"]] == [("spot", "1.05")]
    assert [(f["fee_type"], f["amount"], f["mandatory"]) for f in h100["fees"]] == [
        ("data_disk", "0.2", True),
        ("data_disk", "0.05", False),
        ("data_disk", "0.2", False),
    ]
    assert offers["1H100.80S.30V/ICE-01"]["status"] == "sold_out"
    assert offers["1B200.31V/FIN-02"]["status"] == "sold_out"
    assert Decimal(offers["8H100.80S.176V/FIN-02"]["price"]) == Decimal("21.20")
    assert all(r["run_id"] == RUN_ID for r in result.feed)

    calls = result.calls
    assert calls[0].path == "/v1/oauth2/token"
    assert calls[0].json == {
        "grant_type": "client_credentials",
        "client_id": CLIENT_ID,
        "client_secret": SECRET,
    }
    data_calls = sorted(
        (c.path, c.query.get("is_spot"), c.headers.get("authorization")) for c in calls[1:]
    )
    bearer = f"Bearer {ACCESS_TOKEN}"
    assert data_calls == [
        ("/v1/instance-availability", "false", bearer),
        ("/v1/instance-availability", "true", bearer),
        ("/v1/instance-types", None, bearer),
        ("/v1/locations", None, bearer),
        ("/v1/volume-types", None, bearer),
    ]

    report = result.report
    assert report["auth"] == "ok"
    assert report["responses_by_status"] == {"200": 6}
    assert (report["offers"], report["quarantined"], report["pages_parsed"]) == (24, 0, 5)
    assert report["errors"] == [] and report["layout_errors"] == []
    assert report["missing_fields"] == []
    # The CPU-only type is no GPU offer: skipped and counted, the run is ok (rule 9).
    assert report["skipped"] == {"not_a_gpu_offer": 1}
    assert report["unread_keys"] == [] and report["unread_prefixes"] == []
    verdict = classify_run(report, returncode=0)
    assert (verdict.status, verdict.message) == (
        RunStatus.OK,
        "24 offers, 1 skipped (not_a_gpu_offer 1)",
    )
    assert_secrets_kept(result, SECRET, ACCESS_TOKEN)


def test_missing_credentials_send_nothing(
    server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ID_ENV, CLIENT_ID)
    monkeypatch.delenv(SECRET_ENV, raising=False)
    assert_auth_missing(crawl("verda", server, tmp_path), SECRET_ENV)


def refuse_the_credentials(routes: Routes) -> None:
    routes[0].update(status=401, body="token_refused.json")


@pytest.mark.usefixtures("credentials")
def test_refused_credentials_are_auth_rejected(tmp_path: Path) -> None:
    root = recordings_with_routes(tmp_path, "verda", refuse_the_credentials)
    result = crawl_scene("verda", tmp_path, root=root)
    assert result.returncode == 0, result.log[-2000:]
    assert [c.path for c in result.calls] == ["/v1/oauth2/token"]
    assert result.report["responses_by_status"] == {"401": 1}
    assert_auth_rejected(result, SECRET)


@pytest.mark.usefixtures("credentials")
def test_a_failed_side_answer_keeps_the_offers(tmp_path: Path) -> None:
    fault = Fault("verda", "/v1/locations", status=500)
    result = crawl_scene("verda", tmp_path, faults=[fault], settings={"RETRY_TIMES": "0"})
    assert result.returncode == 0, result.log[-2000:]
    # The availability answers still name every location.
    assert len(result.offers) == 24
    report = result.report
    assert report["requests_gave_up"] == 1 and "500 on /v1/locations" in report["errors"]
    assert report["pages_parsed"] == 4 and report["layout_errors"] == []
    # Which locations exist is the locations answer's to say: without it every offer is
    # unread (a location no other answer names keeps its offers, stale).
    assert report["unread_prefixes"] == [""]


@pytest.mark.usefixtures("credentials")
def test_failed_volume_types_leave_nothing_unread(tmp_path: Path) -> None:
    """The volume types price the storage fees of offers that are still read whole: their
    failure costs the fees, and no offer is kept from a listing that answered."""
    fault = Fault("verda", "/v1/volume-types", status=503)
    result = crawl_scene("verda", tmp_path, faults=[fault], settings={"RETRY_TIMES": "0"})
    assert len(result.offers) == 24 and all(o["fees"] == [] for o in result.offers.values())
    report = result.report
    assert report["requests_gave_up"] == 1
    assert report["unread_keys"] == [] and report["unread_prefixes"] == []
    assert classify_run(report, returncode=0).status is RunStatus.PARTIAL


GPU_OFFER_KEYS = sorted(
    f"{name}/{location}"
    for name in (
        "1H100.80S.30V",
        "8H100.80S.176V",
        "1H200.141S.44V",
        "1B200.31V",
        "1A100.22V",
        "1RTX6000ADA.10V",
        "1L40S.20V",
        "1V100.6V",
    )
    for location in ("FIN-01", "FIN-02", "ICE-01")
)


GPU_TYPE_PREFIXES = list(dict.fromkeys(f"{key.split('/')[0]}/" for key in GPU_OFFER_KEYS))


def stock_lines(result: Crawl) -> dict[str, str]:
    """The quarantine lines that stand in for offers whose stock could not be read."""
    return {
        q["offer_key"]: q["reason"] for q in result.quarantined if "stock unreadable" in q["reason"]
    }


@pytest.mark.usefixtures("credentials")
def test_unreadable_on_demand_availability_keeps_the_offers_out(tmp_path: Path) -> None:
    """Never stock `unknown` over the last good state: no offer, one line per offer, and a
    run the health rules do not feed into the latest state (rule of truth 2)."""

    def rename_on_demand_layout(routes: Routes) -> None:
        on_demand = next(r for r in routes if r.get("query") == {"is_spot": "false"})
        on_demand.pop("body")
        on_demand["body_text"] = json.dumps({"locations": []})  # a renamed layout

    root = recordings_with_routes(tmp_path, "verda", rename_on_demand_layout)
    result = crawl_scene("verda", tmp_path, root=root)
    assert result.returncode == 0, result.log[-2000:]
    assert result.offers == {}
    lines = stock_lines(result)
    assert sorted(lines) == GPU_OFFER_KEYS
    assert set(lines.values()) == {
        "missing_field: stock unreadable: on-demand availability answer unreadable"
    }
    report = result.report
    assert report["layout_errors"] and "is_spot=false" in report["layout_errors"][0]
    assert sorted(report["unread_prefixes"]) == GPU_TYPE_PREFIXES
    assert (
        "on-demand availability missing: offers kept out, last good state stays"
        in (report["notes"])
    )
    assert classify_run(report, returncode=0).status is RunStatus.LAYOUT_CHANGED


@pytest.mark.usefixtures("credentials")
def test_failed_on_demand_availability_keeps_the_offers_out(tmp_path: Path) -> None:
    def fail_on_demand(routes: Routes) -> None:
        on_demand = next(r for r in routes if r.get("query") == {"is_spot": "false"})
        on_demand.pop("body")
        on_demand.update(status=500, body_text=json.dumps({"code": "internal_error"}))

    root = recordings_with_routes(tmp_path, "verda", fail_on_demand)
    result = crawl_scene("verda", tmp_path, root=root, settings={"RETRY_TIMES": "0"})
    assert result.returncode == 0, result.log[-2000:]
    assert result.offers == {}
    lines = stock_lines(result)
    assert sorted(lines) == GPU_OFFER_KEYS
    assert set(lines.values()) == {
        "missing_field: stock unreadable: on-demand availability answer failed"
    }
    report = result.report
    assert report["requests_gave_up"] == 1
    # Each GPU type read is unread by prefix: a location only that answer would have named
    # keeps its offers too; a type no longer listed would be closed (not every offer kept).
    assert sorted(report["unread_prefixes"]) == GPU_TYPE_PREFIXES
    assert classify_run(report, returncode=0).status is RunStatus.FAILED


@pytest.mark.usefixtures("credentials")
def test_failed_spot_availability_leaves_the_spot_plans_out(tmp_path: Path) -> None:
    def fail_spot(routes: Routes) -> None:
        spot = next(r for r in routes if r.get("query") == {"is_spot": "true"})
        spot.pop("body")
        spot.update(status=500, body_text=json.dumps({"code": "internal_error"}))

    root = recordings_with_routes(tmp_path, "verda", fail_spot)
    result = crawl_scene("verda", tmp_path, root=root, settings={"RETRY_TIMES": "0"})
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    # The on-demand offers stand with their on-demand stock; no spot plan is guessed.
    assert len(offers) == 24 and all(o["plans"] == [] for o in offers.values())
    assert offers["1H100.80S.30V/FIN-01"]["status"] == "in_stock"
    assert offers["1B200.31V/FIN-02"]["status"] == "sold_out"
    lines = {q["offer_key"]: q["reason"] for q in result.quarantined if "spot plan" in q["reason"]}
    assert sorted(lines) == GPU_OFFER_KEYS  # every recorded GPU type publishes a spot price
    assert set(lines.values()) == {
        "missing_field: spot plan left out: spot availability answer failed"
    }
    # Spot decides plans of offers that are read: nothing is unread.
    assert result.report["unread_keys"] == [] and result.report["unread_prefixes"] == []
    assert classify_run(result.report, returncode=0).status is RunStatus.PARTIAL


@pytest.mark.usefixtures("credentials")
def test_an_availability_entry_that_lost_its_list_keeps_its_location_out(
    tmp_path: Path,
) -> None:
    def drop_fin02_list(routes: Routes) -> None:
        on_demand = next(r for r in routes if r.get("query") == {"is_spot": "false"})
        entries = json.loads((recordings_of("verda") / on_demand.pop("body")).read_text())
        entries[1]["availability"] = entries[1].pop("availabilities")  # FIN-02 renamed
        on_demand["body_text"] = json.dumps(entries)

    root = recordings_with_routes(tmp_path, "verda", drop_fin02_list)
    result = crawl_scene("verda", tmp_path, root=root)
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 16  # FIN-02's eight are kept out: their last good state stays
    assert not any(k.endswith("/FIN-02") for k in offers)
    assert offers["1H100.80S.30V/FIN-01"]["status"] == "in_stock"
    assert offers["1H100.80S.30V/ICE-01"]["status"] == "sold_out"
    lines = {q["offer_key"]: q["reason"] for q in result.quarantined}
    assert lines["on-demand-availability/FIN-02"] == "missing_field: key gone: availabilities"
    assert stock_lines(result) == {
        key: "missing_field: stock unreadable: key gone: availabilities"
        for key in GPU_OFFER_KEYS
        if key.endswith("/FIN-02")
    }
    report = result.report
    assert report["missing_fields"] == ["/v1/instance-availability?is_spot=false: availabilities"]
    assert report["layout_errors"] == []
    verdict = classify_run(report, returncode=0)
    assert verdict.status is RunStatus.PARTIAL
    assert "fields gone: /v1/instance-availability?is_spot=false: availabilities" in (
        verdict.message
    )


@pytest.mark.usefixtures("credentials")
def test_a_type_that_lost_its_price_costs_its_offers_and_is_reported(tmp_path: Path) -> None:
    def drop_one_price(routes: Routes) -> None:
        types_route = next(r for r in routes if r["path"] == "/v1/instance-types")
        types = json.loads((recordings_of("verda") / types_route.pop("body")).read_text())
        types[0]["hourly_price"] = types[0].pop("price_per_hour")  # 1H100.80S.30V
        types_route["body_text"] = json.dumps(types)

    root = recordings_with_routes(tmp_path, "verda", drop_one_price)
    result = crawl_scene("verda", tmp_path, root=root)
    assert len(result.offers) == 21  # 24 less the three of 1H100.80S.30V
    lost = sorted(q["offer_key"] for q in result.quarantined if "key gone" in q["reason"])
    assert lost == [f"1H100.80S.30V/{loc}" for loc in ("FIN-01", "FIN-02", "ICE-01")]
    report = result.report
    assert report["missing_fields"] == ["/v1/instance-types: price_per_hour"]
    assert classify_run(report, returncode=0).status is RunStatus.PARTIAL


def test_verda_is_a_plain_api_spider() -> None:
    assert_api_spider(
        VerdaSpider,
        home="FI",
        auth_env=("VERDA_CLIENT_ID", "VERDA_CLIENT_SECRET"),
        needs_auth=True,
    )
