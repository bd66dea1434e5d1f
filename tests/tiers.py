"""Two tiers of tests: `make test-fast` after each change, `make test` (everything) in CI.

A test is in the slow tier (marker ``slow``) when it pays for a real outside part: a crawl
or a `gpurent` command in its own process, a Prefect flow, Chromium, Streamlit, many
processes at once. The tier is worked out from what a test module uses, so a new test lands
in the right tier without anyone remembering to mark it; ``@pytest.mark.slow`` marks one by
hand.

Hypothesis runs its full example counts in the whole suite (profile ``full``, the default)
and fewer in the fast tier (``--hypothesis-profile fast``, which `make test-fast` passes),
with no deadline in either. Tests that set their own ``max_examples`` keep it in both.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from hypothesis import settings

# No deadline in either: a per-example time limit fails a test on a busy machine (an
# example that took 253 ms beside a parallel run), and the suite must pass on one.
# Performance is the benchmarks' to measure.
settings.register_profile("full", settings.get_profile("default"), deadline=None)
settings.register_profile("fast", max_examples=20, deadline=None)
settings.load_profile("full")

# What a module uses that costs seconds per test: a process, a flow server, a browser.
_SLOW_USES = (
    "subprocess",
    "Popen",
    "run_gpurent",
    "crawl_kit",
    "run_crawl",
    "prefect_harness",
    "multiprocessing",
    "sync_playwright",
    "streamlit",
)
# Fixtures that start such a part for the tests that ask for them.
_SLOW_FIXTURES = frozenset({"prefect_harness"})
_SLOW_MARKERS = ("browser", "prefect")


@cache
def _module_is_slow(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    return any(use in text for use in _SLOW_USES)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    slow = pytest.mark.slow
    for item in items:
        if item.get_closest_marker("slow"):
            continue
        fixtures = set(getattr(item, "fixturenames", ()))
        if (
            fixtures & _SLOW_FIXTURES
            or any(item.get_closest_marker(m) for m in _SLOW_MARKERS)
            or _module_is_slow(Path(str(item.fspath)))
        ):
            item.add_marker(slow)
