"""A feed file as numbered lines, in Arrow tables of a block each, and its SHA-256.

A line's number is its place as ``bytes.splitlines()`` numbers the file (1-based, blank
lines counted; ``\\n``, ``\\r\\n`` and a lone ``\\r`` end a line), which is what a quarantine
row's ``seq`` says. The file is read in blocks, each cut after its last newline so that no
line (nor a CR LF pair) straddles two blocks.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa

__all__ = ["LINES_SCHEMA", "FeedFile"]

LINES_SCHEMA = pa.schema([("line", pa.int32()), ("text", pa.large_string())])
BLOCK_BYTES = 8 * 1024 * 1024
"""Bytes read at a time: warehouse.feed types a block's lines in one statement."""
BATCH_ROWS = 2048
"""Rows per Arrow batch of a block: DuckDB's threads take batches one by one."""


class FeedFile:
    """One feed file. After a whole pass of ``blocks()``, ``lines`` and ``sha256`` are
    known, and ``undecodable`` holds the lines that are not UTF-8 (their ``text`` is NULL
    in the blocks: the exact path says why)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.lines = 0
        self.sha256: str | None = None
        self.undecodable: dict[int, bytes] = {}

    def blocks(self) -> Iterator[pa.Table]:
        """The file's ``(line, text)``, a table per block, each made in a thread while the
        caller works on the one before (DuckDB lets go of the GIL as it runs a statement;
        hashing and cutting lines mostly do too)."""
        made = self._tables()
        with ThreadPoolExecutor(1, thread_name_prefix="gpurent-feed") as thread:
            ahead = thread.submit(next, made, None)
            while (table := ahead.result()) is not None:
                ahead = thread.submit(next, made, None)
                yield table

    def _tables(self) -> Iterator[pa.Table]:
        digest = hashlib.sha256()
        for first, lines in _cut(self.path.open("rb"), digest):
            numbers = pa.array(range(first, first + len(lines)), pa.int32())
            try:
                texts = pa.array(lines, pa.large_string())  # (checks the bytes are UTF-8)
            except pa.ArrowInvalid:  # rare: a line that is not UTF-8; find it
                decoded = [self._decoded(first + k, t) for k, t in enumerate(lines)]
                texts = pa.array(decoded, pa.large_string())
            table = pa.table([numbers, texts], schema=LINES_SCHEMA)
            yield pa.Table.from_batches(table.to_batches(max_chunksize=BATCH_ROWS))
            self.lines = first + len(lines) - 1
        self.sha256 = digest.hexdigest()

    def texts(self, numbers: Iterable[int]) -> dict[int, bytes]:
        """The bytes of the given lines (the file read again: for the few lines set aside
        after a pass)."""
        wanted = set(numbers)
        found: dict[int, bytes] = {}
        if wanted:
            for first, lines in _cut(self.path.open("rb")):
                found |= {n: t for n, t in enumerate(lines, start=first) if n in wanted}
        return found

    def _decoded(self, number: int, text: bytes) -> str | None:
        try:
            return text.decode("utf-8")
        except UnicodeDecodeError:
            self.undecodable[number] = text
            return None


def _cut(file: BinaryIO, digest: Any = None) -> Iterator[tuple[int, list[bytes]]]:
    """(number of the first line, the lines) per block of ``file``, which it closes;
    ``digest`` (a hashlib object) takes every byte read."""
    with file:
        carry, first = b"", 1
        while True:
            block = file.read(BLOCK_BYTES)
            if digest is not None:
                digest.update(block)
            data = carry + block
            cut = data.rfind(b"\n") + 1 if block else len(data)
            part, carry = data[:cut], data[cut:]
            if part:
                lines = part.splitlines()
                yield first, lines
                first += len(lines)
            if not block:
                return
