"""Score gpurent's GPU-memory estimator against measured peaks.

    .venv/bin/python benchmarks/sizing_calibration.py [path/to/measured_memory.csv]

Default data: sizing/data/measured_memory.csv (published peaks, sources in sizing/README.md).
Prints the median absolute % error overall and by measurement family (like with like: the
torch-allocated families are compared without the CUDA context), and the coverage: the share
of rows where the recommended total (estimate plus headroom) is at least the measured peak.
Exits 1 when a target is missed (median |error| <= 5 %, coverage >= 95 %).
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # run as a plain script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

from sizing.calibration import format_report, score_file  # noqa: E402

DEFAULT_CSV = REPO_ROOT / "sizing" / "data" / "measured_memory.csv"


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else DEFAULT_CSV
    if not path.is_file():
        print(f"no measurements at {path}", file=sys.stderr)
        return 2
    result = score_file(path)
    print(f"sizing calibration against {path}")
    print(format_report(result))
    return 0 if result.meets_targets() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
