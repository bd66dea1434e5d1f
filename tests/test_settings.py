"""Settings from GPURENT_ variables (gpurent_core.config): each field read as its type, the
name's case ignored, blank as unset, a bad value refused in one line naming the variable."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpurent_core.config import SettingError, Settings, default_db_path, settings_from
from gpurent_core.defaults import DEFAULT_CURRENCY
from warehouse.db import connect

TEXT_FIELDS = ("chromium", "currency", "lake_catalog", "storage_url")
PATH_FIELDS = ("db", "work_dir", "lake_data")


def test_nothing_set_is_the_defaults() -> None:
    settings = settings_from({"PATH": "/bin", "HOME": "/root"})
    assert settings == Settings()
    assert settings.db == default_db_path()
    assert settings.currency == DEFAULT_CURRENCY
    assert settings.lock_wait_s is None and settings.lake_catalog is None


def test_every_field_has_a_reader_and_a_documented_variable() -> None:
    names = {spec.name for spec in fields(Settings)}
    assert names == {*TEXT_FIELDS, *PATH_FIELDS, "lock_wait_s"}
    source = Path(__file__).parents[1].joinpath("gpurent_core", "config.py").read_text("utf-8")
    for name in names:
        assert f"(GPURENT_{name.upper()}" in source  # the field's docstring names it


def test_each_variable_sets_its_field_as_its_type() -> None:
    settings = settings_from(
        {
            "GPURENT_DB": "/data/g.duckdb",
            "GPURENT_WORK_DIR": "/data/work",
            "GPURENT_LAKE_DATA": "/shared/lake",
            "GPURENT_CHROMIUM": "/usr/bin/chromium",
            "GPURENT_CURRENCY": "USD",
            "GPURENT_LAKE_CATALOG": "dbname=gpurent host=db.internal",
            "GPURENT_STORAGE_URL": "s3://bucket/feeds",
            "GPURENT_LOCK_WAIT_S": "7.5",
        }
    )
    assert settings.db == Path("/data/g.duckdb") and isinstance(settings.db, Path)
    assert settings.work_dir == Path("/data/work") and settings.lake_data == Path("/shared/lake")
    assert settings.chromium_path() == "/usr/bin/chromium"
    assert settings.currency == "USD"
    assert settings.lake_catalog == "dbname=gpurent host=db.internal"
    assert settings.storage_url == "s3://bucket/feeds"
    assert settings.lock_wait_s == 7.5
    assert settings.feeds_dir() == Path("/data/work").resolve()


def test_the_names_case_does_not_matter_and_other_variables_are_left_alone() -> None:
    settings = settings_from({"gpurent_currency": "EUR", "Gpurent_Lock_Wait_S": "0"})
    assert settings.currency == "EUR" and settings.lock_wait_s == 0
    # GPURENT_FX is gpurent_core.fx's; an unknown GPURENT_ name is not an error.
    assert settings_from({"GPURENT_FX": "USD/CNY=7.1", "GPURENT_NOPE": "x"}) == Settings()


@pytest.mark.parametrize("blank", ["", "  ", "\t"])
def test_a_blank_value_is_unset(blank: str) -> None:
    environ = {f"GPURENT_{spec.name.upper()}": blank for spec in fields(Settings)}
    assert settings_from(environ) == Settings()


@pytest.mark.parametrize("value", ["soon", "-1", "nan", "inf", "1e999", "7,5"])
def test_a_bad_lock_wait_is_refused_naming_the_variable(value: str) -> None:
    with pytest.raises(SettingError) as refused:
        settings_from({"GPURENT_LOCK_WAIT_S": value})
    message = str(refused.value)
    assert message.startswith("bad setting: GPURENT_LOCK_WAIT_S=")
    assert repr(value) in message and "seconds >= 0" in message


@given(
    name=st.sampled_from(TEXT_FIELDS + PATH_FIELDS),
    text=st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1).filter(
        lambda t: t.strip() != "" and "\x00" not in t
    ),
)
def test_any_text_is_read_as_given_less_surrounding_blanks(name: str, text: str) -> None:
    settings = settings_from({f"GPURENT_{name.upper()}": text})
    expected = text.strip()
    assert getattr(settings, name) == (Path(expected) if name in PATH_FIELDS else expected)


def test_a_command_says_a_bad_setting_in_one_line(tmp_path: Path) -> None:
    db = tmp_path / "g.duckdb"
    connect(db).close()  # a migrated, empty warehouse: the read waits on the setting
    env = {**os.environ, "GPURENT_LOCK_WAIT_S": "soon"}
    done = subprocess.run(
        [sys.executable, "-m", "gpurent", "cheapest", "--min-vram", "32", "--db", str(db)],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "gpurent: bad setting: GPURENT_LOCK_WAIT_S='soon': expected a number of seconds >= 0"
    ]
