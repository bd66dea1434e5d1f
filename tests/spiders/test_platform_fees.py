"""Platform-wide fees come from the billing facts, and every offer of the provider carries them.

The facts file is the one place these terms live (the providers' billing_facts.toml files); a parser
that kept its own copy, or forgot to attach them, would show here against the recorded pages.
"""

from __future__ import annotations

import pytest
from spider_fixture_cases import cases

from gpurent_core.billing_facts import load_billing_facts, platform_fees

# Providers whose fixtures hold feed lines (Compshare's and UCloud's hold summaries; their
# parser tests check their cloud-disk fee directly).
WITH_FEES = sorted(
    {f.provider for f in load_billing_facts() if f.fees} - {"compshare", "ucloud"},
)


def test_some_providers_declare_platform_fees() -> None:
    assert {"autodl", "runpod", "paperspace", "xiangongyun"} <= set(WITH_FEES)


@pytest.mark.parametrize("provider", WITH_FEES)
def test_every_recorded_offer_carries_the_declared_fees(provider: str) -> None:
    declared = [fee.model_dump(mode="json") for fee in platform_fees(provider)]
    offers = [
        record
        for case in cases(provider)
        for record in case.expected_records()
        if isinstance(record, dict) and record.get("kind") == "offer"
    ]
    assert offers, f"{provider}: no recorded offers to check"
    for offer in offers:
        for fee in declared:
            assert fee in offer["fees"], (provider, offer["offer_key"], fee["fee_type"])
