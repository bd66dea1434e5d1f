"""Schedules: the two deployments are built with the right schedules; nothing serves forever."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from prefect.client.schemas.schedules import CronSchedule, IntervalSchedule
from typer.testing import CliRunner

from flows import schedule
from gpurent.cli import schedule as schedule_cli
from tests.watch.watch_kit import build_cli, cli

REPO = Path(__file__).resolve().parents[2]


def cron_of(deployment: Any) -> CronSchedule:
    (item,) = deployment.schedules
    assert isinstance(item.schedule, CronSchedule)
    return item.schedule


def interval_of(deployment: Any) -> IntervalSchedule:
    (item,) = deployment.schedules
    assert isinstance(item.schedule, IntervalSchedule)
    return item.schedule


def config(tmp_path: Path, **kw: Any) -> schedule.ScheduleConfig:
    return schedule.ScheduleConfig(db_path=tmp_path / "g.duckdb", work_dir=tmp_path / "f", **kw)


def test_deployments_carry_cron_and_interval(tmp_path: Path) -> None:
    nightly, watch = schedule.build_deployments(
        config(tmp_path, nightly_cron="30 3 * * *", timezone="Europe/Paris", watch_every_s=120)
    )
    assert nightly.name == "gpurent-nightly" and watch.name == "gpurent-watch-poll"
    assert cron_of(nightly).cron == "30 3 * * *"
    assert cron_of(nightly).timezone == "Europe/Paris"
    assert interval_of(watch).interval == timedelta(seconds=120)
    for d in (nightly, watch):
        assert d.parameters == {
            "db_path": str(tmp_path / "g.duckdb"),
            "work_dir": str(tmp_path / "f"),
        }
    assert nightly.entrypoint == "flows.nightly.nightly_crawl"
    assert watch.entrypoint == "flows.watch.watch_poll"


def test_defaults_are_two_in_the_morning_shanghai_and_five_minutes(tmp_path: Path) -> None:
    nightly, watch = schedule.build_deployments(config(tmp_path))
    assert cron_of(nightly).cron == "0 2 * * *"
    assert cron_of(nightly).timezone == "Asia/Shanghai"
    assert interval_of(watch).interval == timedelta(minutes=5)


def test_serve_runs_one_flow_at_a_time(tmp_path: Path) -> None:
    served: list[Any] = []

    def fake_serve(*deployments: Any, **kwargs: Any) -> None:
        served.append((deployments, kwargs))

    schedule.serve_schedules(config(tmp_path), serve=fake_serve)
    ((deployments, kwargs),) = served
    assert [d.name for d in deployments] == ["gpurent-nightly", "gpurent-watch-poll"]
    assert kwargs == {"limit": 1}


def test_the_command_needs_a_prefect_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(schedule_cli, "prefect_api_url", lambda: None)
    result = CliRunner().invoke(build_cli(), ["schedule", "--db", str(tmp_path / "g.duckdb")])
    assert result.exit_code == 2
    assert "prefect server start" in result.output
    # One line, as every refusal: what is missing and the two steps that give it.
    assert result.output.count("\n") == 1 and result.output.startswith("gpurent: ")
    assert "PREFECT_API_URL=http://127.0.0.1:4200/api" in result.output


def test_the_command_serves_the_configured_schedules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(schedule_cli, "prefect_api_url", lambda: "http://127.0.0.1:4200/api")
    seen: list[schedule.ScheduleConfig] = []
    monkeypatch.setattr(schedule, "serve_schedules", seen.append)
    out = cli(
        "schedule", "--nightly-cron", "0 3 * * 1", "--timezone", "UTC", "--watch-every", "60",
        "--db", str(tmp_path / "g.duckdb"),
    ).stdout  # fmt: skip
    (got,) = seen
    assert (got.nightly_cron, got.timezone, got.watch_every_s) == ("0 3 * * 1", "UTC", 60)
    assert got.db_path == tmp_path / "g.duckdb"
    assert "every 60 s" in out


@pytest.mark.parametrize(
    "args",
    [["--nightly-cron", "every night"], ["--timezone", "Mars/Olympus"], ["--watch-every", "1"]],
)
def test_bad_schedules_are_refused(tmp_path: Path, args: list[str]) -> None:
    cli("schedule", *args, "--db", str(tmp_path / "g.duckdb"), code=2)


def test_prefect_yaml_declares_the_same_deployments() -> None:
    spec = yaml.safe_load((REPO / "prefect.yaml").read_text(encoding="utf-8"))
    by_name = {d["name"]: d for d in spec["deployments"]}
    nightly, watch = by_name["gpurent-nightly"], by_name["gpurent-watch-poll"]
    assert nightly["entrypoint"] == "flows/nightly.py:nightly_crawl"
    assert watch["entrypoint"] == "flows/watch.py:watch_poll"
    assert nightly["schedules"][0]["cron"] == schedule.DEFAULT_NIGHTLY_CRON
    assert nightly["schedules"][0]["timezone"] == schedule.DEFAULT_TIMEZONE
    assert watch["schedules"][0]["interval"] == schedule.DEFAULT_WATCH_EVERY_S
    for d in (nightly, watch):
        assert d["work_pool"]["name"] == "gpurent"
        assert d["concurrency_limit"] == 1


def test_prefect_yaml_is_what_prefect_deploy_reads() -> None:
    from prefect.cli.deploy._models import PrefectYamlModel

    spec = yaml.safe_load((REPO / "prefect.yaml").read_text(encoding="utf-8"))
    model = PrefectYamlModel.model_validate(spec)
    assert [d.name for d in model.deployments] == [
        "gpurent-nightly",
        "gpurent-watch-poll",
        "gpurent-crawl-provider",
        "gpurent-fanout",
    ]
