"""Watches in the warehouse: add, list, get, remove.

URLs are stored as given, validated by the caller, which knows apprise and refuses a URL
with a literal secret (``gpurent_core.notify.literal_secrets``): what is stored is a URL whose
secrets are ``${NAME}`` references, or an ``apprise-config://`` file path. The warehouse
never prints them. Removing a watch deletes its row (its URLs) and its alert state and
cancels its pending notifications in one transaction, so nothing is sent for a watch that
no longer exists; then a CHECKPOINT writes the deletion into the database file, so the
rows do not linger in the write-ahead log. The limit, honestly: DuckDB does not zero the
blocks it frees, so old bytes may stay in the file until DuckDB reuses those blocks (a
copy of the database, ``COPY FROM DATABASE``, leaves them behind). That is why literal
secrets are refused rather than stored and deleted later.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

import duckdb

from warehouse.db import fetch_one
from warehouse.lake import leased_transaction
from warehouse.watch.criteria import PricePer, Watch

_COLUMNS = (
    "watch_id, created_at, gpu_model, min_vram_gb, gpu_count, max_price, currency, price_per,"
    " providers, regions, notify_urls, gpu_form_factor, include_spot"
)


class WatchNotFound(LookupError):
    """No watch with that id."""


def _watch(row: Sequence[Any]) -> Watch:
    wid, created, model, vram, count, max_price, currency, per = row[:8]
    providers, regions, urls, form, spot = row[8:]
    return Watch(
        watch_id=int(wid),
        created_at=created,
        gpu_model=model,
        min_vram_gb=None if vram is None else int(vram),
        gpu_count=int(count),
        max_price=None if max_price is None else Decimal(max_price).normalize(),
        currency=currency,
        price_per=None if per is None else PricePer(per),
        providers=tuple(providers or ()),
        regions=tuple(regions or ()),
        notify_urls=tuple(urls),
        gpu_form_factor=form,
        include_spot=bool(spot),
    )


def add_watch(
    con: duckdb.DuckDBPyConnection,
    *,
    created_at: datetime,
    notify_urls: Sequence[str],
    gpu_model: str | None = None,
    min_vram_gb: int | None = None,
    gpu_count: int = 1,
    max_price: Decimal | None = None,
    currency: str | None = None,
    price_per: PricePer | None = None,
    providers: Sequence[str] = (),
    regions: Sequence[str] = (),
    gpu_form_factor: str | None = None,
    include_spot: bool = False,
) -> Watch:
    """Store a new watch and return it with its id (checked by ``Watch`` before writing)."""
    Watch(  # validate first: a clear ValueError beats a CHECK constraint message
        watch_id=0,
        created_at=created_at,
        gpu_model=gpu_model,
        min_vram_gb=min_vram_gb,
        gpu_count=gpu_count,
        max_price=max_price,
        currency=currency,
        price_per=price_per,
        providers=tuple(providers),
        regions=tuple(regions),
        notify_urls=tuple(notify_urls),
        gpu_form_factor=gpu_form_factor,
        include_spot=include_spot,
    )
    # The id is taken first and named, then the row read back: a DuckLake table has no
    # DEFAULT nextval(...) and no INSERT ... RETURNING (warehouse.lake); the file does the same.
    # Under the write lease: two machines adding a watch to one lake at once would take the
    # same id from their own copies of the sequence; the second commit is refused, and its
    # retry on a fresh connection (``warehouse.lake.retrying_writes``) takes the next id.
    with leased_transaction(con):
        taken = fetch_one(con, "SELECT nextval('watch_ids')")
        assert taken is not None  # nextval always gives a row
        watch_id = int(taken[0])
        con.execute(
            """
            INSERT INTO watches (
                watch_id, created_at, gpu_model, min_vram_gb, gpu_count, max_price, currency,
                price_per, providers, regions, notify_urls, gpu_form_factor, include_spot
            ) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                watch_id,
                created_at,
                gpu_model,
                min_vram_gb,
                gpu_count,
                max_price,
                currency,
                None if price_per is None else price_per.value,
                list(providers),
                list(regions),
                list(notify_urls),
                gpu_form_factor,
                include_spot,
            ],
        )
    return get_watch(con, watch_id)


def list_watches(con: duckdb.DuckDBPyConnection) -> list[Watch]:
    """Every watch, oldest first."""
    rows = con.execute(f"SELECT {_COLUMNS} FROM watches ORDER BY watch_id").fetchall()
    return [_watch(r) for r in rows]


def get_watch(con: duckdb.DuckDBPyConnection, watch_id: int) -> Watch:
    row = fetch_one(con, f"SELECT {_COLUMNS} FROM watches WHERE watch_id = ?", [watch_id])
    if row is None:
        raise WatchNotFound(f"no watch #{watch_id}")
    return _watch(row)


def remove_watch(con: duckdb.DuckDBPyConnection, watch_id: int) -> int:
    """Delete a watch and its state; cancel its pending notifications. Returns how many.

    Must be called outside an open transaction (it owns BEGIN / COMMIT).
    """
    get_watch(con, watch_id)  # raises WatchNotFound
    # Beside a poll on another machine: one of the two commits.
    with leased_transaction(con):
        cancelled = fetch_one(
            con,
            "SELECT count(*) FROM outbox WHERE watch_id = ? AND status = 'pending'",
            [watch_id],
        )
        con.execute(
            "UPDATE outbox SET status = 'cancelled' WHERE watch_id = ? AND status = 'pending'",
            [watch_id],
        )
        con.execute("DELETE FROM watch_offer_states WHERE watch_id = ?", [watch_id])
        con.execute("DELETE FROM watch_cursors WHERE watch_id = ?", [watch_id])
        con.execute("DELETE FROM watches WHERE watch_id = ?", [watch_id])
    # The deleted URLs out of the WAL and into the file's free blocks (see the docstring).
    con.execute("CHECKPOINT")
    return int(cancelled[0]) if cancelled else 0
