"""gpurent/catalog."""
