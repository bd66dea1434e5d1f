"""Running DuckDB statements the way the feed reader and the weave share them.

``run_sql`` lets many statements share one parameter set; ``checks_above_parse`` keeps
DuckDB from pushing a statement's checks below the JSON parse that feeds them.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import duckdb

__all__ = ["checks_above_parse", "run_sql"]

log = logging.getLogger(__name__)


def run_sql(
    con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None
) -> list[tuple[Any, ...]]:
    """``con.execute(sql, params).fetchall()`` with only the parameters ``sql`` names
    (DuckDB refuses unused ones), so statements can share one parameter set."""
    named = set(_PARAM.findall(sql))
    used = {k: v for k, v in (params or {}).items() if k in named}
    return con.execute(sql, used or None).fetchall()


_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


@contextmanager
def checks_above_parse(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """DuckDB's filter pushdown off while a statement reads lines set-wise, then as it was.

    Pushed below the parse, each check would carry its own copy of from_json and parse the
    line again (ten times slower). The setting is the database's (GLOBAL): another
    connection to it in this process plans without the pushdown for that time, slower
    perhaps, never wrong.
    """
    row = con.execute("SELECT current_setting('disabled_optimizers')").fetchall()
    before = str(row[0][0]) if row and row[0][0] is not None else ""
    names = [n.strip() for n in before.split(",") if n.strip()]
    if "filter_pushdown" in names:
        yield
        return
    con.execute("SET disabled_optimizers = ?", [",".join([*names, "filter_pushdown"])])
    try:
        yield
    finally:
        try:
            con.execute("SET disabled_optimizers = ?", [before])
        except duckdb.Error as exc:  # a broken connection: the statement's own error matters
            log.debug("restoring disabled_optimizers: %s", exc)
