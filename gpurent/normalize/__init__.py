"""gpurent/normalize."""
