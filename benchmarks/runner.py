"""``python -m benchmarks``: every gpurent figure beside its baseline, in one run.

    .venv/bin/python -m benchmarks            # 10k / 100k / 1M offers: about twenty minutes
    .venv/bin/python -m benchmarks --quick    # small sizes, no 1M, under a minute

Each figure is the median of ``--repeats`` tries (default 3), gpurent and its baseline
measured in alternation (benchmarks.measure), on a synthetic market (benchmarks.market)
written before any timing starts:

* load: ``warehouse.load.load_run`` of one feed into a fresh warehouse, in a child process
  (its peak RSS is read from ``ru_maxrss``), against DuckDB's own ``INSERT ... SELECT FROM
  read_json(...)`` of the same feed (benchmarks.load_child). ``load_ratio`` is the worst
  ratio over the sizes.
* query: ``gpurent cheapest --min-vram 32`` on the warehouse the load built, start-up
  included, against ``gpurent --help`` and against the same command on the start-up
  warehouse; ``query_beyond_startup_ms_*`` is the difference from the latter, the query's
  share beyond the command's own start-up (``query_extra_ms_*``: the difference from
  ``--help``, which imports neither DuckDB nor opens the file).
* start-up: ``gpurent cheapest --min-vram 32`` on a demo-sized warehouse (254 offers, the
  size of one demo poll; ``--demo-db`` to use a real ``gpurent demo`` file instead), against
  ``--help`` and against the floor: a Python program that imports DuckDB, connects and runs
  one query over the current offers (``startup_floor_s``), the least any Python tool pays;
  the goal being the floor plus 0.15 s.
* crawl: 100k offers (``--quick``: 5k) over the replay server, the GPUShare spider against
  a minimal Scrapy spider of the same pages (benchmarks.crawl). The synthetic market has
  more pages than the default ``GPURENT_MAX_PAGES=200``, so the benchmark raises the cap.
* storage: ``benchmarks/history_size.py`` (10k offers polled every 5 min) extrapolated to a
  year; full runs only.
* alert latency: ``benchmarks/restock_latency.py`` (replay restock to webhook, the real
  watch-poll flow every ``--alert-interval`` seconds, default 60, 3 trials spread over the
  interval); ``alert_latency_s`` is the worst trial, the goal holding "every time". Full
  runs only (a minute and a half a trial).
* market over time: ``benchmarks/market_over_time.py`` (a simulated market of ten providers
  on the replay server, ``--market-polls`` polls, default 200, each crawled, loaded and
  evaluated for real, gpurent's answers checked against the simulation's truth after every
  poll); ``market_violations`` per check, with ``market_polls``, ``market_providers`` and
  ``market_seconds``. The goal is no violation. Full runs only (about 10 s a poll).
* restock forecast: ``benchmarks/forecast.py`` (two synthetic availability histories, with
  and without hour-of-week and provider habits, split in time: fit on the first two thirds,
  scored on the rest); ``forecast_brier`` / ``forecast_base_brier`` on the patterned one
  (lower is better), ``forecast_flat_brier`` / ``forecast_flat_base_brier`` on the flat
  one. Seconds, quick runs too.

Figures with more than two sides run them in rotation (benchmarks.measure.rotated). The
project's bytecode is brought up to date before anything is timed (``compile_project``).

The run ends with one JSON line of the headline figures (null: not measured in that mode).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks.market import write_feed
from benchmarks.measure import ROOT, Pair, paired, rotated, run_json, wall

FULL_SIZES = (10_000, 100_000, 1_000_000)
QUICK_SIZES = (1_000, 10_000)
PROVIDER = "bench"
RUN_ID = "bench-run-1"


@dataclass
class Row:
    figure: str
    ours: str
    base: str
    ratio: float | None
    goal: str = ""


@dataclass
class Results:
    rows: list[Row] = field(default_factory=list)
    summary: dict[str, Any] = field(
        default_factory=lambda: dict.fromkeys(
            (
                "crawl_ratio",
                "crawl_offers_per_s",
                "load_ratio",
                "load_rss_mib_1m",
                "query_ms_10k",
                "query_ms_1m",
                "query_extra_ms_10k",
                "query_extra_ms_1m",
                "query_beyond_startup_ms_10k",
                "query_beyond_startup_ms_1m",
                "startup_s",
                "startup_help_s",
                "startup_floor_s",
                "storage_gib_year",
                "alert_latency_s",
                "market_polls",
                "market_providers",
                "market_seconds",
                "market_violations",
                "forecast_brier",
                "forecast_base_brier",
                "forecast_flat_brier",
                "forecast_flat_base_brier",
            )
        )
    )


def gpurent_command() -> list[str]:
    """The console script beside this interpreter, else the same entry point through -c."""
    script = Path(sys.executable).with_name("gpurent")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "gpurent"]


def bench_load(root: Path, sizes: tuple[int, ...], repeats: int, res: Results) -> dict[int, Path]:
    """Load figures per size; returns a loaded warehouse per size for the query figure."""
    kept: dict[int, Path] = {}
    worst: float | None = None
    for n in sizes:
        feed = write_feed(root / f"feed-{n}.jsonl", PROVIDER, RUN_ID, n)

        def side(mode: str, n: int = n, feed: Path = feed) -> Any:
            def run(k: int) -> dict[str, float]:
                db = root / f"{mode}-{n}-{k}.duckdb"
                answer = run_json(
                    [
                        "-m",
                        "benchmarks.load_child",
                        mode,
                        str(feed),
                        str(db),
                        PROVIDER,
                        RUN_ID,
                        str(n),
                    ]
                )
                if mode == "gpurent" and n not in kept:
                    kept[n] = db
                else:
                    db.unlink(missing_ok=True)
                return answer

            return run

        ours, base = paired(side("gpurent"), side("duckdb"), repeats)
        feed.unlink()
        pair = Pair(ours["seconds"], base["seconds"])
        worst = pair.ratio if worst is None else max(worst, pair.ratio)
        res.rows.append(
            Row(
                f"load {n:,} offers",
                f"{pair.ours:.2f} s, {ours['rss_mib']:,.0f} MiB",
                f"{pair.base:.2f} s, {base['rss_mib']:,.0f} MiB",
                pair.ratio,
                "<= 5x" + (", < 1 GiB" if n == 1_000_000 else ""),
            )
        )
        if n == 1_000_000:
            res.summary["load_rss_mib_1m"] = round(ours["rss_mib"], 1)
    res.summary["load_ratio"] = round(worst, 3) if worst is not None else None
    return kept


def _wall(command: list[str], _try: int, env: dict[str, str] | None = None) -> dict[str, float]:
    return wall(command, env=env)


# The least any Python program answering from the warehouse pays: the interpreter, DuckDB's
# import, the connection and one query over the current offers. gpurent cannot go under it.
FLOOR_PROGRAM = (
    "import sys, duckdb\n"
    "con = duckdb.connect(sys.argv[1], read_only=True)\n"
    'rows = con.execute("SELECT * FROM current_offers WHERE gpu_vram_gb >= 32 AND status '
    "IN ('in_stock', 'low') ORDER BY price LIMIT 10\").fetchall()\n"
    "print(len(rows))\n"
)


def compile_project() -> None:
    """Bring the project's bytecode up to date, as ``scripts/setup.sh`` does, so that a
    checkout edited since setup is timed as installed (scripts/compile_bytecode.py)."""
    subprocess.run([sys.executable, str(ROOT / "scripts" / "compile_bytecode.py")], check=True)


def startup_warehouse(root: Path, demo_db: Path | None) -> tuple[Path, str]:
    """The warehouse of the start-up figure: ``--demo-db`` when given, else 254 synthetic
    offers (the size of one demo poll); returns it and how to name it."""
    if demo_db is not None:
        return demo_db, "demo DB"
    feed = write_feed(root / "feed-demo.jsonl", PROVIDER, RUN_ID, 254)
    db = root / "demo-sized.duckdb"
    run_json(
        ["-m", "benchmarks.load_child", "gpurent", str(feed), str(db), PROVIDER, RUN_ID, "254"]
    )
    return db, "254 offers"


def cheapest_command(db: Path, *extra: str) -> list[str]:
    return [*gpurent_command(), "cheapest", "--min-vram", "32", "--db", str(db), *extra]


def bench_query(dbs: dict[int, Path], small_db: Path, repeats: int, res: Results) -> None:
    """``cheapest`` at each size, beside ``--help`` and beside the same command on the
    start-up warehouse: the difference from the latter is the query's share beyond the
    command's own start-up (DuckDB's import and the connection included in both)."""
    cli = gpurent_command()
    for n, db in sorted(dbs.items()):
        times = rotated(
            {
                "query": partial(_wall, cheapest_command(db, "--format", "json")),
                "help": partial(_wall, [*cli, "--help"]),
                "startup": partial(_wall, cheapest_command(small_db, "--format", "json")),
            },
            repeats,
        )
        query, helped, started = (times[k]["seconds"] for k in ("query", "help", "startup"))
        beyond = round((query - started) * 1000, 1)
        res.rows.append(
            Row(
                f"cheapest --min-vram 32, {n:,} offers",
                f"{query * 1000:,.0f} ms ({beyond:+,.0f} ms)",
                f"{helped * 1000:,.0f} ms (--help), {started * 1000:,.0f} ms (start-up)",
                query / helped if helped else None,
                "beyond start-up: < 100 ms at 10k, < 1 s at 1M",
            )
        )
        # Over --help: how the figure was first stated (DuckDB's import counts as query).
        extra = round((query - helped) * 1000, 1)
        if n == 10_000:
            res.summary["query_ms_10k"] = round(query * 1000, 1)
            res.summary["query_extra_ms_10k"] = extra
            res.summary["query_beyond_startup_ms_10k"] = beyond
        if n == 1_000_000:
            res.summary["query_ms_1m"] = round(query * 1000, 1)
            res.summary["query_extra_ms_1m"] = extra
            res.summary["query_beyond_startup_ms_1m"] = beyond


def bench_startup(db: Path, what: str, repeats: int, res: Results) -> None:
    """``cheapest`` on the small warehouse beside ``--help`` and beside the floor program;
    the goal is the floor plus STARTUP_OVER_FLOOR_S."""
    times = rotated(
        {
            "cheapest": partial(_wall, cheapest_command(db)),
            "help": partial(_wall, [*gpurent_command(), "--help"]),
            "floor": partial(_wall, [sys.executable, "-c", FLOOR_PROGRAM, str(db)]),
        },
        repeats,
    )
    ours, helped, floor = (times[k]["seconds"] for k in ("cheapest", "help", "floor"))
    baseline = f"{helped:.2f} s (--help), {floor:.2f} s (python + duckdb, one query)"
    res.rows.append(
        Row(f"start-up: cheapest, {what}", f"{ours:.2f} s (floor + {ours - floor:.2f} s)",
            baseline, ours / floor if floor else None,
            f"<= floor + {STARTUP_OVER_FLOOR_S} s")
    )  # fmt: skip
    res.summary["startup_s"] = round(ours, 3)
    res.summary["startup_help_s"] = round(helped, 3)
    res.summary["startup_floor_s"] = round(floor, 3)


# The start-up goal: a command costs at most this much beyond the floor (a Python program
# that imports DuckDB and answers one query): what is gpurent's own (Typer, Rich, its code).
STARTUP_OVER_FLOOR_S = 0.15


def bench_storage(root: Path, days: float, res: Results) -> None:
    """history_size.py's year extrapolation, parsed from its report."""
    started = time.perf_counter()

    from benchmarks.measure import child_env

    done = subprocess.run(
        [
            sys.executable,
            "benchmarks/history_size.py",
            "--days",
            str(days),
            "--db",
            str(root / "history.duckdb"),
        ],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    match = re.search(r"one year, extrapolated\s+([\d,.]+) MiB", done.stdout)
    if done.returncode != 0 or match is None:
        raise RuntimeError(f"history_size.py failed: {done.stderr.strip()[-2000:]}")
    gib = float(match.group(1).replace(",", "")) / 1024
    res.rows.append(
        Row(
            f"history, 10k offers / 5 min, {days:g} days simulated",
            f"{gib:.2f} GiB / year",
            "",
            None,
            f"<= 1 GiB ({time.perf_counter() - started:.0f} s)",
        )
    )
    res.summary["storage_gib_year"] = round(gib, 3)


def bench_crawl(root: Path, offers: int, repeats: int, res: Results) -> None:
    from benchmarks.crawl import crawl_pair

    ours, base = crawl_pair(root, offers, repeats)
    pair = Pair(offers / ours["seconds"], offers / base["seconds"])
    res.rows.append(
        Row(
            f"crawl {offers:,} offers, replay server",
            f"{pair.ours:,.0f} offers/s",
            f"{pair.base:,.0f} offers/s (minimal spider)",
            pair.ratio,
            ">= 0.7x",
        )
    )
    res.summary["crawl_ratio"] = round(pair.ratio, 3)
    res.summary["crawl_offers_per_s"] = round(pair.ours)


def bench_alert(interval: float, trials: int, res: Results) -> None:
    """restock_latency.py in its own process; its last line holds the latencies."""

    from benchmarks.measure import child_env

    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "benchmarks/restock_latency.py",
            *("--interval", f"{interval:g}", "--trials", str(trials)),
        ],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines or not lines[-1].startswith("{"):
        raise RuntimeError(f"restock_latency.py failed: {done.stderr.strip()[-2000:]}")
    latencies = [float(x) for x in json.loads(lines[-1])["latencies_s"]]
    worst = max(latencies)
    res.rows.append(
        Row(
            f"restock -> webhook, {interval:g} s poll, {len(latencies)} trials",
            f"{sum(latencies) / len(latencies):.1f} s mean, {worst:.1f} s worst",
            "",
            None,
            f"<= {interval + 10:g} s every time ({time.perf_counter() - started:.0f} s)",
        )
    )
    res.summary["alert_latency_s"] = round(worst, 1)


def bench_market(polls: int, res: Results) -> None:
    """market_over_time.py in its own process; its last line holds the headline figures."""
    from benchmarks.measure import child_env

    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.market_over_time", "--polls", str(polls), "--quiet"],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines or not lines[-1].startswith("{"):
        raise RuntimeError(f"market_over_time.py failed: {done.stderr.strip()[-2000:]}")
    head = json.loads(lines[-1])
    violations: dict[str, int] = head["violations"]
    opportunities: dict[str, int] = head["opportunities"]
    worst = [f"{k} {v}" for k, v in violations.items() if v]
    res.rows.append(
        Row(
            f"market over time, {head['polls']} polls x {head['providers']} providers",
            f"{sum(violations.values())} violations" + (f" ({', '.join(worst)})" if worst else ""),
            f"{sum(opportunities.values()):,} checks",
            None,
            f"0 violations ({head['seconds']:.0f} s)",
        )
    )
    res.summary["market_polls"] = head["polls"]
    res.summary["market_providers"] = head["providers"]
    res.summary["market_seconds"] = head["seconds"]
    res.summary["market_violations"] = violations


def bench_forecast(res: Results) -> None:
    """The restock forecast's Brier score beside the base rate's, on both synthetic
    histories (benchmarks.forecast; no timing: a score, seeded)."""
    from benchmarks.forecast import WEEKS, calibration

    for patterned, key in ((True, "forecast"), (False, "forecast_flat")):
        found = calibration(patterned=patterned)
        shape = "hour-of-week and provider habits" if patterned else "no habits"
        res.rows.append(
            Row(
                f"restock forecast, {WEEKS} weeks x 3 providers, {shape}",
                f"Brier {found.forecast_brier:.4f} ({found.test_spells} spells scored)",
                f"base rate {found.base_brier:.4f}",
                (found.forecast_brier / found.base_brier)
                if found.forecast_brier is not None and found.base_brier
                else None,
                "< base" if patterned else "<= base",
            )
        )
        res.summary[f"{key}_brier"] = found.forecast_brier
        res.summary[f"{key}_base_brier"] = found.base_brier


def render(res: Results, console: Console) -> None:
    table = Table(title="gpurent benchmarks (medians, paired with their baselines)")
    for column in ("figure", "gpurent", "baseline", "ratio", "goal"):
        table.add_column(column, justify="right" if column == "ratio" else "left")
    for row in res.rows:
        ratio = "" if row.ratio is None else f"{row.ratio:.2f}x"
        table.add_row(row.figure, row.ours, row.base, ratio, row.goal)
    console.print(table)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="small sizes, no 1M: under a minute")
    parser.add_argument("--sizes", type=int, nargs="+", help="load sizes (offers per feed)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--crawl-offers", type=int, help="offers in the crawled market")
    parser.add_argument(
        "--history-days",
        type=float,
        default=2.0,
        # history_size.py's own default: one day's slope is its first hours' block fill.
        help="storage simulation, simulated days (full runs; history_size.py's default)",
    )
    parser.add_argument(
        "--demo-db", type=Path, help="a `gpurent demo` file for the start-up figure"
    )
    parser.add_argument(
        "--alert-interval", type=float, default=60.0, help="watch poll interval, seconds"
    )
    parser.add_argument("--alert-trials", type=int, default=3, help="restock trials")
    parser.add_argument(
        "--market-polls", type=int, default=200, help="market over time: polls of simulated time"
    )
    parser.add_argument(
        "--only",
        nargs="+",
        choices=("load", "query", "startup", "storage", "crawl", "alert", "market", "forecast"),
        help="measure only these figures",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    sizes = tuple(sorted(args.sizes or (QUICK_SIZES if args.quick else FULL_SIZES)))
    crawl_offers = args.crawl_offers or (5_000 if args.quick else 100_000)
    figures = ("load", "query", "startup", "storage", "crawl", "alert", "market", "forecast")
    only = set(args.only or figures)
    if args.quick:
        # Minutes of simulated polls or of waiting: full runs only.
        only -= {"storage", "alert", "market"}
    # Wide enough for the table when stderr is a file or a pipe (Rich would assume 80).
    console = Console(stderr=True, width=None if sys.stderr.isatty() else 140)
    res = Results()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gpurent-bench-") as tmp:
        root = Path(tmp)
        dbs: dict[int, Path] = {}
        if only & {"query", "startup"}:
            compile_project()
            small_db, small_what = startup_warehouse(root, args.demo_db)
        if "load" in only or "query" in only:
            console.print(f"load: {', '.join(f'{n:,}' for n in sizes)} offers ...")
            dbs = bench_load(root, sizes, args.repeats, res)
            if "load" not in only:
                res.rows.clear()
        if "query" in only:
            console.print("query ...")
            bench_query(dbs, small_db, args.repeats, res)
        for db in dbs.values():
            db.unlink(missing_ok=True)
        if "startup" in only:
            console.print("start-up ...")
            bench_startup(small_db, small_what, args.repeats, res)
        if "crawl" in only:
            console.print(f"crawl: {crawl_offers:,} offers ...")
            bench_crawl(root, crawl_offers, args.repeats, res)
        if "storage" in only:
            console.print(f"storage: {args.history_days:g} simulated days ...")
            bench_storage(root, args.history_days, res)
        if "alert" in only:
            console.print(
                f"alert: {args.alert_trials} restocks, {args.alert_interval:g} s poll ..."
            )
            bench_alert(args.alert_interval, args.alert_trials, res)
        if "market" in only:
            console.print(f"market over time: {args.market_polls} polls ...")
            bench_market(args.market_polls, res)
        if "forecast" in only:
            console.print("restock forecast: calibration on synthetic histories ...")
            bench_forecast(res)
        shutil.rmtree(root, ignore_errors=True)
    render(res, console)
    console.print(f"total {time.perf_counter() - started:,.0f} s")
    print(json.dumps(res.summary), flush=True)
    return res.summary
