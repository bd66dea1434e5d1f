"""Schedules as Prefect deployments: the nightly crawl (cron, in a time zone) and the watch
poll (every few minutes), served by one process (``gpurent schedule``).

Prefect only schedules runs on a real API server (``prefect server start``), not on the
ephemeral one. Both flows write the one DuckDB file, so the runner executes one flow run at
a time (``limit=1``): a poll that comes due during the nightly crawl waits for it. A writer
outside the runner (a `gpurent crawl` or `gpurent load` by hand) is waited for too, up to
GPURENT_LOCK_WAIT_S; a nightly load that gives up keeps its runs pending for `gpurent load`.
Past one machine, ``prefect.yaml`` at the repository root declares the same deployments
for a work pool and its workers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from prefect.deployments.runner import EntrypointType
from prefect.schedules import Cron, Interval

from flows.nightly import nightly_crawl
from flows.watch import watch_poll

if TYPE_CHECKING:
    from prefect.deployments.runner import RunnerDeployment

NIGHTLY_DEPLOYMENT = "gpurent-nightly"
WATCH_DEPLOYMENT = "gpurent-watch-poll"
DEFAULT_NIGHTLY_CRON = "0 2 * * *"
DEFAULT_TIMEZONE = "Asia/Shanghai"
DEFAULT_WATCH_EVERY_S = 300
# Writers of one DuckDB file run one at a time.
RUNNER_LIMIT = 1


@dataclass(frozen=True)
class ScheduleConfig:
    db_path: Path
    work_dir: Path
    nightly_cron: str = DEFAULT_NIGHTLY_CRON
    timezone: str = DEFAULT_TIMEZONE
    watch_every_s: int = DEFAULT_WATCH_EVERY_S

    def __post_init__(self) -> None:
        if self.watch_every_s < 1:
            raise ValueError(f"watch interval must be at least 1 s, got {self.watch_every_s}")


def build_deployments(config: ScheduleConfig) -> list[RunnerDeployment]:
    """The two deployments, with their schedules; nothing is registered or served here."""
    params = {"db_path": str(config.db_path), "work_dir": str(config.work_dir)}
    nightly = nightly_crawl.to_deployment(
        name=NIGHTLY_DEPLOYMENT,
        schedules=[Cron(config.nightly_cron, timezone=config.timezone)],
        parameters=params,
        description="Crawl every provider and load the warehouse.",
        tags=["gpurent"],
        # Module paths work from any working directory (the package is installed).
        entrypoint_type=EntrypointType.MODULE_PATH,
    )
    watch = watch_poll.to_deployment(
        name=WATCH_DEPLOYMENT,
        schedules=[Interval(timedelta(seconds=config.watch_every_s), timezone=config.timezone)],
        parameters=params,
        description="Poll the providers active watches need; send restock and price alerts.",
        tags=["gpurent"],
        entrypoint_type=EntrypointType.MODULE_PATH,
    )
    # to_deployment is typed as maybe-async (Prefect's sync/async dispatch); called from
    # sync code it returns the deployment itself.
    return [cast("RunnerDeployment", nightly), cast("RunnerDeployment", watch)]


def serve_schedules(
    config: ScheduleConfig, *, serve: Callable[..., Any] | None = None
) -> list[RunnerDeployment]:
    """Register and serve both deployments until interrupted (``serve`` is for tests)."""
    from prefect import serve as prefect_serve

    deployments = build_deployments(config)
    (serve or prefect_serve)(*deployments, limit=RUNNER_LIMIT)
    return deployments
