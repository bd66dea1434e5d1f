"""`python -m gpurent` is the `gpurent` console script."""

from gpurent.cli.app import main

main()
