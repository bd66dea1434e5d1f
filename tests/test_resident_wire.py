"""The resident server's parts on their own: the protocol, where it meets, what it accepts,
and how it notices changed code (tests/test_resident_server.py runs the whole)."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpurent.cli import errors
from gpurent.cli.command_words import READ_ONLY_COMMANDS, command_word, is_read_only
from gpurent.cli.resident import client, wire
from gpurent.cli.resident.client import hand_over
from gpurent.cli.resident.freshness import CodeSnapshot, package_data_files
from gpurent.cli.resident.server import _valid_request

# Text as a command line or an environment may hold it: any code point, lone surrogates
# included (os.environ keeps undecodable bytes as surrogates).
TEXT = st.text(st.characters(blacklist_categories=()), max_size=40)


@given(argv=st.lists(TEXT, max_size=8), env=st.dictionaries(TEXT, TEXT, max_size=8),
       cut=st.integers(min_value=1, max_value=50))  # fmt: skip
def test_messages_arrive_whole_and_equal_however_the_stream_cuts_them(
    argv: list[str], env: dict[str, str], cut: int
) -> None:
    messages: list[dict[str, Any]] = [{"argv": argv, "env": env}, {"signal": 2}, {"exit": -15}]
    data = b"".join(wire.encode(m) for m in messages)
    left, right = socket.socketpair()

    def write() -> None:  # in pieces of `cut` bytes, from another thread (buffers are finite)
        with left:
            for start in range(0, len(data), cut):
                left.sendall(data[start : start + cut])

    writer = threading.Thread(target=write)
    writer.start()
    with right:
        reader = wire.LineReader(right)
        got = [reader.next() for _ in messages]
        end = reader.next()
    writer.join()
    assert got == messages
    assert end is None  # a clean end after the last message


def test_a_stream_cut_mid_message_or_not_json_is_a_wire_error() -> None:
    for data in (b'{"exit": 0', b"not json\n", b"[1, 2]\n"):
        left, right = socket.socketpair()
        with left, right:
            left.sendall(data)
            left.close()
            with pytest.raises(wire.WireError):
                wire.LineReader(right).next()


def test_ready_returns_complete_messages_and_keeps_the_rest() -> None:
    left, right = socket.socketpair()
    with left, right:
        reader = wire.LineReader(right)
        left.sendall(b'{"signal": 2}\n{"sig')
        assert reader.ready() == [{"signal": 2}]
        left.sendall(b'nal": 15}\n')
        assert reader.ready() == [{"signal": 15}]
        left.close()
        with pytest.raises(EOFError):
            reader.ready()


def test_the_socket_is_named_by_setting_or_in_a_per_user_folder(tmp_path: Path) -> None:
    assert wire.socket_path({"GPURENT_SOCKET": "/x/y.sock"}) == Path("/x/y.sock")
    run = wire.socket_path({"XDG_RUNTIME_DIR": str(tmp_path)})
    assert run.parent == tmp_path / f"gpurent-{os.getuid()}"
    assert run.name == f"{wire.installation_key()}.sock"
    assert wire.socket_path({}).parent == Path(f"/tmp/gpurent-{os.getuid()}")


def test_only_a_private_folder_of_this_user_is_met_in(tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    private.chmod(0o700)
    assert wire.private_folder_problem(private) is None
    private.chmod(0o750)
    assert "open to other users" in str(wire.private_folder_problem(private))
    plain = tmp_path / "file"
    plain.write_text("")
    assert "not a folder" in str(wire.private_folder_problem(plain))
    assert wire.private_folder_problem(tmp_path / "absent") is not None


@pytest.mark.parametrize(
    ("value", "wanted"), [("", True), ("1", True), ("0", False), ("off", False), ("No", False)]
)
def test_resident_can_be_turned_off(value: str, wanted: bool) -> None:
    assert wire.resident_wanted({wire.RESIDENT_ENV: value}) is wanted


def test_the_command_word_skips_debug_and_only_readers_are_served() -> None:
    assert command_word(["--debug", "cheapest", "--min-vram", "32"]) == "cheapest"
    assert command_word([]) is None
    assert is_read_only(["--debug", "offers"])
    assert not is_read_only(["crawl", "--replay"])
    assert not is_read_only(["--help"])


def test_the_client_says_an_interrupt_as_the_front_door_does() -> None:
    assert client.INTERRUPTED == errors.INTERRUPTED


def test_a_writing_command_never_reaches_for_a_socket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "s"
    folder.mkdir(mode=0o700)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    path = folder / "s.sock"
    listener.bind(str(path))
    listener.listen(1)
    listener.setblocking(False)
    monkeypatch.setenv(wire.SOCKET_ENV, str(path))
    monkeypatch.delenv(wire.RESIDENT_ENV, raising=False)
    with listener:
        assert hand_over(["load", "feeds"]) is None
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody knocked


def _request(**changes: object) -> dict[str, object]:
    request: dict[str, object] = {
        "v": wire.VERSION,
        "argv": ["cheapest", "--min-vram", "32"],
        "cwd": "/",
        "env": {"A": "b"},
        "umask": 0o22,
        "stdout": ["utf-8", "strict"],
        "stderr": ["utf-8", "backslashreplace"],
    }
    request.update(changes)
    return request


def test_the_server_takes_only_a_well_formed_read_only_request() -> None:
    assert _valid_request(_request(), [3, 4, 5])["argv"] == ["cheapest", "--min-vram", "32"]
    for name in sorted(READ_ONLY_COMMANDS):
        _valid_request(_request(argv=[name]), [3, 4, 5])
    refused = {
        "a writer": (_request(argv=["crawl", "--replay"]), 3),
        "no command": (_request(argv=[]), 3),
        "another protocol": (_request(v=wire.VERSION + 1), 3),
        "two descriptors": (_request(), 2),
        "no environment": (_request(env=None), 3),
        "a bad encoding pair": (_request(stdout=["utf-8"]), 3),
        "no umask": (_request(umask="022"), 3),
    }
    for why, (request, count) in refused.items():
        with pytest.raises(ValueError):
            _valid_request(request, list(range(3, 3 + count)))
            pytest.fail(why)
    with pytest.raises(ValueError):
        _valid_request(None, [3, 4, 5])


def test_a_changed_or_removed_file_is_noticed(tmp_path: Path) -> None:
    one, two = tmp_path / "one.py", tmp_path / "two.py"
    one.write_text("A = 1\n")
    two.write_text("B = 1\n")
    snapshot = CodeSnapshot.of([str(one), str(two)])
    assert snapshot.changed() is None
    two.write_text("B = 22\n")
    assert snapshot.changed() == str(two)
    two.write_text("B = 1\n")
    os.utime(two, ns=(0, snapshot.signatures[str(two)][0]))  # type: ignore[index]
    assert snapshot.changed() is None  # back as it was
    one.unlink()
    assert snapshot.changed() == str(one)


def test_the_packaged_data_files_are_watched() -> None:
    import gpurent_core  # noqa: F401
    import sizing  # noqa: F401

    names = {Path(p).name for p in package_data_files(["gpurent_core", "sizing"])}
    assert {"billing_facts.toml", "gpus.csv", "models.json"} <= names
