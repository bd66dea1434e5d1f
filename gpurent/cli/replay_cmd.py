"""`gpurent replay serve|check`: the local replay server for demos and recording work."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

ROOT_OPTION = Annotated[
    Path | None,
    typer.Option("--root", help="Recordings folder (default: the replay package's recordings/)."),
]


# The commands of this module; the console script (gpurent.cli.app) adds them to its app.
app = typer.Typer()

group = typer.Typer(
    help="Serve recorded provider responses on 127.0.0.1 (no internet).",
    no_args_is_help=True,
)


def serve(
    scene: Annotated[str, typer.Option(help="Scene to serve.")] = "default",
    step: Annotated[int, typer.Option(min=1, help="Step of the scene.")] = 1,
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port; 0 picks a free one.")] = 0,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    root: ROOT_OPTION = None,
    fault: Annotated[
        list[str] | None,
        typer.Option(
            "--fault",
            metavar="SPEC",
            help="PROVIDER:PATH[:key=value,...] with keys method, status, retry_after, "
            "delay_s, truncate_at, times (PATH '*' = all). Repeatable. "
            "Example: vastai:/api/v0/bundles/:status=429,retry_after=5,times=1",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option(help="Do not log each request to stderr.")] = False,
) -> None:
    """Serve a scene until Ctrl-C; a spider for provider P uses <URL>/P as base URL."""
    # Imported here so other gpurent commands do not pay for the replay package.
    from replay import RecordingError, ReplayServer, format_fault_spec, parse_fault_spec
    from replay.cli import configure_logging, install_stop_handler, serve_until_interrupted

    console = Console()
    try:
        faults = [parse_fault_spec(spec) for spec in fault or []]
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--fault") from exc
    try:
        server = ReplayServer(
            root=root, scene=scene, step=step, host=host, port=port, faults=faults
        )
    except (RecordingError, ValueError) as exc:
        Console(stderr=True).print(f"[red]error:[/red] {exc}", markup=True, highlight=False)
        raise typer.Exit(2) from exc
    configure_logging(quiet)
    stop = install_stop_handler()  # before the URL line a caller may act on (SIGTERM race)
    server.start()
    # The bare URL first, so a script can read it from the first line.
    console.print(server.url, markup=False, highlight=False, soft_wrap=True)
    table = Table(title=f"scene {server.scene}, step {server.step}/{server.steps}")
    table.add_column("provider")
    table.add_column("base URL")
    for provider in server.providers():
        table.add_row(provider, server.base_url(provider))
    console.print(table)
    for item in faults:
        console.print(f"fault {format_fault_spec(item)}", markup=False, highlight=False)
    console.print("Ctrl-C to stop")
    serve_until_interrupted(server, stop)


def check(root: ROOT_OPTION = None) -> None:
    """Validate the recordings: scene files, routes, body files; exit 1 on problems."""
    from replay import load_recordings, validate_recordings

    console = Console()
    problems = validate_recordings(root)
    if problems:
        table = Table(title=f"{len(problems)} problem(s) in the recordings")
        table.add_column("file")
        table.add_column("problem")
        for problem in problems:
            where, _, what = problem.partition(": ")
            table.add_row(where, what)
        console.print(table)
        raise typer.Exit(1)
    recordings = load_recordings(root)
    table = Table(title=f"recordings OK: {recordings.root}")
    for column in ("scene", "extends", "steps", "providers", "routes", "description"):
        table.add_column(column)
    for name in sorted(recordings.scenes):
        scene = recordings.scenes[name]
        table.add_row(
            name,
            scene.extends or "",
            str(scene.steps),
            ", ".join(recordings.providers(name)),
            str(sum(len(r) for r in scene.routes.values())),
            scene.description,
        )
    console.print(table)


group.command("serve")(serve)
group.command("check")(check)
app.add_typer(group, name="replay")
