"""PPIO: the real `scrapy crawl ppio` process against the replay server."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from crawl_kit import (
    RUN_ID,
    TOKEN,
    assert_secrets_kept,
    crawl,
)

from flows.health import classify_run
from gpurent_core.model import RunStatus
from replay import ReplayServer

KEY_ENV = "PPIO_API_KEY"
PATH = "/gpu-instance/openapi/v1/products"


def test_key_reads_every_product_sold_out_ones_too(
    server: ReplayServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(KEY_ENV, TOKEN)
    result = crawl("ppio", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    # Every product an offer: the RTX 3080 (10 or 12 GB) is kept with its VRAM unknown.
    assert len(offers) == 9 and result.quarantined == []
    assert offers["a9f0c1d2-0009"]["gpu_vram_gb"] is None
    sold_out = {k for k, o in offers.items() if o["status"] == "sold_out"}
    assert sold_out == {"a9f0c1d2-0003", "a9f0c1d2-0005", "a9f0c1d2-0007"}
    h100 = offers["a9f0c1d2-0007"]
    assert (h100["gpu_model"], Decimal(h100["price"]), h100["price_basis"]) == (
        "H100",
        Decimal("14.9"),
        "gpu",
    )
    assert all(r["run_id"] == RUN_ID for r in result.feed)
    sent = [(r.query, r.headers.get("authorization")) for r in result.calls]
    assert sent == [({}, f"Bearer {TOKEN}")]
    report = result.report
    assert report["auth"] == "ok" and report["pages_parsed"] == 1
    assert (report["offers"], report["quarantined"]) == (9, 0)
    assert report["missing_fields"] == []
    # Nothing quarantined, no field missing: ok (one quarantined item would make it partial).
    assert classify_run(report, returncode=0).status is RunStatus.OK
    assert_secrets_kept(result, TOKEN)
