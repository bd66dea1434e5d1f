"""sizing: from a model and a workload to the GPU memory it needs and the cards that fit.

    arch        ModelArch: architecture facts, parameter counts, KV per token
    models      the model catalog (data/models.json) and a stand-in from a parameter count
    hfconfig    a Hugging Face config.json read into a ModelArch
    quant       precisions: bits per weight, what stays 16-bit; KV-cache dtypes
    engines     engine and mode constants (vLLM, SGLang, Transformers, llama.cpp)
    workload    Workload, Breakdown, MemoryEstimate
    memory      estimate_memory: weights + KV + activations + overhead + headroom
    training    LoRA / QLoRA / full fine-tuning terms
    placement   tensor-parallel degree, usable memory per card, tiers, max concurrency
    speed       decode tokens/s from bandwidth, cost per million tokens
    recommend   in-stock offers that fit, every way each can be rented, timed and costed
    checks      can the card run the precision, does a rental meet the targets (or cannot tell)
    verdict     which offer to rent and why, and the runner-up
    report      the whole answer as one document
    calibration scoring against measured peaks (benchmarks/sizing_calibration.py)

Formulas, sources and the calibration: sizing/README.md.
"""

from __future__ import annotations

from sizing.arch import ModelArch, ParamCounts
from sizing.engines import Engine, Mode
from sizing.memory import estimate_memory
from sizing.models import UnknownModel, catalog, find_model, generic_arch, get_model
from sizing.placement import Placement, choose, plan
from sizing.quant import Precision, get_precision
from sizing.workload import Breakdown, MemoryEstimate, Workload

__all__ = [
    "Breakdown",
    "Engine",
    "MemoryEstimate",
    "Mode",
    "ModelArch",
    "ParamCounts",
    "Placement",
    "Precision",
    "UnknownModel",
    "Workload",
    "catalog",
    "choose",
    "estimate_memory",
    "find_model",
    "generic_arch",
    "get_model",
    "get_precision",
    "plan",
]
