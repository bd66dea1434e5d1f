"""End to end: the real Prefect flow crawls the replay server with real `scrapy crawl`
processes into a real DuckDB file, and the CLI answers from it.

One database goes through a sequence of crawls (good, good again, an outage, a layout
change), as a user's database would over a few nights.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from replay.loader import provider_recordings
from tests.cli_helpers import invoke, invoke_json, run_gpurent_json
from warehouse.db import connect

pytestmark = pytest.mark.prefect


FIRST_CRAWL: dict[str, str] = {}
"""The run id of the module's first crawl (its artifact is looked up by it: other modules'
flows publish crawl summaries on the same Prefect server)."""


@pytest.fixture(scope="module")
def db(prefect_harness: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("e2e") / "gpurent.duckdb"
    first = run_gpurent_json("crawl", "--replay", "--db", str(path))
    assert {"autodl", "cudo", "vastai"} <= {r["provider"] for r in first}
    partial = unreadable_on_purpose()  # a few recordings on purpose, not most
    assert UNKNOWN_STATUS_WORD[0] in partial and len(partial) < len(first) // 2, partial
    assert_default_statuses(first)
    FIRST_CRAWL["run_id"] = first[0]["run_id"]
    yield path


def unreadable_on_purpose() -> frozenset[str]:
    """Providers whose default recording holds an offer that cannot be read, on purpose (its
    PROVENANCE says so on a line "Unreadable on purpose: ..."): their runs end partial
    (rule of truth 9). Every other recording holds only readable offers and items that are
    no offer at all (skipped), and its run ends ok."""
    return frozenset(
        name
        for name, p in provider_recordings().items()
        if (p / "PROVENANCE").is_file()
        and "Unreadable on purpose:" in (p / "PROVENANCE").read_text(encoding="utf-8")
    )


# Featurize's recording lists a machine in `maintaining`, a status word the parser does not
# know: the offer stands with its stock unknown, and a reason line says why.
UNKNOWN_STATUS_WORD = ("featurize", "status", "maintaining")


def assert_default_statuses(
    summary: list[dict[str, Any]], skip: frozenset[str] = frozenset()
) -> None:
    """A crawl of the default recordings: partial with its counts where an unreadable offer
    is kept on purpose, ok everywhere else (skipped items named in the message, never
    making a run partial)."""
    partial = unreadable_on_purpose()
    for row in (r for r in summary if r["provider"] not in skip):
        counts = f"{row['offers']} offers"
        if row["provider"] in partial:
            assert row["status"] == "partial" and row["quarantined"] >= 1, row
            assert row["message"].startswith(f"{counts}, {row['quarantined']} quarantined"), row
        else:
            assert (row["status"], row["quarantined"]) == ("ok", 0), row
            assert re.fullmatch(rf"{counts}(, \d+ skipped \(.+\))?", row["message"]), row


# The crawls after the module's first (which reads every provider) read a few providers, one
# Chinese and three international: what one provider's fault does to the others is the same
# for three as for thirty, and a crawl of every provider costs a minute.
BESIDE_THE_FAULT = tuple(
    arg for name in ("vastai", "cudo", "autodl", "lambda") for arg in ("--provider", name)
)


def latest_state(db: Path) -> set[tuple[str, str, str, str, str]]:
    rows = invoke_json("offers", "--db", str(db))
    return {(r["provider"], r["offer_key"], r["status"], r["price"], r["run_id"]) for r in rows}


def test_an_unknown_status_word_is_unknown_stock_with_a_reason_line(db: Path) -> None:
    provider, field, word = UNKNOWN_STATUS_WORD
    lines = invoke_json("quarantine", "--provider", provider, "--db", str(db))
    assert lines, "the unknown status word is set aside with its reason"
    assert all((q["field"], q["run_status"]) == (field, "partial") for q in lines), lines
    assert all(word in q["reason"] for q in lines), lines
    offers = invoke_json("offers", "--provider", provider, "--db", str(db))
    stock = {r["offer_key"]: r["status"] for r in offers}
    assert {stock[q["offer_key"]] for q in lines} == {"unknown"}, "unknown is not sold out"


def test_cheapest_32gb_lists_only_in_stock_cards_ranked_by_true_cost(db: Path) -> None:
    rows = invoke_json("cheapest", "--min-vram", "32", "--limit", "100", "--db", str(db))
    assert rows, "the bundled recordings have in-stock 32 GB+ cards"
    assert {r["status"] for r in rows} <= {"in_stock", "low"}
    assert all(r["gpu_vram_gb"] >= 32 for r in rows)
    keys = [(Decimal(r["true_monthly"]), Decimal(r["true_hourly"])) for r in rows]
    assert keys == sorted(keys)
    assert {r["cost_currency"] for r in rows} == {"CNY"}
    required = {
        "provider", "gpu_model", "gpu_vram_gb", "gpu_count", "status", "available_count",
        "price", "currency", "billing_unit", "true_hourly", "true_monthly", "cost_currency",
        "observed_at",
    }  # fmt: skip
    assert required <= rows[0].keys()
    providers = {r["provider"] for r in rows}
    assert len(providers) >= 2, providers

    everything = invoke_json("offers", "--min-vram", "32", "--db", str(db))
    sold_out = {r["offer_key"] for r in everything if r["status"] == "sold_out"}
    assert sold_out, "the recordings include sold-out 32 GB+ offers"
    assert not sold_out & {r["offer_key"] for r in rows}


def test_usd_display_converts_with_the_recorded_rate(db: Path) -> None:
    rows = invoke_json("cheapest", "--min-vram", "32", "--currency", "USD", "--db", str(db))
    for r in rows:
        assert r["cost_currency"] == "USD"
        if r["currency"] == "USD":
            assert r["fx_rate"] is None
            assert Decimal(r["true_hourly"]) == Decimal(r["native_true_hourly"])
        else:
            rate = Decimal(r["fx_rate"])
            native = Decimal(r["native_true_hourly"])
            assert abs(native * rate - Decimal(r["true_hourly"])) < Decimal("0.000001")


def _monthly_by_offer(db: Path, *options: str) -> dict[tuple[str, str], Decimal]:
    rows = invoke_json("offers", "--hours-per-month", "40", *options, "--db", str(db))
    return {(r["provider"], r["offer_key"]): Decimal(r["native_true_monthly"]) for r in rows}


def test_short_sessions_and_boot_time_follow_each_providers_billing_facts(db: Path) -> None:
    # 40 h a month in 160 sessions of 15 minutes, each with 5 minutes of boot.
    plain = _monthly_by_offer(db)
    short = _monthly_by_offer(db, "--session-hours", "0.25", "--boot-minutes", "5")
    assert plain.keys() == short.keys()
    assert all(short[k] >= plain[k] for k in plain)
    # Boot is free where billing starts when the instance is ready (Vast.ai, Lambda, Matpool)
    # and billed where it starts at power-on (AutoDL, PPIO).
    for provider in ("vastai", "lambda", "matpool"):
        keys = [k for k in plain if k[0] == provider]
        assert keys and all(short[k] == plain[k] for k in keys), provider
    for provider in ("autodl", "ppio"):
        keys = [k for k in plain if k[0] == provider]
        assert keys and any(short[k] > plain[k] for k in keys), provider


def test_explain_shows_the_rounding_of_the_providers_billing_granularity(db: Path) -> None:
    [row] = invoke_json("offers", "--provider", "lambda", "--in-stock", "--db", str(db))[:1]
    # Sessions of 36 seconds on a per-minute provider are billed a minute each.
    [explained] = invoke_json(
        "explain", "lambda", row["offer_key"], "--hours-per-month", "1",
        "--session-hours", "0.01", "--db", str(db),
    )  # fmt: skip
    text = "\n".join(explained["explanation"])
    assert "100 session(s) x 0.0166667 h billed" in text
    assert "billed per 1 min" in text
    assert explained["unknown_terms"] == ["minimum rental (none assumed)"]
    price = (
        Decimal(row["price"]) * row["gpu_count"]
        if row["price_basis"] == "gpu"
        else Decimal(row["price"])
    )
    assert Decimal(explained["native_true_monthly"]) >= price * Decimal(100) / Decimal(60)


def test_explain_names_billing_terms_that_are_not_on_file(db: Path) -> None:
    [row] = invoke_json("offers", "--provider", "suanjia", "--db", str(db))[:1]
    text = invoke("explain", "suanjia", row["offer_key"], "--db", str(db)).stdout
    assert "Billing terms not on file, assumed:" in text
    assert "billing granularity (metered exactly)" in text


def test_crawling_twice_gives_the_same_latest_state(db: Path) -> None:
    # A few providers: every provider's second poll of the same recordings is checked to
    # give the same fresh rows in tests/e2e/test_drift.py (each round's repair poll).
    crawled = set(BESIDE_THE_FAULT[1::2])
    before = {row for row in latest_state(db) if row[0] in crawled}
    run_gpurent_json("crawl", "--replay", *BESIDE_THE_FAULT, "--db", str(db))
    after = {row for row in latest_state(db) if row[0] in crawled}
    assert {row[:4] for row in after} == {row[:4] for row in before}
    assert {row[0] for row in after} == crawled
    runs_before = {row[4] for row in before}
    assert {row[4] for row in after}.isdisjoint(runs_before), "a new run is now the latest"


def test_a_provider_outage_keeps_its_last_good_offers_and_others_load(db: Path) -> None:
    before = {
        r["offer_key"]: r for r in invoke_json("offers", "--provider", "vastai", "--db", str(db))
    }
    summary = run_gpurent_json(
        "crawl", "--replay", "--scene", "outage-vastai", *BESIDE_THE_FAULT, "--db", str(db),
        expect=3,  # a provider failed: the nightly job's exit says so
    )  # fmt: skip
    status = {r["provider"]: r for r in summary}
    assert status["vastai"]["status"] == "failed"
    assert "500" in status["vastai"]["message"]
    assert_default_statuses(summary, skip=frozenset({"vastai"}))

    after = {
        r["offer_key"]: r for r in invoke_json("offers", "--provider", "vastai", "--db", str(db))
    }
    assert after.keys() == before.keys()
    assert all(after[k]["observed_at"] == before[k]["observed_at"] for k in after)
    assert all(after[k]["age"] for k in after)
    # Listed with their last good state, but its latest look confirmed none of them (rule
    # 11): stale, and ranked only when asked for.
    assert all(after[k]["stale"] for k in after)
    ranked = invoke_json("cheapest", "--min-vram", "1", "--limit", "1000", "--db", str(db))
    assert "vastai" not in {r["provider"] for r in ranked}
    asked = invoke_json(
        "cheapest", "--min-vram", "1", "--limit", "1000", "--include-stale", "--db", str(db)
    )
    vast = [r for r in asked if r["provider"] == "vastai"]
    assert vast and all(r["stale"] for r in vast)

    providers = {r["provider"]: r for r in invoke_json("providers", "--db", str(db))}
    assert providers["vastai"]["last_status"] == "failed"
    assert providers["vastai"]["good_data_from"] < providers["vastai"]["last_run_at"]
    assert providers["cudo"]["last_status"] == "ok"


def test_a_crawl_in_which_every_provider_failed_exits_non_zero(db: Path) -> None:
    import subprocess
    import sys

    from prefect.settings import PREFECT_API_URL

    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value() or ""}
    args = ["crawl", "--replay", "--scene", "outage-vastai", "--provider", "vastai"]
    proc = subprocess.run(
        [sys.executable, "-m", "gpurent", *args, "--db", str(db)],
        capture_output=True, text=True, timeout=300, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "every provider failed or was refused" in proc.stderr


def test_a_changed_layout_writes_no_sold_out_rows(db: Path) -> None:
    before = latest_state(db)
    summary = run_gpurent_json(
        "crawl", "--replay", "--scene", "layout-cudo", *BESIDE_THE_FAULT, "--db", str(db),
        expect=3,  # a provider changed its layout
    )  # fmt: skip
    cudo = next(r for r in summary if r["provider"] == "cudo")
    assert cudo["status"] == "layout_changed"
    con = connect(db, read_only=True)
    try:
        stored = con.execute(
            "SELECT count(*) FROM observations WHERE run_id = ? AND provider = 'cudo'",
            [cudo["run_id"]],
        ).fetchall()[0][0]
    finally:
        con.close()
    assert stored == 0
    cudo_before = {row[:4] for row in before if row[0] == "cudo"}
    cudo_after = {row[:4] for row in latest_state(db) if row[0] == "cudo"}
    assert cudo_after == cudo_before
    assert not any(row[2] == "sold_out" for row in cudo_after - cudo_before)


def test_each_crawl_publishes_a_markdown_summary_artifact(db: Path) -> None:
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts()
    heading = f"# gpurent crawl {FIRST_CRAWL['run_id']}\n"
    summaries = [a for a in artifacts if a.key == "crawl-summary"]
    ours = [a for a in summaries if str(a.data).startswith(heading)]
    assert len(ours) == 1, "the flow publishes its run summary as a Prefect artifact"
    text = str(ours[0].data)
    assert "| provider | status | offers |" in text
    assert "vastai" in text and "autodl" in text


def test_a_crawl_whose_load_cannot_get_the_lock_keeps_its_runs_for_gpurent_load(
    prefect_harness: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from tests.cli_helpers import run_gpurent
    from tests.reliability.rel_kit import writer_held

    path = tmp_path / "var" / "gpurent.duckdb"
    providers = ("cudo", "vastai")
    args = [a for p in providers for a in ("--provider", p)]
    monkeypatch.setenv("GPURENT_LOCK_WAIT_S", "1")
    with writer_held(path):  # another process writes the warehouse all along
        crawl = run_gpurent(
            "crawl", "--replay", *args, "--db", str(path), "--format", "json", expect=2
        )  # runs left for `gpurent load`: exit 2
    summary = {r["provider"]: r for r in json.loads(crawl.stdout)}
    assert {summary[p]["status"] for p in providers} == {"failed"}
    assert all("not loaded, warehouse busy" in summary[p]["message"] for p in providers)
    [hint] = [line for line in crawl.stderr.splitlines() if "gpurent load" in line]
    assert hint.startswith("warehouse busy: some runs were not loaded")
    run_dir = path.parent / "feeds" / summary["cudo"]["run_id"]
    feeds = {p: run_dir / f"{p}.jsonl" for p in providers}
    assert all(feed.is_file() for feed in feeds.values()), "the feeds are kept"
    assert (run_dir / "pending-load.json").is_file()

    monkeypatch.delenv("GPURENT_LOCK_WAIT_S")
    loaded = run_gpurent("load", str(path.parent / "feeds"), "--db", str(path), "--format", "json")
    rows = {r["provider"]: r for r in json.loads(loaded.stdout)}
    assert {(rows[p]["status"], rows[p]["result"]) for p in providers} == {("ok", "loaded")}
    assert not (run_dir / "pending-load.json").exists()
    for provider, feed in feeds.items():
        crawled = {
            json.loads(line)["offer_key"]
            for line in feed.read_text(encoding="utf-8").splitlines()
            if line.strip() and json.loads(line).get("kind") == "offer"
        }
        shown = invoke_json("offers", "--provider", provider, "--db", str(path))
        assert {r["offer_key"] for r in shown} == crawled
        assert {r["run_id"] for r in shown} == {summary["cudo"]["run_id"]}
        assert rows[provider]["offers"] == len(crawled)
