"""CLI ergonomics: every command explains itself, read commands fail kindly before a crawl."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from gpurent.cli.app import (
    COMMAND_HOMES,
    COMMAND_MODULES,
    app_for,
    build_app,
    expand_optional_values,
)
from gpurent_core.billing_facts import CHECKLIST, BillingFactKind, load_billing_facts
from tests.cli_helpers import invoke, invoke_json
from warehouse.db import connect


def all_command_paths() -> list[list[str]]:
    root = get_command(build_app())
    paths: list[list[str]] = []

    def walk(cmd: Any, prefix: list[str]) -> None:
        paths.append(prefix)
        # Typer may ship its own Click, so look for sub-commands rather than a class.
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                walk(sub, [*prefix, name])

    walk(root, [])
    return paths


@pytest.mark.parametrize("path", all_command_paths(), ids=lambda p: " ".join(p) or "gpurent")
def test_every_command_has_help(path: list[str]) -> None:
    result = CliRunner().invoke(build_app(), [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output
    # A command whose help is only its usage line explains nothing.
    assert len(result.output.strip().splitlines()) > 3


@pytest.mark.parametrize("path", all_command_paths()[1:], ids=" ".join)
def test_help_paragraphs_wrap_to_the_terminal(path: list[str]) -> None:
    # A line break kept from the docstring shows as a short line in Rich's help: each
    # paragraph reaches Click as one line, which Rich wraps to the terminal's width.
    command: Any = get_command(build_app())
    for name in path:
        command = command.commands[name]
    for paragraph in (command.help or "").split("\n\n"):
        assert "\n" not in paragraph.strip(), paragraph


def test_the_issue_commands_exist() -> None:
    names = {" ".join(p) for p in all_command_paths()}
    assert {"crawl", "offers", "cheapest", "providers", "quarantine", "gpus"} <= names


def test_bare_replay_means_the_bundled_recordings() -> None:
    assert expand_optional_values(["crawl", "--replay"]) == ["crawl", "--replay="]
    assert expand_optional_values(["crawl", "--replay", "--db", "x"]) == [
        "crawl", "--replay=", "--db", "x",
    ]  # fmt: skip
    assert expand_optional_values(["crawl", "--replay", "dir"]) == ["crawl", "--replay", "dir"]


def test_read_commands_before_any_crawl_say_what_to_do(tmp_path: Path) -> None:
    db = tmp_path / "none.duckdb"
    result = CliRunner().invoke(build_app(), ["cheapest", "--min-vram", "32", "--db", str(db)])
    assert result.exit_code == 2
    assert "gpurent crawl --replay" in result.output
    assert not db.exists(), "a read command must not create a database"


def empty_warehouse(tmp_path: Path) -> Path:
    """A warehouse no crawl has written to yet (a missing one is refused: NoWarehouse)."""
    path = tmp_path / "empty.duckdb"
    connect(path).close()
    return path


def test_providers_lists_every_spider_before_any_crawl(tmp_path: Path) -> None:
    rows = invoke_json("providers", "--db", str(empty_warehouse(tmp_path)))
    by_name = {r["provider"]: r for r in rows}
    assert {"autodl", "vastai", "cudo"} <= by_name.keys()
    assert by_name["autodl"]["home"] == "CN"
    assert by_name["autodl"]["needs_browser"] is True
    assert by_name["autodl"]["auth_env"] == ["AUTODL_TOKEN"]
    assert by_name["vastai"]["auth_env"] == []
    assert all(r["last_status"] is None for r in rows)


def test_providers_details_carry_sourced_billing_facts(tmp_path: Path) -> None:
    rows = invoke_json("providers", "--details", "--db", str(empty_warehouse(tmp_path)))
    autodl = next(r for r in rows if r["provider"] == "autodl")
    facts = {f["fact"]: f for f in autodl["billing_facts"]}
    assert "per second" in facts["billing_granularity"]["value"]
    assert facts["billing_granularity"]["source"]
    # What the cost engine does with it, in words.
    assert facts["billing_granularity"]["used_in_cost"] == "rounds each session up to 1 s"
    assert "system_disk fee 0.10 CNY/day" in facts["system_disk"]["used_in_cost"]
    assert facts["discounts"]["used_in_cost"] == ""
    assert "minimum_rental" in autodl["unknown_facts"]
    assert autodl["min_poll_interval_s"] >= 60


def test_providers_details_list_unknown_facts_as_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "300")  # one table row per line
    db = empty_warehouse(tmp_path)
    rows = invoke_json("providers", "--details", "--db", str(db))
    by_name = {r["provider"]: r for r in rows}
    # 算家云: no source on file for any question; each is shown as unknown, never as none.
    assert by_name["suanjia"]["billing_facts"] == []
    assert len(by_name["suanjia"]["unknown_facts"]) == len(CHECKLIST)
    table = invoke("providers", "--details", "--db", str(db)).stdout
    assert "unknown (no source on file)" in table
    # Every other provider answers at least part of the checklist.
    assert all(r["billing_facts"] for name, r in by_name.items() if name != "suanjia")


def test_every_billing_fact_has_a_source_and_a_date() -> None:
    facts = load_billing_facts()
    assert len(facts) >= 60
    for f in facts:
        assert isinstance(f.fact, BillingFactKind)
        assert f.source.strip() and f.as_of.year >= 2024


def test_currency_must_be_iso(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        build_app(), ["offers", "--currency", "yuan", "--db", str(tmp_path / "x.duckdb")]
    )
    assert result.exit_code != 0


def test_a_session_longer_than_the_month_is_a_usage_error(tmp_path: Path) -> None:
    args = ["cheapest", "--min-vram", "24", "--hours-per-month", "10", "--session-hours", "20"]
    result = CliRunner().invoke(build_app(), [*args, "--db", str(tmp_path / "x.duckdb")])
    assert result.exit_code == 2
    assert "session_hours must be > 0 and at most hours_per_month" in " ".join(
        result.output.split()
    )


def test_explain_refuses_an_unknown_offer_with_a_hint(tmp_path: Path) -> None:
    db = tmp_path / "x.duckdb"
    connect(db).close()  # an empty warehouse
    result = CliRunner().invoke(build_app(), ["explain", "autodl", "nope", "--db", str(db)])
    assert result.exit_code == 2
    assert "gpurent offers --provider autodl" in " ".join(result.output.split())


def test_gpus_command_is_reachable() -> None:
    assert "H100" in invoke("gpus", "--format", "csv").stdout


def _top_level_names(module: str) -> set[str]:
    app = importlib.import_module(f"gpurent.cli.{module}").app
    commands = {c.name or c.callback.__name__.replace("_", "-") for c in app.registered_commands}
    return commands | {g.name for g in app.registered_groups if g.name}


def test_command_homes_name_each_command_and_group_where_it_is_registered() -> None:
    """`gpurent NAME` builds only COMMAND_HOMES[NAME]'s module: a command moved or added
    without the table would run with the whole app, or not at all, so the table is checked."""
    registered = {name: module for module in COMMAND_MODULES for name in _top_level_names(module)}
    assert registered == COMMAND_HOMES


@pytest.mark.parametrize("name", sorted(COMMAND_HOMES))
def test_a_command_built_alone_says_what_it_says_in_the_whole_app(name: str) -> None:
    alone = CliRunner().invoke(app_for([name]), [name, "--help"], terminal_width=100)
    whole = CliRunner().invoke(build_app(), [name, "--help"], terminal_width=100)
    assert alone.exit_code == whole.exit_code == 0
    assert alone.output == whole.output
    assert f"gpurent {name}" in alone.output


def test_providers_details_name_what_the_last_run_skipped(tmp_path: Path) -> None:
    from tests.warehouse.wh_kit import FeedKit
    from warehouse.load import load_run

    kit, db = FeedKit(tmp_path), tmp_path / "w.duckdb"
    run = kit.run(1, provider="lambda", skipped=(("not_a_gpu_offer", 1), ("not_offered", 2)))
    con = connect(db)
    try:
        load_run(con, run, kit.write("r1", [kit.offer(run, "gpu_1x_a10/us-east-1")]))
    finally:
        con.close()
    rows = invoke_json("providers", "--details", "--db", str(db))
    by_name = {r["provider"]: r for r in rows}
    assert by_name["lambda"]["skipped"] == {"not_a_gpu_offer": 1, "not_offered": 2}
    assert by_name["cudo"]["skipped"] == {}
    table = invoke("providers", "--details", "--db", str(db)).stdout
    assert "not_a_gpu_offer 1, not_offered 2" in " ".join(table.split())
