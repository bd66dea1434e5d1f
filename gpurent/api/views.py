"""Read-only tables for front ends that show many rows at once (the dashboard): Polars
frames straight from the warehouse's queries, each through one short read-only connection.

The answers (costed offers, sizing, the index) are typed objects in ``gpurent.api``; these
are the bulk views beside them: the latest state as stored, provider runs, quarantine,
availability polls and patterns, offer histories, the index as a frame.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpurent.api.errors import check_limit
from gpurent.api.warehouse import open_warehouse, retried_read

if TYPE_CHECKING:
    import polars as pl


def min_polls_per_hour() -> int:
    """Polls an hour-of-week cell needs before it says anything (``warehouse.trends``)."""
    from warehouse.trends import MIN_POLLS_PER_HOUR

    return MIN_POLLS_PER_HOUR


@retried_read
def latest(db: Path | str | None) -> pl.DataFrame:
    """The latest state as stored (one row per offer, stale rows marked), uncosted."""
    from warehouse.queries import latest_offers

    with open_warehouse(db) as con:
        return latest_offers(con)


@retried_read
def provider_runs(db: Path | str | None) -> pl.DataFrame:
    """One row per provider ever run: its last run and its last good run
    (``warehouse.queries.provider_status``), plus ``quarantined_total`` over all runs."""
    import polars as pl

    from warehouse.queries import provider_status, quarantine_rows

    with open_warehouse(db) as con:
        status = provider_status(con)
        totals = quarantine_rows(con, limit=None).group_by("provider").len("quarantined_total")
    if status.height == 0:
        return status.with_columns(quarantined_total=pl.lit(0, pl.UInt32))
    return status.join(totals, on="provider", how="left").with_columns(
        pl.col("quarantined_total").fill_null(0)
    )


@retried_read
def quarantine(
    db: Path | str | None, *, provider: str | None = None, limit: int | None = 200
) -> pl.DataFrame:
    """What was set aside instead of loaded, newest run first (``limit=None``: all)."""
    check_limit(limit)
    from warehouse.queries import quarantine_rows

    with open_warehouse(db) as con:
        return quarantine_rows(con, provider=provider, limit=limit)


@retried_read
def quarantine_problems(
    db: Path | str | None, *, provider: str | None = None
) -> list[dict[str, Any]]:
    """Each distinct quarantine problem once: provider, problem, count, last_seen."""
    from warehouse.queries import quarantine_problems as problems

    with open_warehouse(db) as con:
        return problems(con, provider=provider)


@retried_read
def availability_polls(
    db: Path | str | None, *, gpu_model: str, vram_gb: int | None
) -> pl.DataFrame:
    """One row per good poll of each provider listing the GPU: listed, free offers, cards."""
    from warehouse.trends import poll_availability

    with open_warehouse(db) as con:
        return poll_availability(con, gpu_model=gpu_model, vram_gb=vram_gb)


def availability_patterns(polls: pl.DataFrame, zones: Sequence[str]) -> list[Any]:
    """When cards are usually free, per provider and zone (``warehouse.trends.Pattern``:
    shares by hour and hour of week, None where too few polls back a cell)."""
    from warehouse.trends import availability_patterns as patterns

    return patterns(polls, zones=zones)


@retried_read
def offer_changes(db: Path | str | None, *, gpu_model: str, vram_gb: int) -> pl.DataFrame:
    """Every state of every offer of the GPU over the history (valid from / to)."""
    from warehouse.trends import offer_changes as changes

    with open_warehouse(db) as con:
        return changes(con, gpu_model=gpu_model, vram_gb=vram_gb)


@retried_read
def index_frame(db: Path | str | None, currency: str, method: str | None = None) -> pl.DataFrame:
    """The price index over the whole history in ``currency`` by ``method`` (default: the
    default method), as a frame (the same rows as ``gpurent.api.index``)."""
    import polars as pl

    from gpurent.api.market import index, index_columns, read_method
    from gpurent_core.enums import IndexMethod
    from warehouse.index import price_index

    chosen = read_method(method)
    if chosen is IndexMethod.GPI_1:
        with open_warehouse(db) as con:
            return price_index(con, currencies=(currency,))
    money, share = pl.Decimal(18, 6), pl.Decimal(6, 4)
    types: dict[str, pl.DataType] = {
        "date": pl.Date(), "gpu_vram_gb": pl.Int32(), "index_price": money, "p25": money,
        "p75": money, "n_offers": pl.Int32(), "n_providers": pl.Int32(),
        "in_stock_share": share, "n_observed": pl.Int32(),
    }  # fmt: skip
    schema = pl.Schema({c: types.get(c, pl.String()) for c in index_columns(chosen)})
    rows = [p.as_row() for p in index(currency=currency, db=db, method=chosen)]
    return pl.DataFrame(rows, schema=schema, orient="row")


def problem_of(reason: str) -> str:
    """A quarantine reason without the item's own value (what groups problems)."""
    from warehouse.queries import problem_of as problem

    return problem(reason)
