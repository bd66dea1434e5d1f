"""`gpurent tco` in process: the table for people, the JSON document and the CSV row are the
library API's answer (``gpurent.api.tco``), and what cannot be answered is one line."""

from __future__ import annotations

import dataclasses
import json
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpurent import api
from gpurent.cli.app import build_app
from gpurent.cli.output import to_jsonable
from tests.api.tco_kit import MEDIAN, build_market, build_unrentable
from tests.cli_helpers import invoke, invoke_json

D = Decimal
ARGS = ("tco", "--gpu", "RTX 4090", "--price", "15000", "--hours-per-day", "8",
        "--power-price", "0.6", "--currency", "CNY")  # fmt: skip
FIELDS = [f.name for f in dataclasses.fields(api.TcoAnswer)]


@pytest.fixture(scope="module")
def market(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_market(tmp_path_factory.mktemp("cli-tco"))


def words(text: str) -> str:
    return " ".join(text.split())


def refused(*args: str) -> str:
    """What a refused command says (exit 2), its words joined out of Click's error box (the
    console script says it in one line: tests/test_cli_every_command.py)."""
    result = CliRunner().invoke(build_app(), list(args))
    assert result.exit_code == 2, (result.exit_code, result.output)
    return words(result.output.replace("│", " "))


def test_the_table_shows_each_part_the_verdict_and_the_assumption(market: Path) -> None:
    out = words(invoke(*ARGS, "--db", str(market)).stdout)
    assert "buy or rent: RTX 4090 24G, 8 h a day for 3 years (CNY)" in out
    for part in ("purchase", "resale", "power", "owning", "renting", "owning saves"):
        assert f"│ {part} " in out, part
    assert "15,000.00" in out and "3,153.60" in out and "18,153.60" in out
    # 1.75 a card-hour x 8760 h: the median of 4 offers of 2 providers.
    assert "1.75/card-hour x 8,760 h (median of 4 offers)" in out
    assert "median price of a card-hour of 4 offers of 2 providers" in out
    assert "(1.25 to 3.00 CNY)" in out
    assert "15,330.00" in out
    assert "At 8 h a day renting is cheaper over 3 years, by 2,823.60 CNY" in out
    assert "Break-even at 9.9 h a day: owning is cheaper above it, renting below." in out
    assert "Host 150 W per card is an assumption" in out and "--host-watts" in out
    assert "1 offer not confirmed by their provider's latest run left out" in out
    assert "1 spot, member or committed offer left out" in out


def test_the_json_document_is_the_api_answer(market: Path) -> None:
    doc = invoke_json(*ARGS, "--db", str(market))
    assert list(doc) == FIELDS
    answer = api.tco("RTX 4090", D(15000), hours_per_day=D(8), power_price=D("0.6"),
                     currency="CNY", db=market)  # fmt: skip
    assert doc == json.loads(json.dumps(to_jsonable(answer.as_row())))
    assert D(doc["rent_per_card_hour"]) == MEDIAN and doc["rent_from"] == "median"
    assert doc["rent_offers"] == 4 and doc["stale_left_out"] == 1
    assert doc["cheaper"] == "renting" and D(doc["saving"]) == D("-2823.6")
    assert doc["watts_from"] == "catalog" and D(doc["card_watts"]) == 450
    assert doc["host_watts_assumed"] is True
    assert D("9.85") < D(doc["break_even_hours_per_day"]) < D("9.86")


def test_the_csv_is_one_row_of_every_field(market: Path) -> None:
    lines = invoke(*ARGS, "--db", str(market), "--format", "csv").stdout.splitlines()
    assert lines[0].split(",") == FIELDS and len(lines) == 2
    row = dict(zip(FIELDS, lines[1].split(","), strict=True))
    assert D(row["rent_per_card_hour"]) == MEDIAN and row["gpu"] == "RTX 4090 24G"


def test_resale_and_a_rental_price_by_hand(tmp_path: Path) -> None:
    # No warehouse is read with --rent-price: a path where none is works.
    doc = invoke_json(*ARGS, "--resale", "30%", "--rent-price", "3", "--years", "2",
                      "--db", str(tmp_path / "none.duckdb"))  # fmt: skip
    assert D(doc["resale"]) == 4500 and D(doc["resale_share"]) == D("0.3")
    assert doc["rent_from"] == "given" and D(doc["rent_per_card_hour"]) == 3
    assert doc["years"] == 2 and D(doc["hours"]) == 8 * 365 * 2
    out = words(invoke(*ARGS, "--resale", "30%", "--rent-price", "3",
                       "--db", str(tmp_path / "none.duckdb")).stdout)  # fmt: skip
    assert "-4,500.00" in out and "30% of the price" in out and "(--rent-price)" in out


def test_no_in_stock_offer_is_said_and_no_number_is_made_up(tmp_path: Path) -> None:
    db = build_unrentable(tmp_path)
    out = words(invoke(*ARGS, "--db", str(db)).stdout)
    assert "No confirmed in-stock offer of RTX 4090 24G in the warehouse" in out
    assert "no guess is made" in out and "--rent-price" in out
    assert "Break-even" not in out
    doc = invoke_json(*ARGS, "--db", str(db))
    assert doc["rent_per_card_hour"] is None and doc["rent_cost"] is None
    assert doc["break_even_hours_per_day"] is None and doc["cheaper"] is None


def test_a_card_without_board_power_asks_for_watts(market: Path) -> None:
    line = refused("tco", "--gpu", "Ascend 910B2", "--price", "1", "--hours-per-day", "8",
                   "--power-price", "1", "--db", str(market))  # fmt: skip
    assert "no board power (TDP) for Ascend 910B2 64GB" in line and "--watts" in line
    line = refused("tco", "--gpu", "H100", "--price", "1", "--hours-per-day", "8",
                   "--power-price", "1", "--db", str(market))  # fmt: skip
    assert "leaves the board power open" in line and "--watts" in line
    given = invoke_json("tco", "--gpu", "H100", "--price", "200000", "--hours-per-day", "8",
                        "--power-price", "1", "--watts", "350", "--db", str(market))  # fmt: skip
    assert D(given["card_watts"]) == 350 and given["watts_from"] == "given"


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (("--gpu", "RTX 9999 Ti"), "--gpu"),
        (("--price", "0"), "--price"),
        (("--hours-per-day", "25"), "--hours-per-day"),
        (("--hours-per-day", "0"), "--hours-per-day"),
        (("--power-price", "cheap"), "--power-price"),
        (("--resale", "lots"), "--resale"),
        (("--resale", "20000"), "--resale"),
        (("--years", "0"), "--years"),
        (("--currency", "XYZ"), "--currency"),
    ],
)
def test_bad_input_is_one_line_naming_the_option(
    market: Path, extra: tuple[str, ...], says: str
) -> None:
    line = refused(*ARGS, "--db", str(market), *extra)
    assert says in line


def test_a_missing_warehouse_says_how_to_get_one(tmp_path: Path) -> None:
    db = tmp_path / "none.duckdb"
    line = refused(*ARGS, "--db", str(db))
    assert "gpurent crawl --replay" in line
    assert not db.exists()  # a read command creates no database
