"""Run classification: the verdicts that keep a bad fetch from looking like a sold-out market."""

from __future__ import annotations

from flows.health import classify_run
from gpurent.model import RunStatus


def report(**kw: object) -> dict[str, object]:
    base: dict[str, object] = {
        "offers": 10,
        "responses_by_status": {"200": 3},
        "requests_failed": 0,
        "requests_gave_up": 0,
        "errors": [],
        "auth": "not_needed",
        "layout_errors": [],
    }
    base.update(kw)
    return base


def test_clean_run_is_ok() -> None:
    assert classify_run(report(), returncode=0).status is RunStatus.OK


def test_missing_report_is_failed() -> None:
    verdict = classify_run(None, returncode=1)
    assert verdict.status is RunStatus.FAILED
    assert "exit 1" in verdict.message


def test_only_server_errors_is_failed_not_sold_out() -> None:
    r = report(
        offers=0,
        responses_by_status={"500": 4},
        requests_gave_up=1,
        errors=["500 on /api/v0/bundles/"],
    )
    verdict = classify_run(r, returncode=0)
    assert verdict.status is RunStatus.FAILED
    assert "500" in verdict.message


def test_200_with_no_offers_is_layout_changed() -> None:
    verdict = classify_run(report(offers=0), returncode=0)
    assert verdict.status is RunStatus.LAYOUT_CHANGED


def test_layout_errors_are_named() -> None:
    r = report(offers=0, layout_errors=["no 'offers' key in /api/v0/bundles/"])
    verdict = classify_run(r, returncode=0)
    assert verdict.status is RunStatus.LAYOUT_CHANGED
    assert "offers" in verdict.message


def test_far_fewer_offers_than_usual_is_layout_changed() -> None:
    verdict = classify_run(report(offers=3), returncode=0, recent_counts=[20, 22, 19])
    assert verdict.status is RunStatus.LAYOUT_CHANGED
    assert "usual" in verdict.message


def test_normal_fluctuation_is_ok() -> None:
    assert (
        classify_run(report(offers=15), returncode=0, recent_counts=[20, 22]).status is RunStatus.OK
    )


def test_some_failed_pages_is_partial() -> None:
    r = report(
        responses_by_status={"200": 2, "503": 4}, requests_gave_up=1, errors=["503 on page 3"]
    )
    assert classify_run(r, returncode=0).status is RunStatus.PARTIAL


def test_a_retry_that_cured_a_429_is_still_ok() -> None:
    r = report(responses_by_status={"200": 3, "429": 1})
    assert classify_run(r, returncode=0).status is RunStatus.OK


def test_an_api_error_behind_http_200_is_failed_not_layout() -> None:
    r = report(offers=0, requests_gave_up=1, errors=["api error on /api/v1/user/machine/list"])
    verdict = classify_run(r, returncode=0)
    assert verdict.status is RunStatus.FAILED
    assert "api error" in verdict.message


def test_robots_404_is_not_a_failure() -> None:
    assert classify_run(report(responses_by_status={"200": 2, "404": 1}), returncode=0).status is (
        RunStatus.OK
    )


def test_missing_credentials_with_public_rows() -> None:
    verdict = classify_run(report(auth="missing", offers=12), returncode=0)
    assert verdict.status is RunStatus.AUTH_REQUIRED
    assert "12 public" in verdict.message


def test_rejected_credentials_without_rows_is_auth_required_never_failed() -> None:
    r = report(auth="rejected", offers=0, responses_by_status={"401": 1})
    assert classify_run(r, returncode=0).status is RunStatus.AUTH_REQUIRED
