"""gpurent's benchmarks: ``python -m benchmarks`` runs every figure beside its baseline.

The older single-figure scripts (``crawl_load.py``, ``history_size.py``,
``restock_latency.py``, ``sizing_calibration.py``) still run on their own.
"""
