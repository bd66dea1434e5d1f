"""gpurent: GPU-rental price and availability tracker.

This package is the top of the house: the library API (``gpurent.api``) that programs and
the dashboards call, and the command line (``gpurent.cli``) over it. What every layer shares
lives below, in ``gpurent_core``.
"""

__version__ = "0.1.0"
