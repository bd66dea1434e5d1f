"""Print the README's billing-terms table from gpurent_core/data/billing_facts.toml.

The README block between the billing-facts markers is this script's output; a test keeps
the two equal, so the table never drifts from the data. Run it after editing the facts:

    .venv/bin/python scripts/billing_facts_table.py
"""

from __future__ import annotations

from flows.providers import provider_infos
from gpurent_core.billing_facts import (
    BillingFactKind,
    duration_text,
    facts_for,
    platform_fees,
    terms_for,
    unknown_facts,
)

UNKNOWN = "?"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def table() -> str:
    lines = [
        "| provider | billing granularity | billing starts | minimum rental "
        "| platform-wide fees (from the facts) | checklist questions without a source (of 10) |",
        "|---|---|---|---|---|---|",
    ]
    for provider in provider_infos():
        terms = terms_for(provider)
        granularity = (
            duration_text(terms.granularity_s) if terms.granularity_s is not None else UNKNOWN
        )
        minimum = (
            "none"
            if terms.minimum_s == 0
            else (duration_text(terms.minimum_s) if terms.minimum_s is not None else UNKNOWN)
        )
        starts = terms.starts.value if terms.starts is not None else UNKNOWN
        fees = (
            ", ".join(
                sorted(
                    {
                        f.fee_type.value + (" (optional)" if not f.mandatory else "")
                        for f in platform_fees(provider)
                    }
                )
            )
            or "none"
        )
        untyped = {f.fact for f in facts_for(provider) if f.seconds is None and f.starts is None}
        if BillingFactKind.BILLING_GRANULARITY in untyped and terms.granularity_s is None:
            granularity = "unsettled (see details)"
        missing = len(unknown_facts(provider))
        lines.append(
            f"| `{provider}` | {granularity} | {starts} | {minimum} | {_cell(fees)} | {missing} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
