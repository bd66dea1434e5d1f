"""FeedFile.sample: whole lines from stretches spread over a feed file, whatever its line
ends, for priming list verdicts before the file is read (warehouse.feed_lists)."""

from __future__ import annotations

from pathlib import Path

import pytest
import wh_kit  # noqa: F401  (puts the real warehouse package first on sys.path)
from hypothesis import given, settings
from hypothesis import strategies as st

from warehouse.feed_file import FeedFile

_LINE = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=40).map(
    lambda t: t.encode()
)
_END = st.sampled_from([b"\n", b"\r\n", b"\r"])


def _texts(path: Path, windows: int, window_bytes: int) -> list[bytes]:
    table = FeedFile(path).sample(windows, window_bytes)
    numbers = table.column("line").to_pylist()
    assert numbers == list(range(1, len(numbers) + 1))  # the sample's own order
    texts = [t.encode() for t in table.column("text").to_pylist()]
    assert all(t.endswith(b"\n") for t in texts)
    return [t[:-1] for t in texts]


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.tuples(_LINE, _END), max_size=60),
    last_end=st.booleans(),
    windows=st.integers(1, 6),
    window_bytes=st.integers(1, 200),
)
def test_a_sample_holds_only_whole_lines_of_the_file(
    tmp_path_factory: pytest.TempPathFactory,
    lines: list[tuple[bytes, bytes]],
    last_end: bool,
    windows: int,
    window_bytes: int,
) -> None:
    data = b"".join(text + end for text, end in lines)
    if lines and not last_end:  # a file whose last line has no end
        data = data[: -len(lines[-1][1])]
    path = tmp_path_factory.mktemp("sample") / "feed.jsonl"
    path.write_bytes(data)
    whole = data.splitlines()
    sampled = _texts(path, windows, window_bytes)
    assert set(sampled) <= set(whole)
    if windows * window_bytes >= len(data):
        assert sampled == whole  # a file no larger than the sample is read whole
    assert len(sampled) <= len(whole)


def test_stretches_are_spread_from_the_first_line_to_the_last(tmp_path: Path) -> None:
    lines = [f'{{"n":{i:04d}}}'.encode() for i in range(1000)]
    path = tmp_path / "feed.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    sampled = _texts(path, 4, 60)  # four stretches of 60 bytes, about five lines each
    assert sampled[0] == lines[0] and sampled[-1] == lines[-1]
    middle = [lines.index(t) for t in sampled]
    assert middle == sorted(middle) and any(300 < i < 700 for i in middle)
    assert len(sampled) < 30


def test_nothing_to_sample(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert _texts(empty, 4, 100) == []
    one = tmp_path / "one.jsonl"
    one.write_bytes(b'{"a":1}\n')
    assert _texts(one, 0, 100) == []
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"a":"\xff"}\n{"b":2}\n')  # not UTF-8: for the exact path to say why
    assert _texts(bad, 1, 100) == []
