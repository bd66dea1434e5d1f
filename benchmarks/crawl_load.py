"""Benchmark: feed validation + warehouse load throughput, and latest-offer latency as history grows.

Run from the repo root (a benchmark, not a test; it asserts nothing about speed)::

    .venv/bin/python benchmarks/crawl_load.py            # about a minute
    .venv/bin/python benchmarks/crawl_load.py --quick    # a few seconds, for a smoke run

What it measures, on this machine, with real DuckDB files in a temporary folder:

(a) Load throughput. A synthetic feed of N offers (``gpurent_core.model.OfferRecord``, each with
    two add-on fees and one price plan, plus 1% quarantine lines) is written as JSON Lines,
    then timed twice: ``warehouse.feed.read_feed`` alone (parse + validate into Polars
    frames), and ``warehouse.load.load_run`` into a fresh warehouse file (read + validate +
    one transaction of inserts). Each figure is the best of ``--repeats`` tries (default 3,
    a fresh file each time). Ratios are against the smallest N: a time ratio near
    N_big / N_small means linear scaling.

(b) Query latency as history grows. The same offers are loaded again and again as new runs
    (new run ids, later times) of each provider; after 1, 10 and 50 rounds,
    ``warehouse.costed.costed_latest_offers`` (the join every surface reads: latest good run
    per provider, fees, plans, true cost of each offer) is timed, best of
    ``--query-repeats`` after one untimed warm-up call, with ``warehouse.queries.latest_offers``
    (the SQL part alone) and ``costed_latest_offers(..., limit=10)`` (the ten cheapest, as
    ``cheapest`` asks: warehouse.ranking) beside it. Ratios are
    against the latency after 1 round, measured in the same run: a flat ratio means the
    latest state does not get slower as history piles up.

Every figure is wall time with this process's CPU time beside it (DuckDB's threads
included): on a busy machine the wall time waits for other processes, the CPU time does not,
so its ratios are the steadier ones. The feed files are written before any timing starts,
so only gpurent's code is timed.
Best-of-N rather than the mean: on a shared machine other processes only ever add time, so
the fastest try is the closest to what the code itself costs (the ``timeit`` advice).
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from functools import partial
from pathlib import Path

# Run as a script from anywhere: the repo root holds the packages.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

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
    QuarantineRecord,
    RunStatus,
    StockStatus,
)
from warehouse.costed import costed_latest_offers
from warehouse.db import connect
from warehouse.feed import read_feed
from warehouse.load import load_run
from warehouse.queries import latest_offers

RUN_PLACEHOLDER = "RUN-PLACEHOLDER"
START = datetime(2026, 10, 1, tzinfo=UTC)
# (vendor, model, vram, form factor) cycled through the synthetic offers.
GPUS = (
    ("NVIDIA", "RTX 4090", 24, None),
    ("NVIDIA", "A100", 80, "SXM"),
    ("NVIDIA", "H100", 80, "SXM"),
    ("NVIDIA", "L40S", 48, "PCIe"),
    ("NVIDIA", "RTX A6000", 48, "PCIe"),
    ("NVIDIA", "RTX 3090", 24, None),
)
STATUSES = (StockStatus.IN_STOCK, StockStatus.IN_STOCK, StockStatus.SOLD_OUT, StockStatus.LOW)


# -- synthetic feeds ---------------------------------------------------------------


def synthetic_records(provider: str, n: int) -> Iterator[OfferRecord | QuarantineRecord]:
    """N offers shaped like a component-priced cloud's, and N/100 quarantine lines."""
    for i in range(n):
        vendor, model, vram, form = GPUS[i % len(GPUS)]
        per_gpu = i % 3 == 0
        yield OfferRecord(
            provider=provider,
            offer_key=f"{provider}-{i:06d}",
            run_id=RUN_PLACEHOLDER,
            observed_at=START,
            gpu_vendor=vendor,
            gpu_model=model,
            gpu_vram_gb=vram,
            gpu_form_factor=form,
            gpu_count=1 if per_gpu else 1 + i % 8,
            raw_gpu_name=model,
            status=STATUSES[i % len(STATUSES)],
            available_count=i % 9,
            price=Decimal("0.35") + Decimal(i % 400) / 100,
            currency="USD" if i % 5 else "CNY",
            billing_unit=BillingUnit.HOUR,
            price_basis=PriceBasis.GPU if per_gpu else PriceBasis.INSTANCE,
            price_kind=PriceKind.ON_DEMAND,
            region=f"region-{i % 17}",
            url=f"https://example.invalid/{provider}/{i}",
            fees=(
                AddonFee(
                    fee_type=FeeType.DATA_DISK,
                    amount=Decimal("0.00005"),
                    currency="USD",
                    unit=BillingUnit.HOUR,
                    basis=FeeBasis.GB,
                    mandatory=True,
                ),
                AddonFee(
                    fee_type=FeeType.VCPU,
                    amount=Decimal("0.003"),
                    currency="USD",
                    unit=BillingUnit.HOUR,
                    basis=FeeBasis.VCPU,
                    quantity=Decimal(4),
                    mandatory=True,
                ),
            ),
            plans=(
                PricePlan(
                    price=Decimal(200 + i % 900),
                    currency="USD",
                    billing_unit=BillingUnit.MONTH,
                    price_basis=PriceBasis.INSTANCE,
                    price_kind=PriceKind.COMMITMENT,
                ),
            ),
        )
        if i % 100 == 0:
            yield QuarantineRecord(
                provider=provider,
                run_id=RUN_PLACEHOLDER,
                observed_at=START,
                offer_key=f"{provider}-q{i:06d}",
                reason="gpu_unresolved: 'GTX 1070': not in the catalog",
                field="gpu_name",
                raw={"gpu_name": "GTX 1070"},
            )


def feed_template(provider: str, n: int) -> str:
    return "".join(r.model_dump_json() + "\n" for r in synthetic_records(provider, n))


def write_feed(template: str, folder: Path, provider: str, run_id: str) -> Path:
    path = folder / f"{provider}.{run_id}.jsonl"
    path.write_text(template.replace(RUN_PLACEHOLDER, run_id), encoding="utf-8")
    return path


def run_id_of(feed: Path) -> str:
    return feed.name.split(".")[1]


def provider_run(provider: str, run_id: str, n: int, at: datetime) -> ProviderRun:
    return ProviderRun(
        run_id=run_id,
        provider=provider,
        started_at=at,
        finished_at=at + timedelta(seconds=30),
        status=RunStatus.OK,
        offers=n,
        quarantined=(n + 99) // 100,
    )


# -- timing ------------------------------------------------------------------------


@dataclass(frozen=True)
class Timing:
    """Wall time, and CPU time of this process (all its threads, DuckDB's included)."""

    wall: float
    cpu: float

    def per(self, n: int) -> Timing:
        return Timing(self.wall / n, self.cpu / n)

    def __add__(self, other: Timing) -> Timing:
        return Timing(self.wall + other.wall, self.cpu + other.cpu)

    def show(self) -> str:
        return f"{self.wall * 1000:8.1f} ms ({self.cpu * 1000:7.1f} cpu)"

    def ratio(self, base: Timing) -> str:
        return f"{self.wall / base.wall:.2f}x (cpu {self.cpu / base.cpu:.2f}x)"


ZERO = Timing(0.0, 0.0)


def timed(fn: Callable[[], object]) -> Timing:
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return Timing(time.perf_counter() - wall, time.process_time() - cpu)


def best(timings: Iterable[Timing]) -> Timing:
    """Fastest wall time and least CPU time, each over the tries."""
    done = list(timings)
    return Timing(min(t.wall for t in done), min(t.cpu for t in done))


# -- (a) load throughput -----------------------------------------------------------


def bench_load(root: Path, sizes: list[int], repeats: int) -> None:
    print(f"\n(a) feed validation + load throughput, best of {repeats} tries")
    print(f"{'offers':>7} {'read_feed':>27} {'offers/s':>9} {'load_run':>27} {'offers/s':>9}")
    results: list[tuple[int, Timing, Timing]] = []
    for n in sizes:
        template = feed_template("bench", n)
        feeds = [write_feed(template, root, "bench", f"load-{n}-{k}") for k in range(repeats)]
        read = best(
            timed(partial(read_feed, feed, provider="bench", run_id=run_id_of(feed)))
            for feed in feeds
        )
        loads = []
        for k, feed in enumerate(feeds):
            con = connect(root / f"load-{n}-{k}.duckdb")
            run = provider_run("bench", run_id_of(feed), n, START)
            try:
                loads.append(timed(partial(load_run, con, run, feed)))
            finally:
                con.close()
        load = best(loads)
        results.append((n, read, load))
        print(
            f"{n:>7} {read.show():>27} {n / read.wall:>9.0f} {load.show():>27}"
            f" {n / load.wall:>9.0f}"
        )
    base_n, base_read, base_load = results[0]
    for n, read, load in results[1:]:
        print(
            f"  {n} vs {base_n} offers ({n / base_n:g}x the rows): read_feed takes"
            f" {read.ratio(base_read)} the time, load_run {load.ratio(base_load)};"
            f" per offer, load_run costs {load.per(n).ratio(base_load.per(base_n))}"
        )


# -- (b) latency as history grows --------------------------------------------------


def bench_history(
    root: Path, providers: int, offers: int, checkpoints: list[int], repeats: int
) -> None:
    names = [f"prov{p}" for p in range(providers)]
    print(
        f"\n(b) costed_latest_offers latency as history grows: {providers} providers x {offers}"
        f" offers per run, best of {repeats}"
    )
    templates = {name: feed_template(name, offers) for name in names}
    feeds_dir = root / "history-feeds"
    feeds_dir.mkdir()
    feeds = {
        (name, r): write_feed(templates[name], feeds_dir, name, f"h{r:03d}")
        for r in range(1, max(checkpoints) + 1)
        for name in names
    }
    profile = UsageProfile(hours_per_month=Decimal(200), storage_gb=Decimal(100))
    con = connect(root / "history.duckdb")
    print(
        f"{'rounds':>6} {'obs rows':>8} {'load_run per round':>27} {'latest_offers':>27}"
        f" {'costed_latest_offers':>27} {'limit=10':>27} {'rows':>5}"
    )
    baseline: tuple[Timing, Timing, Timing] | None = None
    loaded = 0
    try:
        for checkpoint in sorted(checkpoints):
            load = ZERO
            new = range(loaded + 1, checkpoint + 1)
            for r in new:
                at = START + timedelta(hours=r)
                for name in names:
                    run = provider_run(name, f"h{r:03d}", offers, at)
                    load = load + timed(partial(load_run, con, run, feeds[(name, r)]))
            loaded = checkpoint
            query = partial(latest_offers, con)
            costed = partial(costed_latest_offers, con, profile, display_currency="USD")
            top = partial(costed, limit=10)
            # One untimed call each first: first-call costs (FX table, caches) are not history.
            query()
            rows = len(costed())
            top()
            sql = best(timed(query) for _ in range(repeats))
            full = best(timed(costed) for _ in range(repeats))
            ten = best(timed(top) for _ in range(repeats))
            obs = con.execute("SELECT count(*) FROM observations").fetchone()
            count = int(obs[0]) if obs else 0
            print(
                f"{checkpoint:>6} {count:>8} {load.per(max(1, len(new))).show():>27}"
                f" {sql.show():>27} {full.show():>27} {ten.show():>27} {rows:>5}"
            )
            if baseline is None:
                baseline = (sql, full, ten)
            else:
                print(
                    f"  after {checkpoint} rounds vs 1: latest_offers {sql.ratio(baseline[0])},"
                    f" costed_latest_offers {full.ratio(baseline[1])},"
                    f" limit=10 {ten.ratio(baseline[2])}"
                )
    finally:
        con.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--providers", type=int, default=2)
    parser.add_argument("--history-offers", type=int, default=400, help="per provider per run")
    parser.add_argument("--rounds", type=int, nargs="+", default=[1, 10, 50])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--query-repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.history_offers, args.rounds = [200, 1_000], 200, [1, 5]
        args.repeats = args.query_repeats = 2
    started = time.perf_counter()
    import duckdb
    import polars

    print(
        f"gpurent crawl_load benchmark  python {sys.version.split()[0]}"
        f"  duckdb {duckdb.__version__}  polars {polars.__version__}"
    )
    with tempfile.TemporaryDirectory(prefix="gpurent-bench-") as tmp:
        root = Path(tmp)
        bench_load(root, sorted(args.sizes), args.repeats)
        bench_history(root, args.providers, args.history_offers, args.rounds, args.query_repeats)
    print(f"\ntotal {time.perf_counter() - started:.1f} s wall, {time.process_time():.1f} s cpu")


if __name__ == "__main__":
    main()
