"""An opt-in resident process that answers read-only commands without their start-up
(`gpurent serve`; the client side is the console script's first step)."""
