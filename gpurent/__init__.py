"""gpurent: GPU-rental price and availability tracker.

This package holds what every layer shares (the offer record, the GPU catalog,
the normalisers, the cost engine) and, in ``gpurent.cli``, the front door.
Nothing below ``gpurent.cli`` imports flows, warehouse or spiders.
"""

__version__ = "0.1.0"
