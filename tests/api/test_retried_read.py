"""A lake read aborted by the writer's maintenance is read again on a fresh connection
(gpurent.api.warehouse.retried_read); any other failure is not retried."""

from __future__ import annotations

from typing import Any

import duckdb
import pytest

import warehouse.lake as lake
from gpurent.api import warehouse as api_warehouse
from gpurent.api.errors import WarehouseBusy
from gpurent.cli.errors import USER_ERROR, explain

ABORTED = "TransactionContext Error: Current transaction is aborted (please ROLLBACK)"
# As the two-worker lake test met it once (the stack trace shortened).
OUT_OF_BOUNDS = "INTERNAL Error: Attempted to access index 7 within vector of size 7"
INLINED_TRACE = (
    "\n\nStack Trace:\n\n/x/ducklake.duckdb_extension(_ZN6duckdb25DuckLakeInlinedDataReader17"
    "TryInitializeScanERNS_13ClientContextE+0x116c) [0x7fa127a944ac]\n"
    "/x/_duckdb.so(_ZN6duckdb17MultiFileFunctionINS_20ParquetMultiFileInfoEE13MultiFileScan+0x2dd)"
)


class Flaky:
    """A read that fails ``times`` times with ``error``, then answers."""

    def __init__(self, times: int, error: BaseException) -> None:
        self.left, self.error, self.calls = times, error, 0

    def __call__(self, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        self.calls += 1
        if self.left:
            self.left -= 1
            raise self.error
        return args, kwargs


@pytest.fixture(autouse=True)
def no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api_warehouse.time, "sleep", lambda _s: None)


@pytest.mark.parametrize(
    "error",
    [
        duckdb.TransactionException(ABORTED),
        duckdb.InvalidInputException(
            f"Invalid Input Error: Attempting to fetch from an unsuccessful query result\nError: {ABORTED}"
        ),
        duckdb.CatalogException(
            'Catalog Error: relation "ducklake_inlined_data_4_1" does not exist'
        ),
        duckdb.Error("Invalid Error: Failed to execute query: ERROR:  deadlock detected"),
        duckdb.Error("Resource deadlock avoided"),
        duckdb.InternalException(OUT_OF_BOUNDS + INLINED_TRACE),
    ],
)
def test_an_aborted_lake_read_is_read_again(error: BaseException) -> None:
    read = Flaky(api_warehouse.LAKE_READ_TRIES - 1, error)
    assert api_warehouse.retried_read(read)("db", limit=3) == (("db",), {"limit": 3})
    assert read.calls == api_warehouse.LAKE_READ_TRIES
    assert lake.is_read_conflict(error)


def test_a_read_aborted_every_time_says_busy_in_one_line() -> None:
    read = Flaky(api_warehouse.LAKE_READ_TRIES, duckdb.TransactionException(ABORTED))
    with pytest.raises(WarehouseBusy, match="warehouse busy: the lake changed") as refused:
        api_warehouse.retried_read(read)()
    assert read.calls == api_warehouse.LAKE_READ_TRIES
    message, code = explain(refused.value)
    assert code == USER_ERROR and "\n" not in message


@pytest.mark.parametrize(
    "error",
    [
        duckdb.CatalogException("Catalog Error: Table with name current_offers does not exist"),
        duckdb.TransactionException("Transaction conflict: another transaction inserted"),
        duckdb.IOException('IO Error: Could not set lock on file "/x/w.duckdb": Conflicting lock'),
        ValueError("not a database error"),
        # An internal error anywhere else is a fault, not the inlined-data race.
        duckdb.InternalException(OUT_OF_BOUNDS),
        duckdb.InternalException(OUT_OF_BOUNDS + "\n/x/_duckdb.so(_ZN6duckdb9Planner4Plan+0x1)"),
    ],
)
def test_any_other_failure_is_raised_at_once(error: BaseException) -> None:
    read = Flaky(1, error)
    with pytest.raises(type(error)):
        api_warehouse.retried_read(read)()
    assert read.calls == 1
    assert not lake.is_read_conflict(error)


def test_a_commands_own_aborted_read_is_a_busy_line() -> None:
    message, code = explain(duckdb.TransactionException(ABORTED))
    assert code == USER_ERROR and message.startswith("warehouse busy: the lake changed")
