"""Macaron Explorer: Transformers as multi-particle dynamics.

Tokens are particles, layers are time steps, and a layer is a splitting scheme:
Lie–Trotter for the Transformer, Strang–Marchuk for Macaron (Lu et al., 2019).
What the app shows is in macaron.studies.analysis (numbers) and macaron.plot (figures).
"""
from . import interventions  # `from macaron import interventions as iv`: what if (Off, Scale, Head, Cut, Hold, Patch)
from .config import ModelConfig
from .formats.folder import CheckpointError, save
from .network.model import Model, build
from .network.reading import InputError
from .network.runtime import set_threads
from .schemes import ATT_FFN_ATT, LIE_TROTTER, SCHEMES, STRANG, Scheme, Sub, get_scheme
from .sources.loading import from_hf_bert, load, load_translator
from .sources.milestones import Milestone, milestones
from .sources.shipped import available, default_pair
from .studies import analysis, dynamics  # `from macaron import analysis, dynamics` as before
from .trajectory import Step, Trajectory

__all__ = ["ATT_FFN_ATT", "CheckpointError", "InputError", "LIE_TROTTER", "Milestone", "Model", "ModelConfig",
           "SCHEMES", "STRANG", "Scheme", "Step", "Sub", "Trajectory", "analysis", "available", "build", "default_pair",
           "dynamics", "from_hf_bert", "get_scheme", "interventions", "load", "load_translator", "milestones",
           "save", "set_threads"]
