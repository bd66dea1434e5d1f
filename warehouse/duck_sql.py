"""Running DuckDB statements that share one set of named parameters (the load's)."""

from __future__ import annotations

import re
from typing import Any

import duckdb

__all__ = ["run_sql"]

_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


def run_sql(
    con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None
) -> list[tuple[Any, ...]]:
    """``con.execute(sql, params).fetchall()`` with only the parameters ``sql`` names
    (DuckDB refuses unused ones), so statements can share one parameter set."""
    named = set(_PARAM.findall(sql))
    used = {k: v for k, v in (params or {}).items() if k in named}
    return con.execute(sql, used or None).fetchall()
