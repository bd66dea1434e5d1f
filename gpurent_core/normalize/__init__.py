"""gpurent_core/normalize."""
