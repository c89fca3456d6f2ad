"""Loading a model: a folder (ours, or a Hugging Face encoder or decoder of a family in macaron.formats.encoders), the
name of a shipped model, of an imported release or a Hugging Face Hub id (macaron.sources.locate.locate) to a Model in
eval mode, at any stage of its training (macaron.sources.milestones).

The one load path sits above the pieces it joins: the folder format (macaron.formats.folder), the Hugging Face
families (macaron.formats.encoders), the stages of training (macaron.sources.milestones) and the network
(macaron.network.model).
"""
from __future__ import annotations

from pathlib import Path

import torch

from ..formats.encoders import family_of
from ..formats.folder import (
    ENCODER_DECODER,
    HF_BERT,
    HF_MARIAN,
    CheckpointError,
    model_config,
    read_config,
    read_facts,
    read_tokenizer,
    read_weights,
)
from ..formats.marian import load as marian
from ..network.model import Model
from ..translation.model import from_folder as encoder_decoder
from .locate import locate
from .milestones import milestones, random_start


def load(path_or_name, device: str | torch.device | None = None, at: int | None = None):
    """A model folder, or a name (shipped, an imported release, a Hugging Face Hub id: macaron.sources.locate.locate; a
    Hub model not in the local Hub cache is downloaded), to a Model in eval mode: ours, or a Hugging Face encoder or
    decoder of a family macaron.formats.encoders maps (FAMILIES, macaron.formats.decoders.DECODERS); an encoder–decoder
    of ours (the paper's translation models) or a Hugging Face Marian translation model (macaron.formats.marian) to a
    macaron.translation.model.EncoderDecoder. `at=tokens`: the model at the
    stage of its training nearest that many tokens (macaron.sources.milestones; `model.milestone` says which)."""
    if at is not None:
        return load_at(path_or_name, at, device)
    folder = locate(path_or_name)
    return load_folder(folder, *read_config(folder), device)


def load_folder(folder: Path, kind: str, fields: dict, device=None):
    """The Model (or EncoderDecoder) of a folder whose config.json was read (read_config): one path for every format."""
    family = family_of(fields, folder) if kind == HF_BERT else None  # another kind is named before any file is
    if kind != HF_MARIAN and not list(folder.glob("*.safetensors")) and list(folder.glob("*.bin")):
        raise CheckpointError(f"{folder}: only pickled *.bin weights found; we load safetensors only "
                              f"(convert them with safetensors' convert script first)")
    if kind == ENCODER_DECODER:
        model = encoder_decoder(folder, fields)  # a wrong config.json is named before the weights are read
        state = read_weights(folder)
    elif kind == HF_MARIAN:  # its pytorch_model.bin, if it has no safetensors, read as data only
        model, state = marian(folder, fields)
    else:
        if family:
            config, state = family.load(fields, folder)
        else:
            config = model_config(fields, folder)  # a wrong config.json is named before the weights are read
            state = read_weights(folder)
        model = Model(config, read_tokenizer(folder, config.vocab_size, bert_names=not config.causal))
    expected = model.state_dict()
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    wrong = [f"{k}: file {tuple(state[k].shape)} vs model {tuple(expected[k].shape)}"
             for k in expected if k in state and state[k].shape != expected[k].shape]
    if missing or unexpected or wrong:
        raise CheckpointError(f"{folder}: weights do not match config.json: "
                              + "; ".join(filter(None, [missing and f"missing {missing[:5]}",
                                                        unexpected and f"unexpected {unexpected[:5]}",
                                                        wrong and f"wrong shapes {wrong[:3]}"])))
    model.load_state_dict(state)
    return model.to(device or ("cuda" if torch.cuda.is_available() else "cpu")).eval()


def load_at(path_or_name, at: int, device=None):
    """The model at the milestone nearest `at` training tokens; `model.milestone` says which one."""
    stages = milestones(path_or_name)
    chosen = min(stages, key=lambda m: (abs(m.tokens - at), m.tokens))
    if chosen.folder is None:
        folder = locate(path_or_name)
        model = random_start(folder, read_facts(folder), device)
    else:
        model = load(chosen.folder, device)
    model.milestone = chosen
    return model


def from_hf_bert(folder, device=None):
    """Load a local Hugging Face encoder folder (config.json, model.safetensors, tokenizer.json) of any
    family in macaron.formats.encoders.FAMILIES; macaron.load does the same and loads our folders too."""
    folder = locate(folder)
    kind, fields = read_config(folder)
    if kind != HF_BERT:
        raise CheckpointError(f"{folder / 'config.json'}: not a Hugging Face config (use macaron.load)")
    return load_folder(folder, kind, fields, device)
