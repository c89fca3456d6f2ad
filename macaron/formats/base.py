"""What every format shares: the protocol a format implements (`Format`; formats.registry lists them) and the few
pieces of mapping more than one of them needs: the one map of activation names, the one q/k/v stacking, the one
reader of a foreign pickle (as data only).

A format is one small module: it recognises a folder by its config.json, judges that config before any weight is
read or downloaded, gives our config and our state (its weights under our names) for the one network (or the
encoder–decoder built from two of them), gives its reading of text, and names the files a download needs.
"""
from __future__ import annotations

import pickle
import re
from pathlib import Path

import torch

from .folder import INDEX, SINGLE, CheckpointError, require_finite

CONFIG = "config.json"
TOKENIZER = "tokenizer.json"
TOKENIZER_EXTRAS = ("tokenizer_config.json", "special_tokens_map.json", "vocab.txt", "vocab.json", "merges.txt")
# Hugging Face's activation names (hidden_act, activation_function) → ours (network.operators.ACTIVATION)
ACTIVATIONS = {"gelu": "gelu", "relu": "relu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh",
               "silu": "silu", "swish": "silu"}


class Unmapped(CheckpointError):
    """A config of a kind, or with a setting, that no format maps: formats.registry adds what does load."""


KINDS = {"modernbert": "an encoder of another design (rotary positions, gated FFN, local attention): not mapped",
         "deberta": "an encoder with disentangled relative attention: not mapped",
         "deberta-v2": "an encoder with disentangled relative attention: not mapped"}


def what_it_is(hf: dict) -> str:
    """The folder's kind, in words, for a model_type we do not map."""
    arch = ", ".join(hf.get("architectures") or []) or "no architectures listed"
    name = f"model_type {hf.get('model_type')!r} ({arch})"
    if hf.get("model_type") in KINDS:
        return f"{name} is {KINDS[hf['model_type']]}"
    if hf.get("is_encoder_decoder") or any(a.endswith(("ForConditionalGeneration", "Seq2SeqLM"))
                                           for a in hf.get("architectures") or []):
        return f"{name} is an encoder–decoder (T5, BART, …): not an encoder we map"
    if hf.get("is_decoder") or any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in hf.get("architectures") or []):
        return f"{name} is a decoder of a family we do not map"
    return f"{name} is not a model family we map"


class Format:
    """One format a model folder can be in. A subclass says how to recognise its config.json (`recognises`), what in
    it cannot be mapped (`judge`: before any weight is read or downloaded), our config and state (`load`), its
    reading of text (`reading`) and the files a download fetches (`weights`, `needs`)."""

    name = ""                    # the folder's kind, as messages and `list` say it
    title = ""                   # the families it reads, in words (registry.loads)
    types: dict[str, str] = {}  # the Hugging Face model_types it reads, each with its family's title
    translates = False           # two particle systems (an EncoderDecoder) rather than one network (a Model)
    weights = (SINGLE, INDEX)    # the weight files a folder may hold, the first listed taken (safetensors)
    judged_with = (CONFIG,)      # what `judge` reads: downloaded first, before any weight

    def recognises(self, fields: dict) -> bool:
        """Whether config.json's fields are this format's."""
        raise NotImplementedError

    def judge(self, fields: dict, folder: Path) -> None:
        """A CheckpointError naming what in the config cannot be mapped; nothing where all can."""

    def load(self, folder: Path, fields: dict) -> tuple[object, dict[str, torch.Tensor]]:
        """(our config: a ModelConfig, or a TranslationConfig where `translates`; our state, names as the network's)."""
        raise NotImplementedError

    def open(self, folder: Path, fields: dict):
        """(config, state, reading): `load`, then the reading of text; a format whose `load` reads the reading on its
        way (to judge it before the weights) gives that one rather than reading it twice."""
        config, state = self.load(folder, fields)
        return config, state, self.reading(folder, config)

    def reading(self, folder: Path, config):
        """How the model reads text (a tokenizer, or a translation's reading of two languages), None without one."""
        raise NotImplementedError

    files = (TOKENIZER, *TOKENIZER_EXTRAS)  # besides config.json and the weights: what a download may fetch
    settings: tuple[str, ...] = ()         # fetched where a repository has them, never looked for in the cache

    def needs(self, listed: set[str]) -> tuple[str, ...]:
        """The files besides config.json and the weights that a download fetches, of those a Hub repository lists; a
        CheckpointError where one the format cannot read text without is missing."""
        if TOKENIZER not in listed:
            raise CheckpointError("no tokenizer.json on the Hub, so the explorer could not read text with it. Make a "
                                  "folder by hand: download it, and with transformers AutoTokenizer.from_pretrained("
                                  "folder).save_pretrained(folder); then open the folder")
        return tuple(f for f in (*self.files, *self.settings) if f in listed)


def activation(name: str, key: str = "activation") -> str:
    """Our activation for a Hugging Face name; a ValueError naming the config's key for one we do not map."""
    if name not in ACTIVATIONS:
        raise ValueError(f"{key}={name!r} is not mapped; these are: {', '.join(ACTIVATIONS)}")
    return ACTIVATIONS[name]


def stack_qkv(w: dict, names: tuple[str, ...], suffix: str) -> torch.Tensor:
    """Projections stacked row-wise in the order named, as our fused ones hold them: an attention's query, key and
    value (or a cross-attention's key and value; Llama's gate and up), `names` their weights' prefixes, `suffix`
    'weight' or 'bias'."""
    return torch.cat([w[f"{n}.{suffix}"] for n in names])


def read_pickle(file: Path, allowed: list = (), what: str = "weights", holder: str = "a state dict of tensors"):
    """A foreign pickle (`what`: a checkpoint, weights) read as data only: torch's weights-only unpickler (tensors,
    containers, numbers, and the `allowed` types that `holder` holds), so nothing in it runs. A file that names
    anything more is refused by that name; a damaged one is said to be."""
    file = Path(file)
    if not file.is_file():
        raise CheckpointError(f"{file}: {what} file is missing")
    try:
        with torch.serialization.safe_globals(list(allowed)):
            data = torch.load(file, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        found = re.search(r"GLOBAL (\S+) (?:was not an allowed|whose module)|unrecognized function (\S+)|"
                          r"allowlisted via `add_safe_globals` but got (\S+)", str(e))
        if found:
            name = next(g for g in found.groups() if g).rstrip(".")
            raise CheckpointError(f"{file}: refused: it needs {name}, which is not among the types {holder} "
                                  f"holds; nothing in it was run") from None
        raise CheckpointError(f"{file}: damaged or truncated {what} ({first_line(e)})") from None
    except (EOFError, RuntimeError, OSError, ValueError, TypeError, KeyError, AttributeError, IndexError) as e:
        raise CheckpointError(f"{file}: damaged or truncated {what} ({type(e).__name__}: {first_line(e)})"
                              ) from None
    return data


def finite_state(file: Path, state) -> dict[str, torch.Tensor]:
    """A pickle's state dict, checked: a dict of tensors, each float one finite."""
    if not isinstance(state, dict) or not all(torch.is_tensor(t) for t in state.values()):
        raise CheckpointError(f"{file}: not a state dict of tensors")
    for key, t in state.items():
        require_finite(file, key, t)
    return state


def first_line(e: Exception) -> str:
    """An exception's first line, torch's unpickler's preamble left out, for a message."""
    text = str(e).strip()
    if "WeightsUnpickler error:" in text:
        text = text.split("WeightsUnpickler error:", 1)[1].strip()
    return (text.splitlines() or [type(e).__name__])[0][:160]
