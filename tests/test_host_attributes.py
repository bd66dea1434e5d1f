"""What the host publishes about itself (issue 32): CUDA and driver versions, interconnect,
reliability, hosting, the longest rental, vCPUs / RAM / disk per GPU.

From the parsers through the feed and the warehouse (null where not published, old feed
lines load, a change is a new version, a reload is not) to the filters of `offers`,
`cheapest`, the library API and `size --interconnect nvlink`.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest

from gpurent import api
from gpurent_core.enums import Hosting, Interconnect
from gpurent_core.host import HOST_FIELDS, HostFilter, cuda_version, version_tuple
from gpurent_core.model import PriceBasis
from spiders.parsers.common import ParseContext, feed_dicts
from tests.cli_helpers import invoke, invoke_json
from tests.warehouse.wh_kit import FeedKit
from warehouse.db import writing
from warehouse.load import load_run
from warehouse.migrations import migrate

D = Decimal
VAST = {
    "cuda_version": "12.4",
    "driver_version": "550.54.15",
    "interconnect": Interconnect.NVLINK,
    "nvlink_gbps": D("400"),
    "host_reliability": D("0.995"),
    "hosting": Hosting.VERIFIED,
    "max_rental_hours": 720,
    "vcpus_per_gpu": D("8"),
    "ram_gb_per_gpu": D("32.1"),
    "disk_gb_per_gpu": D("1000"),
}


# ---------------------------------------------------------------- versions and filters


def test_cuda_versions_compare_as_numbers() -> None:
    assert version_tuple("12.10") > version_tuple("12.9")
    assert cuda_version(D("12.4")) == "12.4"
    assert cuda_version(12.4) == "12.4"
    assert cuda_version("CUDA 12.2") == "12.2"
    assert cuda_version("cuda11.8") == "11.8"
    assert cuda_version("n/a") is None and cuda_version(None) is None
    with pytest.raises(ValueError):
        HostFilter(min_cuda="twelve")
    with pytest.raises(ValueError):
        HostFilter(min_reliability=D("1.5"))


# ---------------------------------------------------------------- the warehouse


def _state(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, Any]]:
    rows = con.execute(
        f"SELECT offer_key, {', '.join(HOST_FIELDS)} FROM latest_offers ORDER BY offer_key"
    ).fetchall()
    return {r[0]: dict(zip(HOST_FIELDS, r[1:], strict=True)) for r in rows}


def test_host_fields_survive_the_load_and_are_null_where_unpublished(tmp_path: Path) -> None:
    kit = FeedKit(tmp_path)
    con = duckdb.connect()
    migrate(con)
    r1 = kit.run(1)
    old = kit.offer(r1, "old").model_dump(mode="json")
    for name in HOST_FIELDS:  # a line an older spider wrote: no such keys at all
        del old[name]
    feed = kit.write("r1", [kit.offer(r1, "vast", **VAST), kit.offer(r1, "bare"), json.dumps(old)])
    load_run(con, r1, feed)
    state = _state(con)
    assert state["vast"]["cuda_version"] == "12.4"
    assert state["vast"]["interconnect"] == "nvlink"
    assert state["vast"]["hosting"] == "verified"
    assert state["vast"]["host_reliability"] == D("0.995")
    assert state["vast"]["max_rental_hours"] == 720
    assert state["vast"]["ram_gb_per_gpu"] == D("32.1")
    assert all(v is None for v in state["bare"].values())
    assert all(v is None for v in state["old"].values())
    versions = con.execute("SELECT count(*) FROM version_rows").fetchone()
    # The same offers again: nothing changes; a host that changes its CUDA is a new version.
    r2 = kit.run(2)
    load_run(con, r2, kit.write("r2", [
        kit.offer(r2, "vast", **VAST), kit.offer(r2, "bare"), kit.offer(r2, "old"),
    ]))  # fmt: skip
    assert con.execute("SELECT count(*) FROM version_rows").fetchone() == versions
    r3 = kit.run(3)
    load_run(con, r3, kit.write("r3", [
        kit.offer(r3, "vast", **VAST | {"cuda_version": "12.8"}), kit.offer(r3, "bare"),
        kit.offer(r3, "old"),
    ]))  # fmt: skip
    assert _state(con)["vast"]["cuda_version"] == "12.8"
    rows = con.execute(
        "SELECT cuda_version, valid_to IS NULL FROM version_rows WHERE offer_key = 'vast'"
        " ORDER BY valid_from"
    ).fetchall()
    assert rows == [("12.4", False), ("12.8", True)]


def test_an_older_warehouse_upgrades_and_keeps_its_offers_unchanged(tmp_path: Path) -> None:
    kit = FeedKit(tmp_path)
    con = duckdb.connect()
    migrate(con)
    r1 = kit.run(1)
    load_run(con, r1, kit.write("r1", [kit.offer(r1, "a"), kit.offer(r1, "b")]))
    # As a warehouse before migration 20 hashed its offers: without the host attributes.
    con.execute(
        "UPDATE current_offers SET content_hash = hash(hash(gpu_vendor, gpu_model,"
        " gpu_vram_gb, gpu_form_factor, gpu_count, raw_gpu_name, status, available_count,"
        " price, currency, billing_unit, price_basis, price_kind, region, url), fee_hash,"
        " plan_hash)"
    )
    con.execute("DELETE FROM schema_migrations WHERE version = 20")
    assert migrate(con) == [20]
    r2 = kit.run(2)
    load_run(con, r2, kit.write("r2", [kit.offer(r2, "a"), kit.offer(r2, "b")]))
    # The hashes moved to the new form: the same offers open no new version.
    assert con.execute("SELECT count(*) FROM version_rows").fetchone() == (2,)


# ---------------------------------------------------------------- offers, cheapest, the API


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("host")
    kit = FeedKit(root)
    path = root / "gpurent.duckdb"
    with writing(path) as con:
        v = kit.run(1, provider="vastai")
        load_run(con, v, kit.write("v", [
            kit.offer(v, "nv", **VAST, price=D("2.00"), fees=(), plans=()),
            kit.offer(v, "sxm", **VAST | {"cuda_version": "12.10", "interconnect": "sxm",
                                           "hosting": Hosting.SECURE}, price=D("2.10"),
                      fees=(), plans=()),
            kit.offer(v, "old-cuda", **VAST | {"cuda_version": "12.2", "interconnect": "pcie",
                                                "hosting": Hosting.COMMUNITY,
                                                "host_reliability": D("0.9")},
                      gpu_form_factor="PCIe", price=D("1.50"), fees=(), plans=()),
        ]))  # fmt: skip
        lam = kit.run(1, provider="lambda")
        load_run(con, lam, kit.write("l", [
            kit.offer(lam, "says-nothing", price=D("1.00"), fees=(), plans=()),
        ]))  # fmt: skip
    return path


def _keys(found: list[api.Offer]) -> list[str]:
    return [o.offer_key for o in found]


def test_the_api_filters_on_what_hosts_publish_and_counts_the_rest(db: Path) -> None:
    everything = api.offers(db=db)
    assert _keys(everything) == ["says-nothing", "old-cuda", "nv", "sxm"]
    nv = next(o for o in everything if o.offer_key == "nv")
    assert (nv.cuda_version, nv.interconnect, nv.hosting) == ("12.4", "nvlink", "verified")
    assert nv.host_reliability == D("0.995") and nv.vcpus_per_gpu == D("8")
    assert next(o for o in everything if o.offer_key == "says-nothing").cuda_version is None
    assert everything.unpublished_left_out == 0

    cuda = api.offers(db=db, min_cuda="12.4")
    assert _keys(cuda) == ["nv", "sxm"]  # 12.10 is above 12.4; 12.2 is not
    assert cuda.unpublished_left_out == 1  # lambda does not say
    assert _keys(api.offers(db=db, min_cuda="12.9")) == ["sxm"]
    assert _keys(api.offers(db=db, interconnect="nvlink")) == ["nv", "sxm"]
    assert _keys(api.offers(db=db, interconnect="pcie")) == ["old-cuda"]
    assert _keys(api.offers(db=db, hosting="verified")) == ["nv", "sxm"]  # secure is vetted too
    assert _keys(api.offers(db=db, hosting="secure")) == ["sxm"]
    assert _keys(api.offers(db=db, min_reliability="0.99")) == ["nv", "sxm"]
    assert _keys(api.offers(db=db, min_vcpus_per_gpu=8, min_ram_gb_per_gpu=32)) == [
        "old-cuda", "nv", "sxm",
    ]  # fmt: skip
    assert _keys(api.offers(db=db, min_ram_gb_per_gpu=64)) == []
    cheapest = api.cheapest(40, db=db, min_cuda="12.4", interconnect="nvlink")
    assert _keys(cheapest) == ["nv", "sxm"]
    assert cheapest.unpublished_left_out == 1


def test_a_filter_value_that_cannot_be_read_is_refused(db: Path) -> None:
    with pytest.raises(api.BadFilter) as bad:
        api.offers(db=db, min_cuda="twelve")
    assert bad.value.argument == "min_cuda"
    with pytest.raises(api.BadFilter):
        api.cheapest(40, db=db, interconnect="infiniband")
    with pytest.raises(api.BadFilter):
        api.offers(db=db, min_reliability="1.5")


def test_the_cli_filters_shows_and_counts(db: Path) -> None:
    rows = invoke_json("cheapest", "--min-vram", "40", "--db", str(db), "--min-cuda", "12.4")
    assert [r["offer_key"] for r in rows] == ["nv", "sxm"]
    assert rows[0]["cuda_version"] == "12.4" and rows[0]["nvlink_gbps"] == "400"
    # Every host attribute is a JSON column, null where not published.
    plain = invoke_json("offers", "--db", str(db))
    assert all(set(HOST_FIELDS) <= set(r) for r in plain)
    assert next(r for r in plain if r["offer_key"] == "says-nothing")["interconnect"] is None
    table = invoke(
        "offers", "--db", str(db), "--interconnect", "nvlink", "--hosting", "secure"
    ).output
    assert "sxm" in table and "1 offer left out" in table and "--interconnect" in table
    assert invoke("cheapest", "--help").output.count("--min-cuda") >= 1
    for option in ("--min-cuda", "--interconnect", "--min-reliability", "--hosting",
                   "--min-vcpus-per-gpu", "--min-ram-per-gpu"):  # fmt: skip
        assert option in invoke("offers", "--help").output


def test_wide_shows_every_published_host_attribute_and_nothing_for_the_silent(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "240")  # --wide is wider than 80 columns by design
    plain = invoke("offers", "--db", str(db)).output
    assert "host" not in plain.split("\n")[2]  # no host column unless asked
    lines = invoke("offers", "--db", str(db), "--wide").output.splitlines()
    header = next(line for line in lines if " host " in line)
    assert "host" in header
    ids = {r["offer_key"]: r["offer_id"] for r in invoke_json("offers", "--db", str(db))}
    row_of = {
        key: next(line for line in lines if ids[key] in line)
        for key in ("old-cuda", "says-nothing")
    }
    cell = row_of["old-cuda"].rsplit("│", 2)[-2]
    # Every attribute the offer publishes, unasked: CUDA, interconnect, score, hosting.
    for shown in ("CUDA 12.2", "pcie", "90.0%", "community"):
        assert shown in cell, shown
    assert row_of["says-nothing"].rsplit("│", 2)[-2].strip() == ""


def test_a_bad_cli_filter_is_a_usage_error(db: Path) -> None:
    from typer.testing import CliRunner

    from gpurent.cli.app import build_app

    result = CliRunner().invoke(build_app(), ["offers", "--db", str(db), "--min-cuda", "twelve"])
    assert result.exit_code == 2
    assert "--min-cuda" in result.output


# ---------------------------------------------------------------- size --interconnect nvlink


@pytest.fixture(scope="module")
def big_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("size-host")
    kit = FeedKit(root)
    path = root / "gpurent.duckdb"
    machine: dict[str, Any] = {
        "gpu_count": 8, "price_basis": PriceBasis.INSTANCE, "available_count": 8,
        "fees": (), "plans": (),
    }  # fmt: skip
    with writing(path) as con:
        r = kit.run(1, provider="vastai")
        load_run(con, r, kit.write("r", [
            kit.offer(r, "pcie-x8", gpu_form_factor="PCIe", interconnect="pcie",
                      price=D("8"), **machine),
            kit.offer(r, "unsaid-x8", gpu_form_factor=None, price=D("9"), **machine),
            kit.offer(r, "sxm-x8", interconnect="sxm", price=D("20"), **machine),
        ]))  # fmt: skip
    return path


def test_size_interconnect_nvlink_leaves_out_multi_card_placements_without_nvlink(
    big_db: Path,
) -> None:
    ask: dict[str, Any] = {
        "params_b": 70, "precision": "bf16", "prompt_tokens": 1024, "gen_tokens": 256,
        "db": big_db, "limit": 10,
    }  # fmt: skip
    every = api.size(**ask)
    assert {o.offer_key for o in every.offers} >= {"pcie-x8", "sxm-x8"}
    assert all(o.tensor_parallel > 1 for o in every.offers)  # 140 GB: never one card
    nvlink = api.size(**ask, interconnect="nvlink")
    assert {o.offer_key for o in nvlink.offers} == {"sxm-x8"}
    assert nvlink.offers[0].interconnect == "sxm"
    assert any("NVLink" in n for n in nvlink.notes)
    with pytest.raises(api.BadFilter):
        api.size(**ask, interconnect="pcie")
    cli = invoke_json(
        "size", "--params-b", "70", "--precision", "bf16", "--prompt-tokens", "1024",
        "--gen-tokens", "256", "--db", str(big_db), "--interconnect", "nvlink",
    )  # fmt: skip
    assert {o["offer_key"] for o in cli["offers"]} == {"sxm-x8"}


def test_the_dashboards_size_form_can_require_nvlink(big_db: Path) -> None:
    from dashboards.sizer import SizeRequest, size_workload

    ask = SizeRequest("Llama-3.1-70B", prompt_tokens=1024, gen_tokens=256)
    assert {o.offer_key for o in size_workload(big_db, ask).offers} >= {"pcie-x8", "sxm-x8"}
    nvlink = size_workload(big_db, replace(ask, require_nvlink=True))
    assert {o.offer_key for o in nvlink.offers} == {"sxm-x8"}
    assert any("NVLink" in n for n in nvlink.notes)


# ---------------------------------------------------------------- the parsers


CTX = ParseContext("vastai", "run-1", datetime(2026, 12, 1, tzinfo=UTC))


def test_vast_reads_nvlink_driver_reliability_and_per_gpu_shares() -> None:
    from spiders.providers.vastai.parser import _host

    offer = {
        "cuda_max_good": D("12.4"), "driver_version": " 550.54.15 ", "bw_nvlink": D("397.6"),
        "reliability2": D("0.99871"), "hosting_type": 0, "verification": "deverified",
        "cpu_cores_effective": D("16.0"), "cpu_ram": 515000, "gpu_frac": D("0.25"),
        "disk_space": D("1200.0"), "duration": D("200000.5"),
    }  # fmt: skip
    host = _host(offer, 2)
    assert host["cuda_version"] == "12.4" and host["driver_version"] == "550.54.15"
    assert host["interconnect"] is Interconnect.NVLINK and host["nvlink_gbps"] == D("398")
    assert host["host_reliability"] == D("0.999")
    assert host["hosting"] is Hosting.COMMUNITY
    assert host["max_rental_hours"] == 48  # 2.3 days: whole days only
    assert host["vcpus_per_gpu"] == D("8") and host["disk_gb_per_gpu"] == D("600")
    assert host["ram_gb_per_gpu"] == D("64.4")  # a quarter of 515 GB, over 2 cards
    # Nothing published, nothing said; a datacenter host is secure.
    bare = _host({"hosting_type": 1, "bw_nvlink": 0, "reliability2": "n/a"}, 1)
    assert bare["hosting"] is Hosting.SECURE
    assert bare["interconnect"] is None and bare["nvlink_gbps"] is None
    assert bare["host_reliability"] is None and bare["vcpus_per_gpu"] is None


def test_autodl_nvlink_machine_types_and_cuda() -> None:
    from spiders.providers.autodl import parser

    machine = {
        "machine_id": "m1", "region_name": "北京A区", "gpu_name": "A800-80G-NVLink",
        "gpu_all_num": 8, "gpu_number": 8, "gpu_idle_num": 8, "gpu_order_num": 8, "payg": True,
        "payg_price": 5980,
        "highest_cuda_version": "12.2", "cpu_per_gpu": 14, "mem_per_gpu": 107374182400,
    }  # fmt: skip
    records = feed_dicts(
        parser.machine_records(machine, ParseContext("autodl", "run-1", CTX.observed_at))
    )
    offer = next(r for r in records if r["kind"] == "offer")
    assert offer["interconnect"] == "nvlink" and offer["cuda_version"] == "12.2"
    assert offer["vcpus_per_gpu"] == "14" and offer["ram_gb_per_gpu"] == "100"


def test_form_factor_states_the_interconnect_and_nothing_else_does() -> None:
    from gpurent_core.host import form_interconnect

    assert form_interconnect("SXM") is Interconnect.SXM
    assert form_interconnect("NVL") is Interconnect.NVLINK
    assert form_interconnect("PCIe") is Interconnect.PCIE
    assert form_interconnect("OAM") is None and form_interconnect(None) is None
