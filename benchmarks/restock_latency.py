"""Restock alert latency: from the replay server's state change to the webhook receiving it.

A watch-poll loop runs the real ``watch_poll`` flow every ``--interval`` seconds (60 by
default) against the ``restock`` replay scene, with a JSON webhook receiver on 127.0.0.1.
Each trial re-arms the watch (two sold-out polls), starts the loop, flips the replay server
to step 2 (an AutoDL RTX 4090 host with 2 free cards) at a set fraction of the interval,
and times the alert's arrival at the receiver. The breakdown: waiting for the next poll,
then the flow's own phases (start-up, plan, crawl, load, evaluate, deliver).

The 2 free cards cover the watch's 1 card, so the first poll that sees them confirms the
restock; a watch whose need the free count does not cover (or a provider that publishes no
count) waits for a second poll: add one interval.

    .venv/bin/python benchmarks/restock_latency.py [--interval 60] [--trials 3]

The last line printed is JSON (``interval_s``, ``latencies_s``), which ``python -m
benchmarks`` reads.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


@dataclass
class Trial:
    offset_s: float
    latency_s: float
    wait_s: float
    flow_s: float
    phases: dict[str, float]


class Receiver:
    """Records the arrival time (time.monotonic) of every POST."""

    def __init__(self) -> None:
        self.arrivals: list[tuple[float, Any]] = []
        self.event = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                at = time.monotonic()
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.arrivals.append((at, json.loads(body or b"null")))
                receiver.event.set()
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"json://127.0.0.1:{self.server.server_address[1]}/hook"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interval", type=float, default=60.0, help="poll every N seconds")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--provider", action="append", help="watch only these (default autodl)")
    args = parser.parse_args()
    providers = args.provider or ["autodl"]

    work = Path(tempfile.mkdtemp(prefix="gpurent-bench-"))
    os.environ.setdefault("PREFECT_HOME", str(work / "prefect"))
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")

    from flows.watch import watch_poll
    from gpurent_core.model import utcnow
    from replay import ReplayServer
    from warehouse.db import connect
    from warehouse.watch.store import add_watch

    db = work / "bench.duckdb"
    receiver = Receiver()
    con = connect(db)
    add_watch(
        con,
        created_at=utcnow(),
        gpu_model="RTX 4090",
        providers=providers,
        notify_urls=[receiver.url],
    )
    con.close()

    def poll() -> dict[str, Any]:
        result: dict[str, Any] = watch_poll(
            db_path=db, replay_url=server.url, min_interval_s=0, display_currency="CNY"
        )
        return result

    trials: list[Trial] = []
    offsets = [(i + 0.5) / args.trials for i in range(args.trials)]  # spread over the interval
    with ReplayServer(scene="restock", step=1) as server:
        print(f"warming up and arming the watch ({', '.join(providers)})...", flush=True)
        for fraction in offsets:
            server.set_state("restock", 1)
            poll()
            poll()  # two sold-out polls: armed (re-armed after the previous trial)
            receiver.event.clear()
            before = len(receiver.arrivals)
            tick = time.monotonic()
            poll()  # the loop's first poll: still sold out
            changed: dict[str, float] = {}

            def flip(changed: dict[str, float] = changed) -> None:
                server.set_state("restock", 2)
                changed["at"] = time.monotonic()

            offset = fraction * args.interval
            timer = threading.Timer(max(0.0, tick + offset - time.monotonic()), flip)
            timer.start()
            result: dict[str, Any] = {}
            poll_start = 0.0
            k = 1
            while not receiver.event.is_set():
                next_tick = tick + k * args.interval
                time.sleep(max(0.0, next_tick - time.monotonic()))
                poll_start = time.monotonic()
                result = poll()
                k += 1
                if k > 4:
                    raise SystemExit("no alert after 3 polls: the benchmark is broken")
            timer.join()
            arrived = receiver.arrivals[before][0]
            phases = dict(result["timings_s"])
            flow_s = arrived - poll_start
            phases["start-up"] = round(max(0.0, flow_s - sum(phases.values())), 3)
            trial = Trial(
                offset_s=offset,
                latency_s=arrived - changed["at"],
                wait_s=poll_start - changed["at"],
                flow_s=flow_s,
                phases=phases,
            )
            trials.append(trial)
            print(
                f"trial {len(trials)}: change at +{offset:.0f} s -> alert after "
                f"{trial.latency_s:.1f} s (wait {trial.wait_s:.1f} s, flow {flow_s:.1f} s: "
                + ", ".join(f"{k} {v:.2f}" for k, v in phases.items())
                + ")",
                flush=True,
            )

    latencies = [t.latency_s for t in trials]
    print()
    print(f"restock latency, {args.interval:.0f} s poll interval, {len(trials)} trial(s):")
    print(
        f"  mean {statistics.mean(latencies):.1f} s, min {min(latencies):.1f} s, max {max(latencies):.1f} s"
    )
    print(
        f"  wait for the next poll: mean {statistics.mean(t.wait_s for t in trials):.1f} s "
        f"(expected about interval/2 = {args.interval / 2:.0f} s over a random change time)"
    )
    for name in trials[0].phases:
        print(f"  {name}: mean {statistics.mean(t.phases.get(name, 0.0) for t in trials):.2f} s")
    print(
        f"  poll flow, start to alert received: mean {statistics.mean(t.flow_s for t in trials):.1f} s"
    )
    # Last line, for `python -m benchmarks`: the figures as JSON.
    print(json.dumps({"interval_s": args.interval, "latencies_s": latencies}), flush=True)


if __name__ == "__main__":
    main()
