"""`costed_latest_offers(..., limit=N)` is exactly `costed_latest_offers(...)[:N]` (issue 13):
the bound-first ranking (warehouse.ranking) on random markets and on the recorded pages,
with and without the stale rows (rule of truth 11: partial runs' unseen offers, and every
offer of a provider whose latest run failed), which both paths leave out alike."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wh_kit import REPO_ROOT, FeedKit

from gpurent_core.cost.usage import UsageProfile
from gpurent_core.model import (
    AddonFee,
    BillingUnit,
    FeeBasis,
    FeeType,
    OfferRecord,
    PriceBasis,
    PriceKind,
    PricePlan,
    ProviderRun,
    RunStatus,
    StockStatus,
)
from warehouse.costed import CostedOffer, costed_latest_offers, fx_table_for, left_out
from warehouse.db import connect
from warehouse.load import load_run
from warehouse.ranking import BoundQuery

D = Decimal
H, DAY = BillingUnit.HOUR, BillingUnit.DAY


def fee(kind: FeeType, amount: str, ccy: str = "CNY", **kw: Any) -> AddonFee:
    return AddonFee(fee_type=kind, amount=D(amount), currency=ccy, **kw)


# Small pools, so that random markets are full of exact ties and shared fee/plan sets.
FEES = (
    fee(FeeType.DATA_DISK, "0.0007", unit=H, basis=FeeBasis.GB, charged_while_stopped=True),
    fee(FeeType.DATA_DISK, "0.00005", "USD", unit=H, basis=FeeBasis.GB, mandatory=True,
        included_quantity=D(20), charged_while_stopped=True),
    fee(FeeType.SYSTEM_DISK, "0.10", unit=DAY, basis=FeeBasis.INSTANCE, mandatory=True),
    fee(FeeType.SYSTEM_DISK, "0.01", unit=DAY, basis=FeeBasis.GB, included_quantity=D(30)),
    fee(FeeType.STORAGE_STOPPED, "0.002", unit=H, basis=FeeBasis.GB, mandatory=True),
    fee(FeeType.EGRESS, "0.05", "USD", basis=FeeBasis.GB),
    fee(FeeType.EGRESS, "0.01", unit=H, basis=FeeBasis.GB, mandatory=True),
    fee(FeeType.VCPU, "0.003", "USD", unit=H, basis=FeeBasis.VCPU, quantity=D(4), mandatory=True),
    fee(FeeType.VCPU, "0.003", "USD", unit=H, basis=FeeBasis.VCPU, mandatory=True),
    fee(FeeType.PUBLIC_IP, "5", "EUR", basis=FeeBasis.INSTANCE, mandatory=True),
    fee(FeeType.PUBLIC_IP, "0.02", unit=H, basis=FeeBasis.GPU, mandatory=True),
    fee(FeeType.DATA_DISK, "0.1", "USD", unit=BillingUnit.MONTH, basis=FeeBasis.TB, mandatory=True),
    # "Charged while stopped" in its three states: unknown (None, above), known yes, known no.
    fee(FeeType.DATA_DISK, "0.2", unit=BillingUnit.MONTH, basis=FeeBasis.GB, mandatory=True,
        charged_while_stopped=False),
    fee(FeeType.SYSTEM_DISK, "0.30", unit=DAY, basis=FeeBasis.INSTANCE, mandatory=True,
        charged_while_stopped=False),
)  # fmt: skip
PLANS = tuple(
    PricePlan(price=D(p), currency=c, billing_unit=u, price_basis=b, price_kind=k)
    for p, c, u, b, k in (
        ("43.72", "CNY", DAY, PriceBasis.GPU, PriceKind.COMMITMENT),
        ("1040.69", "CNY", BillingUnit.MONTH, PriceBasis.GPU, PriceKind.COMMITMENT),
        ("200", "USD", BillingUnit.MONTH, PriceBasis.INSTANCE, PriceKind.COMMITMENT),
        ("0.9", "USD", H, PriceBasis.GPU, PriceKind.COMMITMENT),
        ("0.5", "USD", H, PriceBasis.GPU, PriceKind.SPOT),
        ("0.7", "CNY", H, PriceBasis.GPU, PriceKind.MEMBER),
        ("9000", "EUR", BillingUnit.YEAR, PriceBasis.INSTANCE, PriceKind.ON_DEMAND),
        ("150", "CNY", BillingUnit.WEEK, PriceBasis.GPU, PriceKind.ON_DEMAND),
    )
)
# Providers with different metering terms: exact, per second, per minute, boot free or not.
PROVIDERS = ("acme", "autodl", "vastai", "lambda")
CARDS = (("H100", 80), ("RTX 4090", 24), ("A100", 40), ("H20", None), ("L40S", 48))


@st.composite
def offer_specs(draw: st.DrawFn) -> dict[str, Any]:
    model, vram = draw(st.sampled_from(CARDS))
    return {
        "provider": draw(st.sampled_from(PROVIDERS)),
        "gpu_model": model,
        "gpu_vram_gb": vram,
        "gpu_count": draw(st.sampled_from((1, 1, 2, 4))),
        "status": draw(st.sampled_from(list(StockStatus))),
        "available_count": draw(st.sampled_from((None, 0, 1, 2, 4))),
        "price": D(draw(st.sampled_from(("0", "0.35", "1.98", "2.08", "3.3333")))),
        "currency": draw(st.sampled_from(("CNY", "CNY", "USD", "EUR"))),
        "billing_unit": draw(st.sampled_from((H, H, BillingUnit.MINUTE, DAY, BillingUnit.MONTH))),
        "price_basis": draw(st.sampled_from(list(PriceBasis))),
        "price_kind": draw(st.sampled_from(list(PriceKind))),
        "fees": tuple(
            FEES[i] for i in draw(st.lists(st.integers(0, len(FEES) - 1), max_size=3, unique=True))
        ),
        "plans": tuple(
            PLANS[i]
            for i in draw(st.lists(st.integers(0, len(PLANS) - 1), max_size=2, unique=True))
        ),
        "seen_again": draw(st.booleans()),
    }


@st.composite
def profiles(draw: st.DrawFn) -> UsageProfile:
    hours = D(draw(st.sampled_from(("730", "200", "100", "1.5"))))
    session = draw(st.sampled_from((None, D("0.5"), D(4))))
    return UsageProfile(
        hours_per_month=hours,
        session_hours=session if session is None or session <= hours else None,
        boot_minutes=D(draw(st.sampled_from((0, 3)))),
        storage_gb=D(draw(st.sampled_from(("0", "50", "123.5")))),
        egress_gb_per_month=D(draw(st.sampled_from(("0", "100")))),
        gpus=draw(st.sampled_from((1, 1, 2, 3))),
        keep_disks_while_stopped=draw(st.booleans()),
    )


def load_market(con: duckdb.DuckDBPyConnection, kit: FeedKit, specs: list[dict[str, Any]]) -> None:
    """Run 1 (ok) of each provider lists its offers; some providers then have a partial run 2
    that could not read some of them (they stay, stale) and sells out one it saw; others
    then have a failed run 2 (every offer of theirs stale)."""
    by_provider: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for n, spec in enumerate(specs):
        by_provider.setdefault(spec["provider"], []).append((f"o{n:03d}", spec))

    def record(run: ProviderRun, key: str, spec: dict[str, Any], **kw: Any) -> OfferRecord:
        fields = {k: v for k, v in spec.items() if k not in ("provider", "seen_again")}
        return kit.offer(run, key, raw_gpu_name=spec["gpu_model"], **{**fields, **kw})

    for index, (provider, offers) in enumerate(sorted(by_provider.items())):
        first = kit.run(1, provider=provider)
        load_run(con, first, kit.write(f"{provider}-1", [record(first, k, s) for k, s in offers]))
        again = [(k, s) for k, s in offers if s["seen_again"]]
        if index % 2 == 0 and again and len(again) < len(offers):
            unseen = tuple(k for k, s in offers if not s["seen_again"])
            second = kit.run(2, RunStatus.PARTIAL, provider=provider, unread_keys=unseen)
            lines = [record(second, k, s) for k, s in again[1:]]
            lines.append(record(second, *again[0], status=StockStatus.SOLD_OUT))
            load_run(con, second, kit.write(f"{provider}-2", lines))
        elif index % 4 == 1:
            load_run(con, kit.run(2, RunStatus.FAILED, provider=provider), None)


@pytest.fixture
def market_db() -> Iterator[tuple[duckdb.DuckDBPyConnection, FeedKit]]:
    with tempfile.TemporaryDirectory(prefix="gpurent-ranking-") as tmp:
        con = connect(Path(tmp) / "w.duckdb")
        try:
            yield con, FeedKit(Path(tmp))
        finally:
            con.close()


def same(offer: CostedOffer) -> tuple[Any, ...]:
    """Everything of a costed offer but its age, which is taken at query time."""
    return ({k: v for k, v in offer.offer.items() if k != "age_s"}, offer.cost, offer.gpus_rented)


def check_limits(
    con: duckdb.DuckDBPyConnection,
    profile: UsageProfile,
    limits: list[int],
    *,
    display_currency: str,
    **filters: Any,
) -> list[CostedOffer]:
    full = costed_latest_offers(con, profile, display_currency=display_currency, **filters)
    for limit in limits:
        fast = costed_latest_offers(
            con, profile, display_currency=display_currency, limit=limit, **filters
        )
        assert [same(c) for c in fast] == [same(c) for c in full[:limit]], limit
    return full


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    specs=st.lists(offer_specs(), min_size=1, max_size=24),
    profile=profiles(),
    display=st.sampled_from(("CNY", "USD", "EUR")),
    min_vram=st.sampled_from((None, 32, 48)),
    in_stock=st.booleans(),
    provider=st.sampled_from((None, "acme", "autodl")),
    limits=st.lists(st.integers(1, 30), min_size=1, max_size=3),
)
def test_limit_n_is_the_first_n_of_the_full_ranking(
    specs: list[dict[str, Any]],
    profile: UsageProfile,
    display: str,
    min_vram: int | None,
    in_stock: bool,
    provider: str | None,
    limits: list[int],
) -> None:
    with tempfile.TemporaryDirectory(prefix="gpurent-ranking-") as tmp:
        con = connect(Path(tmp) / "w.duckdb")
        try:
            load_market(con, FeedKit(Path(tmp)), specs)
            filters = {"min_vram_gb": min_vram, "in_stock_only": in_stock, "provider": provider}
            ranked = {}
            for include_stale in (False, True):
                full = check_limits(
                    con,
                    profile,
                    limits,
                    display_currency=display,
                    include_stale=include_stale,
                    **filters,
                )
                # The bound query lists exactly the offers the full ranking costs (skipping a
                # group's later members relies on it), each at or below its exact monthly cost.
                query = BoundQuery(
                    con,
                    profile,
                    display_currency=display,
                    fx=fx_table_for(con),
                    filters={"min_vram_gb": min_vram, "provider": provider},
                    in_stock_only=in_stock,
                    include_stale=include_stale,
                )
                listed = query.first(10_000)
                assert listed.complete
                bound = dict(zip(listed.keys, listed.bounds, strict=True))
                assert set(bound) == {(c.offer["provider"], c.offer["offer_key"]) for c in full}
                for c in full:
                    key = (c.offer["provider"], c.offer["offer_key"])
                    assert bound[key] <= c.cost.monthly_display, (key, bound[key], c.cost.lines)
                ranked[include_stale] = full
            # Confirmed only by default; with the stale rows, the same ranking plus them.
            assert not any(c.offer["stale"] for c in ranked[False])
            assert [same(c) for c in ranked[True] if not c.offer["stale"]] == [
                same(c) for c in ranked[False]
            ]
            assert left_out(con, profile, **filters).stale == len(ranked[True]) - len(ranked[False])
        finally:
            con.close()


def test_ties_beyond_the_limit_rank_by_provider_and_key(
    market_db: tuple[duckdb.DuckDBPyConnection, FeedKit],
) -> None:
    """Many offers of one machine (one cost group) and a few cheaper or dearer: the N first
    are the cheap ones, then the machine's offers in provider and key order."""
    con, kit = market_db
    machine = {"price": D("2.08"), "currency": "CNY", "fees": (FEES[0],), "plans": ()}
    specs = [{"provider": p, **machine} for p in ("acme", "autodl")] * 60
    specs += [{"provider": "acme", **machine, "price": D("1.5")}]
    specs += [{"provider": "acme", **machine, "price": D("3")}]
    for provider in ("acme", "autodl"):
        run = kit.run(1, provider=provider)
        lines = [
            kit.offer(run, f"k{n:03d}", **{k: v for k, v in s.items() if k != "provider"})
            for n, s in enumerate(specs)
            if s["provider"] == provider
        ]
        load_run(con, run, kit.write(provider, lines))
    full = check_limits(con, UsageProfile(), [1, 5, 61, 64, 200], display_currency="CNY")
    assert full[0].offer["offer_key"] == "k120"
    assert [c.offer["provider"] for c in full[1:62]] == ["acme"] * 60 + ["autodl"]


def test_an_offer_no_rate_converts_is_left_out_and_counted_with_a_limit_or_not(
    market_db: tuple[duckdb.DuckDBPyConnection, FeedKit],
) -> None:
    """One rule for a missing rate (audit, money): left out and counted (it refused the
    whole ranking), the same with the bound query (a limit) as without."""
    from warehouse.costed import left_out, unconvertible_currencies

    con, kit = market_db
    run = kit.run(1)
    pounds = kit.offer(run, "b", gpu_model="A100", currency="GBP")
    load_run(con, run, kit.write("r1", [kit.offer(run, "a"), pounds]))
    for limit in (None, 1):
        got = costed_latest_offers(con, UsageProfile(), display_currency="CNY", limit=limit)
        assert [c.offer["offer_key"] for c in got] == ["a"]
    missing = unconvertible_currencies(con, "CNY")
    assert missing == ["GBP"]
    out = left_out(con, UsageProfile(), unconvertible=missing)
    assert (out.unconvertible, out.unconvertible_currencies) == (1, ("GBP",))
    # Filtered out, the GBP offer needs no rate.
    fast = costed_latest_offers(
        con, UsageProfile(), display_currency="CNY", gpu_model="H100", limit=1
    )
    assert [c.offer["offer_key"] for c in fast] == ["a"]


def recorded_offers() -> dict[str, list[dict[str, Any]]]:
    """The offers of every recorded page in the spiders' parse fixtures (the demo's data)."""
    by_provider: dict[str, dict[str, dict[str, Any]]] = {}
    for path in sorted((REPO_ROOT / "spiders" / "providers").glob("*/fixtures/recorded_*/")):
        output = path / "output.json"
        if not output.is_file():
            continue
        items = json.loads(output.read_text(encoding="utf-8"))
        # Some parse fixtures are of a page's parts (a price quote, a zone's free count).
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and item.get("kind") == "offer":
                by_provider.setdefault(item["provider"], {}).setdefault(item["offer_key"], item)
    return {p: list(offers.values()) for p, offers in by_provider.items()}


@pytest.fixture(scope="module")
def recorded_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    root = tmp_path_factory.mktemp("recorded")
    kit = FeedKit(root)
    con = connect(root / "w.duckdb")
    for provider, items in recorded_offers().items():
        run = kit.run(1, provider=provider)
        lines = [
            OfferRecord.model_validate(
                {**item, "run_id": run.run_id, "observed_at": run.started_at.isoformat()}
            )
            for item in items
        ]
        load_run(con, run, kit.write(provider, lines))
    yield con
    con.close()


@pytest.mark.parametrize(
    ("profile", "display", "filters"),
    [
        (UsageProfile(), "CNY", {"min_vram_gb": 32, "in_stock_only": True}),
        (UsageProfile(), "CNY", {}),
        (UsageProfile(gpus=2), "USD", {"min_vram_gb": 24, "in_stock_only": True}),
        (
            UsageProfile(hours_per_month=D(200), session_hours=D(4), boot_minutes=D(3)),
            "CNY",
            {"in_stock_only": True},
        ),
        (
            UsageProfile(
                hours_per_month=D(50), storage_gb=D(0), egress_gb_per_month=D(500),
                keep_disks_while_stopped=False,
            ),
            "USD",
            {"gpu_model": "rtx 4090"},
        ),
    ],
)  # fmt: skip
def test_limit_n_on_the_recorded_pages(
    recorded_db: duckdb.DuckDBPyConnection,
    profile: UsageProfile,
    display: str,
    filters: dict[str, Any],
) -> None:
    providers = {r[0] for r in recorded_db.execute("SELECT provider FROM current_runs").fetchall()}
    assert len(providers) >= 10, providers
    full = check_limits(
        recorded_db, profile, [1, 3, 10, 25, 1000], display_currency=display, **filters
    )
    assert full, "the recorded pages have offers for this question"
