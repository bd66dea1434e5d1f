"""Print the billing-terms table of docs/providers.md from the providers' billing facts
(``spiders/providers/<provider>/billing_facts.toml``).

The block of docs/providers.md between the billing-facts markers is this script's output; a
test (tests/test_billing_facts.py) keeps the two equal, so the table never drifts from the
data. Run it after editing the facts:

    .venv/bin/python scripts/billing_facts_table.py --write   # rewrite the block in place
    .venv/bin/python scripts/billing_facts_table.py           # print the table only
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

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
TARGET = Path(__file__).resolve().parents[1] / "docs" / "providers.md"
BLOCK = re.compile(r"(<!-- billing-facts:start -->\n)(.*?)(\n<!-- billing-facts:end -->)", re.S)
HINT = "run .venv/bin/python scripts/billing_facts_table.py --write (it updates docs/providers.md)"


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


def current_block(text: str) -> str | None:
    """The table between the billing-facts markers of ``text``, if they are there."""
    found = BLOCK.search(text)
    return found.group(2) if found else None


def write() -> bool:
    """Put the table between the markers of docs/providers.md; True if it changed."""
    text = TARGET.read_text(encoding="utf-8")
    if current_block(text) is None:
        raise SystemExit(f"{TARGET} has no billing-facts markers")
    new = BLOCK.sub(lambda m: m.group(1) + table() + m.group(3), text, count=1)
    if new == text:
        return False
    TARGET.write_text(new, encoding="utf-8")
    return True


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        print("updated docs/providers.md" if write() else "docs/providers.md is current")
    elif sys.argv[1:]:
        raise SystemExit("usage: scripts/billing_facts_table.py [--write]")
    else:
        print(table())
