"""`gpurent gpus`: the spec library through the CLI, in all three formats."""

from __future__ import annotations

import csv
import io
import json

import typer
from typer.testing import CliRunner

from gpurent.cli import gpus as gpus_cli
from gpurent_core.catalog import CSV_COLUMNS, get_catalog


def _app() -> typer.Typer:
    app = typer.Typer()
    app.add_typer(gpus_cli.app)

    @app.command("noop", hidden=True)
    def _noop() -> None:  # a second command keeps Typer from collapsing to a single command
        pass

    return app


runner = CliRunner()


def test_json_is_one_array_of_every_sku() -> None:
    result = runner.invoke(_app(), ["gpus", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert isinstance(rows, list) and len(rows) == len(get_catalog())
    h100 = next(r for r in rows if r["model"] == "H100" and r["form_factor"] == "SXM")
    assert h100["mem_bandwidth_gbps"] == "3350"  # Decimals as strings, like every gpurent JSON
    assert h100["vram_gb"] == 80 and h100["fp8"] is True
    assert isinstance(h100["source"], list) and h100["source"]
    assert (h100["compute_tflops"], h100["compute_basis"]) == ("989.5", "bf16")
    assert h100["fp8_dense_tflops"] == "1979"
    gtx = next(r for r in rows if r["model"] == "GTX 1070")
    assert (gtx["compute_tflops"], gtx["compute_basis"]) == ("6.46", "fp32")


def test_filters_by_vendor_and_min_vram() -> None:
    result = runner.invoke(_app(), ["gpus", "--vendor", "amd", "--min-vram", "192", "-f", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert {r["model"] for r in rows} == {"MI300X", "MI325X", "MI355X"}
    assert all(r["vendor"] == "AMD" and r["vram_gb"] >= 192 for r in rows)


def test_csv_has_catalog_columns_and_pipe_joined_lists() -> None:
    result = runner.invoke(_app(), ["gpus", "--vendor", "Huawei", "--format", "csv"])
    assert result.exit_code == 0, result.output
    reader = csv.DictReader(io.StringIO(result.stdout))
    assert tuple(reader.fieldnames or ()) == CSV_COLUMNS
    rows = list(reader)
    b2 = next(r for r in rows if r["model"] == "Ascend 910B2")
    assert "910B2" in b2["aliases"].split("|")
    assert b2["vram_gb"] == "64"


def test_table_for_people() -> None:
    result = runner.invoke(_app(), ["gpus", "--min-vram", "140"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "H200" in result.stdout and "MI300X" in result.stdout
    assert "RTX 4090" not in result.stdout
    modded = runner.invoke(_app(), ["gpus", "--min-vram", "48"], env={"COLUMNS": "200"})
    assert "RTX 4090 (modded)" in modded.stdout


def test_every_modded_board_is_flagged_in_table_and_json() -> None:
    table = runner.invoke(_app(), ["gpus", "--min-vram", "20"], env={"COLUMNS": "200"})
    assert table.exit_code == 0, table.output
    for model in ("RTX 4090", "RTX 4090D", "RTX 4080", "RTX 4080 SUPER", "RTX 3080", "RTX 2080 Ti"):
        assert f"{model} (modded)" in table.stdout
    rows = json.loads(runner.invoke(_app(), ["gpus", "-f", "json"]).stdout)
    modded = {(r["model"], r["vram_gb"]) for r in rows if r["modded"]}
    assert ("RTX 4080 SUPER", 32) in modded and ("RTX 4080 SUPER", 16) not in modded


def test_empty_selection_and_unknown_vendor() -> None:
    empty = runner.invoke(_app(), ["gpus", "--min-vram", "1000", "-f", "json"])
    assert empty.exit_code == 0 and json.loads(empty.stdout) == []
    bad = runner.invoke(_app(), ["gpus", "--vendor", "Acme"])
    assert bad.exit_code == 2
    assert "unknown vendor" in bad.output


def test_help_mentions_options() -> None:
    result = runner.invoke(_app(), ["gpus", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for option in ("--vendor", "--min-vram", "--format"):
        assert option in result.stdout


def test_table_shows_compute_and_marks_what_is_unknown() -> None:
    result = runner.invoke(_app(), ["gpus", "--min-vram", "32"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert "16-bit TFLOPS" in result.stdout and "FP8 TFLOPS" in result.stdout
    line = next(x for x in result.stdout.splitlines() if "RTX 5090 " in x and "32" in x)
    assert "209.5" in line and "419" in line
    ascend = next(x for x in result.stdout.splitlines() if "Ascend 910B2" in x)
    assert "?" in ascend  # unknown, never shown as empty or zero
    pascal = runner.invoke(_app(), ["gpus", "--vendor", "nvidia"], env={"COLUMNS": "250"})
    assert "6.46 (FP32)" in pascal.stdout and "125 (FP16)" in pascal.stdout
