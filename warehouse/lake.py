"""The warehouse as a DuckLake: a PostgreSQL catalog, Parquet data files in shared storage.

Past one machine the embedded file's one-writer lock shuts readers out while a load
writes. A DuckLake keeps its metadata in PostgreSQL and its rows in Parquet files under a
data path, so the loader and any number of readers (CLI, dashboards, notebooks, on other
machines) work at once: each reader sees the last committed snapshot. The same queries run
on it: ``connect_lake`` hands back a DuckDB connection whose default database is the lake.

The DuckLake and postgres extensions come from PyPI (``duckdb-extension-ducklake``,
``duckdb-extension-postgres``), never from DuckDB's extension server, which this project's
machines cannot reach. Those packages ship one binary per DuckDB release and load only
into that release: ``extension_files`` says so in one line when the installed DuckDB is
another one.

What DuckLake cannot hold, and what this module does instead (``lake_sql``):

- PRIMARY KEY, UNIQUE and CHECK constraints: dropped. The loader validates every row
  before it is written (warehouse.feed) and computes ids itself, so the lake holds the same
  rows; what is lost is the database refusing a bad row written by other code. Nor can a
  key refuse a run loaded twice at once: every write takes the write lease instead
  (``take_write_lease``), so of two loads at once the second fails to commit and, tried
  again, finds the run stored (two evaluations of the watches, two claims of one alert
  likewise).
- Indexes: none are created by the migrations; nothing to drop.
- Sequences: ``offer_version_ids`` and the others become TEMP sequences of the writer's
  connection, started past the largest id already stored when it opens and again when a
  transaction takes the write lease, so two writers at once never hand out one id twice:
  the second to commit is refused. (A load takes no id from them: its version ids
  continue the stored maximum, under the lease.)
- DEFAULT with a list value or ``nextval``: dropped (the writers name those columns).
- ``INSERT ... ON CONFLICT`` (needs a primary key) and ``INSERT ... RETURNING``: not
  supported by DuckLake, so the warehouse uses neither: upserts are ``MERGE INTO``
  (``warehouse.fx.upsert_fx_rate``, the watch evaluator) and a new watch takes its id from
  ``nextval`` before it is inserted (``warehouse.watch.store``), on the file and the lake.
- Inlined rows: DuckLake keeps a small commit's rows in the catalog; the loader
  (``flows.nightly.load_and_track``) calls ``flush_inlined_data`` after each run it stores.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import random
import re
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import duckdb

from warehouse.errors import MigrationError, WarehouseError, WarehouseLocked, WarehouseMissing
from warehouse.migrations import migrate

LAKE = "lake"
"""The name the lake is attached under; it is the connection's default database."""

_EXTENSIONS: dict[str, tuple[tuple[str, str], ...]] = {
    # extension name (as DuckDB expects the file) -> (package, file name in the package)
    "postgres_scanner": (
        ("duckdb_extension_postgres_scanner", "postgres_scanner"),
        ("duckdb_extension_postgres", "postgres"),
    ),
    "ducklake": (("duckdb_extension_ducklake", "ducklake"),),
}
"""The postgres extension's entry point is named after ``postgres_scanner``, and DuckDB finds
it from the file's name: ``duckdb-extension-postgres`` ships it as ``postgres``, so it is
loaded through a link of the right name."""

SEQUENCES: dict[str, tuple[str, str]] = {
    "offer_version_ids": ("offer_versions", "version_id"),
    "watch_ids": ("watches", "watch_id"),
    "notification_ids": ("outbox", "notification_id"),
}
"""Each sequence the migrations create, and the column whose largest value it continues."""


class LakeError(WarehouseError):
    """The lake cannot be opened: extension missing or for another DuckDB, catalog down."""


@dataclass(frozen=True)
class LakeConfig:
    """Where the lake lives.

    ``catalog``: a libpq connection string for the PostgreSQL database holding the lake's
    metadata (``dbname=gpurent host=/run/postgresql``). ``data_path``: the folder (shared
    storage) for its Parquet files; needed to create the lake, optional afterwards (the
    catalog records it)."""

    catalog: str
    data_path: Path | None = None


# ---------------------------------------------------------------- extensions


def extension_files() -> dict[str, Path]:
    """The extension binaries for the installed DuckDB, by the name DuckDB loads them as."""
    version = f"v{duckdb.__version__}"
    found: dict[str, Path] = {}
    for name, candidates in _EXTENSIONS.items():
        seen: list[str] = []
        for package, file_name in candidates:
            spec = importlib.util.find_spec(package)
            if spec is None or not spec.submodule_search_locations:
                continue
            root = Path(next(iter(spec.submodule_search_locations))) / "extensions"
            path = root / version / f"{file_name}.duckdb_extension"
            if path.is_file():
                found[name] = path
                break
            seen.extend(p.name for p in sorted(root.glob("v*")) if p.is_dir())
        else:
            packages = " or ".join(p.replace("_", "-") for p, _ in candidates)
            if seen:
                raise LakeError(
                    f"the {name} extension installed is for DuckDB {', '.join(sorted(set(seen)))}"
                    f", this is DuckDB {version}: install duckdb=={seen[0].lstrip('v')}"
                )
            raise LakeError(f"the {name} extension is not installed: pip install {packages}")
    return found


def _loadable(name: str, path: Path) -> Path:
    """``path``, or a link to it named ``<name>.duckdb_extension`` where its name differs."""
    if path.name == f"{name}.duckdb_extension":
        return path
    folder = Path(tempfile.gettempdir()) / f"gpurent-duckdb-{os.getuid()}" / path.parent.name
    folder.mkdir(parents=True, exist_ok=True)
    link = folder / f"{name}.duckdb_extension"
    if link.is_symlink() and link.resolve() == path.resolve():
        return link
    staged = folder / f".{name}.{os.getpid()}"
    with contextlib.suppress(FileNotFoundError):
        staged.unlink()
    staged.symlink_to(path)
    staged.replace(link)  # atomic: a concurrent process sees the old link or the new one
    return link


def load_extensions(con: duckdb.DuckDBPyConnection) -> None:
    """Load postgres and ducklake into ``con`` from the PyPI packages (never the network)."""
    for name, path in extension_files().items():
        con.execute(f"LOAD {_literal(str(_loadable(name, path)))}")


# ---------------------------------------------------------------- connecting


def connect_lake(config: LakeConfig, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the lake: an in-memory DuckDB session with the lake attached as its default.

    A writer creates the lake if the catalog database is empty, applies pending migrations
    and sets up the writer's sequences. A reader attaches read-only and needs a migrated
    lake (else ``WarehouseMissing``). Every session runs in UTC."""
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False})
    try:
        con.execute("SET TimeZone = 'UTC'")
        con.execute("SET enable_progress_bar = false")  # it would draw inside JSON output
        # An in-memory session spills to ./.tmp by default: keep spills out of the caller's folder.
        spill = Path(tempfile.gettempdir()) / "gpurent-duckdb-spill"
        con.execute(f"SET temp_directory = {_literal(str(spill))}")
        load_extensions(con)
        options = []
        if config.data_path is not None:
            options.append(f"DATA_PATH {_literal(_folder(config.data_path))}")
        if read_only:
            options.append("READ_ONLY")
        with_options = f" ({', '.join(options)})" if options else ""
        try:
            con.execute(
                f"ATTACH {_literal('ducklake:postgres:' + config.catalog)} AS {LAKE}{with_options}"
            )
        except duckdb.Error as exc:
            first = str(exc).splitlines()[0]
            if read_only:
                raise WarehouseMissing(
                    f"no lake at catalog {config.catalog!r}: {first} (a load creates it)"
                ) from exc
            raise LakeError(f"cannot open the lake at catalog {config.catalog!r}: {first}") from exc
        con.execute(f"USE {LAKE}")
        if read_only:
            _require_schema(con, config)
        else:
            migrate_lake(con)
            start_sequences(con)
    except BaseException:
        con.close()
        raise
    return con


@contextmanager
def reading_lake(config: LakeConfig) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only lake connection, always closed (``warehouse.db.reading`` for the lake)."""
    con = connect_lake(config, read_only=True)
    try:
        yield con
    finally:
        con.close()


@contextmanager
def writing_lake(config: LakeConfig) -> Iterator[duckdb.DuckDBPyConnection]:
    """A writer's lake connection, migrated, always closed (``warehouse.db.writing``)."""
    con = connect_lake(config)
    try:
        yield con
    finally:
        con.close()


def start_sequences(con: duckdb.DuckDBPyConnection) -> None:
    """The migrations' sequences as TEMP sequences of ``con``, each past its column's largest
    stored value (``nextval('offer_version_ids')`` finds the temp one first)."""
    for sequence, (table, column) in SEQUENCES.items():
        if not _has_table(con, table):
            continue
        rows = con.execute(f"SELECT coalesce(max({column}), 0) FROM {LAKE}.main.{table}").fetchall()
        start = int(rows[0][0]) + 1
        con.execute(f"CREATE OR REPLACE TEMP SEQUENCE {sequence} START {start}")


def is_lake(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether ``con``'s default database is a DuckLake (``connect_lake``), not a DuckDB file."""
    rows = con.execute(
        "SELECT type FROM duckdb_databases() WHERE database_name = current_database()"
    ).fetchall()
    return bool(rows) and rows[0][0] == "ducklake"


# ---------------------------------------------------------------- two writers at once

WRITE_LEASE_SQL = (
    "UPDATE schema_migrations SET applied_at = applied_at"
    " WHERE version = (SELECT min(version) FROM schema_migrations)"
)
"""The write lease: every write transaction on the lake rewrites this one row, unchanged."""


def take_write_lease(con: duckdb.DuckDBPyConnection) -> None:
    """On a lake, make the write transaction just begun conflict with any other one; on a
    DuckDB file (one writer by its lock) nothing.

    The lake cannot refuse a second copy of a run by itself: DuckLake drops primary keys,
    appends from two transactions do not conflict, and the loader's "already stored?"
    check reads its own snapshot, blind to a load committing beside it. Two transactions
    that update the same row do conflict: the one that commits second fails ("Transaction
    conflict ..."), and its retry (``flows.nightly.load_and_track``) reads the first one's
    run and skips it. So every load updates one well-known row first, whatever machine or
    command it runs from. The row is the first migration's record in ``schema_migrations``
    (rewritten as it is): every migrated lake has it, nothing has to be created first, and
    the lake keeps the embedded warehouse's tables, no lease table of its own.

    The lease also guards what a write computes from what is stored: a run's version ids
    continue the largest stored id (``warehouse.history``), and the watches' and outbox's
    ids their sequence, started again here (``start_sequences``) from the same snapshot.
    Not only loads take it: the watch evaluation (an alert queued once), the outbox's
    delivery claims (an alert sent once) and ``watch add``/``remove`` do too
    (``retrying_writes``)."""
    if not is_lake(con):
        return
    rows = con.execute(WRITE_LEASE_SQL).fetchall()
    if not rows or not rows[0][0]:
        raise LakeError("the lake's schema_migrations is empty: no row to take the write lease on")
    # The sequences again, from this transaction's snapshot: started when the connection
    # opened, they would miss ids another machine committed since (a second watch #3).
    start_sequences(con)


@contextmanager
def leased_transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """One write transaction holding the write lease (``take_write_lease``): committed when
    the block ends, rolled back on any error (a commit the lake refused has ended it
    already). Must be entered outside an open transaction."""
    con.execute("BEGIN TRANSACTION")
    try:
        take_write_lease(con)
        yield con
        con.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(duckdb.Error):
            con.execute("ROLLBACK")
        raise


WRITE_TRIES = 5
"""How many times a lake write meets another writer's commit before it gives up, busy."""

T = TypeVar("T")


def retrying_writes(attempt: Callable[[], T], *, what: str, log: Callable[[str], None]) -> T:
    """``attempt()`` (which opens its own connection, writes in one transaction holding the
    lease, and closes it), again on a fresh connection while the lake refuses its commit
    (another writer committed first) or its reads meet a flush; ``WarehouseLocked`` after
    ``WRITE_TRIES``. Every lake writer goes through here (loads, the watch evaluation and
    delivery, ``watch add``/``remove``), so two machines never both write what only one
    may: a run, an alert, an id from the same sequence. On a DuckDB file the file lock
    already keeps writers apart: a conflict never happens and ``attempt`` runs once."""
    for tried in range(1, WRITE_TRIES + 1):
        try:
            return attempt()
        except duckdb.Error as exc:
            if not (is_write_conflict(exc) or is_read_conflict(exc)):
                raise
            said = " ".join(str(exc).strip().splitlines()[:2])[:300]  # what, and why
            log(f"lake: {what}, try {tried}: {said}")
        if tried < WRITE_TRIES:
            time.sleep(random.uniform(0.2, 1.0) * tried)  # apart, not to meet again
    raise WarehouseLocked(
        f"warehouse busy: other writers committed to the lake first {WRITE_TRIES} times"
        f" while {what}"
    )


def is_write_conflict(exc: BaseException) -> bool:
    """Whether ``exc`` is DuckLake refusing a commit that conflicts with one committed
    since the transaction began (another load holding the lease, a flush of inlined rows
    the transaction also changed). Nothing of the refused transaction was written: it can
    run again."""
    if not isinstance(exc, duckdb.Error):
        return False
    message = str(exc)
    return "Transaction conflict" in message or "Failed to commit DuckLake transaction" in message


READ_CONFLICT_BUSY = (
    "warehouse busy: the lake changed under the read (a load is tidying it); try again"
)
"""What a reader is told when its read kept meeting the writer's maintenance."""


INLINED_READER = "DuckLakeInlinedDataReader"
"""The lake's reader of inlined rows, as an internal error's stack trace names it."""


def is_read_conflict(exc: BaseException) -> bool:
    """Whether ``exc`` is a lake read that met the writer's maintenance, not a broken lake.

    ``ducklake_flush_inlined_data`` drops the catalog tables that held small commits once
    their rows are in Parquet. A reader whose snapshot was still reading one has its catalog
    transaction aborted ("Current transaction is aborted"), or, if it resolved the table
    list in the moment between the flush's commit and the drop, names a table that is gone
    ("ducklake_inlined_data_... does not exist"; duckdb/ducklake#1413, healed only by a new
    ATTACH). PostgreSQL may also end a catalog read that met the writer's locks as a
    deadlock, and the catalog's connection handoff can report "Resource deadlock avoided";
    both are transient by nature. A scan of inlined rows that a flush changed under it can
    also fail DuckDB's own bounds check (an internal error, "Attempted to access index ...
    within vector of size ...", raised in ``DuckLakeInlinedDataReader``, which the message's
    stack trace names; seen once in the two-worker test). An internal error invalidates only
    the connection's own in-memory database, and every lake read opens a new one. Nothing
    committed is lost: the same read on a fresh connection sees the committed state
    (``gpurent.api.warehouse``). When the catalog's COPY of such a table fails, DuckDB says
    only that it could not fetch from the failed statement ("Attempting to fetch from an
    unsuccessful query result"): the same race, seen by the two-loader test."""
    if not isinstance(exc, duckdb.Error):
        return False
    message = str(exc)
    lowered = message.lower()
    return (
        "Current transaction is aborted" in message
        or ("ducklake_inlined_data_" in message and "does not exist" in message)
        or "deadlock detected" in lowered
        or "resource deadlock avoided" in lowered
        # Only when the trace names the inlined-data reader: any other internal error is a
        # fault to report, not a race to retry.
        or (isinstance(exc, duckdb.InternalException) and INLINED_READER in message)
        # The same vanished inlined-data table met by the catalog's COPY: DuckDB reports
        # the failed statement it could not read from (seen in the two-loader test).
        or "attempting to fetch from an unsuccessful query result" in lowered
    )


def flush_inlined_data(con: duckdb.DuckDBPyConnection) -> None:
    """Write the rows DuckLake kept in the catalog out to Parquet files.

    DuckLake inlines a small insert (one run's crawl_runs row, a handful of offers) into
    the PostgreSQL catalog instead of writing a tiny file; readers see those rows the same.
    A maintenance step (after a crawl, or on a schedule) moves them into the data path."""
    con.execute(f"CALL ducklake_flush_inlined_data({_literal(LAKE)})")


# ---------------------------------------------------------------- migrations


MIGRATE_TRIES = 5


def migrate_lake(con: duckdb.DuckDBPyConnection) -> list[int]:
    """``warehouse.migrations.migrate`` for the lake: the same scripts, in the lake's dialect
    (``lake_sql``), recorded in the same ``schema_migrations`` table.

    Two writers that open a lake needing a migration at once (two loaders started after an
    upgrade) may apply the same step; where their transactions overlap DuckLake refuses the
    second commit ("Transaction conflict"), and that one reads the migrations again, finds
    the step applied and goes on. Each step takes the load lease (``_step_lease``), so the
    two always overlap on one row, and re-reads whether it is applied inside its own
    transaction: one that begins after the other committed skips the step."""
    for attempt in range(1, MIGRATE_TRIES):
        try:
            return migrate(con, dialect=lake_sql, where="the lake", lease=_step_lease)
        except (duckdb.Error, MigrationError) as exc:
            cause = exc.__cause__ if isinstance(exc, MigrationError) else exc
            if cause is None or not is_write_conflict(cause):
                raise
        time.sleep(random.uniform(0.1, 0.5) * attempt)
    return migrate(con, dialect=lake_sql, where="the lake", lease=_step_lease)


def _step_lease(con: duckdb.DuckDBPyConnection) -> None:
    """The load lease for one migration step: the same row, so a step conflicts with another
    writer's step or load. A lake being created has no row yet: the first step's tables
    conflict by themselves."""
    con.execute(WRITE_LEASE_SQL)


_TOKEN = re.compile(
    r"""
    (?P<comment>--[^\n]*)
    | (?P<string>'(?:[^']|'')*')
    | (?P<quoted>"(?:[^"]|"")*")
    | (?P<word>[A-Za-z_][A-Za-z_0-9]*)
    | (?P<space>\s+)
    | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_ENDS_DEFAULT = {"NOT", "NULL", "CHECK", "PRIMARY", "UNIQUE", "REFERENCES", "DEFAULT"}


def lake_sql(script: str) -> str:
    """A migration script in DuckLake's dialect (module docstring): comments, PRIMARY KEY,
    UNIQUE and CHECK constraints, CREATE SEQUENCE statements and DEFAULTs DuckLake cannot
    hold removed; CREATE SEQUENCE made TEMP (``start_sequences`` then starts it past the
    stored ids); everything else as written. A sequence not in ``SEQUENCES`` is an error,
    so a new one gets its column named here before it can reach a lake."""
    statements = []
    for statement in _statements(_tokens(script)):
        words = [t.upper() for t in statement if _is_word(t)]
        if words[:2] == ["CREATE", "SEQUENCE"]:
            name = next(t for t in statement if _is_word(t) and t.upper() not in _CREATE_WORDS)
            if name not in SEQUENCES:
                raise MigrationError(
                    f"sequence {name} has no column in warehouse.lake.SEQUENCES: name it there"
                )
            # The script may use it (a data step): this connection's own, for now.
            rest = "".join(statement).strip()[len("CREATE SEQUENCE") :]
            statements.append(f"CREATE OR REPLACE TEMP SEQUENCE{rest}")
            continue
        kept = "".join(_tidy(_strip_constraints(statement))).strip()
        if kept:
            statements.append(kept)
    return "".join(f"{s};\n" for s in statements)


_CREATE_WORDS = {"CREATE", "SEQUENCE", "IF", "NOT", "EXISTS", "OR", "REPLACE", "TEMP", "TEMPORARY"}


def _tokens(script: str) -> list[str]:
    out = []
    for match in _TOKEN.finditer(script):
        if match.lastgroup == "comment":
            continue
        out.append(match.group())
    return out


def _statements(tokens: list[str]) -> Iterator[list[str]]:
    current: list[str] = []
    for token in tokens:
        if token == ";":
            yield current
            current = []
        else:
            current.append(token)
    if any(not t.isspace() for t in current):
        yield current


def _is_word(token: str) -> bool:
    return bool(token) and (token[0].isalpha() or token[0] == "_")


def _next(tokens: list[str], i: int) -> int:
    """Index of the first non-space token at or after ``i`` (len when none)."""
    while i < len(tokens) and tokens[i].isspace():
        i += 1
    return i


def _group_end(tokens: list[str], i: int) -> int:
    """``tokens[i]`` is "(": the index just past its matching ")"."""
    depth = 0
    for j in range(i, len(tokens)):
        if tokens[j] == "(":
            depth += 1
        elif tokens[j] == ")":
            depth -= 1
            if depth == 0:
                return j + 1
    raise MigrationError("unbalanced parentheses in a migration script")


def _strip_constraints(tokens: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        upper = token.upper() if _is_word(token) else ""
        after = _next(tokens, i + 1)
        if upper == "CHECK" and after < len(tokens) and tokens[after] == "(":
            i = _group_end(tokens, after)
            continue
        if upper == "PRIMARY" and after < len(tokens) and tokens[after].upper() == "KEY":
            i = after + 1
            group = _next(tokens, i)
            if group < len(tokens) and tokens[group] == "(":
                i = _group_end(tokens, group)
            continue
        if upper == "UNIQUE":
            i = _group_end(tokens, after) if after < len(tokens) and tokens[after] == "(" else i + 1
            continue
        if upper == "DEFAULT":
            end = _default_end(tokens, i + 1)
            expression = "".join(tokens[i + 1 : end]).strip()
            if expression.startswith("[") or "nextval" in expression.lower():
                i = end
                continue
        out.append(token)
        i += 1
    return out


def _default_end(tokens: list[str], i: int) -> int:
    """Index just past a DEFAULT's expression: up to "," or ")" at its depth, or a keyword
    that starts the next constraint."""
    depth = 0
    j = i
    while j < len(tokens):
        token = tokens[j]
        if token in {"(", "["}:
            depth += 1
        elif token in {")", "]"}:
            if depth == 0:
                return j
            depth -= 1
        elif depth == 0 and (token == "," or (_is_word(token) and token.upper() in _ENDS_DEFAULT)):
            return j
        j += 1
    return j


def _tidy(tokens: list[str]) -> list[str]:
    """Drop the commas left before ")" or another "," by a removed table constraint, and the
    blanks a removed constraint leaves before "," or ")"."""
    out: list[str] = []
    for i, token in enumerate(tokens):
        after = _next(tokens, i + 1)
        follows = tokens[after] if after < len(tokens) else ""
        if token == "," and follows in {")", ","}:
            continue
        if token.isspace() and follows in {")", ","} and tokens[i + 1 : after + 1].count(",") < 2:
            continue
        out.append(token)
    return out


# ---------------------------------------------------------------- helpers


def _require_schema(con: duckdb.DuckDBPyConnection, config: LakeConfig) -> None:
    if not _has_table(con, "schema_migrations"):
        raise WarehouseMissing(
            f"the lake at catalog {config.catalog!r} holds no gpurent warehouse (never migrated)"
        )


def _has_table(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    rows = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = ? AND table_name = ?",
        [LAKE, table],
    ).fetchall()
    return bool(rows[0][0])


def _folder(path: Path) -> str:
    """DuckLake joins file names to DATA_PATH as text: it must end with a separator."""
    text = str(Path(path).expanduser())
    return text if text.endswith("/") else text + "/"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


__all__ = [
    "LAKE",
    "SEQUENCES",
    "LakeConfig",
    "LakeError",
    "connect_lake",
    "extension_files",
    "flush_inlined_data",
    "is_lake",
    "is_read_conflict",
    "is_write_conflict",
    "lake_sql",
    "leased_transaction",
    "load_extensions",
    "migrate_lake",
    "reading_lake",
    "retrying_writes",
    "start_sequences",
    "take_write_lease",
    "writing_lake",
]
