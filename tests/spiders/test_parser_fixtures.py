"""Every fixture case, `spiders/providers/<folder>/fixtures/<case>/`, parses to what its
folder says.

How each provider's parser is called on a case, and what its `output.json` holds, is
`parser_registry.PARSERS`; the provider's own `test_parsers_<provider>.py` holds only the
assertions that are not a fixture comparison.
"""

from __future__ import annotations

import pytest
from parser_registry import PARSERS, check
from spider_fixture_cases import (
    FIXTURE_PROVIDERS,
    Case,
    cases,
    covered_recordings,
    recorded_bodies,
)

PROVIDERS = sorted(FIXTURE_PROVIDERS)
ALL_CASES = [case for provider in PROVIDERS for case in cases(provider)]


def test_every_fixture_provider_has_a_parser_and_cases() -> None:
    assert sorted(PARSERS) == PROVIDERS
    assert all(cases(provider) for provider in PROVIDERS)


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda c: f"{c.provider}/{c.name}")
def test_case_parses_to_its_output(case: Case) -> None:
    check(case)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_recorded_page_has_a_parse_case(provider: str) -> None:
    assert recorded_bodies(provider) <= covered_recordings(provider)
