"""What every page needs to know: which warehouse, which language, which currency."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dashboards.i18n import Lang


@dataclass(frozen=True)
class Ctx:
    """Per-render context, built by ``app`` from its arguments and the sidebar."""

    db: Path
    lang: Lang
    currency: str


def db_from_argv(argv: Sequence[str], default: Path) -> Path:
    """The ``--db PATH`` given after ``streamlit run app.py --`` (else ``default``)."""
    parser = argparse.ArgumentParser(prog="gpurent-dashboard", add_help=False)
    parser.add_argument("--db", type=Path, default=None)
    known, _ = parser.parse_known_args(list(argv))
    return (known.db or default).expanduser()
