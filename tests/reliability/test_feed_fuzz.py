"""Fuzz the feed reader: garbage bytes, truncated and mangled lines never raise; every
non-blank line is an offer or a quarantine row with its reason (rule of truth 6)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flows.nightly import load_and_track
from tests.reliability.rel_kit import T0 as START
from tests.reliability.rel_kit import check_integrity, make_outcome, offer
from warehouse.feed import read_feed

RUN_ID = "fuzz-run"
GOOD_LINES = [offer("vastai", RUN_ID, n, START).model_dump_json().encode() for n in range(6)]

# A line as it may arrive: whole, cut anywhere, with bytes flipped, or plain garbage.
truncated = st.tuples(st.sampled_from(GOOD_LINES), st.integers(0, 400)).map(lambda t: t[0][: t[1]])
flipped = st.tuples(st.sampled_from(GOOD_LINES), st.integers(0, 400), st.integers(0, 255)).map(
    lambda t: t[0][: t[1]] + bytes([t[2]]) + t[0][t[1] + 1 :]
)
garbage = st.binary(max_size=200).map(lambda b: b.replace(b"\n", b" ").replace(b"\r", b" "))
lines = st.lists(
    st.one_of(st.sampled_from(GOOD_LINES), truncated, flipped, garbage), min_size=1, max_size=25
)
FUZZ = settings(
    deadline=None,  # a busy machine is slow, never wrong
    max_examples=150,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _write(path: Path, feed_lines: list[bytes], tail: bytes) -> None:
    path.write_bytes(b"\n".join(feed_lines) + tail)


@FUZZ
@given(feed_lines=lines, tail=st.sampled_from([b"\n", b"", b"\r\n"]))
def test_the_feed_reader_never_raises_and_accounts_for_every_line(
    tmp_path: Path, feed_lines: list[bytes], tail: bytes
) -> None:
    path = tmp_path / "fuzz.jsonl"
    _write(path, feed_lines, tail)
    batch = read_feed(path, provider="vastai", run_id=RUN_ID)
    non_blank = [ln for ln in path.read_bytes().splitlines() if ln.strip()]
    assert batch.lines == len(non_blank)
    assert batch.offers.height + batch.quarantine.height == len(non_blank)
    assert batch.quarantine["reason"].null_count() == 0
    assert all(reason for reason in batch.quarantine["reason"].to_list())
    # A flipped byte may still leave a valid offer, but never one of another run.
    assert set(batch.offers["provider"].to_list()) <= {"vastai"}
    assert set(batch.offers["run_id"].to_list()) <= {RUN_ID}
    assert batch.offers["offer_key"].is_unique().all()
    if all(ln in GOOD_LINES for ln in non_blank):
        # Intact lines all load, but for a repeated offer key (the first one wins).
        assert batch.offers.height == len(set(non_blank))


@settings(FUZZ, max_examples=12)
@given(feed_lines=lines)
def test_a_fuzzed_feed_loads_without_error_and_the_warehouse_stays_whole(
    tmp_path_factory: object, feed_lines: list[bytes]
) -> None:
    root = tmp_path_factory.mktemp("fuzzload")  # type: ignore[attr-defined]
    outcome = make_outcome(root / "feeds", RUN_ID, "vastai", 1)
    _write(outcome.feed_path, feed_lines, b"\n")
    report = load_and_track(root / "gpurent.duckdb", [outcome])
    assert report.busy is None and report.manifest is None
    [run] = report.runs
    assert run.result is not None
    non_blank = [ln for ln in outcome.feed_path.read_bytes().splitlines() if ln.strip()]
    stored = run.result.offers + run.result.quarantined + run.result.ignored_offers
    assert stored == len(non_blank)
    assert check_integrity(root / "gpurent.duckdb").runs == 1
