"""Never an answer while blind: `cheapest` and `offers` over a warehouse that holds no offer
at all (every run failed, or none ran) say so on stderr and exit 1, in every format. Before,
`cheapest --min-vram 1` said "No in-stock offer fits. Try a lower --min-vram" and JSON gave
`[]` with exit 0: a script could not tell an empty market from one never read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpurent.cli.app import build_app
from gpurent_core.model import RunStatus
from tests.api.tco_kit import build_market
from tests.warehouse.wh_kit import FeedKit
from warehouse.db import writing
from warehouse.load import load_run


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(build_app(), list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def only_failed(tmp_path: Path) -> Path:
    db = tmp_path / "failed.duckdb"
    kit = FeedKit(tmp_path)
    with writing(db) as con:
        load_run(con, kit.run(1, RunStatus.FAILED, provider="vastai", message="HTTP 500"), None)
    return db


@pytest.mark.parametrize("fmt", ["table", "json", "csv"])
@pytest.mark.parametrize("command", [["cheapest", "--min-vram", "1"], ["offers", "--in-stock"]])
def test_a_warehouse_with_no_good_run_gives_no_answer(
    only_failed: Path, command: list[str], fmt: str
) -> None:
    code, out, err = _run(*command, "--db", str(only_failed), "--format", fmt)
    assert code == 1
    assert "no provider has a good run on record" in err
    assert out.strip() in ("", "[]") and "fits" not in out


def test_an_empty_answer_from_a_seen_market_is_an_answer(tmp_path: Path) -> None:
    db = build_market(tmp_path)
    code, out, _ = _run("cheapest", "--min-vram", "1000", "--db", str(db), "--format", "json")
    assert (code, out.strip()) == (0, "[]")


def test_an_offer_no_rate_converts_is_left_out_and_counted(tmp_path: Path) -> None:
    """Audit (money): one offer in a currency with no rate (GBP) made `offers`, `cheapest`,
    `rank` and `size` refuse the whole market. One rule now: left out, and counted."""
    from tests.api.tco_kit import card

    kit = FeedKit(tmp_path)
    db = tmp_path / "gbp.duckdb"
    with writing(db) as con:
        run = kit.run(1, provider="autodl")
        load_run(con, run, kit.write("autodl", [
            card(kit, run, "in-cny", "2.00"),
            card(kit, run, "in-gbp", "0.20", currency="GBP"),
        ]))  # fmt: skip
    code, out, err = _run("cheapest", "--min-vram", "1", "--db", str(db), "--format", "json")
    assert code == 0
    assert [r["offer_key"] for r in json.loads(out)] == ["in-cny"]
    assert "1 offer(s) left out: priced in GBP" in err
    code, out, _ = _run("rank", "--db", str(db), "--format", "json")
    assert code == 0, out
