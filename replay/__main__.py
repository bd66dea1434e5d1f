"""`python -m replay --scene NAME --step N [--port P] [--root DIR] [--fault SPEC ...]`."""

from __future__ import annotations

from replay.cli import main

raise SystemExit(main())
