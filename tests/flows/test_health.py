"""Run classification: the verdicts that keep a bad fetch from looking like a sold-out market."""

from __future__ import annotations

from flows.health import classify_run, run_scope
from gpurent_core.model import RunStatus


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


# -- rule of truth 9: never `ok` while blind ---------------------------------------


def test_quarantined_items_make_a_partial_run_with_counts() -> None:
    verdict = classify_run(report(offers=12, quarantined=1), returncode=0)
    assert verdict.status is RunStatus.PARTIAL
    assert verdict.message == "12 offers, 1 quarantined"


def test_missing_fields_with_offers_is_partial_naming_them() -> None:
    r = report(offers=7, quarantined=2, missing_fields=["lowestPrice.stockStatus"])
    verdict = classify_run(r, returncode=0)
    assert verdict.status is RunStatus.PARTIAL
    assert verdict.message == "7 offers, 2 quarantined; fields gone: lowestPrice.stockStatus"


def test_many_missing_fields_are_shown_four_then_counted() -> None:
    missing = [f"field_{n}" for n in range(6)]
    verdict = classify_run(report(missing_fields=missing), returncode=0)
    assert verdict.status is RunStatus.PARTIAL
    assert "fields gone: field_0, field_1, field_2, field_3 (+2 more)" in verdict.message
    assert "field_4" not in verdict.message


def test_missing_fields_and_no_offers_is_layout_changed_naming_them() -> None:
    r = report(offers=0, quarantined=14, missing_fields=["gpu.available"])
    verdict = classify_run(r, returncode=0)
    assert verdict.status is RunStatus.LAYOUT_CHANGED
    assert "gpu.available" in verdict.message


def test_layout_error_of_one_page_with_offers_elsewhere_is_partial() -> None:
    r = report(offers=5, layout_errors=["no machine carries gpu.available (stock)"])
    verdict = classify_run(r, returncode=0)
    assert verdict.status is RunStatus.PARTIAL
    assert "gpu.available" in verdict.message


def test_unreadable_pages_make_a_partial_run() -> None:
    verdict = classify_run(report(offers=9, parse_errors=1), returncode=0)
    assert verdict.status is RunStatus.PARTIAL
    assert verdict.message == "9 offers, 1 page(s) unreadable"


def test_a_failed_page_beside_quarantined_items_counts_both() -> None:
    r = report(offers=20, quarantined=1, requests_gave_up=1, errors=["500 on /api/machines"])
    verdict = classify_run(r, returncode=0)
    assert verdict.status is RunStatus.PARTIAL
    assert verdict.message == "20 offers, 1 quarantined, 1 request(s) failed; 500 on /api/machines"


def test_a_clean_report_with_the_new_keys_empty_stays_ok() -> None:
    r = report(quarantined=0, parse_errors=0, missing_fields=[])
    verdict = classify_run(r, returncode=0)
    assert (verdict.status, verdict.message) == (RunStatus.OK, "10 offers")


def test_a_page_cap_reached_is_partial_with_the_reason() -> None:
    verdict = classify_run(
        report(
            offers=40,
            page_cap_reached=2,
            errors=["stopped at GPURENT_MAX_PAGES=2"],
        ),
        returncode=0,
    )
    assert verdict.status is RunStatus.PARTIAL
    assert "GPURENT_MAX_PAGES=2" in verdict.message


def test_skipped_items_never_make_a_run_partial_and_are_counted() -> None:
    verdict = classify_run(report(skipped={"not_a_gpu_offer": 1}), returncode=0)
    assert (verdict.status, verdict.message) == (
        RunStatus.OK,
        "10 offers, 1 skipped (not_a_gpu_offer 1)",
    )


def test_a_listing_of_only_skipped_items_is_no_layout_change() -> None:
    verdict = classify_run(report(offers=0, skipped={"no_public_price": 3}), returncode=0)
    assert (verdict.status, verdict.message) == (
        RunStatus.OK,
        "0 offers; 3 skipped (no_public_price 3)",
    )
    # ... but with a layout error beside them it still is one.
    broken = report(offers=0, skipped={"no_public_price": 3}, layout_errors=["no 'data' key"])
    assert classify_run(broken, returncode=0).status is RunStatus.LAYOUT_CHANGED


def test_a_listing_left_with_only_skipped_items_after_a_full_one_is_a_layout_change() -> None:
    # Lambda answers with its CPU type alone after listing 9 GPU types: losing every card is
    # no smaller a loss than losing 6 of 9, so nothing closes (rules 2 and 9).
    cpu_only = report(offers=0, skipped={"not_a_gpu_offer": 1})
    verdict = classify_run(cpu_only, returncode=0, recent_counts=[9, 9, 9])
    assert verdict.status is RunStatus.LAYOUT_CHANGED
    assert verdict.message == (
        "only 0 offers (1 skipped (not_a_gpu_offer 1)) against a usual 9:"
        " treating as a layout change"
    )
    # A market whose every type is listed without capacity is read whole: ok.
    sold_out = report(offers=0, sold_out_unlisted=[f"t{n}/" for n in range(9)])
    assert classify_run(sold_out, returncode=0, recent_counts=[9, 9]).status is RunStatus.OK


def test_what_a_run_could_not_read_makes_it_partial() -> None:
    verdict = classify_run(report(unread_keys=["a"]), returncode=0)
    assert verdict.status is RunStatus.PARTIAL


def test_groups_listed_without_capacity_count_as_read_for_the_usual_count() -> None:
    # Lambda listed 10 types, 7 of them with no region with capacity: 3 offers, not a layout
    # change against a usual 9.
    sold_out = report(offers=3, sold_out_unlisted=[f"t{n}/" for n in range(10)])
    assert classify_run(sold_out, returncode=0, recent_counts=[9, 9]).status is RunStatus.OK
    assert classify_run(report(offers=3), returncode=0, recent_counts=[9, 9]).status is (
        RunStatus.LAYOUT_CHANGED
    )


def test_a_report_from_before_unread_scopes_keeps_every_offer_of_a_partial_run() -> None:
    legacy = run_scope({"offers": 3, "quarantined": 1}, RunStatus.PARTIAL)
    assert legacy.unread_prefixes == ("",)
    assert run_scope({"offers": 3}, RunStatus.OK).unread_prefixes == ()
    now = run_scope({"unread_prefixes": [], "unread_keys": ["k"]}, RunStatus.PARTIAL)
    assert (now.unread_prefixes, now.unread_keys) == ((), ("k",))


def test_offers_a_failed_request_kept_count_toward_the_usual_count() -> None:
    # RunPod's community prices failed: 8 offers named unread, 9 read, against a usual 18.
    kept = report(offers=9, requests_gave_up=1, unread_keys=[f"c{n}" for n in range(8)])
    assert classify_run(kept, returncode=0, recent_counts=[18]).status is RunStatus.PARTIAL
    # A failed page of a paginated listing keeps every offer: nothing can close.
    page = report(offers=3, requests_gave_up=1, unread_prefixes=[""])
    assert classify_run(page, returncode=0, recent_counts=[18]).status is RunStatus.PARTIAL


def test_a_failed_big_region_is_partial_not_a_layout_change() -> None:
    # The region that lists most offers failed: its prefix is named unread (its offers kept),
    # 4 read of a usual 18. The shortfall is the failed request's, not a changed layout.
    region = report(offers=4, requests_gave_up=1, unread_prefixes=["us-east/"])
    verdict = classify_run(region, returncode=0, recent_counts=[18])
    assert verdict.status is RunStatus.PARTIAL
    assert "1 request" in verdict.message
    # Without a failed request to explain it, the same shortfall is a layout change.
    quiet = report(offers=4, unread_prefixes=["us-east/"])
    assert classify_run(quiet, returncode=0, recent_counts=[18]).status is (
        RunStatus.LAYOUT_CHANGED
    )


def test_a_crawl_stopped_before_its_end_read_its_listing_in_part() -> None:
    """Scrapy's `shutdown` (a SIGTERM), a close-spider limit: requests not yet sent were
    dropped with no errback, so nothing marked them unread; the report as read says so."""
    from flows.health import as_read

    cut = as_read(report(finish_reason="shutdown", unread_prefixes=[]))
    assert cut is not None
    verdict = classify_run(cut, returncode=0)
    assert verdict.status is RunStatus.PARTIAL and "(shutdown)" in verdict.message
    assert run_scope(cut, verdict.status).unread_prefixes == ("",)
    whole = report(finish_reason="finished", unread_prefixes=[])
    assert as_read(whole) is whole and classify_run(whole, returncode=0).status is RunStatus.OK


def test_a_refused_key_closes_nothing_it_did_not_list() -> None:
    """auth_required keeps every offer it did not list, whatever its spider noted."""
    refused = report(auth="rejected", offers=4, unread_prefixes=[])
    verdict = classify_run(refused, returncode=0)
    assert verdict.status is RunStatus.AUTH_REQUIRED
    assert "" in run_scope(refused, verdict.status).unread_prefixes
