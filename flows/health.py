"""Parse health: turn a crawler's run report into an honest run status (rules of truth 2 and 3).

Pure functions, so every verdict is unit-tested without a crawl.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpurent_core.model import RunStatus

EVERY_OFFER = ""
"""The unread prefix every offer key starts with (``spiders.ledger.EVERY_OFFER``)."""

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


def _far_fewer_than_usual(
    report: Mapping[str, Any], offers: int, gave_up: int, recent_counts: Sequence[int]
) -> float | None:
    """The provider's usual count when this run read far fewer offers than it (rules 2 and
    9: real markets do not lose most of their listing between two polls), else None. It
    holds for a run that read none too: a listing left with only skipped items (a CPU-only
    type) has lost its cards, it has not sold them."""
    if not recent_counts:
        return None
    usual = statistics.median(recent_counts)
    # Where the provider lists only what has capacity, each group it listed (a Lambda
    # instance type) was read even when none of its offers has capacity now: a market
    # that sold out is no layout change, so those groups count as read.
    # And offers the run names as not read (a failed request's) are kept, not lost;
    # when it keeps every offer (a failed page of a listing), nothing can close at all.
    read = (
        offers
        + len(set(report.get("sold_out_unlisted") or ()))
        + len(set(report.get("unread_keys") or ()))
    )
    keeps_all = "" in (report.get("unread_prefixes") or ())
    # A request that failed for a whole scope (a region, a page) names the prefix of the
    # offers it would have listed: those are kept, not lost, and the shortfall is that
    # failed request's, not a changed layout (rules 2 and 9: partial, with why).
    scoped_failure = bool(gave_up and report.get("unread_prefixes"))
    if usual and not (keeps_all or scoped_failure) and read < MIN_SHARE_OF_RECENT * usual:
        return float(usual)
    return None


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

    skipped = skipped_counts(report)
    sold_out = len(report.get("sold_out_unlisted") or ())
    usual = _far_fewer_than_usual(report, offers, gave_up, recent_counts)
    if offers == 0:
        understood = skipped or sold_out
        clean = not (layout_errors or report.get("missing_fields") or gave_up)
        if understood and clean:
            why = [skipped_text(skipped)] if skipped else []
            if sold_out:
                why.append(f"{sold_out} listed without capacity anywhere")
            if usual is not None:
                return Verdict(
                    RunStatus.LAYOUT_CHANGED,
                    f"only 0 offers ({'; '.join(why)}) against a usual {usual:g}:"
                    " treating as a layout change",
                )
            # Every item was read and set aside for a named reason, or says it has no
            # capacity: the listing holds no offer to rank now, which is what it says, not
            # a layout change (rule 9).
            return Verdict(RunStatus.OK, "0 offers; " + "; ".join(why))
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

    if usual is not None:
        return Verdict(
            RunStatus.LAYOUT_CHANGED,
            f"only {offers} offers against a usual {usual:g}: treating as a layout change",
        )

    # Rule of truth 9: anything the run could not read makes it partial, with counts.
    quarantined = int(report.get("quarantined") or 0)
    parse_errors = int(report.get("parse_errors") or 0)
    missing = [str(p) for p in report.get("missing_fields") or []]
    page_cap = report.get("page_cap_reached")
    unread = bool(report.get("unread_keys") or report.get("unread_prefixes"))
    if gave_up or layout_errors or quarantined or parse_errors or missing or page_cap or unread:
        message = _partial_message(
            offers, quarantined, gave_up, parse_errors, missing, errors, layout_errors
        )
        return Verdict(RunStatus.PARTIAL, _with_skipped(message, skipped))
    return Verdict(RunStatus.OK, _with_skipped(f"{offers} offers", skipped))


def skipped_counts(report: Mapping[str, Any]) -> dict[str, int]:
    """Items skipped by kind (``SkipKind``), as the report gives them; none when absent."""
    raw = report.get("skipped")
    if not isinstance(raw, Mapping):
        return {}
    return {str(kind): int(n) for kind, n in sorted(raw.items()) if int(n) > 0}


def skipped_text(skipped: Mapping[str, int]) -> str:
    """'2 skipped (not_a_gpu_offer 1, no_public_price 1)'."""
    total = sum(skipped.values())
    kinds = ", ".join(f"{kind} {n}" for kind, n in skipped.items())
    return f"{total} skipped ({kinds})"


def _with_skipped(message: str, skipped: Mapping[str, int]) -> str:
    if not skipped:
        return message
    head, sep, rest = message.partition("; ")
    return f"{head}, {skipped_text(skipped)}{sep}{rest}"


@dataclass(frozen=True)
class RunScope:
    """What a run's report says it skipped, could not read, and lists only with capacity:
    the ``ProviderRun`` fields the load closes and keeps offers by (rule of truth 10)."""

    skipped: dict[str, int]
    unread_keys: tuple[str, ...]
    unread_prefixes: tuple[str, ...]
    sold_out_unlisted: tuple[str, ...]

    def fields(self) -> dict[str, Any]:
        return {
            "skipped": tuple(self.skipped.items()),
            "unread_keys": self.unread_keys,
            "unread_prefixes": self.unread_prefixes,
            "sold_out_unlisted": self.sold_out_unlisted,
        }


def run_scope(report: Mapping[str, Any] | None, status: RunStatus) -> RunScope:
    """The run's scope from its report. A report written before reports said what they
    could not read (no ``unread_prefixes`` field) leaves every offer of a partial run
    unread, as partial runs were loaded then. A run whose key was refused closes nothing
    it did not list, whatever its spider noted: a refusal is no listing (docs/truth.md)."""
    if report is None:
        return RunScope({}, (), (), ())
    if "unread_prefixes" not in report:
        legacy = ("",) if status is RunStatus.PARTIAL else ()
        return RunScope(skipped_counts(report), (), legacy, ())
    prefixes = tuple(str(p) for p in report.get("unread_prefixes") or ())
    if status is RunStatus.AUTH_REQUIRED and EVERY_OFFER not in prefixes:
        prefixes = (*prefixes, EVERY_OFFER)
    return RunScope(
        skipped=skipped_counts(report),
        unread_keys=tuple(str(k) for k in report.get("unread_keys") or ()),
        unread_prefixes=prefixes,
        sold_out_unlisted=tuple(str(p) for p in report.get("sold_out_unlisted") or ()),
    )


CLEAN_FINISH = "finished"
"""Scrapy's close reason for a crawl that ran out of requests: its listing read to the end."""


def as_read(report: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The report as what its run read. A crawl that closed for another reason (stopped by
    a signal: ``shutdown``; a close-spider limit; memory) dropped the requests it had not
    sent, and no errback marks those unread: it read its listing in part, whatever its
    pages said. Every offer it did not list is then unread (kept, stale), never gone."""
    if report is None:
        return None
    reason = report.get("finish_reason")
    if reason in (None, CLEAN_FINISH):
        return report
    return {
        **report,
        "unread_prefixes": [*(report.get("unread_prefixes") or ()), EVERY_OFFER],
        "errors": [*(report.get("errors") or ()), f"crawl stopped before its end ({reason})"],
    }


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
