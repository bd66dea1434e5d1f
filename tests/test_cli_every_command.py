"""Every command against every bad database and every invalid option (issue 12).

The commands are read from the real app, sub-groups walked, so a new command is covered
without editing this file: one with a `--db` option meets each bad database kind, and each
option with a bound, a choice or a currency gets a value it must refuse. Every bad-database
case is the console script run as a process (`python -m gpurent`, as a user runs it: it
opens, locks and leaves files, which only a process of its own shows whole). Every
invalid-option case runs the console script's own entry point (``gpurent.cli.app.main``)
in this process, with its argv, environment and output streams set as the child's would be
and its final exit caught: the option parser refuses before anything is opened, so a
process would prove nothing more and cost a start-up each. Every case must end in exactly
one non-empty line on stderr, exit 2 (``USER_ERROR``), no traceback, and the bad database
(and everything beside it) exactly as it was before.

A command that is neither covered nor listed in ``NOT_COVERED`` with its reason fails
``test_every_command_is_covered_or_excluded_with_a_reason``.

Bad database kinds:
  text file, directory, empty file: made in the case's own folder;
  unwritable location (commands that write only): a path under a regular file
    (``plain-file/gpurent.duckdb``). Tests run as root, and chmod does not stop root, so a
    read-only folder would not be refused here; a parent that is a file refuses everyone.
  locked file: a real warehouse that one helper process holds read-write
    (``tests.reliability.rel_kit.writer_held``: it prints "ready" once it holds it); the
    children wait GPURENT_LOCK_WAIT_S=0.5 s for it.

The processes run two at a time in one pool, once per module, the in-process cases one by
one beside them, and each case's test reads its result.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import typer

from gpurent.cli.app import build_app
from gpurent.cli.errors import USER_ERROR

REPO_ROOT = Path(__file__).resolve().parents[1]

# What each command needs on its line to get past its own checks to the --db (or the
# option) under test. {work} is the case's own folder beside the database's.
NEEDS: dict[str, tuple[str, ...]] = {
    "crawl": ("--provider", "autodl", "--replay"),
    "load": ("{work}/feeds",),  # a folder holding a real pending-load manifest
    "cheapest": ("--min-vram", "24"),
    "explain": ("autodl", "no-such-offer"),
    "size": ("--prompt-tokens", "100", "--gen-tokens", "100", "--params-b", "7"),
    "tco": ("--gpu", "RTX 4090", "--price", "15000", "--hours-per-day", "8", "--power-price", "1"),
    "watch add": ("--notify", "json://127.0.0.1:9/hook", "--gpu", "RTX 4090"),
    "watch remove": ("1",),
    "watch test": ("1",),
    "watch poll": ("--replay",),
    "history": ("--gpu", "RTX 4090"),
    "index export": ("--out", "{work}/index.csv"),
    "demo": ("--days", "1"),
    "normalize gpu": ("RTX 4090",),
    "normalize price": ("1.98/h",),
}

# Commands that write the warehouse: they also meet the unwritable location.
WRITERS = frozenset(
    {
        "crawl",
        "load",
        "demo",
        "schedule",
        "watch add",
        "watch remove",
        "watch deliver",
        "watch poll",
        # writes no warehouse, but its list beside it (api_prices.json): refused alike
        "api-prices refresh",
    }
)

# Commands with no case at all, and why.
NOT_COVERED: dict[str, str] = {
    "normalize availability": "no --db, and no option with a bound, a choice or a currency",
    "replay check": "no --db, and no option with a bound, a choice or a currency",
}

# (command, kind) pairs not run, and why: each would start a long-running job by design.
NOT_RUN: dict[tuple[str, str], str] = {
    ("crawl", "locked file"): "a held warehouse does not stop a crawl: it crawls, keeps its "
    "runs pending and says `gpurent load` (tests/reliability/test_pending_load.py)",
    ("watch poll", "locked file"): "as crawl: the poll crawls, its load waits or stays pending",
    ("schedule", "locked file"): "a held warehouse passes (the schedules run later); next it "
    "serves forever, or without a Prefect server prints its documented how-to",
    ("dashboard", "locked file"): "the dashboard is read-only and says 'busy' on its pages, "
    "so it starts its server",
    ("api-prices refresh", "locked file"): "it reads no warehouse and writes only the list "
    "beside it, so a held one does not stop it: it would fetch OpenRouter's list (internet)",
}

# (command, kind) pairs whose documented answer is not a bare refusal: (exit code, what the
# answer must say). Still no traceback, at most one line on stderr, nothing written.
DOCUMENTED: dict[tuple[str, str], tuple[int, str]] = {
    # `gpurent load --help`: exit 2 with a "warehouse busy" line if it gives up; the table of
    # the runs left pending comes first, on stdout.
    ("load", "locked file"): (USER_ERROR, "warehouse busy"),
    # `gpurent size --help`: with no warehouse to read it prints the estimate alone, and
    # says why there are no offers.
    ("size", "locked file"): (0, "warehouse busy"),
    # `gpurent api-prices list` reads the API price lists beside the warehouse, never the
    # warehouse itself: a held one does not stop it.
    ("api-prices list", "locked file"): (0, "API prices per million tokens"),
}

# Options whose refused value is not the generic one, and why.
INVALID_VALUE: dict[tuple[str, str], str] = {
    # The currency a price text is written in needs no exchange rate, so any ISO-shaped code
    # is read; what is not a code at all is refused.
    ("normalize price", "--currency"): "bogus",
}

# The dashboard and `replay serve` start servers: a case that wrongly got that far is ended
# at this deadline (the whole process group), and fails.
DEADLINE_S = 90.0
LOCK_WAIT_S = "0.5"

BAD_DB_KINDS = ("text file", "directory", "empty file", "unwritable location", "locked file")
TEXT = "not a database\n"


@dataclass(frozen=True)
class Case:
    command: str
    kind: str  # a bad database kind, or "option"
    args: tuple[str, ...]  # after the command's words; {db} and {work} filled per case
    option: str | None = None

    @property
    def id(self) -> str:
        tail = " ".join(self.args[-2:]) if self.option else self.kind
        return f"{self.command} | {tail}"


def walk(command: Any, words: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    """(command words, leaf command) for every command of the app, sub-groups walked."""
    subcommands = getattr(command, "commands", None)
    if subcommands is None:
        yield " ".join(words), command
        return
    for name, sub in sorted(subcommands.items()):
        yield from walk(sub, (*words, name))


COMMANDS = dict(walk(typer.main.get_command(build_app())))


def has_db(command: Any) -> bool:
    return any("--db" in getattr(p, "opts", ()) for p in command.params)


def refused_values(name: str, param: Any) -> Iterator[str]:
    """Values the option parser must refuse for ``param``: below its min, above its max,
    not one of its choices, an unknown currency."""
    # Click keeps bounds on the option's type (IntRange, gpurent's NonNegativeDecimal).
    low, high = getattr(param.type, "min", None), getattr(param.type, "max", None)
    if low is not None:
        yield str(low - 1)
    if high is not None:
        yield str(high + 1)
    if getattr(param.type, "choices", None):
        yield "bogus"
    if param.name == "currency":
        yield INVALID_VALUE.get((name, "--currency"), "XYZ")


def build_cases() -> list[Case]:
    cases: list[Case] = []
    for name, command in COMMANDS.items():
        needs = NEEDS.get(name, ())
        db = ("--db", "{db}") if has_db(command) else ()
        if db:
            for kind in BAD_DB_KINDS:
                if kind == "unwritable location" and name not in WRITERS:
                    continue
                if (name, kind) not in NOT_RUN:
                    cases.append(Case(name, kind, (*needs, *db)))
        for param in command.params:
            if param.param_type_name != "option" or param.is_flag:
                continue
            option = param.opts[0]
            for value in refused_values(name, param):
                cases.append(Case(name, "option", (*needs, *db, option, value), option=option))
    return cases


CASES = build_cases()


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every path under ``folder`` with its bytes (None: a folder)."""
    return {
        str(p.relative_to(folder)): None if p.is_dir() else p.read_bytes()
        for p in sorted(folder.rglob("*"))
    }


@dataclass
class Outcome:
    returncode: int | None
    stdout: str
    stderr: str
    db: Path
    before: dict[str, bytes | None]
    after: dict[str, bytes | None]


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPURENT_")}
    env["GPURENT_LOCK_WAIT_S"] = LOCK_WAIT_S
    env["PYTHONPATH"] = str(REPO_ROOT)
    return env


def run_gpurent(args: list[str], env: dict[str, str]) -> tuple[int | None, str, str]:
    """`python -m gpurent ARGS`, its process group ended if it outlives the deadline."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpurent", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO_ROOT,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=DEADLINE_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return None, out, err + f"\n(still running after {DEADLINE_S:.0f} s: killed)"
    return proc.returncode, out, err


class _Exited(Exception):
    """The console script's final exit, caught in process (``code``: its exit status)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class _Deadline(Exception):
    """An in-process case still running at DEADLINE_S (it got past the option parser)."""


def _caught_exit(code: int) -> None:
    raise _Exited(code)


def _past_deadline(signum: int, frame: Any) -> None:
    raise _Deadline


_ABSENT = object()


def run_in_process(args: list[str], env: dict[str, str]) -> tuple[int | None, str, str]:
    """`gpurent ARGS` through the console script's own ``main`` in this process (main
    thread only): argv, environment, stdout and stderr as the child's, its final exit
    (``os._exit`` after the exit handlers) caught as a status, and ended like a process at
    DEADLINE_S; whatever it changed of the process put back."""
    import gpurent.cli.app as cli_app

    out, err = io.StringIO(), io.StringIO()
    pandas = sys.modules.get("pandas", _ABSENT)  # main marks it absent for read commands
    sigint = signal.getsignal(signal.SIGINT)
    alarm = signal.signal(signal.SIGALRM, _past_deadline)
    code: int | None = None
    try:
        with (
            mock.patch.object(cli_app, "_exit_after_cleanup", _caught_exit),
            mock.patch.object(sys, "argv", ["gpurent", *args]),
            mock.patch.dict(os.environ, env, clear=True),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            signal.setitimer(signal.ITIMER_REAL, DEADLINE_S)
            try:
                cli_app.main()
            except _Exited as done:
                code = done.code
            except _Deadline:
                err.write(f"\n(still running after {DEADLINE_S:.0f} s: stopped)")
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, alarm)
        signal.signal(signal.SIGINT, sigint)
        if pandas is _ABSENT:
            sys.modules.pop("pandas", None)
        else:
            sys.modules["pandas"] = pandas  # type: ignore[assignment]
    return code, out.getvalue(), err.getvalue()


def prepare(case: Case, folder: Path, locked: Path) -> tuple[Path, Path, Path]:
    """(the database path, the folder snapshotted around the run, the work folder)."""
    work = folder / "work"
    work.mkdir(parents=True)
    if case.command == "load":
        from flows.crawl import PENDING_MANIFEST, write_manifest
        from tests.reliability.rel_kit import make_outcome

        outcome = make_outcome(work / "feeds", "run-1", "autodl", 2)
        write_manifest(work / "feeds" / "run-1" / PENDING_MANIFEST, [outcome], db_path=locked)
    if case.kind == "locked file":
        return locked, locked.parent, work
    db = folder / "db" / "gpurent.duckdb"
    db.parent.mkdir()
    if case.kind == "text file":
        db.write_text(TEXT, encoding="utf-8")
    elif case.kind == "directory":
        db.mkdir()
    elif case.kind == "empty file":
        db.write_bytes(b"")
    elif case.kind == "unwritable location":
        (db.parent / "plain-file").write_text(TEXT, encoding="utf-8")
        db = db.parent / "plain-file" / "gpurent.duckdb"
    # "option": the path is never created (the refusal comes first)
    return db, db.parent if case.kind != "unwritable location" else db.parent.parent, folder


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Outcome]]:
    from tests.reliability.rel_kit import writer_held

    root = tmp_path_factory.mktemp("every-command")
    locked = root / "locked" / "gpurent.duckdb"
    locked.parent.mkdir()
    env = child_env()
    with writer_held(locked):  # returns once the holder printed "ready"
        jobs = []
        for n, case in enumerate(CASES):
            db, watched, work = prepare(case, root / f"case-{n}", locked)
            args = [a.format(db=db, work=work) for a in (*case.command.split(), *case.args)]
            jobs.append((case, args, db, watched))

        def one(job: tuple[Case, list[str], Path, Path]) -> tuple[str, Outcome]:
            case, args, db, watched = job
            before = snapshot(watched)
            if case.kind == "option":
                code, out, err = run_in_process(args, env)
            else:
                code, out, err = run_gpurent(args, env)
            return case.id, Outcome(code, out, err, db, before, snapshot(watched))

        # The processes in the pool; the in-process cases here, one by one, meanwhile (they
        # swap this process's streams and environment, so never two at once).
        with ThreadPoolExecutor(max_workers=2) as pool:
            started = pool.map(one, [j for j in jobs if j[0].kind != "option"])
            done = dict(one(j) for j in jobs if j[0].kind == "option")
            done.update(started)
            yield done


def assert_one_line_refusal(outcome: Outcome) -> str:
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    shown = outcome.stderr[-1500:]
    assert "Traceback" not in outcome.stderr and 'File "' not in outcome.stderr, shown
    assert outcome.returncode == USER_ERROR, (outcome.returncode, shown)
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize("case", [c for c in CASES if c.kind != "option"], ids=lambda c: c.id)
def test_a_bad_database_is_refused_in_one_line_and_left_as_it_was(
    case: Case, outcomes: dict[str, Outcome]
) -> None:
    outcome = outcomes[case.id]
    assert outcome.after == outcome.before  # nothing written, created or removed there
    if case.kind == "text file":
        assert outcome.db.read_text(encoding="utf-8") == TEXT
    if (case.command, case.kind) in DOCUMENTED:
        code, says = DOCUMENTED[case.command, case.kind]
        assert "Traceback" not in outcome.stderr, outcome.stderr[-1500:]
        assert outcome.returncode == code, (outcome.returncode, outcome.stderr[-1500:])
        assert len([line for line in outcome.stderr.splitlines() if line.strip()]) <= 1
        assert says in " ".join((outcome.stdout + outcome.stderr).split())
        return
    line = assert_one_line_refusal(outcome)
    assert outcome.db.name in line or "warehouse" in line, line
    assert outcome.stdout.strip() == "", outcome.stdout[-800:]


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "option"], ids=lambda c: c.id)
def test_an_invalid_option_is_refused_by_the_option_parser(
    case: Case, outcomes: dict[str, Outcome]
) -> None:
    outcome = outcomes[case.id]
    line = assert_one_line_refusal(outcome)
    assert line.startswith("gpurent: ") and "--help" in line, line
    assert case.option is not None and case.option in line, line
    assert outcome.stdout.strip() == "", outcome.stdout[-800:]
    assert not outcome.db.exists()  # refused before the warehouse is opened


def test_every_command_is_covered_or_excluded_with_a_reason() -> None:
    covered = {case.command for case in CASES}
    missing = set(COMMANDS) - covered - set(NOT_COVERED)
    assert not missing, f"commands with no case: add them to NEEDS or NOT_COVERED: {missing}"
    # The tables name real commands, and an excluded command really has nothing to cover.
    named = set(NEEDS) | WRITERS | set(NOT_COVERED) | {c for c, _ in (*NOT_RUN, *DOCUMENTED)}
    assert named <= set(COMMANDS), named - set(COMMANDS)
    assert not covered & set(NOT_COVERED), covered & set(NOT_COVERED)
    for name, command in COMMANDS.items():
        if name in NOT_COVERED:
            continue
        needed = [p for p in command.params if p.required]
        given = NEEDS.get(name, ())
        for param in needed:
            if param.param_type_name == "option":
                assert set(param.opts) & set(given), (name, param.opts, "not in NEEDS")
        if any(p.param_type_name == "argument" for p in needed):
            assert given and not given[0].startswith("-"), (name, "its arguments not in NEEDS")


def test_the_bad_kinds_reach_the_commands_that_write() -> None:
    unwritable = {c.command for c in CASES if c.kind == "unwritable location"}
    assert unwritable == WRITERS
    assert {c.command for c in CASES if c.kind == "locked file"} >= {"load", "watch add", "demo"}
