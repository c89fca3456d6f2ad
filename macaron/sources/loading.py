"""Loading a model: a folder of any format the registry reads (ours, a Hugging Face encoder, decoder or Marian
translation model), the name of a shipped model, of an imported release or a Hugging Face Hub id (sources.locate), at
any stage of its training (sources.milestones).

    macaron.load(name)             a Model (kind "encoder" or "decoder": one particle system) or, for a translation
                                   folder, an EncoderDecoder (kind "translator": two)
    macaron.load_translator(name)  an EncoderDecoder, or an error that says the folder holds one system

The one load path sits above the pieces it joins: the formats (formats.registry), the stages of training and the
network (network.model, translation.model).
"""
from __future__ import annotations

from pathlib import Path

import torch

from ..formats.folder import CheckpointError, read_facts
from ..formats.registry import read
from ..network.model import Model
from ..translation.model import EncoderDecoder
from .locate import locate
from .milestones import milestones, random_start


def load(path_or_name, device: str | torch.device | None = None, at: int | None = None) -> Model | EncoderDecoder:
    """A model folder or a name (shipped, an imported release, a Hugging Face Hub id: sources.locate; a Hub model not
    in the local Hub cache is downloaded) to its network in eval mode: a Model, or an EncoderDecoder where the folder
    holds a translation model (`kind` says which). `at=tokens`: the model at the stage of its training nearest that
    many tokens (sources.milestones; `model.milestone` says which)."""
    if at is not None:
        return load_at(path_or_name, at, device)
    return load_folder(locate(path_or_name), device)


def load_translator(path_or_name, device: str | torch.device | None = None) -> EncoderDecoder:
    """load's EncoderDecoder: a translation model of any format; a folder of one particle system is refused."""
    folder = locate(path_or_name)
    found = read(folder)
    if not found[0].translates:
        raise CheckpointError(f"{folder}: not a translation model (it moves one particle system); macaron.load "
                              f"opens it")
    return load_folder(folder, device, found)


def load_folder(folder: Path, device=None, found: tuple | None = None) -> Model | EncoderDecoder:
    """The network of a folder, whatever its format (formats.registry): one path for every one. `found`: the
    folder's (format, fields) where registry.read gave them already."""
    fmt, fields = found or read(folder)  # a family or setting not mapped is named before any file is read
    if not list(folder.glob("*.safetensors")) and list(folder.glob("*.bin")) and not \
            any((folder / w).is_file() for w in fmt.weights):
        raise CheckpointError(f"{folder}: only pickled *.bin weights found; we load safetensors only "
                              f"(convert them with safetensors' convert script first)")
    config, state, reading = fmt.open(folder, fields)
    network = (EncoderDecoder if fmt.translates else Model)(config, reading)
    expected = network.state_dict()
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    wrong = [f"{k}: file {tuple(state[k].shape)} vs model {tuple(expected[k].shape)}"
             for k in expected if k in state and state[k].shape != expected[k].shape]
    if missing or unexpected or wrong:
        raise CheckpointError(f"{folder}: weights do not match config.json: "
                              + "; ".join(filter(None, [missing and f"missing {missing[:5]}",
                                                        unexpected and f"unexpected {unexpected[:5]}",
                                                        wrong and f"wrong shapes {wrong[:3]}"])))
    network.load_state_dict(state)
    return network.to(device or ("cuda" if torch.cuda.is_available() else "cpu")).eval()


def load_at(path_or_name, at: int, device=None):
    """The model at the milestone nearest `at` training tokens; `model.milestone` says which one."""
    stages = milestones(path_or_name)
    chosen = (stages[0] if stages[0].tokens is None else  # training not recorded: the folder is its one stage
              min(stages, key=lambda m: (abs(m.tokens - at), m.tokens)))
    if chosen.folder is None:
        folder = locate(path_or_name)
        model = random_start(folder, read_facts(folder), device)
    else:
        model = load(chosen.folder, device)
    model.milestone = chosen
    return model


def from_hf_bert(folder, device=None) -> Model:
    """Load a local Hugging Face encoder folder (config.json, model.safetensors, tokenizer.json) of any family in
    formats.encoders.FAMILIES; macaron.load does the same and loads every other format too."""
    folder = locate(folder)
    found = read(folder)
    if found[0].name != "hf-encoder":
        raise CheckpointError(f"{folder / 'config.json'}: not a Hugging Face encoder's config (use macaron.load)")
    return load_folder(folder, device, found)
