"""Reliability figures: the checks of tests/reliability/, with more rounds and random kill
moments, and what they measured.

    .venv/bin/python scripts/reliability.py                      # all checks, default rounds
    .venv/bin/python scripts/reliability.py --load-kills 50 --crawl-kills 0 --fuzz 2000

- load kills: a child loads a big feed and is SIGKILLed at a marked point (inside the open
  transaction, after COMMIT, or a random moment after the load began); then the warehouse
  must open with its migrations, every stored run must be whole, and the next load must
  complete;
- crawl kills: a whole `gpurent crawl --replay` process group is SIGKILLed a random moment
  after its first run report or its pending-load manifest appears; same checks, then one
  crawl that must complete and `gpurent load` for what the killed loads left pending;
- concurrency: reader processes loop over `gpurent cheapest`/`offers` while `gpurent load`
  writes; every reader must answer or print the one-line busy message;
- fuzz: random feeds (garbage bytes, truncated and mangled lines) through the feed reader.

Exit status 1 if any check failed. Random moments come from ``--seed`` (printed).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console
from rich.table import Table

from tests.reliability.rel_kit import (
    PROVIDERS,
    REPO_ROOT,
    T0,
    check_integrity,
    child_env,
    feed_keys,
    kill_hard,
    make_outcome,
    offer,
    reader_verdict,
    run_gpurent,
    start_child_load,
    stored_keys,
    wait_for_line,
    wait_until,
)

MODES = (("in_transaction", "in-transaction"), ("committed", "committed"), ("anywhere", "loading"))


def load_kills(rounds: int, rng: random.Random, root: Path) -> dict[str, object]:
    from flows.nightly import load_and_track

    db = root / "loadkill.duckdb"
    feeds = root / "loadkill-feeds"
    outcomes: Counter[str] = Counter()
    recover_s: list[float] = []
    failures: list[str] = []
    for n in range(rounds):
        mode, marker = MODES[n % len(MODES)]
        big = make_outcome(feeds, f"run-{n}", "vastai", 1500, hour=n)
        child = start_child_load(mode, db, big)
        try:
            wait_for_line(child, marker)
            if mode == "anywhere":
                time.sleep(rng.uniform(0, 3))  # a random moment: the load, COMMIT, close
        finally:
            kill_hard(child)
        try:
            check_integrity(db)
            outcomes[
                "stored when killed"
                if stored_keys(db, "vastai", big.run_id)
                else "not stored when killed"
            ] += 1
            started = time.monotonic()
            report = load_and_track(db, [big])
            recover_s.append(time.monotonic() - started)
            assert report.busy is None and stored_keys(db, "vastai", big.run_id) == feed_keys(big)
            check_integrity(db)
        except AssertionError as exc:
            failures.append(f"load kill {n} ({mode}): {exc}")
    return {
        "rounds": rounds,
        **outcomes,
        "next load completes, median s": _median(recover_s),
        "integrity failures": len(failures),
        "_failures": failures,
    }


def crawl_kills(rounds: int, rng: random.Random, root: Path) -> dict[str, object]:
    db = root / "crawlkill" / "gpurent.duckdb"
    feeds = db.parent / "feeds"
    feeds.mkdir(parents=True)
    failures: list[str] = []
    args = ["crawl", "--replay", "--db", str(db), "--format", "json"]
    args += [a for p in ("vastai", "cudo", "autodl") for a in ("--provider", p)]
    for n in range(rounds):
        pattern = ("*.run.json", "pending-load.json")[n % 2]
        old = {p for p in feeds.iterdir() if p.is_dir()}
        crawl = subprocess.Popen(
            [sys.executable, "-m", "gpurent", *args], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, cwd=REPO_ROOT, env=child_env(), start_new_session=True,
        )  # fmt: skip
        try:
            wait_until(_appeared(feeds, pattern, old), while_alive=crawl)
            time.sleep(rng.uniform(0, 1))
        finally:
            kill_hard(crawl, group=True)
        try:
            if db.exists():
                check_integrity(db)
        except AssertionError as exc:
            failures.append(f"crawl kill {n}: {exc}")
    pending = len(list(feeds.glob("*/pending-load.json")))
    final = run_gpurent(*args)
    if final.returncode != 0:
        failures.append(f"the crawl after the kills failed: {final.stderr[-500:]}")
    finish = run_gpurent("load", str(feeds), "--db", str(db), "--format", "json")
    results = Counter(r["result"] for r in json.loads(finish.stdout or "[]"))
    try:
        integrity = check_integrity(db)
    except AssertionError as exc:
        failures.append(f"after the kills: {exc}")
        integrity = None
    return {
        "rounds": rounds,
        "manifests left by killed loads": pending,
        "runs loaded later by `gpurent load`": results.get("loaded", 0),
        "runs already stored (skipped)": results.get("already stored", 0),
        "runs stored in all": integrity.runs if integrity else "?",
        "integrity failures": len(failures),
        "_failures": failures,
    }


def _appeared(feeds: Path, pattern: str, old: set[Path]) -> Callable[[], bool]:
    """True once a new run folder holds a file matching ``pattern``."""
    return lambda: any(p.parent not in old for p in feeds.glob(f"*/{pattern}"))


def concurrency(readers: int, reads: int, root: Path) -> dict[str, object]:
    from flows.crawl import write_manifest
    from flows.nightly import load_and_track

    db = root / "conc.duckdb"
    feeds = root / "conc-feeds"
    load_and_track(db, [make_outcome(feeds, "run-0", "vastai", 300)])
    outcomes = [make_outcome(feeds, "run-1", p, 300, hour=1) for p in PROVIDERS]
    manifest = feeds / "run-1" / "pending-load.json"
    write_manifest(manifest, outcomes, db_path=db)
    started = time.monotonic()
    writer = subprocess.Popen(
        [sys.executable, "-m", "gpurent", "load", str(manifest), "--db", str(db)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT,
        env=child_env(),
    )  # fmt: skip
    verdicts: Counter[str] = Counter()
    latency: list[float] = []
    lock = threading.Lock()

    def loop(command: list[str]) -> None:
        for _ in range(reads):
            t = time.monotonic()
            done = run_gpurent(*command, "--format", "json", "--db", str(db))
            try:
                verdict = reader_verdict(done)
            except AssertionError:
                verdict = "misbehaved"
            with lock:
                verdicts[verdict] += 1
                latency.append(time.monotonic() - t)
            if writer.poll() is not None:
                return

    commands = [["cheapest", "--min-vram", "24"], ["offers"]]
    threads = [threading.Thread(target=loop, args=(commands[i % 2],)) for i in range(readers)]
    for thread in threads:
        thread.start()
    writer.wait()
    writer_s = time.monotonic() - started
    for thread in threads:
        thread.join()
    return {
        "reader processes": readers,
        "reads answered": verdicts["answered"],
        "reads told 'warehouse busy'": verdicts["busy"],
        "reads with a traceback or other error": verdicts["misbehaved"],
        "read median s / max s": f"{_median(latency)} / {max(latency, default=0):.2f}",
        "writer exit / seconds": f"{writer.returncode} / {writer_s:.1f}",
        "integrity failures": verdicts["misbehaved"] + (writer.returncode not in (0, 2)),
        "_failures": [],
    }


def fuzz(examples: int, rng: random.Random, root: Path) -> dict[str, object]:
    from warehouse.feed import read_feed

    good = [offer("vastai", "fuzz", n, T0).model_dump_json().encode() for n in range(8)]
    lines_total = quarantined = errors = 0
    failures: list[str] = []
    for n in range(examples):
        lines = []
        for _ in range(rng.randint(1, 30)):
            base = rng.choice(good)
            cut = rng.randint(0, len(base))
            lines.append(
                rng.choice(
                    [
                        base,
                        base[:cut],
                        base[:cut] + bytes([rng.randint(0, 255)]) + base[cut + 1 :],
                        rng.randbytes(rng.randint(0, 120)).replace(b"\n", b" "),
                    ]
                )
            )
        path = root / "fuzz.jsonl"
        path.write_bytes(b"\n".join(lines))
        try:
            batch = read_feed(path, provider="vastai", run_id="fuzz")
            assert batch.offers.height + batch.quarantine.height == batch.lines
            lines_total += batch.lines
            quarantined += batch.quarantine.height
        except Exception as exc:  # the point: count anything that escapes
            errors += 1
            failures.append(f"fuzz {n}: {type(exc).__name__}: {exc}")
    return {
        "feeds": examples,
        "lines": lines_total,
        "lines quarantined": quarantined,
        "exceptions": errors,
        "integrity failures": errors,
        "_failures": failures[:5],
    }


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.2f}" if values else "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--load-kills", type=int, default=12)
    parser.add_argument("--crawl-kills", type=int, default=4)
    parser.add_argument("--readers", type=int, default=3)
    parser.add_argument("--reads", type=int, default=20, help="most reads per reader")
    parser.add_argument("--fuzz", type=int, default=500)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    rng = random.Random(seed)
    console = Console()
    console.print(f"seed {seed}")
    failed = False
    with tempfile.TemporaryDirectory(prefix="gpurent-reliability-") as tmp:
        root = Path(tmp)
        checks = [
            ("load killed (SIGKILL)", lambda: load_kills(args.load_kills, rng, root)),
            (
                "crawl killed (SIGKILL, process group)",
                lambda: crawl_kills(args.crawl_kills, rng, root),
            ),
            ("readers during a load", lambda: concurrency(args.readers, args.reads, root)),
            ("feed reader fuzz", lambda: fuzz(args.fuzz, rng, root)),
        ]
        for title, check in checks:
            if title.startswith("crawl") and args.crawl_kills == 0:
                continue
            started = time.monotonic()
            figures = check()
            table = Table(title=f"{title} ({time.monotonic() - started:.0f} s)")
            table.add_column("figure")
            table.add_column("value", justify="right")
            for key, value in figures.items():
                if not key.startswith("_"):
                    table.add_row(key, str(value))
            console.print(table)
            for line in figures["_failures"]:  # type: ignore[attr-defined]
                console.print(f"[red]FAILED[/] {line}", markup=True, highlight=False)
            failed = failed or bool(figures["integrity failures"])
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
