"""Run the real `gpurent` CLI: in-process for quick read commands, as a process for crawls."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from typer.testing import CliRunner

from gpurent.cli.app import build_app, expand_optional_values


def invoke(*args: str) -> Any:
    result = CliRunner().invoke(build_app(), expand_optional_values(list(args)))
    if result.exit_code != 0:
        raise AssertionError(
            f"gpurent {' '.join(args)} exited {result.exit_code}\n{result.output}\n{result.exception!r}"
        )
    return result


def invoke_json(*args: str) -> Any:
    return json.loads(invoke(*args, "--format", "json").stdout)


def run_gpurent(
    *args: str, timeout: float = 300, expect: int = 0
) -> subprocess.CompletedProcess[str]:
    """`python -m gpurent ARGS` in its own process, talking to this session's Prefect API;
    it must exit ``expect`` (a crawl in which a provider failed exits 3).

    Flows run out of process because Prefect's log handlers keep the stream they first see,
    which an in-process runner closes between invocations.
    """
    from prefect.settings import PREFECT_API_URL

    env = dict(os.environ)
    api = PREFECT_API_URL.value()
    if api:
        env["PREFECT_API_URL"] = api
    proc = subprocess.run(
        [sys.executable, "-m", "gpurent", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )
    if proc.returncode != expect:
        raise AssertionError(
            f"gpurent {' '.join(args)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr[-3000:]}"
        )
    return proc


def run_gpurent_json(*args: str, expect: int = 0) -> Any:
    return json.loads(run_gpurent(*args, "--format", "json", expect=expect).stdout)
