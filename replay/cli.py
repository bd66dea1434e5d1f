"""`python -m replay`: serve a scene until Ctrl-C (the `gpurent replay serve` twin)."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from replay.faults import Fault, format_fault_spec, parse_fault_spec
from replay.loader import RecordingError
from replay.model import DEFAULT_SCENE
from replay.server import ReplayServer

FAULT_HELP = (
    "PROVIDER:PATH[:key=value,...], keys: method, status, retry_after, delay_s, "
    "truncate_at, times; PATH '*' = every path. Repeatable. "
    "Example: vastai:/api/v0/bundles/:status=429,retry_after=5,times=1"
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m replay",
        description="Serve recorded provider responses on loopback. "
        "A spider for provider P uses <printed URL>/P as its base URL.",
    )
    parser.add_argument("--scene", default=DEFAULT_SCENE, help="scene to serve (default: default)")
    parser.add_argument("--step", type=int, default=1, help="step of the scene (default: 1)")
    parser.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="address (default: 127.0.0.1)")
    parser.add_argument("--root", type=Path, default=None, help="recordings folder")
    parser.add_argument("--fault", action="append", default=[], metavar="SPEC", help=FAULT_HELP)
    parser.add_argument("--quiet", action="store_true", help="do not log each request")
    return parser


def configure_logging(quiet: bool) -> None:
    """Requests and 404 explanations to stderr; stdout stays for the URL."""
    logging.basicConfig(
        level=logging.WARNING if quiet else logging.INFO,
        format="%(asctime)s %(name)s %(message)s",
        stream=sys.stderr,
    )


def install_stop_handler() -> threading.Event:
    """An event that SIGTERM sets, with the handler in place from now on.

    Installed before the server announces itself: whoever reads the announcement may send
    SIGTERM at once, and a signal that lands before the handler would kill the process
    with the default action instead of a clean stop.
    """
    done = threading.Event()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: done.set())
    return done


def serve_until_interrupted(server: ReplayServer, done: threading.Event | None = None) -> None:
    """Block until Ctrl-C or SIGTERM (or ``done`` is set), then stop the server cleanly."""
    if done is None:
        done = install_stop_handler()
    try:
        while not done.wait(0.2):  # a timed wait keeps Ctrl-C responsive
            pass
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        faults: list[Fault] = [parse_fault_spec(spec) for spec in args.fault]
    except ValueError as exc:
        parser.error(str(exc))
    configure_logging(args.quiet)
    try:
        server = ReplayServer(
            root=args.root, scene=args.scene, step=args.step, host=args.host,
            port=args.port, faults=faults,
        )  # fmt: skip
    except RecordingError as exc:
        print(exc, file=sys.stderr)
        return 2
    except ValueError as exc:  # unknown scene, step out of range
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stop = install_stop_handler()  # before the first line a caller may act on
    server.start()
    # The URL alone on the first line: scripts and tests read it from there.
    print(server.url, flush=True)
    print(f"scene {server.scene}, step {server.step}/{server.steps}", flush=True)
    for provider in server.providers():
        print(f"  {provider:<16} {server.base_url(provider)}", flush=True)
    for fault in faults:
        print(f"fault {format_fault_spec(fault)}", flush=True)
    print("Ctrl-C to stop", flush=True)
    serve_until_interrupted(server, stop)
    return 0
