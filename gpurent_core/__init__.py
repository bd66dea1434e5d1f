"""gpurent_core: the ground floor every layer of gpurent stands on.

The offer record, the GPU catalog, the normalisers, the cost engine, FX, the settings and
the notification sender. It imports nothing of the project: spiders, warehouse, sizing,
flows, replay, the library API (``gpurent``) and the dashboards all import it, never the
other way round (``tests/test_architecture.py``).
"""
