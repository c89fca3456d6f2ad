"""Macaron Explorer: Transformers as multi-particle dynamics.

Tokens are particles, layers are time steps, and a layer is a splitting scheme:
Lie–Trotter for the Transformer, Strang–Marchuk for Macaron (Lu et al., 2019).
What the app shows is in macaron.analysis (numbers) and macaron.plot (figures).
"""
from .checkpoint import CheckpointError, available, default_pair
from .config import ModelConfig
from .loading import from_hf_bert, load
from .milestones import Milestone, milestones
from .model import Model, build
from .reading import InputError
from .runtime import set_threads
from .schemes import ATT_FFN_ATT, LIE_TROTTER, SCHEMES, STRANG, Scheme, Sub, get_scheme
from .trajectory import Step, Trajectory

__all__ = ["ATT_FFN_ATT", "CheckpointError", "InputError", "LIE_TROTTER", "Milestone", "Model", "ModelConfig",
           "SCHEMES", "STRANG", "Scheme", "Step", "Sub", "Trajectory", "available", "build", "default_pair",
           "from_hf_bert", "get_scheme", "load", "milestones", "set_threads"]
