"""Paired medians: each gpurent figure and its baseline, measured alternately in one run.

On a shared machine other processes only ever add time, and they come and go; measuring
the two sides in alternation (gpurent first, then the baseline first) exposes both to the
same noise, and the median of the tries drops the odd outlier.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Pair:
    """Median of the tries of one figure and of its baseline (seconds, or MiB for RSS)."""

    ours: float
    base: float

    @property
    def ratio(self) -> float:
        return self.ours / self.base if self.base else float("inf")


def paired(
    ours: Callable[[int], dict[str, float]],
    base: Callable[[int], dict[str, float]],
    repeats: int,
) -> tuple[dict[str, float], dict[str, float]]:
    """Run ``ours(k)`` and ``base(k)`` ``repeats`` times, alternating which goes first;
    returns the median of every key of each side's answers."""
    mine: list[dict[str, float]] = []
    theirs: list[dict[str, float]] = []
    for k in range(repeats):
        if k % 2 == 0:
            mine.append(ours(k))
            theirs.append(base(k))
        else:
            theirs.append(base(k))
            mine.append(ours(k))
    return _medians(mine), _medians(theirs)


def rotated(
    sides: Mapping[str, Callable[[int], dict[str, float]]], repeats: int
) -> dict[str, dict[str, float]]:
    """``paired`` for more than two sides: each try runs every side once, the order turned
    by one place from the previous try's, so each side goes first, middle and last alike;
    returns the median of every key of each side's answers."""
    names = list(sides)
    answers: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    for k in range(repeats):
        shift = k % len(names)
        for name in names[shift:] + names[:shift]:
            answers[name].append(sides[name](k))
    return {name: _medians(got) for name, got in answers.items()}


def _medians(answers: list[dict[str, float]]) -> dict[str, float]:
    return {key: statistics.median(a[key] for a in answers) for key in answers[0]}


def child_env() -> dict[str, str]:
    """The environment of a measured child: the repo on the path, no colours."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["NO_COLOR"] = "1"
    env.setdefault("GPURENT_CURRENCY", "CNY")
    return env


def run_json(args: Sequence[str], *, timeout: float = 3600) -> dict[str, float]:
    """Run a Python child that prints one JSON line last; return that line."""
    done = subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {done.stderr.strip()[-2000:]}")
    answer: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


def wall(
    args: Sequence[str], *, timeout: float = 3600, env: Mapping[str, str] | None = None
) -> dict[str, float]:
    """Wall seconds of a command (start-up included), which must succeed; ``env`` is added
    to the child's environment."""
    started = time.perf_counter()
    done = subprocess.run(
        list(args),
        cwd=ROOT,
        env={**child_env(), **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {done.stderr.strip()[-2000:]}")
    return {"seconds": seconds}
