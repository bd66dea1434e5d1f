"""`gpurent load FEEDS...`: store the crawl runs a load could not, from their manifests.

A crawl lists its runs in a pending-load manifest (``pending-load.json`` in the run's folder
under the feeds directory) and strikes each off as it is stored. A load that gave up on a
busy warehouse, or a crawl killed mid-load, leaves the manifest behind; this command loads
what it lists. Loading is idempotent: a run already stored is skipped and struck off too,
so running it twice, or on a manifest a crawl finished after all, changes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from gpurent.cli.common import DbOption, FormatOption, writable_db
from gpurent.cli.output import OutputFormat, render

LOAD_COLUMNS = ["provider", "run_id", "status", "offers", "quarantined", "result", "message"]


def load_manifests(db: Path, paths: list[Path]) -> tuple[list[dict[str, Any]], str | None]:
    """Load every run the manifests under ``paths`` list: (one row per run, busy line)."""
    from flows.crawl import ManifestError, find_manifests, manifest_db, read_manifest
    from flows.nightly import load_and_track
    from warehouse.db import configured_lake

    missing = [p for p in paths if not p.exists()]
    if missing:
        raise typer.BadParameter(f"{missing[0]} does not exist", param_hint="FEEDS")
    rows: list[dict[str, Any]] = []
    for manifest in find_manifests(paths):
        meant = manifest_db(manifest)
        if meant is not None and configured_lake() is None and not _same_file(meant, db):
            # The runs were crawled for another warehouse: stored here, they would be gone
            # from the pending list there (nothing says so), and mix two histories.
            raise typer.BadParameter(
                f"{manifest} lists runs crawled for {meant}, not {db}: give --db {meant}",
                param_hint="--db",
            )
        try:
            outcomes = read_manifest(manifest)
        except ManifestError as exc:
            raise typer.BadParameter(str(exc), param_hint="FEEDS") from exc
        report = load_and_track(db, outcomes, manifest=manifest)
        rows += [
            {
                "provider": run.summary.provider,
                "run_id": run.outcome.run_id,
                "status": run.summary.status,
                "offers": run.summary.offers,
                "quarantined": run.summary.quarantined,
                "result": run.state,
                "message": run.summary.message,
                "manifest": str(manifest),
            }
            for run in report.runs
        ]
        if report.busy is not None:
            return rows, report.busy
    return rows, None


def _same_file(a: Path, b: Path) -> bool:
    return a.expanduser().resolve() == b.expanduser().resolve()


# The commands of this module; the console script (gpurent.cli.app) adds them to its app.
app = typer.Typer()


@app.command()
def load(
    feeds: Annotated[
        list[Path],
        typer.Argument(
            help="Pending-load manifests (pending-load.json), or folders to search for "
            "them, such as the crawl feeds folder.",
            show_default=False,
        ),
    ],
    db: DbOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Load crawl runs that are still pending (a load gave up on a busy warehouse, or a
    crawl was killed while loading); runs already stored are skipped.

    Waits up to GPURENT_LOCK_WAIT_S (default 120 s) for another writer. Exit 2 with a
    "warehouse busy" line if it gives up: what is not loaded stays pending.
    """
    path = writable_db(db)  # before a manifest is read or rewritten
    rows, busy = load_manifests(path, [Path(f).expanduser() for f in feeds])
    if not rows and busy is None:
        Console(stderr=True).print("nothing pending: no pending-load manifest there")
    else:
        render(rows, fmt, columns=LOAD_COLUMNS, title=f"load into {path}")
    if busy is not None:
        from warehouse.errors import WarehouseLocked

        # main() says it in one line, exit 2; the manifest still lists what is left.
        raise WarehouseLocked(f"{busy}; what is not loaded stays pending")
