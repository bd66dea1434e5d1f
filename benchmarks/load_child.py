"""One load in its own process, so its peak RSS is its own: prints one JSON line.

``python -m benchmarks.load_child gpurent|duckdb FEED DB PROVIDER RUN_ID OFFERS``

``gpurent``: ``warehouse.load.load_run`` of the feed into a fresh warehouse at DB.
``duckdb``: the baseline, DuckDB's own ``INSERT INTO ... SELECT FROM read_json(...)`` of the
same feed into one flat table (explicit columns, fees and plans as lists of structs), no
validation and no history. The time is the load alone (imports and connecting excluded);
``rss_mib`` is the process's peak resident set (``ru_maxrss``), imports included;
``cpu_s`` the process's CPU time (all threads, user and system) during the load.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from datetime import timedelta
from pathlib import Path

FEE = (
    "STRUCT(fee_type VARCHAR, amount DECIMAL(18,10), currency VARCHAR, unit VARCHAR,"
    " basis VARCHAR, quantity DECIMAL(18,6), included_quantity DECIMAL(18,6),"
    " mandatory BOOLEAN, charged_while_stopped BOOLEAN, note VARCHAR)"
)
PLAN = (
    "STRUCT(price DECIMAL(18,8), currency VARCHAR, billing_unit VARCHAR, price_basis VARCHAR,"
    " price_kind VARCHAR)"
)
COLUMNS = {
    "kind": "VARCHAR",
    "provider": "VARCHAR",
    "offer_key": "VARCHAR",
    "run_id": "VARCHAR",
    "observed_at": "TIMESTAMPTZ",
    "gpu_vendor": "VARCHAR",
    "gpu_model": "VARCHAR",
    "gpu_vram_gb": "INTEGER",
    "gpu_form_factor": "VARCHAR",
    "gpu_count": "INTEGER",
    "raw_gpu_name": "VARCHAR",
    "status": "VARCHAR",
    "available_count": "INTEGER",
    "price": "DECIMAL(18,8)",
    "currency": "VARCHAR",
    "billing_unit": "VARCHAR",
    "price_basis": "VARCHAR",
    "price_kind": "VARCHAR",
    "region": "VARCHAR",
    "url": "VARCHAR",
    "fees": f"{FEE}[]",
    "plans": f"{PLAN}[]",
    "reason": "VARCHAR",
    "field": "VARCHAR",
    "raw": "JSON",
}


def load_gpurent(
    feed: Path, db: Path, provider: str, run_id: str, offers: int
) -> tuple[float, float]:
    from benchmarks.market import START
    from gpurent_core.model import ProviderRun, RunStatus
    from warehouse.db import connect
    from warehouse.load import load_run

    con = connect(db)
    run = ProviderRun(
        run_id=run_id,
        provider=provider,
        started_at=START,
        finished_at=START + timedelta(seconds=30),
        status=RunStatus.OK,
        offers=offers,
        quarantined=(offers + 99) // 100,
    )
    started, cpu = time.perf_counter(), time.process_time()
    load_run(con, run, feed)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    con.close()
    return elapsed, cpu


def load_duckdb(feed: Path, db: Path) -> tuple[float, float]:
    import duckdb

    con = duckdb.connect(str(db))
    columns = "{" + ", ".join(f"'{k}': '{v}'" for k, v in COLUMNS.items()) + "}"
    started, cpu = time.perf_counter(), time.process_time()
    con.execute(
        "CREATE TABLE feed AS SELECT * FROM read_json(?, format = 'newline_delimited',"
        f" columns = {columns}) LIMIT 0",
        [str(feed)],
    )
    con.execute(
        "INSERT INTO feed SELECT * FROM read_json(?, format = 'newline_delimited',"
        f" columns = {columns})",
        [str(feed)],
    )
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    con.close()
    return elapsed, cpu


def main(argv: list[str]) -> None:
    mode, feed, db, provider, run_id, offers = argv
    if mode == "gpurent":
        seconds, cpu = load_gpurent(Path(feed), Path(db), provider, run_id, int(offers))
    elif mode == "duckdb":
        seconds, cpu = load_duckdb(Path(feed), Path(db))
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(json.dumps({"mode": mode, "seconds": seconds, "cpu_s": cpu, "rss_mib": rss_kib / 1024}))


if __name__ == "__main__":
    main(sys.argv[1:])
