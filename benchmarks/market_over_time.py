"""A market over time, as a test: a simulated market of ten providers served by the replay
server, polled for real, and after every poll gpurent's answers held against the
simulation's own truth (``benchmarks.market_sim``).

    .venv/bin/python -m benchmarks.market_over_time                # 200 polls: ~15 minutes
    .venv/bin/python -m benchmarks.market_over_time --polls 20     # ~2 minutes
    .venv/bin/python -m benchmarks.market_over_time --seed 7 --keep /tmp/market  # keep the DB

The lines printed say, per check, how many violations of how many opportunities, with the
first violations named by poll, provider and offer (rerun with the same ``--seed`` and
``--polls``, ``--keep DIR``, then ``gpurent offers --db DIR/market.duckdb`` to look). The
last line is JSON (``polls``, ``providers``, ``seconds``, ``violations``, ...), which
``python -m benchmarks`` reads.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks.market_sim.run import CRAWL_MODES, Config, Result, run


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.market_over_time", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--polls", type=int, default=200, help="polls of simulated time")
    parser.add_argument("--seed", type=int, default=Config.seed)
    parser.add_argument("--offers", type=int, default=Config.target, help="offers per provider")
    parser.add_argument("--provider", action="append", help="only these providers (repeat)")
    parser.add_argument(
        "--crawl",
        choices=CRAWL_MODES,
        default="process",
        help="one Scrapy process per poll (default), or one per provider as the flow runs them",
    )
    parser.add_argument("--keep", type=Path, help="keep recordings, feeds and warehouse here")
    parser.add_argument("--quiet", action="store_true", help="no progress line per poll")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> Result:
    args = parse_args(argv)
    if args.polls < 1:
        raise SystemExit("--polls must be at least 1")
    config = Config(
        polls=args.polls,
        seed=args.seed,
        providers=tuple(args.provider) if args.provider else None,
        target=args.offers,
        crawl=args.crawl,
        work_dir=args.keep,
    )
    result = run(config, progress=not args.quiet)
    print("\n".join(result.report()))
    # Last line, for `python -m benchmarks`: the headline figures as JSON.
    print(json.dumps(result.headline()), flush=True)
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
