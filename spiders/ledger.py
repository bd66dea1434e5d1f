"""What happened during one crawl, gathered as it happens, turned into the run report.

The spider, the downloader middlewares and the RunReport extension all write into
the one `RunLedger` the spider owns. The flow classifies the run (ok, partial,
failed, auth_required, layout_changed) from the report, so every field says
plainly what was seen and nothing is inferred here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

AuthState = Literal["ok", "missing", "rejected", "not_needed", "unknown"]
"""`unknown`: the spider needs credentials but no answer said whether they work."""

REPORT_FIELDS = (
    "provider",
    "run_id",
    "started_at",
    "finished_at",
    "finish_reason",
    "offers",
    "quarantined",
    "responses_by_status",
    "requests_failed",
    "requests_gave_up",
    "errors",
    "auth",
    "auth_detail",
    "pages_parsed",
    "layout_errors",
    "missing_fields",
    "parse_errors",
    "page_cap_reached",
    "notes",
    "retry_after_waits_s",
    "skipped",
    "unread_keys",
    "unread_prefixes",
    "sold_out_unlisted",
)

EVERY_OFFER = ""
"""The unread prefix every offer key starts with: what a failure that cannot be narrowed
(a page of a paginated listing, a parse error, the page cap) leaves unread."""


@dataclass
class RunLedger:
    responses_by_status: Counter[str] = field(default_factory=Counter)
    """Every HTTP answer, retried attempts included (robots.txt excluded)."""
    requests_failed: int = 0
    """Download attempts that got no HTTP answer (timeout, refused, truncated body)."""
    requests_gave_up: int = 0
    """Requests abandoned for good: retries spent, or an error status the spider could not use."""
    errors: list[str] = field(default_factory=list)
    auth: AuthState | None = None
    auth_detail: str | None = None
    pages_parsed: int = 0
    layout_errors: list[str] = field(default_factory=list)
    missing_fields: list[str] = field(default_factory=list)
    """Declared field paths (spiders.parsers.contract) gone from some item: drift, named."""
    parse_errors: int = 0
    """Pages whose callback raised: not parsed at all (a bug or an input nothing foresaw)."""
    page_cap_reached: int | None = None
    """The GPURENT_MAX_PAGES value a listing stopped at with pages left: the market is cut off."""
    notes: list[str] = field(default_factory=list)
    offers: int = 0
    quarantined: int = 0
    retry_after_waits_s: list[float] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    """Items that are no GPU rental offer, by `SkipKind` (they make no run partial)."""
    unread_keys: list[str] = field(default_factory=list)
    """Offers the run could not read although their identity is known: kept, stale."""
    unread_prefixes: list[str] = field(default_factory=list)
    """Key prefixes of the offers a failed page or request may have listed (EVERY_OFFER:
    all of them): not closed by their absence, kept stale (rule of truth 10)."""
    sold_out_unlisted: list[str] = field(default_factory=list)
    """Key prefixes under which the provider lists only what has capacity (rule 11)."""

    def note_unread(self, *, keys: Iterable[str] = (), prefixes: Iterable[str] = ()) -> None:
        """Offers this run could not read: by exact key, or by key prefix."""
        for key in keys:
            if key not in self.unread_keys:
                self.unread_keys.append(key)
        for prefix in prefixes:
            if prefix not in self.unread_prefixes:
                self.unread_prefixes.append(prefix)

    def note_sold_out_unlisted(self, prefixes: Iterable[str]) -> None:
        for prefix in prefixes:
            if prefix not in self.sold_out_unlisted:
                self.sold_out_unlisted.append(prefix)

    def add_error(self, text: str) -> None:
        # Distinct, in order of first sight: counts live in responses_by_status.
        if text not in self.errors:
            self.errors.append(text)

    def add_layout_error(self, text: str) -> None:
        if text not in self.layout_errors:
            self.layout_errors.append(text)

    def add_missing_field(self, path: str) -> None:
        if path not in self.missing_fields:
            self.missing_fields.append(path)

    def add_note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def set_auth(self, state: AuthState, detail: str | None = None) -> None:
        # A rejection or a missing token outranks a later "ok" from another page.
        if self.auth in ("missing", "rejected") and state == "ok":
            return
        self.auth = state
        if detail:
            self.auth_detail = detail


def build_report(
    ledger: RunLedger,
    *,
    provider: str,
    run_id: str,
    started_at: datetime,
    finished_at: datetime,
    finish_reason: str,
    needs_auth: bool,
) -> dict[str, Any]:
    """The JSON-ready run report (field list: REPORT_FIELDS)."""
    auth: AuthState = ledger.auth or ("unknown" if needs_auth else "not_needed")
    report: dict[str, Any] = {
        "provider": provider,
        "run_id": run_id,
        "started_at": started_at.isoformat(),
        "finished_at": finished_at.isoformat(),
        "finish_reason": finish_reason,
        "offers": ledger.offers,
        "quarantined": ledger.quarantined,
        "responses_by_status": dict(sorted(ledger.responses_by_status.items())),
        "requests_failed": ledger.requests_failed,
        "requests_gave_up": ledger.requests_gave_up,
        "errors": list(ledger.errors),
        "auth": auth,
        "auth_detail": ledger.auth_detail,
        "pages_parsed": ledger.pages_parsed,
        "layout_errors": list(ledger.layout_errors),
        "missing_fields": list(ledger.missing_fields),
        "parse_errors": ledger.parse_errors,
        "page_cap_reached": ledger.page_cap_reached,
        "notes": list(ledger.notes),
        "retry_after_waits_s": list(ledger.retry_after_waits_s),
        "skipped": dict(sorted(ledger.skipped.items())),
        "unread_keys": list(ledger.unread_keys),
        "unread_prefixes": list(ledger.unread_prefixes),
        "sold_out_unlisted": list(ledger.sold_out_unlisted),
    }
    assert tuple(report) == REPORT_FIELDS
    return report
