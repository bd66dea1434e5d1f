"""Reference data files shipped with gpurent."""
