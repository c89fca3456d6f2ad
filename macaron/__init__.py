"""Macaron Explorer: Transformers as multi-particle dynamics.

Tokens are particles, layers are time steps, and a layer is a splitting scheme:
Lie–Trotter for the Transformer, Strang–Marchuk for Macaron (Lu et al., 2019).
"""
from .checkpoint import CheckpointError, available, load
from .config import ModelConfig
from .hf import from_hf_bert
from .model import Encoder, InputError, build
from .schemes import ATT_FFN_ATT, LIE_TROTTER, SCHEMES, STRANG, Sub
from .trajectory import Step, Trajectory

__all__ = ["ATT_FFN_ATT", "CheckpointError", "Encoder", "InputError", "LIE_TROTTER", "ModelConfig", "SCHEMES",
           "STRANG", "Step", "Sub", "Trajectory", "available", "build", "from_hf_bert", "load"]
