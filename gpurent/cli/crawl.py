"""`gpurent crawl`: run the nightly crawl flow once, with a progress display."""

from __future__ import annotations

import contextvars
import os
import signal
import threading
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from gpurent.api.warehouse import warehouse_label
from gpurent.cli.common import (
    DbOption,
    FormatOption,
    ReplayOption,
    SceneOption,
    StepOption,
    settings,
    writable_db,
)
from gpurent.cli.errors import refuse
from gpurent.cli.output import OutputFormat, render

# Prefect's ephemeral API server needs 15-20 s to start on a small machine; give it room,
# and keep its INFO chatter out of a command-line tool's output unless asked for.
PREFECT_DEFAULTS = {
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "PREFECT_LOGGING_LEVEL": "WARNING",
    # No network but the package registries here, and no phoning home anyway.
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
}

SUMMARY_COLUMNS = ["provider", "status", "offers", "quarantined", "duration_s", "message"]


def _prepare_prefect_env() -> None:
    for key, value in PREFECT_DEFAULTS.items():
        os.environ.setdefault(key, value)


def feeds_dir(db: Path) -> Path:
    """Where a crawl keeps its feeds and reports: GPURENT_WORK_DIR, else beside the DB."""
    return settings().work_dir or db.parent / "feeds"


def pending_load_line(db: Path, rows: list[dict[str, Any]]) -> str | None:
    """One line saying how to load the runs this crawl could not store (None: all stored)."""
    from flows.crawl import PENDING_MANIFEST
    from flows.nightly import load_later_command

    if not rows:
        return None
    manifest = feeds_dir(db) / str(rows[0]["run_id"]) / PENDING_MANIFEST
    if not manifest.is_file():
        return None
    return (
        "warehouse busy: some runs were not loaded (their feeds are kept); "
        f"load them with `{load_later_command(manifest, db)}`"
    )


def run_crawl_flow(
    *,
    db: Path,
    providers: list[str],
    replay_dir: Path | None,
    replay: bool,
    scene: str,
    step: int,
    demo_credentials: bool,
    show_progress: bool,
) -> list[dict[str, Any]]:
    """Run the flow in a worker thread while the main thread shows per-provider progress."""
    _prepare_prefect_env()
    from flows.nightly import new_run_id, nightly_crawl
    from flows.providers import check_names, provider_names

    chosen = check_names(providers) if providers else provider_names()
    work_dir = feeds_dir(db)
    run_id = new_run_id()
    result: dict[str, Any] = {}

    def target() -> None:
        # Ctrl-C is the main thread's to handle (it ends every process the crawl started,
        # see gpurent.cli.children). A blocked signal mask is inherited by the threads and
        # processes this thread starts, so the temporary Prefect server and the crawlers
        # never see the terminal's SIGINT half-way through their start-up.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            result["rows"] = nightly_crawl(
                db_path=db,
                work_dir=work_dir,
                providers=chosen,
                replay=replay,
                replay_dir=replay_dir,
                scene=scene,
                step=step,
                demo_credentials=demo_credentials,
                run_id=run_id,
            )
        except BaseException as exc:  # surfaced in the main thread below
            result["error"] = exc

    # Prefect keeps its settings (a test harness's API URL, say) in context variables,
    # which a new thread does not inherit unless given a copy.
    context = contextvars.copy_context()
    worker = threading.Thread(target=context.run, args=(target,), name="gpurent-crawl", daemon=True)
    worker.start()
    reports = work_dir / run_id
    console = Console(stderr=True)
    with Progress(
        SpinnerColumn(),
        TextColumn("[bold]crawl[/] {task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} providers"),
        TimeElapsedColumn(),
        console=console,
        disable=not show_progress,
        transient=True,
    ) as progress:
        bar = progress.add_task("starting Prefect", total=len(chosen))
        while worker.is_alive():
            done = sorted(p.name.removesuffix(".run.json") for p in reports.glob("*.run.json"))
            label = f"done: {', '.join(done)}" if done else "crawling " + ", ".join(chosen)
            progress.update(bar, completed=len(done), description=label)
            worker.join(0.5)
        progress.update(bar, completed=len(chosen), description="loading the warehouse: done")
    if "error" in result:
        raise result["error"]
    rows: list[dict[str, Any]] = result["rows"]
    return rows


# The commands of this module; the console script (gpurent.cli.app) adds them to its app.
app = typer.Typer()


@app.command()
def crawl(
    provider: Annotated[
        list[str] | None,
        typer.Option("--provider", "-p", help="Crawl only this provider (repeatable)."),
    ] = None,
    replay: ReplayOption = None,
    scene: SceneOption = "default",
    step: StepOption = 1,
    demo_credentials: Annotated[
        bool,
        typer.Option(
            help="In replay mode, give crawlers a dummy token so token-only APIs answer "
            "(real tokens are never sent to the replay server).",
        ),
    ] = True,
    db: DbOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Run the crawl flow once: each provider in its own process, then load the warehouse.

    Provider runs end ok, partial, failed, auth_required or layout_changed; only good runs
    change what `offers` and `cheapest` show. Exit 0: every run stored, none failed; 1:
    every provider failed or was refused (nothing read); 2: runs left for `gpurent load`
    (the warehouse was busy); 3: some provider failed or changed its layout.
    """
    path = writable_db(db)  # a bad --db is said before the crawl, not after it
    replay_dir = Path(replay).expanduser() if replay else None
    if replay_dir is not None and not replay_dir.is_dir():
        raise typer.BadParameter(f"{replay_dir} is not a directory", param_hint="--replay")
    check_request(list(provider or []), replay_dir if replay is not None else None, scene, step)
    rows = run_crawl_flow(
        db=path,
        providers=list(provider or []),
        replay_dir=replay_dir,
        replay=replay is not None,
        scene=scene,
        step=step,
        demo_credentials=demo_credentials,
        show_progress=fmt is OutputFormat.TABLE,
    )
    where = warehouse_label(path)  # a lake's rows never reach the file path
    render(rows, fmt, columns=SUMMARY_COLUMNS, title=f"crawl into {where}")
    if fmt is OutputFormat.TABLE:
        Console().print(f"database: {where}", style="dim", markup=False)
    later = pending_load_line(path, rows)
    if later is not None:
        Console(stderr=True).print(later, markup=False, highlight=False, soft_wrap=True)
    # (Runs kept for a later load because the warehouse was busy were read: not this.)
    if later is None and rows and all(row["status"] in NOTHING_READ for row in rows):
        refuse("every provider failed or was refused: nothing was read", code=1)
    # A nightly job's exit says whether it needs a look (cron mails on it): the runs left
    # for a later load, and a provider that failed or changed its layout, are not "done".
    if later is not None:
        raise typer.Exit(NOT_ALL_STORED)
    broken = [row["provider"] for row in rows if row["status"] in BROKEN]
    if broken:
        refuse(
            f"{len(broken)} provider(s) failed or changed layout ({', '.join(broken)}): their "
            "previous offers are kept, stale; `gpurent providers` says why",
            code=SOME_FAILED,
        )


# Statuses of a run that read nothing the warehouse could use.
NOTHING_READ = frozenset({"failed", "layout_changed", "auth_required"})
# Statuses that want a look: a missing key (auth_required) is configuration, said as such.
BROKEN = frozenset({"failed", "layout_changed"})
NOT_ALL_STORED = 2
"""Exit code: runs crawled but left for `gpurent load` (the warehouse was busy)."""
SOME_FAILED = 3
"""Exit code: some provider failed or changed its layout; the others were stored."""


def check_request(providers: list[str], replay_dir: Path | None, scene: str, step: int) -> None:
    """Refuse, in one line and before Prefect starts, a provider, replay scene or step that
    does not exist (``replay_dir``: the recordings of a replay crawl; None: no replay,
    so ``--scene`` / ``--step`` have nothing to name)."""
    from flows.providers import check_names

    try:
        check_names(providers)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--provider") from None
    if replay_dir is None and (scene, step) == ("default", 1):
        return
    from replay.loader import load_recordings

    scenes = load_recordings(replay_dir).scenes
    if scene not in scenes:
        known = ", ".join(sorted(scenes))
        raise typer.BadParameter(f"no scene {scene!r} (known: {known})", param_hint="--scene")
    if step > scenes[scene].steps:
        raise typer.BadParameter(
            f"scene {scene!r} has steps 1..{scenes[scene].steps}", param_hint="--step"
        )
