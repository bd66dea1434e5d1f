"""Running DuckDB statements the way the feed reader and the weave share them.

``run_sql`` lets many statements share one parameter set; ``checks_above_parse`` keeps
DuckDB's filters where a statement has them, above the JSON parse that feeds them.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import duckdb

__all__ = ["checks_above_parse", "run_numpy", "run_sql"]

log = logging.getLogger(__name__)


def run_sql(
    con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None
) -> list[tuple[Any, ...]]:
    """``con.execute(sql, params).fetchall()`` with only the parameters ``sql`` names
    (DuckDB refuses unused ones), so statements can share one parameter set."""
    return con.execute(sql, _used(sql, params)).fetchall()


def run_numpy(
    con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None
) -> dict[str, Any]:
    """``run_sql`` answering with a NumPy array per column (for a large answer: no Python
    object per value)."""
    return dict(con.execute(sql, _used(sql, params)).fetchnumpy())


def _used(sql: str, params: dict[str, Any] | None) -> dict[str, Any] | None:
    named = set(_PARAM.findall(sql))
    return {k: v for k, v in (params or {}).items() if k in named} or None


_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


# Pushed below the parse, each check would carry its own copy of from_json and parse the
# line again (ten times slower); pulled above a join, the filter that keeps other lines
# (quarantine lines) away from the strict parse is lost, and a parse failure makes DuckDB
# redo its whole vector row by row (four times slower).
_CHECKS_WHERE_WRITTEN = ("filter_pushdown", "filter_pullup")
# DuckDB cannot size a stream (it guesses one row), so it would hash the feed and stream
# the small table past it: joins keep the sides they are written with, the right one hashed.
_JOINS_AS_WRITTEN = ("join_order", "build_side_probe_side")


@contextmanager
def checks_above_parse(
    con: duckdb.DuckDBPyConnection, *, joins_as_written: bool = False
) -> Iterator[None]:
    """DuckDB's filters kept where the statement has them while it reads lines set-wise
    (and, with ``joins_as_written``, its joins as written), then the optimizers as they
    were.

    The setting is the database's (GLOBAL): another connection to it in this process plans
    without those optimizers for that time, slower perhaps, never wrong.
    """
    row = con.execute("SELECT current_setting('disabled_optimizers')").fetchall()
    before = str(row[0][0]) if row and row[0][0] is not None else ""
    names = [n.strip() for n in before.split(",") if n.strip()]
    wanted = _CHECKS_WHERE_WRITTEN + (_JOINS_AS_WRITTEN if joins_as_written else ())
    missing = [n for n in wanted if n not in names]
    if not missing:
        yield
        return
    con.execute("SET disabled_optimizers = ?", [",".join([*names, *missing])])
    try:
        yield
    finally:
        try:
            con.execute("SET disabled_optimizers = ?", [before])
        except duckdb.Error as exc:  # a broken connection: the statement's own error matters
            log.debug("restoring disabled_optimizers: %s", exc)
