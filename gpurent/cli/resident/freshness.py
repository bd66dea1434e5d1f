"""Whether the code a resident server imported is still the code on disk.

A server imports gpurent and its libraries once and forks every command from that; after a
`git pull` or a `pip install` it would answer with the old code. So it remembers each
imported module's file (modification time and size) and, before each command, checks them
again: one changed or gone file and the server declines (the client runs the command
itself, with the new code) and leaves.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass


def module_files() -> list[str]:
    """The files of every imported module that has one (built-in modules have none)."""
    files = set()
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and path:
            files.add(path)
    return sorted(files)


# Files our packages read at run time (catalogs, billing facts), beside their modules.
DATA_SUFFIXES = (".csv", ".json", ".toml")


def package_data_files(packages: Iterable[str]) -> list[str]:
    """The data files under each imported package's folder."""
    files: list[str] = []
    for name in packages:
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if not isinstance(path, str):
            continue
        for folder, _dirs, names in os.walk(os.path.dirname(path)):
            files.extend(os.path.join(folder, n) for n in names if n.endswith(DATA_SUFFIXES))
    return sorted(files)


def _signature(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


@dataclass(frozen=True)
class CodeSnapshot:
    signatures: dict[str, tuple[int, int] | None]

    @classmethod
    def of(cls, paths: Iterable[str]) -> CodeSnapshot:
        return cls({path: _signature(path) for path in paths})

    def changed(self) -> str | None:
        """The first file that differs from the snapshot (None: all as they were)."""
        for path, then in self.signatures.items():
            if _signature(path) != then:
                return path
        return None
