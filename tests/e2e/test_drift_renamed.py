"""Truth under drift, end to end, a: the stock field renamed in every item. Real watch polls
(the Prefect flow `gpurent watch poll` runs, here in this process; one `scrapy crawl`
process per provider, the replay server, a DuckDB file, apprise to a local webhook) over a
copy of the default recordings spoilt at test time (`drift_kit`), every provider at once.

The module's world (`drift_world`) starts as the baseline poll left it, a watch on every
card; then one poll of the spoilt recordings and one poll of the default recordings again.
The two polls run once (a class fixture); the per-provider tests read them, so the test ids
say which provider keeps which promise. The other scenarios, one broken item
(test_drift_broken.py) and one failing page (test_drift_failing.py), are modules with worlds
of their own, so pytest-xdist (`--dist loadscope`) can run the three on different workers.
Rules of truth 2, 6, 7, 9 and 10 (the three modules together).
"""

from __future__ import annotations

import pytest

from tests.e2e.drift_kit import RENAMES
from tests.e2e.drift_world import PROVIDERS, DriftScenario, Round, state


class TestRenamed(DriftScenario):
    scenario = "renamed"

    @pytest.mark.parametrize("provider", PROVIDERS)
    def test_a_renamed_stock_field_is_named_and_flips_no_state(
        self, provider: str, done: Round
    ) -> None:
        poll = done.drift
        assert poll.statuses[provider] in ("layout_changed", "partial"), poll.summary(provider)
        report = poll.report(provider)
        named = " ".join([*report.get("missing_fields", []), *report["layout_errors"]])
        assert RENAMES[provider].expected_name in named, report
        before, after = done.before.of(provider), poll.of(provider)
        assert after.keys() == before.keys()
        assert {k: state(r) for k, r in after.items()} == {k: state(r) for k, r in before.items()}
