"""Errors a user meets end in one line and a documented exit code, never a traceback.

The console script is run as a process (`python -m gpurent`), as a user runs it: the
one-line handler lives in its `main()`, outside what an in-process test runner calls.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpurent.cli.errors import INTERRUPTED, UNEXPECTED, USER_ERROR, debug_requested, explain

READ_COMMANDS = (
    ("offers",),
    ("cheapest", "--min-vram", "24"),
    ("providers",),
    ("quarantine",),
    ("index", "show"),
)


def bad_databases(tmp: Path) -> dict[str, Path]:
    text = tmp / "notes.duckdb"
    text.write_text("not a database", encoding="utf-8")
    folder = tmp / "folder.duckdb"
    folder.mkdir()
    empty = tmp / "empty.duckdb"
    empty.write_bytes(b"")
    return {"text file": text, "directory": folder, "empty file": empty}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpurent", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    "command", READ_COMMANDS, ids=lambda c: c[0] + (c[1] if len(c) > 1 and c[0] == "index" else "")
)
def test_read_commands_say_one_line_on_a_bad_database(
    command: tuple[str, ...], tmp_path: Path
) -> None:
    for kind, path in bad_databases(tmp_path).items():
        proc = run(*command, "--db", str(path))
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        assert proc.returncode == USER_ERROR, (kind, proc.returncode, proc.stderr[-800:])
        assert "Traceback" not in proc.stderr and 'File "' not in proc.stderr, (kind, proc.stderr)
        assert len(lines) == 1, (kind, lines)
        assert str(path.name) in lines[0] or "warehouse" in lines[0], (kind, lines[0])
        assert proc.stdout.strip() == "", (kind, proc.stdout)


def test_a_text_file_is_left_as_it_was(tmp_path: Path) -> None:
    path = bad_databases(tmp_path)["text file"]
    run("offers", "--db", str(path))
    assert path.read_text(encoding="utf-8") == "not a database"


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    path = bad_databases(tmp_path)["text file"]
    proc = run("offers", "--db", str(path), "--debug")
    assert proc.returncode == USER_ERROR
    assert "Traceback" in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("gpurent: ")


def test_debug_flag_is_taken_out_anywhere_and_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GPURENT_DEBUG", raising=False)
    assert debug_requested(["offers", "--debug", "--db", "x"]) == (True, ["offers", "--db", "x"])
    assert debug_requested(["offers"]) == (False, ["offers"])
    monkeypatch.setenv("GPURENT_DEBUG", "1")
    assert debug_requested(["offers"])[0] is True


def test_explain_maps_errors_to_codes() -> None:
    assert explain(KeyboardInterrupt()) == ("interrupted", INTERRUPTED)
    message, code = explain(RuntimeError("boom\nsecond line"))
    assert code == UNEXPECTED and "\n" not in message and "--debug" in message
    message, code = explain(PermissionError(13, "Permission denied", "/ro/x.duckdb"))
    assert code == USER_ERROR and "/ro/x.duckdb" in message


INVALID_OPTIONS = (
    ("offers", "--currency", "XYZ"),
    ("cheapest", "--min-vram", "24", "--currency", "XYZ"),
    ("watch", "add", "--notify", "json://127.0.0.1:9/x", "--gpu", "RTX 4090", "--currency", "XYZ"),
    ("offers", "--no-such-option"),
    ("cheapest",),
    ("cheapest", "--min-vram", "24", "--gpus", "0"),
)


@pytest.mark.parametrize("command", INVALID_OPTIONS, ids=" ".join)
def test_invalid_options_are_refused_in_one_line(command: tuple[str, ...], tmp_path: Path) -> None:
    proc = run(*command, "--db", str(tmp_path / "never-created.duckdb"))
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == USER_ERROR, (proc.returncode, proc.stderr[-800:])
    assert len(lines) == 1 and lines[0].startswith("gpurent: "), lines
    assert "--help" in lines[0] and "Traceback" not in proc.stderr
    assert not (tmp_path / "never-created.duckdb").exists()


def test_unknown_currency_names_the_known_ones(tmp_path: Path) -> None:
    proc = run("offers", "--currency", "xyz", "--db", str(tmp_path / "w.duckdb"))
    assert "XYZ" in proc.stderr and "CNY" in proc.stderr and "GPURENT_FX" in proc.stderr


def test_no_arguments_shows_the_help() -> None:
    proc = run()
    assert proc.returncode == 0 and "Usage: gpurent" in proc.stdout + proc.stderr


CRAWL_REFUSALS = (
    (("--scene", "nosuch"), "no scene 'nosuch'"),
    (("--step", "99"), "steps 1..1"),
    (("--provider", "nosuch"), "unknown provider(s) nosuch"),
)


@pytest.mark.parametrize(("options", "said"), CRAWL_REFUSALS, ids=lambda o: " ".join(o))
def test_a_crawl_that_names_nothing_real_is_refused_before_it_starts(
    options: tuple[str, ...], said: str, tmp_path: Path
) -> None:
    proc = run("crawl", "--replay", *options, "--db", str(tmp_path / "w.duckdb"))
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == USER_ERROR, proc.stderr[-800:]
    assert len(lines) == 1 and said in lines[0], lines
    assert not (tmp_path / "w.duckdb").exists()


def test_a_bad_fx_setting_is_the_users_to_fix() -> None:
    from gpurent_core.fx import FxParseError

    message, code = explain(FxParseError("GPURENT_FX: item 1 'garbage' is not like 'USD/CNY=7.20'"))
    assert (code, message) == (
        USER_ERROR,
        "GPURENT_FX: item 1 'garbage' is not like 'USD/CNY=7.20'",
    )


def test_version_is_printed() -> None:
    from importlib.metadata import version

    proc = run("--version")
    assert (proc.returncode, proc.stdout.strip()) == (0, f"gpurent {version('gpurent')}")


def damaged_warehouses(tmp: Path) -> dict[str, Path]:
    """A real warehouse, then two copies spoiled as disks and copies spoil files."""
    import os

    import duckdb

    from warehouse.db import connect

    good = tmp / "good.duckdb"
    con = connect(good)
    con.execute(
        "CREATE TABLE filler AS SELECT range AS n, md5(range::VARCHAR) AS t FROM range(300000)"
    )
    con.execute("CHECKPOINT")
    con.close()
    data = good.read_bytes()
    spoiled = bytearray(data)
    for offset in range(8192, len(data), 262144):  # every block's checksum stops matching
        spoiled[offset + 100 : offset + 2100] = os.urandom(2000)
    (tmp / "checksum.duckdb").write_bytes(bytes(spoiled))
    (tmp / "truncated.duckdb").write_bytes(data[: len(data) // 3])
    assert duckdb.connect(str(good), read_only=True).execute("SELECT 1").fetchall() == [(1,)]
    return {"checksum": tmp / "checksum.duckdb", "truncated": tmp / "truncated.duckdb"}


def test_a_damaged_warehouse_is_called_damaged_not_busy(tmp_path: Path) -> None:
    for kind, path in damaged_warehouses(tmp_path).items():
        proc = run("offers", "--db", str(path))
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        assert proc.returncode == USER_ERROR, (kind, proc.stderr[-800:])
        assert len(lines) == 1 and "is damaged" in lines[0], (kind, lines)
        assert "busy" not in lines[0] and "held by another process" not in lines[0], lines


def test_providers_without_a_database_says_there_is_none(tmp_path: Path) -> None:
    # Not a list of providers as if nothing had run: the path is wrong, and that is said.
    missing = tmp_path / "no" / "such.duckdb"
    proc = run("providers", "--db", str(missing))
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == USER_ERROR, proc.stderr[-800:]
    assert len(lines) == 1 and f"No database at {missing}" in lines[0], lines
    assert proc.stdout.strip() == "" and not (tmp_path / "no").exists()


def test_index_export_into_a_missing_folder_refuses_in_one_line(tmp_path: Path) -> None:
    out = tmp_path / "typo" / "index.csv"
    proc = run("index", "export", "--out", str(out), "--db", str(tmp_path / "w.duckdb"))
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == USER_ERROR, proc.stderr[-800:]
    assert len(lines) == 1 and "does not exist" in lines[0], lines
    assert not (tmp_path / "typo").exists()


@pytest.mark.parametrize(("host", "said"), [("", "is empty"), ("999.1.1.1", "no address")])
def test_a_dashboard_host_that_is_no_address_is_refused(host: str, said: str) -> None:
    """Audit (CLI): `--host ''` (an unset shell variable) served the dashboard, which has no
    login, on every interface; `999.1.1.1` printed its URL, then Streamlit's traceback."""
    from typer.testing import CliRunner

    from gpurent.cli.app import build_app

    result = CliRunner().invoke(build_app(), ["dashboard", "--host", host])
    assert result.exit_code == 2 and said in result.stderr
