"""`gpurent normalize ...` through Typer's CliRunner, on an app holding only the normalize group."""

from __future__ import annotations

import json
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from gpurent.cli.normalize import app as normalize_commands


@pytest.fixture()
def app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """Keeps 'normalize' a subcommand even with a single group registered."""

    app.add_typer(normalize_commands)
    return app


def _run(app: typer.Typer, *args: str, stdin: str | None = None) -> list[dict[str, Any]]:
    result = CliRunner().invoke(app, ["normalize", *args], input=stdin)
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_price_lines(app: typer.Typer) -> None:
    lines = _run(
        app, "price", "¥1.98/时 会员¥1.88/时", "$2.49 / GPU / hr", "¥0.01/GB/天", "RTX 4090"
    )
    assert lines == [
        {
            "input": "¥1.98/时 会员¥1.88/时",
            "amount": "1.98",
            "currency": "CNY",
            "unit": "hour",
            "basis": None,
        },
        {
            "input": "$2.49 / GPU / hr",
            "amount": "2.49",
            "currency": "USD",
            "unit": "hour",
            "basis": "gpu",
        },
        {"input": "¥0.01/GB/天", "amount": "0.01", "currency": "CNY", "unit": "day", "basis": "gb"},
        {"input": "RTX 4090", "error": "no currency or unit next to any number"},
    ]


def test_price_amount_is_a_plain_decimal_string(app: typer.Typer) -> None:
    (line,) = _run(app, "price", "¥0.00003/GB/时")
    assert line["amount"] == "0.00003"  # never 3E-5, never a float


def test_price_default_currency(app: typer.Typer) -> None:
    assert _run(app, "price", "1.98/h")[0] == {
        "input": "1.98/h",
        "error": "no currency (and no default currency given)",
    }
    assert _run(app, "price", "--currency", "cny", "1.98/h")[0]["currency"] == "CNY"
    assert _run(app, "price", "--currency", "CNY", "--unit", "hour", "2.72")[0]["amount"] == "2.72"


def test_price_rejects_a_bad_currency_option(app: typer.Typer) -> None:
    result = CliRunner().invoke(app, ["normalize", "price", "--currency", "yuan", "1.98/h"])
    assert result.exit_code != 0


def test_price_from_stdin(app: typer.Typer) -> None:
    lines = _run(app, "price", "-", stdin="¥1.98/时\n\n$0.34/hr\npayg_price: 2720\n")
    assert [(line["input"], line["amount"]) for line in lines] == [
        ("¥1.98/时", "1.98"),
        ("$0.34/hr", "0.34"),
        ("payg_price: 2720", "2.72"),
    ]


def test_availability_lines(app: typer.Typer) -> None:
    lines = _run(app, "availability", "空闲 3/8", "已租满", "High", "whatever")
    assert lines == [
        {"input": "空闲 3/8", "status": "in_stock", "available_count": 3},
        {"input": "已租满", "status": "sold_out", "available_count": 0},
        {"input": "High", "status": "in_stock", "available_count": None},
        {"input": "whatever", "status": "unknown", "available_count": None},
    ]


def test_availability_from_stdin(app: typer.Typer) -> None:
    lines = _run(app, "availability", "-", stdin="空闲0/8\r\n库存紧张\r\n")
    assert [(line["status"], line["available_count"]) for line in lines] == [
        ("sold_out", 0),
        ("low", None),
    ]


def test_availability_negated_and_restocking_phrases(app: typer.Typer) -> None:
    lines = _run(app, "availability", "No GPUs available", "暂无可用GPU", "补货中", "可用(3)")
    assert [(line["status"], line["available_count"]) for line in lines] == [
        ("sold_out", 0),
        ("sold_out", 0),
        ("sold_out", 0),
        ("in_stock", 3),
    ]


def test_price_drifted_numbers_are_error_lines(app: typer.Typer) -> None:
    lines = _run(
        app, "price", "¥1e400/h", "$1..5/hr", "¥3/0h", "payg_price: 99999999999999999999999999"
    )
    assert [line.get("error") for line in lines] == [
        "exponent notation '1e400'",
        "malformed number '1..5'",
        "divided by zero",
        "amount too large to be a price: '99999999999999999999999999'",
    ]


def test_gpu_lines(app: typer.Typer) -> None:
    resolved, unresolved = _run(app, "gpu", "NVIDIA GeForce RTX 4090", "Frobnitz 9000")
    assert set(resolved) == {"input", "vendor", "model", "vram_gb", "form_factor", "modded"}
    assert resolved["modded"] is False
    assert resolved["input"] == "NVIDIA GeForce RTX 4090"
    assert (resolved["vendor"], resolved["model"], resolved["vram_gb"]) == (
        "NVIDIA",
        "RTX 4090",
        24,
    )
    assert set(unresolved) == {"input", "error"}
    assert unresolved["error"]


def test_gpu_from_stdin_with_vram(app: typer.Typer) -> None:
    (line,) = _run(app, "gpu", "--vram-gb", "80", "-", stdin="A100\n")
    assert (line["model"], line["vram_gb"]) == ("A100", 80)


def test_gpu_modded_open_vram_and_plan_suffix(app: typer.Typer) -> None:
    modded, open_vram, spot = _run(app, "gpu", "RTX 4090D 48G", "RTX 3060", "H100 SXM (Spot)")
    assert (modded["model"], modded["vram_gb"], modded["modded"]) == ("RTX 4090D", 48, True)
    assert (open_vram["model"], open_vram["vram_gb"]) == ("RTX 3060", None)
    assert (spot["model"], spot["vram_gb"], spot["form_factor"]) == ("H100", 80, "SXM")


@pytest.mark.parametrize("command", [[], ["gpu"], ["price"], ["availability"]])
def test_every_command_has_help(app: typer.Typer, command: list[str]) -> None:
    result = CliRunner().invoke(app, ["normalize", *command, "--help"])
    assert result.exit_code == 0
    assert "Usage" in result.output


def test_availability_impossible_counts_are_error_lines(app: typer.Typer) -> None:
    lines = _run(app, "availability", "空闲 9/8", "可用(2)")
    assert lines[0] == {"input": "空闲 9/8", "error": "free count 9 exceeds total 8"}
    assert lines[1]["status"] == "in_stock" and lines[1]["available_count"] == 2
