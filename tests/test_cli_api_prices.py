"""`gpurent api-prices list` in process: the shipped table (each price with its date and
source) and the refreshed list beside the warehouse, as JSON, CSV and a table; an unknown
model is one refusal naming --model. The refresh (a real crawl): tests/spiders/
test_crawl_openrouter_prices.py."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpurent.cli.app import build_app
from sizing.api_prices import (
    OLD_AFTER_DAYS,
    ApiPrice,
    refreshed_path,
    shipped_prices,
    write_refreshed,
)
from tests.cli_helpers import invoke, invoke_json

FIELDS = [
    "provider", "api_model", "model", "relation", "input_per_million", "output_per_million",
    "currency", "served_as", "as_of", "age_days", "old", "origin", "source", "note",
]  # fmt: skip


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "gpurent.duckdb"


def with_refreshed(db: Path, age_days: int = 0) -> None:
    price = ApiPrice(
        provider="openrouter",
        api_model="meta-llama/llama-3.1-8b-instruct",
        model="Llama-3.1-8B",
        input_per_million=Decimal("0.02"),
        output_per_million=Decimal("0.05"),
        currency="USD",
        as_of=datetime.now(UTC).date() - timedelta(days=age_days),
        source="https://openrouter.ai/api/v1/models",
    )
    write_refreshed(refreshed_path(db), [price], datetime.now(UTC))


def test_the_json_list_holds_every_shipped_price_with_its_date_and_source(db: Path) -> None:
    rows = invoke_json("api-prices", "list", "--db", str(db))
    assert all(list(row) == FIELDS for row in rows)
    shipped = {(p.provider, p.api_model, p.currency) for p in shipped_prices()}
    assert {(r["provider"], r["api_model"], r["currency"]) for r in rows} == shipped
    by_key = {(r["provider"], r["api_model"], r["currency"]): r for r in rows}
    for price in shipped_prices():
        row = by_key[price.provider, price.api_model, price.currency]
        assert row["as_of"] == price.as_of.isoformat() and row["source"] == price.source
        assert Decimal(row["input_per_million"]) == price.input_per_million
        assert isinstance(row["input_per_million"], str)  # money stays exact text
        assert row["origin"] == "shipped" and row["relation"] is None
        age = (datetime.now(UTC).date() - price.as_of).days
        assert row["age_days"] == age and row["old"] is (age > OLD_AFTER_DAYS)


def test_the_refreshed_list_beside_the_warehouse_is_listed_too(db: Path) -> None:
    with_refreshed(db)
    rows = invoke_json("api-prices", "list", "--db", str(db), "--model", "Llama-3.1-8B")
    ours = [r for r in rows if r["provider"] == "openrouter"]
    assert [(r["api_model"], r["origin"], r["relation"]) for r in ours] == [
        ("meta-llama/llama-3.1-8b-instruct", "refreshed", "same")
    ]
    assert ours[0]["as_of"] == datetime.now(UTC).date().isoformat() and ours[0]["age_days"] == 0
    assert {r["model"] for r in rows} <= {"Llama-3.1-8B"}  # no other model of another shape


def test_the_csv_list_has_every_field(db: Path) -> None:
    out = invoke("api-prices", "list", "--db", str(db), "--format", "csv").stdout
    table = list(csv.DictReader(io.StringIO(out)))
    assert table and list(table[0]) == FIELDS
    assert {row["source"] for row in table} == {p.source for p in shipped_prices()}


def test_the_table_marks_old_prices_and_says_where_the_sources_are(db: Path) -> None:
    with_refreshed(db, age_days=OLD_AFTER_DAYS + 20)
    out = invoke("api-prices", "list", "--db", str(db), "--model", "Llama-3.1-8B").stdout
    flat = " ".join(out.split())
    line = next(t for t in out.splitlines() if "llama-3.1-8b-instruct" in t)
    assert f"{OLD_AFTER_DAYS + 20}d old" in line
    fresh = next(t for t in out.splitlines() if "Meta-Llama-3.1-8B-Instruct" in t)  # shipped
    assert " old " not in fresh.replace("│", " ")
    assert f"1 price(s) read more than {OLD_AFTER_DAYS} days ago" in flat
    assert "--format json or csv" in flat


def test_an_unknown_model_is_refused_naming_the_option(db: Path) -> None:
    result = CliRunner().invoke(
        build_app(), ["api-prices", "list", "--db", str(db), "--model", "Nope-9000B"]
    )
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.replace("│", " ").split())
    assert "--model" in said and "Nope-9000B" in said


def test_the_refresh_says_what_it_kept_and_what_not(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpurent import api

    asked: list[Path] = []
    price = ApiPrice(
        provider="openrouter",
        api_model="qwen/qwq-32b",
        model="QwQ-32B",
        input_per_million=Decimal("0.15"),
        output_per_million=Decimal("0.2"),
        currency="USD",
        as_of=datetime(2026, 12, 4, tzinfo=UTC).date(),
        source="https://openrouter.ai/api/v1/models",
    )

    def refresh(path: Path, replay: bool = False) -> api.RefreshAnswer:
        asked.append(path)
        assert replay is False  # the real list unless --replay
        return api.RefreshAnswer(
            path=refreshed_path(path),
            source=price.source,
            fetched_at=datetime(2026, 12, 4, 9, tzinfo=UTC),
            written=(price,),
            models_read=4,
            skipped={"variable_price": 1, "unreadable_price": 2},
            unmatched=(
                api.UnmatchedModel("a/b", "a/b", "not_in_catalog"),
                api.UnmatchedModel("c/d", "c/d", "not_in_catalog"),
                api.UnmatchedModel("meta-llama/llama-3-8b", "x", "another_model", "Llama-3.1-8B"),
            ),
        )

    monkeypatch.setattr(api, "refresh_api_prices", refresh)
    out = " ".join(invoke("api-prices", "refresh", "--db", str(db)).stdout.split())
    assert asked == [db]
    assert (
        f"Kept 1 OpenRouter price(s) of 4 model(s) read, as of 2026-12-04, in {refreshed_path(db)}"
        in out
    )
    assert "Not kept: 1 another model, 2 not in the catalog." in out
    assert "Skipped in the list: 2 unreadable price, 1 variable price." in out


def test_the_refresh_reads_the_bundled_list_offline_with_replay(db: Path) -> None:
    # A real crawl of the bundled recording, served on 127.0.0.1: invented values, and a
    # source that says where they came from.
    said = invoke("api-prices", "refresh", "--replay", "--db", str(db)).output
    # 6: Llama 3 8B is the catalog's own entry now (its window differs from Llama 3.1's).
    assert "Kept 6 OpenRouter price(s) of 8 model(s) read" in " ".join(said.split())
    rows = invoke_json("api-prices", "list", "--db", str(db), "--model", "Llama-3.1-8B")
    [mine] = [r for r in rows if r["origin"] == "refreshed"]
    assert mine["provider"] == "openrouter" and mine["input_per_million"] == "0.02"
    assert mine["source"].startswith("http://127.0.0.1:")


def test_replay_serves_only_the_bundled_list(db: Path) -> None:
    result = CliRunner().invoke(
        build_app(), ["api-prices", "refresh", "--replay", "/tmp", "--db", str(db)]
    )
    assert result.exit_code == 2
    assert "give --replay alone" in " ".join(result.output.replace("│", " ").split())
    assert not refreshed_path(db).exists()
