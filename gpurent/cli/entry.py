"""The console script's first step: a read-only command goes to the resident server when one
is up (`gpurent serve`), before anything heavy is imported; everything else, and every
command when no server answers, runs here as before (`gpurent.cli.app`)."""

from __future__ import annotations

import sys


def main() -> None:
    from gpurent.cli.resident.client import hand_over

    code = hand_over(sys.argv[1:])
    if code is not None:
        raise SystemExit(code)
    from gpurent.cli.app import main as run_here

    run_here()
