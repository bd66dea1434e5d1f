"""The billing facts file: its rules, the typed terms the cost engine reads, and its coverage."""

from __future__ import annotations

from decimal import Decimal

import pytest

from flows.providers import provider_infos
from gpurent_core.billing_facts import (
    CHECKLIST,
    BillingFactKind,
    BillingFactsError,
    BillingStart,
    BillingTerms,
    duration_text,
    load_billing_facts,
    parse_billing_facts,
    platform_fees,
    terms_for,
    unknown_facts,
)
from gpurent_core.model import BillingUnit, FeeBasis, FeeType

GOOD = """
[[fact]]
provider = "acme"
fact = "billing_granularity"
value = "per minute"
seconds = 60
source = "acme docs"
as_of = 2026-01-02

[[fact]]
provider = "acme"
fact = "storage_while_stopped"
value = "volumes 0.1 per GB-month, first 20 GB free"
source = "acme pricing"
as_of = 2026-01-02
fees = [{ type = "data_disk", amount = 0.1, currency = "USD", unit = "month", basis = "gb", included = 20, mandatory = true, while_stopped = true }]
"""


def test_typed_terms_and_fees_are_read_exactly() -> None:
    granularity, storage = parse_billing_facts(GOOD)
    assert granularity.seconds == 60 and granularity.fact is BillingFactKind.BILLING_GRANULARITY
    [fee] = storage.fees
    # TOML floats are read as Decimal: 0.1 stays 0.1, not 0.1000000000000000055...
    assert fee.amount == Decimal("0.1")
    assert (fee.fee_type, fee.unit, fee.basis) == (
        FeeType.DATA_DISK,
        BillingUnit.MONTH,
        FeeBasis.GB,
    )
    assert fee.included_quantity == Decimal(20) and fee.mandatory and fee.charged_while_stopped
    assert fee.note == "volumes 0.1 per GB-month, first 20 GB free (acme pricing, as of 2026-01-02)"
    assert granularity.used_in_cost() == "rounds each session up to 1 min"
    assert "beyond 20 free" in storage.used_in_cost()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("seconds = 60", 'seconds = 60\ncolour = "red"'), "unknown keys"),
        (('source = "acme docs"', 'source = " "'), "needs a value, a source"),
        (('fact = "billing_granularity"', 'fact = "billing_speed"'), "billing_speed"),
        (("seconds = 60", "seconds = 0"), "at least 1 second"),
        (("seconds = 60", 'seconds = 60\nstarts = "ready"'), "'starts' belongs"),
        (("amount = 0.1", "amount = true"), "must be a number"),
        (("amount = 0.1,", 'amount = 0.1, colour = "red",'), "unknown fee keys"),
        (("as_of = 2026-01-02", 'as_of = "last week"'), "as_of date"),
    ],
)
def test_bad_facts_are_refused_with_the_place(change: tuple[str, str], message: str) -> None:
    old, new = change
    with pytest.raises(BillingFactsError, match=message) as caught:
        parse_billing_facts(GOOD.replace(old, new, 1))
    assert "billing_facts.toml" in str(caught.value)


def test_two_typed_answers_to_one_question_are_refused() -> None:
    twice = GOOD + GOOD.split("[[fact]]")[1].join(["[[fact]]", ""])
    with pytest.raises(BillingFactsError, match="two typed billing_granularity for acme"):
        parse_billing_facts(twice)


def test_minimum_rental_in_words() -> None:
    text = GOOD.replace('fact = "billing_granularity"', 'fact = "minimum_rental"', 1)
    hour = parse_billing_facts(text.replace("seconds = 60", "seconds = 3600", 1))[0]
    none = parse_billing_facts(text.replace("seconds = 60", "seconds = 0", 1))[0]
    assert hour.used_in_cost() == "bills each session at least 1 h"
    assert none.used_in_cost() == "no minimum: a short session bills its length"
    assert [duration_text(s) for s in (0, 1, 90, 600, 7200)] == [
        "0 s",
        "1 s",
        "90 s",
        "10 min",
        "2 h",
    ]


def test_a_provider_without_facts_has_unknown_terms_and_no_fees() -> None:
    assert terms_for("no-such-provider") == BillingTerms()
    assert platform_fees("no-such-provider") == ()
    assert unknown_facts("no-such-provider") == list(CHECKLIST)


def test_terms_validate_their_numbers() -> None:
    with pytest.raises(ValueError):
        BillingTerms(granularity_s=0)
    with pytest.raises(ValueError):
        BillingTerms(minimum_s=-1)


def test_every_fact_names_a_provider_gpurent_crawls() -> None:
    # A typo in a provider name would silently leave its offers without their terms.
    known = set(provider_infos())
    assert {f.provider for f in load_billing_facts()} <= known


def test_shipped_terms_follow_the_sources() -> None:
    assert terms_for("autodl") == BillingTerms(1, None, BillingStart.POWER_ON)
    assert terms_for("lambda").granularity_s == 60
    # Vast.ai's facts say what traffic costs (the host's rates, carried per offer).
    assert terms_for("vastai") == BillingTerms(1, 0, BillingStart.READY, egress_stated=True)
    assert terms_for("matpool").starts is BillingStart.READY
    # Lambda says it charges none; AutoDL's facts do not say.
    assert terms_for("lambda").egress_stated and not terms_for("autodl").egress_stated


def test_platform_fees_are_in_the_providers_currency() -> None:
    infos = provider_infos()
    for fact in load_billing_facts():
        for fee in fact.fees:
            expected = "CNY" if infos[fact.provider].home == "CN" else "USD"
            assert fee.currency == expected, (fact.provider, fee.fee_type)


def test_most_providers_answer_the_metering_questions() -> None:
    # The questions that change the cost: how many providers have a typed answer.
    infos = provider_infos()
    with_granularity = [p for p in infos if terms_for(p).granularity_s is not None]
    with_start = [p for p in infos if terms_for(p).starts is not None]
    assert len(with_granularity) >= 8 and len(with_start) >= 7


def test_providers_doc_table_is_generated_from_the_facts() -> None:
    from scripts.billing_facts_table import HINT, TARGET, current_block, table

    block = current_block(TARGET.read_text(encoding="utf-8"))
    assert block is not None, "docs/providers.md lost its billing-facts block"
    assert block == table(), HINT
