"""A feed file as a stream of its lines, for DuckDB to read in one statement, and back.

``FeedFile.scan()`` hands DuckDB the file's lines as Arrow batches of ``(line, text)``:
``line`` is the 1-based line number exactly as ``bytes.splitlines()`` numbers the file
(blank lines counted; ``\\n``, ``\\r\\n`` and a lone ``\\r`` end a line), ``text`` the line
with one ``\\n`` after it. The file is read in blocks and cut with NumPy, so no Python
object is made per line; DuckDB's threads take the batches as they come, so one INSERT
types the whole file in parallel. Lines of a block that is not UTF-8 are left out of the
stream: they are for the exact path, which says why.

The first scan also takes the file's SHA-256 (in a thread, while DuckDB works) and keeps
where each line starts, so ``texts()`` can read back the few lines the set-wise reading
left out, or set aside, without reading the file again. Each later scan reads the file
again (a second pass over the lines a load needs twice).
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa

__all__ = ["LINES_SCHEMA", "FeedFile"]

LINES_SCHEMA = pa.schema([("line", pa.int32()), ("text", pa.large_string())])
# Bytes read at a time; one block's lines are in memory at once (twice while hashing).
BLOCK_BYTES = 8 * 1024 * 1024
# Rows per Arrow batch: DuckDB's threads take batches one by one, so batches far smaller
# than a block keep both busy.
BATCH_ROWS = 1024
_ENDINGS = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True)
class _Block:
    """Where the lines of one block are: absolute offsets of their starts and ends (end:
    where the line's terminator begins, or the end of the file)."""

    first: int
    starts: np.ndarray
    ends: np.ndarray


class FeedFile:
    """One feed file, scanned as lines (see the module doc)."""

    def __init__(self, path: Path | str, *, block_bytes: int | None = None) -> None:
        self.path = Path(path)
        self.block_bytes = block_bytes or BLOCK_BYTES
        self._blocks: list[_Block] = []
        self._firsts: list[int] = []
        self._lines: int | None = None
        self._sha256: str | None = None

    @property
    def lines(self) -> int:
        """Lines in the file, blank ones included (known after a whole first scan)."""
        if self._lines is None:
            raise RuntimeError("the feed has not been scanned yet")
        return self._lines

    @property
    def sha256(self) -> str:
        if self._sha256 is None:
            raise RuntimeError("the feed has not been scanned yet")
        return self._sha256

    @property
    def scanned(self) -> bool:
        return self._lines is not None

    def ensure_scanned(self) -> None:
        """Finish the first scan here if the reader of ``scan()`` did not (a plan that
        reads no line, a statement that failed half-way)."""
        if not self.scanned:
            for _ in self._batches(self.path.open("rb")):
                pass

    def scan(self) -> pa.RecordBatchReader:
        """The file's lines as a stream DuckDB can read once (a new file read each call)."""
        # Opened here, so a file that cannot be read says so at once (OSError), not from
        # inside DuckDB's scan.
        return pa.RecordBatchReader.from_batches(LINES_SCHEMA, self._batches(self.path.open("rb")))

    def table(self, numbers: Iterable[int]) -> pa.Table:
        """``(line, text)`` of the given lines (after a scan), shaped as ``scan()`` gives
        them: for reading a few lines again."""
        texts = self.texts(numbers)
        ordered = sorted(texts)
        return pa.table(
            {
                "line": pa.array(ordered, pa.int32()),
                "text": pa.array([texts[n].decode("utf-8", "replace") + "\n" for n in ordered]),
            },
            schema=LINES_SCHEMA,
        )

    def sample(self, windows: int, window_bytes: int) -> pa.Table:
        """Whole lines from ``windows`` stretches of ``window_bytes`` spread evenly over
        the file (all of it when it is smaller), shaped as ``scan()`` gives them but
        numbered in the sample's own order: for learning what the file holds before
        reading it (warehouse.feed_lists primes its list verdicts from it). Independent of
        the scans; a stretch starts after the first line end it holds (unless it starts
        the file) and stops at its last one."""
        size = self.path.stat().st_size
        if windows < 1 or window_bytes < 1 or size == 0:
            return LINES_SCHEMA.empty_table()
        if size <= windows * window_bytes:
            starts = [0]
            window_bytes = size
        else:
            step = (size - window_bytes) / max(windows - 1, 1)
            starts = sorted({int(k * step) for k in range(windows)})
        batches: list[pa.RecordBatch] = []
        line = 0
        with self.path.open("rb") as handle:
            for start in starts:
                handle.seek(start)
                data = handle.read(window_bytes)
                if start > 0:
                    data = data[data.find(b"\n") + 1 :] if b"\n" in data else b""
                if start + window_bytes < size:  # the stretch ends inside a line
                    data = data[: data.rfind(b"\n") + 1]
                if not data:
                    continue
                first, ends, text = _cut(data)
                if text is not None:
                    batches.extend(_as_batches(line + 1, first, ends, text))
                line += len(first)
        return pa.Table.from_batches(batches, schema=LINES_SCHEMA)

    def texts(self, numbers: Iterable[int]) -> dict[int, bytes]:
        """The bytes of the given lines, terminators left out (after a scan)."""
        if not self.scanned:
            raise RuntimeError("the feed has not been scanned yet")
        wanted = sorted(set(numbers))
        found: dict[int, bytes] = {}
        if not wanted:
            return found
        with self.path.open("rb") as handle:
            for number in wanted:
                block = self._blocks[bisect_right(self._firsts, number) - 1]
                at = number - block.first
                start, end = int(block.starts[at]), int(block.ends[at])
                handle.seek(start)
                found[number] = handle.read(end - start)
        return found

    def _batches(self, file: BinaryIO) -> Iterator[pa.RecordBatch]:
        first_scan = not self.scanned
        if first_scan:  # a first scan that stopped half-way starts again
            self._blocks, self._firsts = [], []
        digest = hashlib.sha256() if first_scan else None
        hasher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gpurent-feed-sha256")
        hashed: Future[None] | None = None
        line = 0
        try:
            with file as handle:
                offset = 0  # of the first byte of the current part
                carry = b""
                while True:
                    block = handle.read(self.block_bytes)
                    if digest is not None:
                        # hashlib lets go of the GIL on large buffers: the digest is taken
                        # while DuckDB types the lines, one block at a time.
                        if hashed is not None:
                            hashed.result()
                        hashed = hasher.submit(digest.update, block)
                    data = carry + block
                    # Cut after the last newline: a CR LF pair never straddles two parts.
                    cut = data.rfind(b"\n") + 1 if block else len(data)
                    part, carry = data[:cut], data[cut:]
                    if part:
                        starts, ends, text = _cut(part)
                        if first_scan:
                            self._firsts.append(line + 1)
                            self._blocks.append(_Block(line + 1, starts + offset, ends + offset))
                        if text is not None:
                            yield from _as_batches(line + 1, starts, ends, text)
                        line += len(starts)
                        offset += len(part)
                    if not block:
                        break
            if hashed is not None:
                hashed.result()
            if first_scan:
                self._lines = line
                self._sha256 = digest.hexdigest() if digest is not None else None
        finally:
            hasher.shutdown(wait=True)


def _cut(part: bytes) -> tuple[np.ndarray, np.ndarray, bytes | None]:
    """Starts and ends of the lines of ``part`` (relative), and the text to hand DuckDB:
    the lines each with one ``\\n`` after it (None when the part is not UTF-8)."""
    if b"\r" not in part:
        newlines = np.flatnonzero(np.frombuffer(part, dtype=np.uint8) == 10)
        ends = newlines.astype(np.int64)
        if not part.endswith(b"\n"):  # the last line of a file without a final newline
            ends = np.append(ends, len(part))
        starts = np.empty(len(ends), dtype=np.int64)
        if len(ends):
            starts[0] = 0
            starts[1:] = ends[:-1] + 1
        text = part if part.endswith(b"\n") else part + b"\n"
    else:  # rare: a CR ends lines too, as splitlines() has it; copy the lines out
        bounds = [0]
        stops = []
        for match in _ENDINGS.finditer(part):
            stops.append(match.start())
            bounds.append(match.end())
        if bounds[-1] < len(part):
            stops.append(len(part))
        else:
            bounds.pop()
        starts = np.array(bounds, dtype=np.int64)
        ends = np.array(stops, dtype=np.int64)
        text = b"".join(part[s:e] + b"\n" for s, e in zip(bounds, stops, strict=True))
    if not _is_utf8(text):
        return starts, ends, None
    return starts, ends, text


def _is_utf8(data: bytes) -> bool:
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _as_batches(
    first: int, starts: np.ndarray, ends: np.ndarray, text: bytes
) -> Iterator[pa.RecordBatch]:
    """Arrow batches over ``text`` (each line with one newline) without copying it."""
    count = len(starts)
    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(ends - starts + 1, out=offsets[1:])
    texts = pa.Array.from_buffers(
        pa.large_string(), count, [None, pa.py_buffer(offsets), pa.py_buffer(text)]
    )
    numbers = pa.array(np.arange(first, first + count, dtype=np.int32))
    for at in range(0, count, BATCH_ROWS):
        yield pa.record_batch(
            [numbers.slice(at, BATCH_ROWS), texts.slice(at, BATCH_ROWS)], schema=LINES_SCHEMA
        )
