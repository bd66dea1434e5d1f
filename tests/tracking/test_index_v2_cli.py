"""`gpurent index --method gpi-2` in process, the library API beside it, and a published day
reproduced byte for byte whatever is loaded after it, under gpi-2 and under gpi-3 (the
default since gpi-3: tests/tracking/test_index_gpi3.py; here the method is named)."""

from __future__ import annotations

import csv
import io
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import typer
from typer.testing import CliRunner

from gpurent import api
from gpurent.api import views
from gpurent.cli import tracking
from tests import cli_helpers
from tests.tracking.index_kit import build_market, day, load_later
from warehouse.index import INDEX_COLUMNS
from warehouse.index_v2 import COLUMNS

D = Decimal


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_market(tmp_path_factory.mktemp("index-v2"))


@pytest.fixture(autouse=True)
def _no_fx_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPURENT_FX", raising=False)


def table(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def export(db: Path, out: Path, *args: str) -> bytes:
    cli_helpers.invoke("index", "export", "--out", str(out), "--db", str(db), *args)
    return out.read_bytes()


def test_show_gpi_2_with_its_columns(db: Path) -> None:
    rows = cli_helpers.invoke_json(
        "index", "show", "--method", "gpi-2", "--db", str(db), "--to", str(day(1))
    )
    assert [list(r) for r in rows] == [list(COLUMNS)] * len(rows)
    assert [(r["gpu_model"], r["gpu_form_factor"], r["market"], r["price_kind"],
             r["currency"]) for r in rows] == [
        ("H100", "PCIe", "CN", "on_demand", "CNY"),
        ("H100", "PCIe", "intl", "on_demand", "USD"),
        ("H100", "SXM", "CN", "on_demand", "CNY"),
        ("H100", "SXM", "CN", "monthly", "CNY"),
        ("H100", "SXM", "intl", "on_demand", "USD"),
        ("H100", "SXM", "intl", "spot", "USD"),
        ("RTX 4090", None, "CN", "on_demand", "CNY"),
        ("RTX 4090", None, "intl", "on_demand", "USD"),
    ]  # fmt: skip
    sxm = rows[4]  # lambda 2.00, runpod 2.20, vastai 2.45
    assert (sxm["index_price"], sxm["p25"], sxm["p75"]) == ("2.200000", "2.100000", "2.325000")
    assert (sxm["n_offers"], sxm["n_providers"], sxm["in_stock_share"]) == (3, 3, "1.0000")
    assert (sxm["method_version"], sxm["withheld_reason"]) == ("gpi-2", None)
    monthly = rows[3]  # 80% of 14.00, 15.50, 16.00 an hour, by the month
    assert (monthly["index_price"], monthly["p25"], monthly["p75"]) == (
        "12.400000", "11.800000", "12.600000",
    )  # fmt: skip
    old = cli_helpers.invoke_json("index", "show", "--method", "gpi-1", "--db", str(db))
    assert {r["method_version"] for r in old} == {"gpi-1"}
    assert all(list(r) == list(INDEX_COLUMNS) for r in old)


def test_show_as_a_table(db: Path) -> None:
    text = cli_helpers.invoke(
        "index", "show", "--method", "gpi-2", "--db", str(db), "--gpu", "4090", "--currency", "USD"
    ).stdout
    assert "gpi-2" in text and "RTX 4090 24G (form ?)" in text
    assert "0.4400" in text  # lambda 0.40, runpod 0.44, vastai 0.49: the median
    assert "on-demand" in text and "intl" in text and "CN" in text


def test_export_has_the_method_on_every_row_and_a_chosen_currency(db: Path, tmp_path: Path) -> None:
    rows = table(export(db, tmp_path / "a.csv", "--method", "gpi-2").decode("utf-8"))
    assert list(rows[0]) == list(COLUMNS)
    assert {r["method_version"] for r in rows} == {"gpi-2"}
    assert {(r["market"], r["currency"]) for r in rows} == {("CN", "CNY"), ("intl", "USD")}
    assert {r["date"] for r in rows} == {str(day(1)), str(day(2))}
    unstated = [r for r in rows if r["gpu_model"] == "RTX 4090"]
    assert unstated and all(r["gpu_form_factor"] == "" for r in unstated)
    usd = table(
        export(db, tmp_path / "b.csv", "--method", "gpi-2", "--currency", "usd").decode("utf-8")
    )
    assert {r["currency"] for r in usd} == {"USD"} and len(usd) == len(rows)
    cn = next(r for r in usd if (r["market"], r["gpu_form_factor"], r["price_kind"]) ==
              ("CN", "SXM", "on_demand") and r["date"] == str(day(1)))  # fmt: skip
    assert D(cn["index_price"]) == D("2.183099")  # 15.50 CNY at the built-in 7.10
    v1 = table(export(db, tmp_path / "c.csv", "--method", "gpi-1").decode("utf-8"))
    assert list(v1[0]) == list(INDEX_COLUMNS) and {r["method_version"] for r in v1} == {"gpi-1"}


def test_an_unknown_method_is_refused(db: Path) -> None:
    app = typer.Typer()
    app.add_typer(tracking.app)
    result = CliRunner().invoke(app, ["index", "show", "--method", "gpi-9", "--db", str(db)])
    assert result.exit_code == 2
    assert "gpi-9" in result.output and "gpi-1" in result.output


# ---------------------------------------------------------------- the library API


def test_the_api_gives_either_method_as_typed_points(db: Path) -> None:
    points = api.index(db=db, gpu="H100", end=day(1), method="gpi-2")
    assert points and all(isinstance(p, api.IndexPoint) for p in points)
    assert {p.method_version for p in points} == {"gpi-2"}
    spot = next(p for p in points if p.price_kind == "spot")
    assert (spot.market, spot.gpu_form_factor, spot.currency) == ("intl", "SXM", "USD")
    assert (spot.index_price, spot.p25, spot.p75) == (D("1.1"), D("1.05"), D("1.1625"))
    assert isinstance(spot.index_price, Decimal) and spot.screened_out is None
    assert list(spot.as_row()) == list(COLUMNS)
    old = api.index(db=db, gpu="H100", end=day(1), method="gpi-1", currency="USD")
    assert [p.method_version for p in old] == ["gpi-1"]
    assert list(old[0].as_row()) == list(INDEX_COLUMNS)
    assert (old[0].price_kind, old[0].market, old[0].p25) == (None, None, None)
    with pytest.raises(api.BadFilter, match="unknown index method 'gpi-9'"):
        api.index(db=db, method="gpi-9")


def test_the_dashboard_frame_follows_the_method(db: Path) -> None:
    frame = views.index_frame(db, "USD", "gpi-2")
    assert frame.columns == list(COLUMNS) and frame.height == 16
    assert frame.schema["p25"] == pl.Decimal(18, 6)
    assert set(frame["currency"]) == {"USD"}
    assert frame.filter(pl.col("index_price").is_null()).height == 0
    assert set(views.index_frame(db, "USD", "gpi-1")["method_version"]) == {"gpi-1"}


# ---------------------------------------------------------------- a published day


def day_lines(data: bytes, when: str) -> list[bytes]:
    return [line for line in data.splitlines(keepends=True) if line.startswith(when.encode())]


@pytest.mark.parametrize("method", ["gpi-2", "gpi-3"])
def test_a_published_day_is_reproduced_byte_for_byte(
    method: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def export_by(db: Path, out: Path, *args: str) -> bytes:
        return export(db, out, "--method", method, *args)

    path = build_market(tmp_path / "wh")
    d1, d2, d3 = (str(day(n)) for n in (1, 2, 3))
    first = export_by(path, tmp_path / "1.csv", "--from", d1, "--to", d1)
    first_usd = export_by(path, tmp_path / "1u.csv", "--from", d1, "--to", d1, "--currency", "USD")
    assert {r["method_version"] for r in table(first.decode("utf-8"))} == {method}
    whole = export_by(path, tmp_path / "all.csv")
    second = export_by(path, tmp_path / "2.csv", "--from", d2, "--to", d2)
    assert first.count(b"\n") == 9 and b"\r" not in first  # header + 8 rows, "\n" endings
    assert export_by(path, tmp_path / "again.csv", "--from", d1, "--to", d1) == first
    assert day_lines(whole, d1) == first.splitlines(keepends=True)[1:]
    # Run on another day, with another clock: the same bytes.
    monkeypatch.setattr("gpurent_core.fx._today", lambda: day(400))
    assert export_by(path, tmp_path / "clock.csv", "--from", d1, "--to", d1) == first

    # Later: day 3's runs (an offer gone, one kept stale, a failed run), runpod's second
    # run of day 2 loaded after them, and an FX rate stored for a later date.
    load_later(path, tmp_path / "wh")
    from warehouse.db import connect
    from warehouse.fx import upsert_fx_rate

    con = connect(path)
    try:
        upsert_fx_rate(con, day(40), "USD", "CNY", D("6.5"), "test: a later rate")
    finally:
        con.close()

    assert export_by(path, tmp_path / "1b.csv", "--from", d1, "--to", d1) == first
    usd_again = export_by(path, tmp_path / "1ub.csv", "--from", d1, "--to", d1, "--currency", "USD")
    assert usd_again == first_usd
    later = export_by(path, tmp_path / "all-b.csv")
    assert day_lines(later, d1) == day_lines(whole, d1)
    # What came later did change the days it belongs to: the test could fail.
    assert export_by(path, tmp_path / "2b.csv", "--from", d2, "--to", d2) != second
    assert day_lines(later, d3) and not day_lines(whole, d3)
    before, after = (
        next(r for r in table(data.decode("utf-8")) if r["gpu_form_factor"] == "SXM"
             and r["market"] == "intl" and r["price_kind"] == "on_demand")
        for data in (second, export_by(path, tmp_path / "2c.csv", "--from", d2, "--to", d2))
    )  # fmt: skip
    # Day 2: lambda 2.01, runpod 2.21, vastai 2.46; runpod's late 11:00 run says 2.71.
    assert (before["index_price"], before["p75"]) == ("2.210000", "2.335000")
    assert (after["index_price"], after["p75"]) == ("2.460000", "2.585000")
    # The BOM is the only difference --excel-bom makes.
    bom = export_by(path, tmp_path / "bom.csv", "--from", d1, "--to", d1, "--excel-bom")
    assert bom == b"\xef\xbb\xbf" + first


def test_the_csv_cells_are_written_exactly() -> None:
    rows: list[dict[str, Any]] = [
        {"date": day(1), "index_price": D("2.5").quantize(D("0.000001")), "p25": None,
         "n_offers": 3, "gpu_form_factor": None, "in_stock_share": D("0.0000")},
    ]  # fmt: skip
    columns = ["date", "index_price", "p25", "n_offers", "gpu_form_factor", "in_stock_share"]
    text = tracking.index_csv(rows, columns)
    assert text == (
        "date,index_price,p25,n_offers,gpu_form_factor,in_stock_share\n"
        "2026-11-01,2.500000,,3,,0.0000\n"
    )
    assert re.fullmatch(r"[\x20-\x7e\n]*", text)
