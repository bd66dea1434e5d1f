"""`python -m gpurent` is the `gpurent` console script."""

from gpurent.cli.entry import main

main()
