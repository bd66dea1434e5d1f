"""``python -m benchmarks [--quick]``: see benchmarks.runner."""

from __future__ import annotations

from benchmarks.runner import main

if __name__ == "__main__":
    main()
