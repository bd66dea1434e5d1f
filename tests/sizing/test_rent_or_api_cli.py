"""`gpurent size --compare-api` through the CLI, on a small warehouse: the JSON's figures
recomputed from the answer's own rows, the table's verdict, the refreshed list read beside the
warehouse, and one-line refusals."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sizing_kit import build_warehouse, cli_app, offer, run_for
from typer.testing import CliRunner

from sizing.api_prices import read_price, refreshed_path, write_refreshed

runner = CliRunner()

LLAMA8 = [
    "size",
    "--model",
    "Llama-3.1-8B",
    "--prompt-tokens",
    "1000",
    "--gen-tokens",
    "300",
    "--batch",
    "8",
    "--currency",
    "USD",
]


@pytest.fixture
def market(tmp_path: Path) -> Path:
    acme = run_for("acme")
    return build_warehouse(
        tmp_path / "wh" / "gpurent.duckdb",
        {
            "acme": [
                offer(acme, "4090", "RTX 4090", 24, price=Decimal("0.40")),
                offer(acme, "l40s", "L40S", 48, price=Decimal("0.90")),
            ]
        },
    )


def size(db: Path, *extra: str) -> dict[str, Any]:
    result = runner.invoke(cli_app(), [*LLAMA8, "--db", str(db), "--format", "json", *extra])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert isinstance(data, dict)
    return data


def test_every_offer_is_costed_from_its_own_figures(market: Path) -> None:
    doc = size(market, "--compare-api", "--utilisation", "0.25")["rent_or_api"]
    assert doc["currency"] == "USD" and doc["utilisation"] == "0.2500"
    assert {a["provider"] for a in doc["apis"]} >= {"deepinfra"}  # the shipped table
    rows = {r["offer_key"]: r for r in doc["offers"]}
    offers = {o["offer_key"]: o for o in size(market)["offers"]}
    assert set(rows) == set(offers) == {"4090", "l40s"}
    for key, row in rows.items():
        o = offers[key]
        # One cycle: the copy's prompts all prefilled, then 300 tokens decoded for them all.
        prefill = Decimal(str(o["ttft_worst_ms"])) / 1000
        seconds = prefill + 300 / Decimal(str(o["tokens_per_s_per_user"]))
        capacity = 8 * 3600 / seconds
        expected = Decimal(o["true_hourly"]) / (Decimal("0.25") * capacity)
        assert abs(Decimal(row["per_request"]) - expected) <= Decimal("0.000001"), key
        cheapest = Decimal(doc["apis"][0]["per_request"])
        share = Decimal(o["true_hourly"]) / (capacity * cheapest)
        assert abs(Decimal(row["break_even_utilisation"]) - share) <= Decimal("0.0001"), key


def test_without_the_flag_the_answer_has_no_comparison(market: Path) -> None:
    assert "rent_or_api" not in size(market)


def test_requests_a_day_rent_more_when_one_is_not_enough(market: Path) -> None:
    light = size(market, "--requests-per-day", "100")["rent_or_api"]
    heavy = size(market, "--requests-per-day", "5000000")["rent_or_api"]
    assert all(r["rentals"] == 1 for r in light["offers"])
    assert all(r["rentals"] > 1 for r in heavy["offers"])
    assert all(Decimal(r["utilisation"]) <= 1 for r in heavy["offers"])


def test_a_refreshed_list_beside_the_warehouse_is_read(market: Path) -> None:
    entry = {
        "provider": "openrouter",
        "api_model": "meta-llama/llama-3.1-8b-instruct",
        "model": "Llama-3.1-8B",
        "input": "0.01",
        "output": "0.02",
        "currency": "USD",
        "as_of": "2026-12-01",
        "source": "https://openrouter.ai/api/v1/models",
    }
    write_refreshed(
        refreshed_path(market), [read_price(entry, "t")], datetime(2026, 12, 1, tzinfo=UTC)
    )
    doc = size(market, "--compare-api")["rent_or_api"]
    assert doc["apis"][0]["provider"] == "openrouter"  # the cheapest, first
    assert doc["cheapest_api"]["api_model"] == "meta-llama/llama-3.1-8b-instruct"


def test_the_table_ends_with_the_verdict(market: Path) -> None:
    result = runner.invoke(
        cli_app(), [*LLAMA8, "--db", str(market), "--compare-api"], env={"COLUMNS": "220"}
    )
    assert result.exit_code == 0, result.output
    assert "serverless APIs serving the model" in result.output
    assert "at 100 % of capacity, the cheapest rental (acme RTX 4090 24GB x1)" in result.output
    # Ranked by month and cut at one offer: the verdict says it saw only that one.
    one = runner.invoke(
        cli_app(),
        [*LLAMA8, "--db", str(market), "--compare-api", "--limit", "1"],
        env={"COLUMNS": "220"},
    )
    assert "the cheapest rental shown (acme" in one.output
    assert "--objective per-token ranks every fitting offer" in one.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--utilisation", "0.5", "--requests-per-day", "10"], "not both"),
        (["--utilisation", "1.5"], "--utilisation"),
        (
            ["--compare-api", "--mode", "lora", "--gen-tokens", "0"],
            "compare_api compares inference",
        ),
    ],
)
def test_wrong_loads_are_one_line_refusals(market: Path, args: list[str], message: str) -> None:
    result = runner.invoke(cli_app(), [*LLAMA8, "--db", str(market), *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
