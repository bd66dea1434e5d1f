"""Run-report pieces without a crawl: Retry-After, failure names, report fields, settings docs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from scrapy.exceptions import (
    DownloadConnectionRefusedError,
    DownloadTimeoutError,
    IgnoreRequest,
    ResponseDataLossError,
)

import spiders.settings as settings_module
from spiders.base import generate_run_id
from spiders.ledger import REPORT_FIELDS, RunLedger, build_report
from spiders.middlewares import describe_exception, retry_after_seconds

NOW = datetime(2026, 10, 4, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("header", "seconds"),
    [("7", 7.0), (b"0", 0.0), (" 30 ", 30.0), ("soon", None), ("", None), (None, None)],
)
def test_retry_after_delta_seconds(header: str | bytes | None, seconds: float | None) -> None:
    assert retry_after_seconds(header, now=NOW) == seconds


def test_retry_after_http_date() -> None:
    later = format_datetime(NOW + timedelta(seconds=90), usegmt=True)
    assert retry_after_seconds(later, now=NOW) == 90.0
    earlier = format_datetime(NOW - timedelta(seconds=90), usegmt=True)
    assert retry_after_seconds(earlier, now=NOW) == 0.0


@pytest.mark.parametrize(
    ("exc", "name"),
    [
        (DownloadTimeoutError("took 30 s"), "timeout"),
        (ResponseDataLossError("lost"), "truncated body"),
        (DownloadConnectionRefusedError(), "connection refused"),
        (IgnoreRequest(), "request ignored"),
        (KeyError("Authorization: secret"), "KeyError"),  # the message never leaks
    ],
)
def test_failures_get_short_names_without_their_messages(exc: Exception, name: str) -> None:
    assert describe_exception(exc) == name


def test_report_has_every_field_and_honest_auth_defaults() -> None:
    ledger = RunLedger()
    ledger.responses_by_status["500"] += 4
    ledger.add_error("500 on /x")
    ledger.add_error("500 on /x")
    report = build_report(
        ledger,
        provider="p",
        run_id="r",
        started_at=NOW,
        finished_at=NOW,
        finish_reason="finished",
        needs_auth=False,
    )
    assert tuple(report) == REPORT_FIELDS
    assert report["responses_by_status"] == {"500": 4}
    assert report["errors"] == ["500 on /x"]
    assert report["auth"] == "not_needed"
    # A spider that needs a token but never heard back cannot claim "ok".
    needs = build_report(
        ledger,
        provider="p",
        run_id="r",
        started_at=NOW,
        finished_at=NOW,
        finish_reason="finished",
        needs_auth=True,
    )
    assert needs["auth"] == "unknown"


def test_a_rejection_is_not_overwritten_by_a_later_ok() -> None:
    ledger = RunLedger()
    ledger.set_auth("rejected", "AuthorizeFailed")
    ledger.set_auth("ok")
    assert ledger.auth == "rejected" and ledger.auth_detail == "AuthorizeFailed"


def test_generated_run_id_is_a_utc_stamp() -> None:
    run_id = generate_run_id(NOW)
    assert run_id.startswith("20261004T120000Z-") and len(run_id) == len("20261004T120000Z-") + 6
    assert generate_run_id(NOW) != run_id  # two crawls in one second still differ


def test_every_gpurent_setting_is_documented() -> None:
    names = [n for n in vars(settings_module) if n.startswith("GPURENT_")]
    assert len(names) == 6
    doc = settings_module.__doc__ or ""
    for name in names:
        assert f"{name} (" in doc, f"{name} missing from the settings docstring"
