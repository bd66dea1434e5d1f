"""Parse health: turn a crawler's run report into an honest run status (rules of truth 2 and 3).

Pure functions, so every verdict is unit-tested without a crawl.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpurent_core.model import RunStatus

# A good run yielding under this share of the provider's usual offer count is treated as a
# layout change rather than as a market event: real markets do not lose half their listings
# between two polls, pages that stopped parsing do.
MIN_SHARE_OF_RECENT = 0.5


@dataclass(frozen=True)
class Verdict:
    status: RunStatus
    message: str


def _ok_responses(report: Mapping[str, Any]) -> int:
    by_status = report.get("responses_by_status") or {}
    return sum(int(n) for code, n in by_status.items() if str(code).startswith("2"))


def _error_summary(report: Mapping[str, Any]) -> str:
    errors = [str(e) for e in report.get("errors") or []]
    if not errors:
        return ""
    head = "; ".join(errors[:3])
    return head + (f" (+{len(errors) - 3} more)" if len(errors) > 3 else "")


def classify_run(
    report: Mapping[str, Any] | None,
    *,
    returncode: int | None,
    recent_counts: Sequence[int] = (),
) -> Verdict:
    """Decide how a provider run ended from its report and the provider's recent good runs."""
    if report is None:
        return Verdict(
            RunStatus.FAILED, f"crawler process ended (exit {returncode}) without a report"
        )

    offers = int(report.get("offers") or 0)
    ok_pages = _ok_responses(report)
    errors = _error_summary(report)
    # Requests abandoned after Scrapy's retries; a 429 or 500 that a retry cured is not a failure.
    gave_up = int(report.get("requests_gave_up") or 0)
    auth = report.get("auth") or "not_needed"
    layout_errors = [str(e) for e in report.get("layout_errors") or []]

    if auth in ("missing", "rejected"):
        detail = "credentials missing" if auth == "missing" else "credentials rejected"
        if offers:
            return Verdict(
                RunStatus.AUTH_REQUIRED,
                f"{detail}: stock unknown, {offers} public price rows recorded",
            )
        return Verdict(RunStatus.AUTH_REQUIRED, f"{detail}: nothing could be read")

    if offers == 0:
        if layout_errors or report.get("missing_fields"):
            layout_errors = layout_errors or [
                "fields gone: " + ", ".join(str(p) for p in report["missing_fields"][:4])
            ]
            return Verdict(
                RunStatus.LAYOUT_CHANGED, "layout changed: " + "; ".join(layout_errors[:3])
            )
        if gave_up:
            return Verdict(RunStatus.FAILED, errors or f"{gave_up} request(s) failed")
        if ok_pages:
            return Verdict(
                RunStatus.LAYOUT_CHANGED,
                f"{ok_pages} page(s) answered 200 but yielded no offers: the layout probably changed",
            )
        return Verdict(RunStatus.FAILED, errors or "no page answered")

    if recent_counts:
        usual = statistics.median(recent_counts)
        if usual and offers < MIN_SHARE_OF_RECENT * usual:
            return Verdict(
                RunStatus.LAYOUT_CHANGED,
                f"only {offers} offers against a usual {usual:g}: treating as a layout change",
            )

    # Rule of truth 9: anything the run could not read makes it partial, with counts.
    quarantined = int(report.get("quarantined") or 0)
    parse_errors = int(report.get("parse_errors") or 0)
    missing = [str(p) for p in report.get("missing_fields") or []]
    page_cap = report.get("page_cap_reached")
    if gave_up or layout_errors or quarantined or parse_errors or missing or page_cap:
        return Verdict(
            RunStatus.PARTIAL,
            _partial_message(
                offers, quarantined, gave_up, parse_errors, missing, errors, layout_errors
            ),
        )
    return Verdict(RunStatus.OK, f"{offers} offers")


def _partial_message(
    offers: int,
    quarantined: int,
    gave_up: int,
    parse_errors: int,
    missing: Sequence[str],
    errors: str,
    layout_errors: Sequence[str],
) -> str:
    """'12 offers, 1 quarantined, 1 request failed; missing fields: ...; ...' for a partial run."""
    counts = [f"{offers} offers"]
    if quarantined:
        counts.append(f"{quarantined} quarantined")
    if gave_up:
        counts.append(f"{gave_up} request(s) failed")
    if parse_errors:
        counts.append(f"{parse_errors} page(s) unreadable")
    parts = [", ".join(counts)]
    if missing:
        shown = ", ".join(missing[:4]) + (
            f" (+{len(missing) - 4} more)" if len(missing) > 4 else ""
        )
        parts.append(f"fields gone: {shown}")
    parts.extend(p for p in (errors, "; ".join(layout_errors[:2])) if p)
    return "; ".join(parts)
