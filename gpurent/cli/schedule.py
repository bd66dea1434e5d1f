"""`gpurent schedule`: serve the nightly crawl and the watch poll as Prefect deployments."""

from __future__ import annotations

import os
from typing import Annotated
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import typer

from gpurent.cli.common import DbOption, settings, writable_db
from gpurent.cli.crawl import PREFECT_DEFAULTS
from gpurent.cli.errors import refuse

NO_SERVER = (
    "schedules need a Prefect server (the ephemeral one cannot schedule): run "
    "`prefect server start` in another terminal, export "
    "PREFECT_API_URL=http://127.0.0.1:4200/api here, and run `gpurent schedule` again"
)


def prefect_api_url() -> str | None:
    """The Prefect API this process would talk to (environment first, then the profile)."""
    from prefect.settings import PREFECT_API_URL

    return os.environ.get("PREFECT_API_URL") or PREFECT_API_URL.value() or None


# The commands of this module; the console script (gpurent.cli.app) adds them to its app.
app = typer.Typer()


@app.command()
def schedule(
    nightly_cron: Annotated[
        str,
        typer.Option("--nightly-cron", help="Cron line of the full crawl."),
    ] = "0 2 * * *",
    timezone: Annotated[
        str, typer.Option("--timezone", help="Time zone the cron line is read in (IANA).")
    ] = "Asia/Shanghai",
    watch_every: Annotated[
        int,
        typer.Option(
            "--watch-every",
            min=10,
            help="Seconds between watch polls (each provider is "
            "still polled at most once per its own minimum interval).",
        ),
    ] = 300,
    db: DbOption = None,
) -> None:
    """Run the schedules until stopped: the nightly crawl (cron) and the watch poll (interval).

    Both are Prefect deployments served by this process, one flow run at a time (they
    share one DuckDB file). Needs a Prefect server (`prefect server start`) and
    PREFECT_API_URL pointing at it. For work pools and workers, see prefect.yaml.
    """
    from prefect.schedules import validate_cron_string

    try:
        validate_cron_string(nightly_cron)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--nightly-cron") from exc
    try:
        ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise typer.BadParameter(f"unknown time zone {timezone!r}") from exc
    path = writable_db(db)  # the schedules' crawls would fail on a bad --db every night
    for key, value in PREFECT_DEFAULTS.items():
        os.environ.setdefault(key, value)
    if not prefect_api_url():
        refuse(NO_SERVER)

    from flows import schedule as schedules

    config = schedules.ScheduleConfig(
        db_path=path,
        work_dir=settings().work_dir or path.parent / "feeds",
        nightly_cron=nightly_cron,
        timezone=timezone,
        watch_every_s=watch_every,
    )
    typer.echo(
        f"serving {schedules.NIGHTLY_DEPLOYMENT} ({nightly_cron}, {timezone}) and "
        f"{schedules.WATCH_DEPLOYMENT} (every {watch_every} s) for {path}; Ctrl-C stops"
    )
    schedules.serve_schedules(config)
