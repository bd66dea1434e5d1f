"""`gpurent index`, `history`, `rank` and `demo` on a warehouse built here, run in-process."""

from __future__ import annotations

import csv
import io
import json
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from gpurent.cli import tracking
from gpurent_core.model import PriceBasis, RunStatus, StockStatus
from tests import cli_helpers
from tests.warehouse.wh_kit import FeedKit
from warehouse.db import connect
from warehouse.load import load_run

D = Decimal


def invoke(*args: str) -> Any:
    return cli_helpers.invoke(*args)


def invoke_json(*args: str) -> Any:
    return json.loads(invoke(*args, "--format", "json").stdout)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two providers over two days (2026-11-01/02): H100 at both, an RTX 4090 at acme."""
    root = tmp_path_factory.mktemp("tracking")
    kit = FeedKit(root)
    path = root / "gpurent.duckdb"
    con = connect(path)
    try:
        for n in (1, 2, 25):
            a, z = kit.run(n), kit.run(n, provider="zeta")
            busy = n == 2
            load_run(con, a, kit.write(f"a{n}", [
                kit.offer(a, "h1", price=D("2.00") + n / D(100),
                          status=StockStatus.SOLD_OUT if busy else StockStatus.IN_STOCK),
                kit.offer(a, "g1", gpu_model="RTX 4090", gpu_vram_gb=24, gpu_form_factor=None,
                          price=D("0.40"), available_count=None),
            ]))  # fmt: skip
            load_run(con, z, kit.write(f"z{n}", [
                kit.offer(z, "h", price=D("6.00"), price_basis=PriceBasis.INSTANCE, gpu_count=2),
            ]))  # fmt: skip
        load_run(con, kit.run(26, RunStatus.FAILED), None)
    finally:
        con.close()
    return path


def test_index_show_as_json_and_csv(db: Path) -> None:
    gpi1 = ("--method", "gpi-1")  # the default is gpi-3 (tests/tracking/test_index_gpi3.py)
    rows = invoke_json(
        "index", "show", *gpi1, "--db", str(db), "--gpu", "H100", "--currency", "USD"
    )
    assert [(r["date"], r["index_price"]) for r in rows] == [
        ("2026-11-01", "2.505000"),  # acme 2.01 (sold out at 10:00), zeta 6.00 for 2 cards
        ("2026-11-02", "2.625000"),  # acme 2.25, zeta 3.00
    ]
    first = rows[0]
    assert (first["n_offers"], first["n_providers"], first["method_version"]) == (2, 2, "gpi-1")
    assert first["in_stock_share"] == "1.0000"
    assert first["withheld_reason"] is None
    text = invoke("index", "show", *gpi1, "--db", str(db), "--format", "csv").stdout
    table = list(csv.DictReader(io.StringIO(text)))
    assert {(r["gpu_model"], r["currency"]) for r in table} == {
        ("H100", "CNY"), ("H100", "USD"), ("RTX 4090", "CNY"), ("RTX 4090", "USD"),
    }  # fmt: skip
    withheld = [r for r in table if r["gpu_model"] == "RTX 4090"]
    assert all(
        r["index_price"] == "" and "only 1 provider" in r["withheld_reason"] for r in withheld
    )
    shown = invoke("index", "show", *gpi1, "--db", str(db)).stdout
    assert "withheld" in shown and "H100 80G" in shown


def test_index_export_writes_utf8_csv_with_optional_bom(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "index.csv"
    invoke("index", "export", "--method", "gpi-1", "--out", str(out), "--db", str(db))
    data = out.read_bytes()
    assert not data.startswith(b"\xef\xbb\xbf")
    rows = list(csv.DictReader(io.StringIO(data.decode("utf-8"))))
    assert list(rows[0]) == tracking.index_columns(tracking.IndexMethod.GPI_1)
    assert {r["date"] for r in rows} == {"2026-11-01", "2026-11-02"}
    assert len(rows) == 2 * 2 * 2  # dates x GPUs x currencies

    bom = tmp_path / "excel.csv"
    invoke("index", "export", "--out", str(bom), "--excel-bom", "--currency", "cny", "--method",
           "gpi-1", "--gpu", "h100", "--from", "2026-11-02", "--to", "2026-11-02", "--db", str(db))  # fmt: skip
    raw = bom.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    (row,) = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"))))
    assert (row["date"], row["gpu_model"], row["currency"]) == ("2026-11-02", "H100", "CNY")
    assert D(row["index_price"]) == D("18.637500")  # (2.25 + 3.00) / 2 x 7.10


def test_history_by_day_offer_and_pattern(db: Path) -> None:
    days = invoke_json("history", "--gpu", "H100", "--provider", "acme", "--db", str(db))
    assert [(r["date"], r["polls"], r["free_share"]) for r in days] == [
        ("2026-11-01", 2, 0.5),  # sold out at the second poll
        ("2026-11-02", 1, 1.0),
    ]
    changes = invoke_json("history", "--gpu", "H100", "--by", "offer", "--db", str(db))
    acme = [c for c in changes if c["provider"] == "acme"]
    assert [c["status"] for c in acme] == ["in_stock", "sold_out", "in_stock"]
    assert {c["price_per_gpu_hour"] for c in changes if c["provider"] == "zeta"} == {"3.000000"}
    pattern = invoke_json("history", "--gpu", "H100", "--by", "pattern", "--db", str(db))
    assert {(p["provider"], p["timezone"]) for p in pattern} == {
        ("acme", "Asia/Shanghai"), ("acme", "UTC"), ("zeta", "Asia/Shanghai"), ("zeta", "UTC"),
    }  # fmt: skip
    assert all(len(p["free_share_by_hour_of_week"]) == 168 for p in pattern)
    table = invoke("history", "--gpu", "H100", "--db", str(db)).stdout
    assert "H100 on zeta" in table  # the pattern sentence follows the table


def test_history_patterns_say_what_backs_them(db: Path) -> None:
    # Three polls over two days: far below the minimum, so no hour is claimed.
    pattern = invoke_json("history", "--gpu", "H100", "--by", "pattern", "--db", str(db))
    acme = next(p for p in pattern if p["provider"] == "acme" and p["timezone"] == "UTC")
    assert (acme["polls"], acme["days"], acme["enough_history"]) == (3, 2, False)
    assert acme["usually_free"] == ""
    assert "not enough history (3 polls over 2 days" in acme["summary"]
    assert sum(acme["polls_by_hour_of_week"]) == 3 and len(acme["days_by_hour_of_week"]) == 168
    assert set(acme["free_share_by_hour_of_week"]) == {None}
    table = invoke("history", "--gpu", "H100", "--by", "pattern", "--db", str(db)).stdout
    assert "not enough history" in table and "polls_by_hour" not in table


def test_rank_puts_the_catalog_beside_the_market(db: Path) -> None:
    rows = {r["gpu_model"]: r for r in invoke_json("rank", "--currency", "USD", "--db", str(db))}
    h100 = rows["H100"]
    assert (h100["form_factor"], h100["mem_bandwidth_gbps"], h100["bf16_dense_tflops"]) == (
        "SXM", "3350", "989.5",
    )  # fmt: skip
    assert h100["fp8"] is True and "NVLink" in h100["interconnect"]
    # acme's latest run failed: its H100 and RTX 4090 are stale, left out (rule of truth 11);
    # zeta's H100 alone is confirmed.
    assert (h100["in_stock_share"], h100["providers"], h100["cost_currency"]) == (1.0, 1, "USD")
    assert h100["perf_rank"] == 1 and h100["stale_left_out"] == 1
    assert "RTX 4090" not in rows
    assert {r["heat_rank"] for r in rows.values()} == {1}
    table = invoke("rank", "--db", str(db)).stdout
    assert "performance vs rental heat" in table
    assert "2 offers not confirmed by their provider's latest run left out" in table


def test_rank_splits_form_factors_and_never_ranks_an_unknown_as_zero(tmp_path: Path) -> None:
    kit = FeedKit(tmp_path)
    path = tmp_path / "rank.duckdb"
    con = connect(path)
    try:
        run = kit.run(1)
        load_run(con, run, kit.write("cards", [
            kit.offer(run, "sxm"),
            kit.offer(run, "pcie", gpu_form_factor="PCIe", price=D("1.99")),
            kit.offer(run, "unsaid", gpu_form_factor=None),
            kit.offer(run, "5090", gpu_model="RTX 5090", gpu_vram_gb=32, gpu_form_factor=None),
            kit.offer(run, "1070", gpu_model="GTX 1070", gpu_vram_gb=8, gpu_form_factor=None),
            kit.offer(run, "910b", gpu_vendor="huawei", gpu_model="Ascend 910B",
                      gpu_vram_gb=64, gpu_form_factor=None),
        ]))  # fmt: skip
    finally:
        con.close()
    app = typer.Typer()
    app.add_typer(tracking.app)  # the rank command alone

    def rank(*args: str) -> str:
        result = CliRunner().invoke(app, ["rank", "--db", str(path), *args],
                                    env={"COLUMNS": "200"})  # fmt: skip
        assert result.exit_code == 0, result.output
        return result.stdout

    rows = json.loads(rank("--currency", "USD", "--format", "json"))
    by = {(r["gpu_model"], r["form_factor"]): r for r in rows}
    sxm, pcie, unsaid = by[("H100", "SXM")], by[("H100", "PCIe")], by[("H100", None)]
    assert (sxm["mem_bandwidth_gbps"], pcie["mem_bandwidth_gbps"]) == ("3350", "2000")
    assert sxm["perf_rank"] < pcie["perf_rank"]
    # An offer that does not say its form factor is shown as the slowest it can be.
    assert unsaid["figures_of"] == "H100 80GB PCIe"
    # Before: no BF16 figure for the RTX 5090, so it ranked below a GTX 1070.
    assert by[("RTX 5090", None)]["perf_rank"] < by[("GTX 1070", None)]["perf_rank"]
    assert by[("GTX 1070", None)]["compute_basis"] == "fp32"
    ascend = by[("Ascend 910B", None)]
    assert ascend["perf_rank"] is None and ascend["compute_tflops"] is None
    assert rows[-1] is not None and rows[-1]["gpu_model"] == "Ascend 910B"  # apart, last
    lines = rank().splitlines()
    assert any("H100 SXM 80G" in x for x in lines) and any("H100 PCIe 80G" in x for x in lines)
    assert any("H100 80G (form ?)" in x for x in lines)
    last = [x for x in lines if "Ascend 910B" in x]
    assert last and "?" in last[0].split("│")[1]  # perf "?" and not a number


def test_every_command_has_help() -> None:
    for args in (["index", "show"], ["index", "export"], ["history"], ["rank"], ["demo"]):
        assert "Usage" in invoke(*args, "--help").stdout


def test_demo_refuses_an_existing_database(db: Path) -> None:
    app = typer.Typer()
    app.add_typer(tracking.app)
    result = CliRunner().invoke(app, ["demo", "--db", str(db)])
    assert result.exit_code == 2
    assert "already exists" in result.output


def test_read_commands_need_a_database(tmp_path: Path) -> None:
    app = typer.Typer()
    app.add_typer(tracking.app)
    result = CliRunner().invoke(app, ["rank", "--db", str(tmp_path / "none.duckdb")])
    assert result.exit_code == 2
    assert "No database" in result.output


def test_dates_of_the_history_window(db: Path) -> None:
    rows = invoke_json("history", "--gpu", "H100", "--from", "2026-11-02", "--db", str(db))
    assert {r["date"] for r in rows} == {"2026-11-02"}
    assert invoke_json("index", "show", "--to", "2026-10-01", "--db", str(db)) == []


def refused(app: typer.Typer, *args: str) -> str:
    """What a refused command says (exit 2), on one line, without the error box's frame."""
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "400"})
    assert result.exit_code == 2, result.output
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.output).split())


def test_history_reads_gpu_names_as_offers_does(db: Path) -> None:
    # A provider's spelling, as `offers --gpu` takes it: "4090" is the RTX 4090.
    days = invoke_json("history", "--gpu", "4090", "--provider", "acme", "--db", str(db))
    assert [r["date"] for r in days] == ["2026-11-01", "2026-11-02"]
    assert invoke_json("history", "--gpu", "rtx4090", "--db", str(db)) == invoke_json(
        "history", "--gpu", "RTX 4090", "--db", str(db)
    )
    app = typer.Typer()
    app.add_typer(tracking.app)
    wrong = refused(app, "history", "--gpu", "4090x", "--db", str(db))
    assert "did you mean RTX 4090" in wrong
    typo = refused(app, "history", "--gpu", "H100", "--provider", "acmee", "--db", str(db))
    assert "did you mean acme" in typo


def test_index_export_refuses_a_folder_that_does_not_exist(db: Path, tmp_path: Path) -> None:
    app = typer.Typer()
    app.add_typer(tracking.app)
    out = tmp_path / "no" / "such" / "index.csv"
    said = refused(app, "index", "export", "--out", str(out), "--db", str(db))
    assert f"the folder {out.parent} does not exist" in said
    assert not (tmp_path / "no").exists()  # a mistyped folder is not created
    folder = refused(app, "index", "export", "--out", str(tmp_path), "--db", str(db))
    assert "is a folder" in folder


def test_index_export_never_writes_over_the_warehouse_or_a_database(
    db: Path, tmp_path: Path
) -> None:
    """Audit (CLI): `index export --out W --db W` turned the 8 MB warehouse into a CSV."""
    import shutil

    app = typer.Typer()
    app.add_typer(tracking.app)
    before = db.read_bytes()
    itself = refused(app, "index", "export", "--out", str(db), "--db", str(db))
    assert "is the warehouse itself" in itself
    wal = refused(app, "index", "export", "--out", f"{db}.wal", "--db", str(db))
    assert "is the warehouse itself" in wal
    other = tmp_path / "another.duckdb"
    shutil.copy(db, other)
    said = refused(app, "index", "export", "--out", str(other), "--db", str(db))
    assert "is a DuckDB database" in said
    assert db.read_bytes() == before and other.read_bytes() == before
    csv = tmp_path / "index.csv"
    csv.write_text("an earlier export\n", encoding="utf-8")
    CliRunner().invoke(app, ["index", "export", "--out", str(csv), "--db", str(db)])
    assert csv.read_text(encoding="utf-8").startswith("date,"), "a CSV is replaced"


def test_from_after_to_is_refused_not_an_empty_answer(db: Path, tmp_path: Path) -> None:
    """Audit (CLI): `history --from 2026-12-01 --to 2026-11-01` said "No history of RTX 4090
    yet (check the name)"; `index export` wrote 0 rows and exited 0."""
    app = typer.Typer()
    app.add_typer(tracking.app)
    reversed_span = ["--from", "2026-12-10", "--to", "2026-12-01", "--db", str(db)]
    for command in (
        ["history", "--gpu", "4090"],
        ["index", "show"],
        ["index", "export", "--out", str(tmp_path / "i.csv")],
    ):
        said = refused(app, *command, *reversed_span)
        assert "2026-12-10 is after --to 2026-12-01" in said, command
    assert not (tmp_path / "i.csv").exists()
