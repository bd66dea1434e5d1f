"""Benchmark: how big the change history gets, and whether the latest state slows as it grows.

Run from the repo root (a benchmark, not a test; it asserts nothing)::

    .venv/bin/python benchmarks/history_size.py            # two simulated days: minutes
    .venv/bin/python benchmarks/history_size.py --days 7   # the week behind docs/history.md

A simulated week is 2,016 polls of four provider runs each; on a busy two-core machine it
took half an hour, so the default is two days. The year is extrapolated from the growth
over the second half of the run, of the file or of the blocks in use, whichever grew more
(DuckDB reuses freed blocks, so the file alone can look flat for days).

The simulation (assumptions, stated so the figures can be judged):

* ``--offers`` offers (default 10,000) spread evenly over ``--providers`` providers
  (default 4), polled together every ``--interval-min`` minutes (default 5): one provider run
  each per poll, loaded through ``warehouse.load.load_batch`` (the load path of
  ``load_run`` after feed validation, which is skipped here to keep the run short; it writes
  nothing to the database).
* Offers look like the real ones: a dozen GPU models, 1-8 cards, CNY or USD per hour, two
  add-on fees shared by the provider's offers (10% carry a third), a monthly plan on 30%.
* Change rate ``--change-rate`` (default 0.02): in each provider run, 2% of its offers
  change. Of those changes, 50% are stock flips (in_stock / low / sold_out, with the free
  count), 35% are free-count changes only, 15% are price moves of 1-8% (the offer's monthly
  plan follows, so plan lists change too). 1% of provider runs fail (no feed).
  Real markets change less at night and more at noon; a flat rate is the simple average.
* Every run's snapshot, failed runs included, stays reconstructable (warehouse.snapshots).

Measured: the DuckDB file's bytes (after CHECKPOINT) after the first poll and at the end;
the growth per offer change and per poll; that growth extrapolated to a year of polls at
this interval, against the 2 GiB budget; and the latency of ``latest_offers`` and
``costed_latest_offers`` after 1 poll and after the whole history (median of 5), as a ratio.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

# Run as a script from anywhere: the repo root holds the packages.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import polars as pl

from gpurent_core.cost.usage import UsageProfile
from gpurent_core.model import ProviderRun, RunStatus
from warehouse.costed import costed_latest_offers
from warehouse.db import connect
from warehouse.feed import (
    FEE_SCHEMA,
    OBSERVATION_SCHEMA,
    PLAN_SCHEMA,
    QUARANTINE_SCHEMA,
    FeedBatch,
)
from warehouse.load import load_batch
from warehouse.queries import latest_offers
from warehouse.snapshots import offers_at

BUDGET_BYTES = 2 * 1024**3
START = datetime(2026, 1, 5, tzinfo=UTC)
GPUS = [
    ("nvidia", "RTX 4090", 24, None, Decimal("1.98")),
    ("nvidia", "RTX 4090", 48, None, Decimal("2.88")),
    ("nvidia", "RTX 3090", 24, None, Decimal("1.28")),
    ("nvidia", "RTX 5090", 32, None, Decimal("2.68")),
    ("nvidia", "A100", 80, "SXM", Decimal("6.98")),
    ("nvidia", "A800", 80, "PCIe", Decimal("5.88")),
    ("nvidia", "H100", 80, "SXM", Decimal("14.50")),
    ("nvidia", "H20", 96, "SXM", Decimal("7.20")),
    ("nvidia", "L40S", 48, "PCIe", Decimal("4.60")),
    ("nvidia", "V100", 32, "SXM", Decimal("1.60")),
    ("nvidia", "RTX A6000", 48, None, Decimal("3.10")),
    ("nvidia", "RTX 4080 SUPER", 16, None, Decimal("1.10")),
]
REGIONS = ["cn-north", "cn-east", "cn-south", "us-east", "eu-west"]
STATUSES = ["in_stock", "low", "sold_out"]


@dataclass
class Provider:
    """One simulated provider: its offers' mutable state as column lists."""

    name: str
    currency: str
    rows: dict[str, list[Any]]
    plan_price: list[Decimal | None]
    fees: pl.DataFrame  # fee rows without run_id (fees never change here)
    changes: int = 0
    runs: int = 0
    failed: int = 0
    history: list[int] = field(default_factory=list)


def make_provider(index: int, n: int, rng: random.Random) -> Provider:
    name = f"prov{index}"
    currency = "CNY" if index % 2 == 0 else "USD"
    rate = Decimal(1) if currency == "CNY" else Decimal("0.14")
    rows: dict[str, list[Any]] = {c: [] for c in OBSERVATION_SCHEMA if c != "run_id"}
    plan_price: list[Decimal | None] = []
    fee_rows: list[dict[str, Any]] = []
    for i in range(n):
        vendor, model, vram, form, base = rng.choice(GPUS)
        count = rng.choice([1, 1, 1, 2, 4, 8])
        per_gpu = rng.random() < 0.7
        price = (base * rate * Decimal(rng.uniform(0.85, 1.25))).quantize(Decimal("0.01"))
        if not per_gpu:
            price *= count
        status = rng.choice(STATUSES)
        key = f"{name}-{i:05d}"
        row = {
            "provider": name,
            "offer_key": key,
            "observed_at": START,
            "gpu_vendor": vendor,
            "gpu_model": model,
            "gpu_vram_gb": vram,
            "gpu_form_factor": form,
            "gpu_count": count,
            "raw_gpu_name": f"NVIDIA {model} {vram}GB",
            "status": status,
            "available_count": 0 if status == "sold_out" else rng.randint(1, count),
            "price": price,
            "currency": currency,
            "billing_unit": "hour",
            "price_basis": "gpu" if per_gpu else "instance",
            "price_kind": "on_demand",
            "region": rng.choice(REGIONS),
            "url": f"https://{name}.example.com/market/{i}",
        }
        for column, value in row.items():
            rows[column].append(value)
        plan_price.append(_plan(price) if rng.random() < 0.3 else None)
        fees = [
            {"fee_type": "data_disk", "amount": Decimal("0.0002") * rate, "unit": "hour",
             "basis": "gb", "included_quantity": Decimal(50), "mandatory": True,
             "charged_while_stopped": True},
            {"fee_type": "egress", "amount": Decimal("0.8") * rate, "unit": None, "basis": "gb",
             "included_quantity": None, "mandatory": False, "charged_while_stopped": False},
        ]  # fmt: skip
        if rng.random() < 0.1:
            fees.append(
                {"fee_type": "public_ip", "amount": Decimal("0.02") * rate, "unit": "hour",
                 "basis": "instance", "included_quantity": None, "mandatory": True,
                 "charged_while_stopped": True}
            )  # fmt: skip
        for seq, fee in enumerate(fees):
            fee_rows.append(
                {"provider": name, "offer_key": key, "seq": seq, "currency": currency,
                 "quantity": None, "note": None, **fee}
            )  # fmt: skip
    fee_schema = pl.Schema({c: t for c, t in FEE_SCHEMA.items() if c != "run_id"})
    return Provider(name, currency, rows, plan_price, pl.DataFrame(fee_rows, schema=fee_schema))


def _plan(price: Decimal) -> Decimal:
    return (price * Decimal(730) * Decimal("0.8")).quantize(Decimal("0.01"))


def mutate(p: Provider, rate: float, rng: random.Random) -> int:
    """Change ``rate`` of the provider's offers; returns how many changed."""
    n = len(p.plan_price)
    picked = rng.sample(range(n), max(1, round(n * rate)))
    rows = p.rows
    for i in picked:
        roll = rng.random()
        count = rows["gpu_count"][i]
        if roll < 0.5:
            now = rows["status"][i]
            status = rng.choice([s for s in STATUSES if s != now])
            rows["status"][i] = status
            rows["available_count"][i] = 0 if status == "sold_out" else rng.randint(1, count)
        elif roll < 0.85:
            rows["status"][i] = "in_stock"
            rows["available_count"][i] = (rows["available_count"][i] % count) + 1
            if count == 1:  # nothing else to change: flip to low instead
                rows["status"][i] = "low"
        else:
            move = Decimal(rng.uniform(1.01, 1.08))
            if rng.random() < 0.5:
                move = 1 / move
            price = max(Decimal("0.05"), (rows["price"][i] * move).quantize(Decimal("0.01")))
            rows["price"][i] = price
            if p.plan_price[i] is not None:
                p.plan_price[i] = _plan(price)
    return len(picked)


def batch_for(p: Provider, run_id: str, observed_at: datetime) -> FeedBatch:
    n = len(p.plan_price)
    columns = {"run_id": [run_id] * n, **p.rows, "observed_at": [observed_at] * n}
    offers = pl.DataFrame(columns, schema=OBSERVATION_SCHEMA)
    plan_rows = [
        (key, price)
        for key, price in zip(p.rows["offer_key"], p.plan_price, strict=True)
        if price is not None
    ]
    plans = pl.DataFrame(
        {
            "run_id": [run_id] * len(plan_rows),
            "provider": [p.name] * len(plan_rows),
            "offer_key": [k for k, _ in plan_rows],
            "seq": [0] * len(plan_rows),
            "price": [v for _, v in plan_rows],
            "currency": [p.currency] * len(plan_rows),
            "billing_unit": ["month"] * len(plan_rows),
            "price_basis": ["gpu"] * len(plan_rows),
            "price_kind": ["commitment"] * len(plan_rows),
        },
        schema=PLAN_SCHEMA,
    )
    fees = p.fees.with_columns(run_id=pl.lit(run_id)).select(list(FEE_SCHEMA))
    return FeedBatch(
        offers=offers,
        fees=fees,
        plans=plans,
        quarantine=pl.DataFrame(schema=QUARANTINE_SCHEMA),
        lines=offers.height,
    )


@dataclass(frozen=True)
class Size:
    """The file after a CHECKPOINT, and the blocks in use (free blocks get reused)."""

    file: int
    used: int


def measure(con: Any, path: Path) -> Size:
    con.execute("CHECKPOINT")
    block_size, used_blocks = con.execute(
        "SELECT block_size, used_blocks FROM pragma_database_size()"
    ).fetchall()[0]
    return Size(path.stat().st_size, int(block_size) * int(used_blocks))


def interleaved_ms(fns: list[Callable[[], object]], rounds: int) -> list[float]:
    """Median milliseconds of each function, timed in alternation so that a busy machine
    slows all of them alike."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            times[i].append(time.perf_counter() - start)
    return [statistics.median(t) * 1000 for t in times]


def median_ms(fn: Callable[[], object], repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def mib(n: float) -> str:
    return f"{n / 1024**2:,.1f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--offers", type=int, default=10_000)
    parser.add_argument("--providers", type=int, default=4)
    parser.add_argument("--days", type=float, default=2)
    parser.add_argument("--interval-min", type=float, default=5)
    parser.add_argument("--change-rate", type=float, default=0.02)
    parser.add_argument("--fail-rate", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=20261101)
    parser.add_argument("--db", type=Path, help="keep the database here (default: a temp dir)")
    parser.add_argument(
        "--no-reopen",
        dest="reopen",
        action="store_false",
        help="keep one connection (default: reopen per poll, like the flow, which checkpoints)",
    )
    args = parser.parse_args()

    rng = random.Random(args.seed)
    interval = timedelta(minutes=args.interval_min)
    polls = int(args.days * 24 * 60 / args.interval_min)
    per = args.offers // args.providers
    providers = [make_provider(i, per, rng) for i in range(args.providers)]
    path = args.db or Path(tempfile.mkdtemp(prefix="gpurent-bench-")) / "history.duckdb"
    con = connect(path)
    profile = UsageProfile()

    def poll(i: int) -> tuple[int, float]:
        nonlocal con
        if args.reopen:
            # As the flow does: one connection per poll, so DuckDB checkpoints on close.
            con.close()
            con = connect(path)
        started = START + i * interval
        changed = 0
        elapsed = 0.0
        for p in providers:
            run_id = f"{p.name}-{i:06d}"
            fails = i > 0 and rng.random() < args.fail_rate
            if i > 0 and not fails:
                changed += mutate(p, args.change_rate, rng)
            run = ProviderRun(
                run_id=run_id,
                provider=p.name,
                started_at=started,
                finished_at=started + timedelta(seconds=40),
                status=RunStatus.FAILED if fails else RunStatus.OK,
                message="HTTP 503" if fails else None,
            )
            batch = (
                FeedBatch.empty()
                if fails
                else batch_for(p, run_id, started + timedelta(seconds=20))
            )
            t = time.perf_counter()
            load_batch(con, run, batch)
            elapsed += time.perf_counter() - t
        return changed, elapsed

    poll(0)
    first = measure(con, path)
    versions_first = con.execute("SELECT count(*) FROM version_rows").fetchall()[0][0]
    first_copy = path.with_name(path.stem + "-first-poll.duckdb")
    con.close()
    shutil.copyfile(path, first_copy)  # the one-poll database, to time queries against later
    con = connect(path)

    polls_per_day = int(24 * 60 / args.interval_min)
    print(
        f"simulating {polls:,} polls ({args.days:g} days every {args.interval_min:g} min) of "
        f"{per * args.providers:,} offers from {args.providers} providers, "
        f"{args.change_rate:.1%} changing per run ...",
        flush=True,
    )
    changes = 0
    load_ms: list[float] = []
    marks: list[tuple[int, int, Size]] = [(0, 0, first)]  # (poll, changes, size)
    wall = time.perf_counter()
    for i in range(1, polls + 1):
        changed, elapsed = poll(i)
        changes += changed
        load_ms.append(elapsed * 1000)
        if i % polls_per_day == 0 or i == polls:
            size = measure(con, path)
            marks.append((i, changes, size))
            print(
                f"  poll {i:,}: {mib(size.file)} file, {mib(size.used)} in use, "
                f"{time.perf_counter() - wall:,.0f} s",
                flush=True,
            )
    versions_end = con.execute("SELECT count(*) FROM version_rows").fetchall()[0][0]
    runs = con.execute("SELECT count(*) FROM crawl_runs").fetchall()[0][0]
    con.close()

    end = marks[-1][2]
    # Steady state: the growth over the second half of the run (the first hours also fill
    # blocks that later polls reuse).
    mid = marks[len(marks) // 2] if len(marks) > 2 else marks[0]
    span_polls = polls - mid[0]
    span_changes = changes - mid[1]
    slope_change = (end.file - mid[2].file) / max(1, span_changes)
    slope_used = (end.used - mid[2].used) / max(1, span_changes)
    # The file can lag the bytes in use for a while (DuckDB reuses the blocks a delete or a
    # checkpoint freed), but not for a year: the year grows at the larger of the two rates.
    slope_poll = max(end.file - mid[2].file, end.used - mid[2].used) / span_polls
    polls_year = 365 * 24 * 60 / args.interval_min
    year = end.file + slope_poll * (polls_year - polls)
    average_change = (end.file - first.file) / max(1, changes)

    old = connect(first_copy, read_only=True)
    new = connect(path, read_only=True)
    try:
        latest_old, latest_new = interleaved_ms(
            [lambda: latest_offers(old), lambda: latest_offers(new)], rounds=7
        )
        costed_old, costed_new = interleaved_ms(
            [
                lambda: costed_latest_offers(old, profile, display_currency="CNY"),
                lambda: costed_latest_offers(new, profile, display_currency="CNY"),
            ],
            rounds=3,
        )
        past = START + (polls // 2) * interval
        (offers_at_ms,) = interleaved_ms([lambda: offers_at(new, past)], rounds=3)
    finally:
        old.close()
        new.close()

    print()
    print(f"database file               {path}")
    print(f"after the first poll        {mib(first.file)} ({versions_first:,} versions)")
    print(
        f"after {polls:,} polls         {mib(end.file)} file, {mib(end.used)} in use "
        f"({versions_end:,} versions, {runs:,} runs)"
    )
    print(f"offer changes simulated     {changes:,} ({changes / polls:,.0f} per poll)")
    print(f"growth per change           {average_change:,.1f} bytes on average since poll 1")
    print(
        f"steady state (last {span_polls:,} polls)  {slope_change:,.1f} bytes of file per change "
        f"({slope_used:,.1f} in use), {slope_poll / 1024:,.1f} KiB per poll (the larger)"
    )
    print(
        f"one year, extrapolated      {mib(year)} = {year / BUDGET_BYTES:.1%} of the 2 GiB budget "
        f"({polls_year:,.0f} polls at the steady-state rate)"
    )
    print(
        f"old design, for scale       {args.offers * polls_year:,.0f} observation rows a year "
        f"(plus fee and plan rows) vs {changes / polls * polls_year:,.0f} versions"
    )
    print(
        f"load per poll, all providers  first {polls_per_day:,}: "
        f"{statistics.median(load_ms[:polls_per_day]):,.0f} ms, last {polls_per_day:,}: "
        f"{statistics.median(load_ms[-polls_per_day:]):,.0f} ms (median)"
    )
    print(
        f"latest_offers               {latest_old:,.1f} ms after 1 poll, {latest_new:,.1f} ms after "
        f"{polls:,}: ratio {latest_new / latest_old:.2f}"
    )
    print(
        f"costed_latest_offers        {costed_old:,.0f} ms after 1 poll, {costed_new:,.0f} ms after "
        f"{polls:,}: ratio {costed_new / costed_old:.2f}"
    )
    print(
        f"offers_at, mid-history      {offers_at_ms:,.0f} ms (reads the history; not on hot paths)"
    )


if __name__ == "__main__":
    main()
