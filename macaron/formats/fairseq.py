"""The paper's own models (Lu et al. 2019): its fairseq 0.6 checkpoints of BERT-base, Macaron and the baseline, and of
its translation models (IWSLT14 De→En small, WMT14 En→De base and big, and their Transformer baselines), imported once
into a model folder of ours.

    python -m macaron import-fairseq checkpoint_pretrained.pt --dict dict.txt [--bpe-codes bpe-code] --out FOLDER
    python -m macaron import-fairseq checkpoint.pt --source-dict dict.de.txt --target-dict dict.en.txt --out FOLDER

A checkpoint is a pickle, read here as data only: torch's weights-only unpickler, allowing the types a fairseq 0.6
checkpoint holds besides tensors and containers (SAFE: its args, an argparse.Namespace, and the training meters
of extra_state, read as plain records) and nothing else. A file that names anything more is refused, and nothing
in it runs. The folder written holds safetensors and JSON (macaron.formats.folder).

What the release computes (bert/fairseq/models/transformer.py: TransformerBertModel, TransformerEncoder and its
layers, the architectures in MAPPED) and where it goes in our one network:

    x₀ = √d·E[token] + P[pad + 1 + i] + S[1]     embedding_scale = √d; P and S[1] folded into one position table
      P: fairseq's sinusoids, [sin | cos] halves, ω_i = 10000^(−i/(d/2 − 1)), positions starting past the padding
      index (make_positions); S[1]: the segment embedding's row 1 (its padding row), every token's segment in
      the single-sentence task (GlueSingleDataset)
    pre-LN; LayerNorms without gain or bias (no_normalize_affine), eps 1e-5; the state after the last layer
      normalised once more (the encoder's layer_norm)
    Macaron:  x += ½·G₁(LN₂ x) (ReLU), x += F(LN₀ x), x += ½·G₂(LN₁ x) (act_fn)   → scheme macaron (strang)
    baseline: x += F(LN₀ x), x += G(LN₁ x) (act_fn)                            → scheme transformer (lie-trotter)
    masked-word head: logits = LN(act_fn(W h + b)) · Eᵀ, E the token embedding, no bias (mid_layer, embed_out;
      that LN has gain and bias)

The next-sentence classifier, the optimizer's state and the meters are left out; the card says so.

What the translation release computes (translation/fairseq/models/transformer.py: TransformerModel, TransformerEncoder,
TransformerDecoder and their layers, every architecture registered for 'transformer', TRANSLATION) goes into an
encoder–decoder of ours (macaron.translation.model), two of our networks:

    x₀ = √d·E[token] + P[pad + 1 + i]           as above, in each system (the decoder reads [</s>] + the target)
    LayerNorms with gain and bias, eps 1e-5; _v2 and t2t: pre-LN, a final LayerNorm in each system; the others
      post-LN (LN after each residual sub-step, none on the embedding: embedding_norm = False, no final norm)
    encoder, Macaron:  ½·G₁ (macaron_fc, layer_norms.2), F (self_attn, layer_norms.0), ½·G₂ (fc, layer_norms.1)
    decoder, Macaron:  ½·G₁ (macaron_fc, macaron_layer_norm), F (self_attn, causal, self_attn_layer_norm),
                       C (encoder_attn: queries from the target, keys and values from the source's final states,
                       encoder_attn_layer_norm), ½·G₂ (fc, final_layer_norm)      → scheme macaron, cross_attention
    the baselines: the same without the ½·G₁ and the halves               → scheme transformer, cross_attention
    every FFN ReLU; next-word head: logits = h · Oᵀ, O the decoder's token embedding (share_all_embeddings,
      share_decoder_input_output_embed) or its own embed_out
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import pickle
import re
import shutil
from pathlib import Path

import torch
import torch.nn.functional as F

from ..config import ModelConfig
from ..network.model import Model
from ..translation.model import EncoderDecoder, TranslationConfig
from .folder import CheckpointError, require_finite
from .moses_bpe import (
    CLS,
    DICTIONARY_SPECIALS,
    EOS,
    PAD,
    SPECIALS,
    MosesBPE,
    ReadingError,
    TranslationReading,
    iwslt14,
    read_codes,
    read_dictionary,
    wmt14,
)

SOURCE = "converted.json"  # an imported folder's record of what it came from and what was converted


def _record(path: str) -> tuple[type, str]:
    """A stand-in for a class a checkpoint names that we never import: the unpickler makes an empty object of it and
    fills its __dict__ with the numbers stored (it has no methods, so nothing of the original's runs)."""
    return type(path.rpartition(".")[2], (), {"__doc__": f"the data of a pickled {path}"}), path


# Besides tensors, dicts, lists, tuples and numbers (which weights_only reads anyway): save_state's args, and the
# trainer's meters that train.py puts into extra_state (fairseq/meters.py)
SAFE = [argparse.Namespace] + [_record(f"fairseq.meters.{m}") for m in ("AverageMeter", "TimeMeter", "StopwatchMeter")]

_BASE = dict(encoder_embed_dim=768, encoder_ffn_embed_dim=3072, encoder_layers=12, encoder_attention_heads=12,
             encoder_normalize_before=True, encoder_learned_pos=False, no_token_positional_embeddings=False,
             share_all_embeddings=True, act_fn="gelu", no_normalize_affine=True, macaron=False)
MAPPED = {  # the registered BERT architectures we map, with the fields each sets (for args that lack one)
    "transformer_bert_base": _BASE,
    "transformer_bert_base_macaron": dict(_BASE, macaron=True, encoder_ffn_embed_dim=1536),
    "transformer_bert_L6_A12": dict(_BASE, encoder_layers=6),
    "transformer_bert_L6_A12_macaron": dict(_BASE, encoder_layers=6, macaron=True, encoder_ffn_embed_dim=1536),
}
# The translation release's architectures (translation/fairseq/models/transformer.py, register_model_architecture(
# 'transformer', ...)), each with the fields its function sets, for args that lack one; None: as the encoder's
_MT = dict(encoder_embed_dim=512, encoder_ffn_embed_dim=2048, encoder_layers=6, encoder_attention_heads=8,
           encoder_normalize_before=False, encoder_learned_pos=False, decoder_embed_dim=None,
           decoder_ffn_embed_dim=None, decoder_layers=6, decoder_attention_heads=8, decoder_normalize_before=False,
           decoder_learned_pos=False,
           decoder_input_dim=None, decoder_output_dim=None, adaptive_softmax_cutoff=None, share_all_embeddings=False,
           share_decoder_input_output_embed=False, no_token_positional_embeddings=False, macaron=False,
           max_source_positions=1024, max_target_positions=1024)
_IWSLT = dict(_MT, encoder_ffn_embed_dim=1024, encoder_attention_heads=4, decoder_embed_dim=512,
              decoder_ffn_embed_dim=1024, decoder_attention_heads=4)
_BIG = dict(_MT, encoder_embed_dim=1024, encoder_ffn_embed_dim=4096, encoder_attention_heads=16, decoder_embed_dim=1024,
            decoder_ffn_embed_dim=4096, decoder_attention_heads=16)
_V2 = dict(encoder_normalize_before=True, decoder_normalize_before=True)  # _v2 and t2t: pre-LN


def _macaron(fields: dict, ffn: int) -> dict:  # macaron = True ("new" in WMT's: as true), FFN width per half
    return dict(fields, macaron=True, encoder_ffn_embed_dim=ffn, decoder_ffn_embed_dim=ffn)


TRANSLATION = {
    "transformer": _MT, "transformer_iwslt_de_en": _IWSLT,
    "transformer_iwslt_de_en_macaron": _macaron(_IWSLT, 512),
    "transformer_iwslt_de_en_v2": dict(_IWSLT, **_V2),
    "transformer_iwslt_de_en_macaron_v2": _macaron(dict(_IWSLT, **_V2), 512),
    "transformer_wmt_en_de": _MT, "transformer_wmt_en_de_macaron": _macaron(_MT, 1024),
    "transformer_wmt_en_de_v2": dict(_MT, **_V2),
    "transformer_wmt_en_de_macaron_v2": _macaron(dict(_MT, **_V2), 1024),
    "transformer_vaswani_wmt_en_de_big": _BIG, "transformer_vaswani_wmt_en_fr_big": _BIG,
    "transformer_wmt_en_de_big": _BIG, "transformer_wmt_en_de_big_t2t": dict(_BIG, **_V2),
    "transformer_wmt_en_de_big_t2t_macaron": _macaron(dict(_BIG, **_V2), 2048),
}
OTHERS = {  # what the releases' other registered architectures are, for the message that refuses them
    "transformer_bert": "the registered base of the BERT architectures (post-LN, and without the act_fn and "
                        "no_normalize_affine its layers need: fairseq 0.6 cannot build it)",
    "transformer_classifier": "a GLUE classifier (a fine-tuned encoder with a class head, no masked-word head)",
    "transformer_lm": "a language model (a decoder)",
    "lstm": "a translation model (LSTM)", "fconv": "a translation model (convolutions)",
}
LEFT_OUT = {"classifier.weight": "the next-sentence classifier", "classifier.bias": "the next-sentence classifier"}
for _side in ("encoder", "decoder"):
    LEFT_OUT.update({f"{_side}.embed_positions._float_tensor": "a dtype marker of the sinusoids",
                     f"{_side}.embed_positions.weights": "a table of the sinusoids (recomputed)",
                     f"{_side}.version": "fairseq's format version (2: a final LayerNorm)"})


def _what(arch: str) -> str:
    kind = next((OTHERS[k] for k in sorted(OTHERS, key=len, reverse=True) if arch.startswith(k)), None)
    return f" ({kind})" if kind else ""


# ---- reading the checkpoint, as data -----------------------------------------------------------------------------
def read_checkpoint(file) -> dict:
    """The checkpoint's dict (args, model, optimizer_history, extra_state, ...), read with the weights-only
    unpickler and SAFE; a file that needs another type is refused by its name, unrun."""
    file = Path(file)
    if not file.is_file():
        raise CheckpointError(f"{file}: checkpoint file is missing")
    try:
        with torch.serialization.safe_globals(SAFE):
            ckpt = torch.load(file, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        found = re.search(r"GLOBAL (\S+) (?:was not an allowed|whose module)|unrecognized function (\S+)|"
                          r"allowlisted via `add_safe_globals` but got (\S+)", str(e))
        if found:
            name = next(g for g in found.groups() if g).rstrip(".")
            raise CheckpointError(f"{file}: refused: it needs {name}, which is not among the types a fairseq 0.6 "
                                  f"checkpoint holds; nothing in it was run") from None
        raise CheckpointError(f"{file}: damaged or truncated checkpoint ({_first_line(e)})") from None
    except (EOFError, RuntimeError, OSError, ValueError, TypeError, KeyError, AttributeError, IndexError) as e:
        raise CheckpointError(f"{file}: damaged or truncated checkpoint ({type(e).__name__}: {_first_line(e)})"
                              ) from None
    if not isinstance(ckpt, dict) or not isinstance(ckpt.get("args"), argparse.Namespace) \
            or not isinstance(ckpt.get("model"), dict):
        raise CheckpointError(f"{file}: not a fairseq checkpoint (it has no 'args' Namespace and 'model' weights)")
    return ckpt


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    if "WeightsUnpickler error:" in text:
        text = text.split("WeightsUnpickler error:", 1)[1].strip()
    return (text.splitlines() or [type(e).__name__])[0][:160]


def refuse_unmapped(args: argparse.Namespace, file: Path) -> str:
    """The checkpoint's architecture if we map it (BERT's or translation's); else one message naming it, with every
    one we map."""
    arch = getattr(args, "arch", None)
    if arch not in MAPPED and arch not in TRANSLATION:
        raise CheckpointError(f"{file}: architecture {arch!r}{_what(str(arch))} is not one we map; these are: "
                              f"{', '.join(MAPPED)} (BERT); {', '.join(TRANSLATION)} (translation)")
    return arch


def architecture(args: argparse.Namespace, file: Path) -> dict:
    """The fields of a mapped BERT architecture, as the checkpoint's args hold them (the architecture's own default
    for one they lack); an unmapped one is refused by name, with those we map."""
    arch = refuse_unmapped(args, file)
    fields = {k: getattr(args, k, default) for k, default in MAPPED[arch].items()}
    fields["arch"] = arch
    fields["max_positions"] = getattr(args, "max_positions", getattr(args, "max_source_positions", 384))
    if not fields["encoder_normalize_before"]:
        raise CheckpointError(f"{file}: {arch} with encoder_normalize_before=False (post-LN) is not mapped: the "
                              f"BERT release's architectures are pre-LN")
    if fields["act_fn"] not in ("relu", "gelu"):
        raise CheckpointError(f"{file}: act_fn={fields['act_fn']!r}: fairseq 0.6 knows relu and gelu")
    return fields


class Entries:
    """A checkpoint's model entries as the mapping takes them: each a tensor, one taken is float32 and checked finite
    (not every entry is: the sinusoids' _float_tensor is an uninitialised dtype marker, whatever its value), and the
    rest must be known to be left out (`left`)."""

    def __init__(self, state: dict, file: Path, arch: str):
        for key, t in state.items():
            if not torch.is_tensor(t):
                raise CheckpointError(f"{file}: model entry {key!r} is a {type(t).__name__}, not a tensor")
        self.state, self.file, self.arch, self.used = state, file, arch, set()

    def __contains__(self, key: str) -> bool:
        return key in self.state

    def take(self, key: str) -> torch.Tensor:
        if key not in self.state:
            raise CheckpointError(f"{self.file}: weight {key!r} is missing; is this a {self.arch} checkpoint?")
        self.used.add(key)
        t = self.state[key]
        require_finite(self.file, key, t)
        return t.float() if t.is_floating_point() else t

    def left(self, why: dict[str, str]) -> dict[str, str]:
        """{entry: why it is left out} of every entry not taken; an entry no reason covers is refused by name."""
        left = {k: why.get(k, LEFT_OUT.get(k, "")) for k in self.state if k not in self.used}
        unknown = sorted(k for k, reason in left.items() if not reason)
        if unknown:
            raise CheckpointError(f"{self.file}: weights we do not map: {', '.join(unknown[:5])}"
                                  + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""))
        return left

    def version(self, side: str) -> float:
        return float(self.state.get(f"{side}.version", torch.tensor([2.0]))[0])

    @property
    def dtype(self) -> str:
        """The weights' precision as stored (the token embedding's: float16 when trained with --fp16)."""
        return str(self.state["encoder.embed_tokens.weight"].dtype).removeprefix("torch.")


def check_dictionary(symbols: list[str], specials: tuple[str, ...], rows: int, dict_file: Path) -> None:
    if len(symbols) != rows:
        raise CheckpointError(f"{dict_file}: {len(symbols):,} entries ({len(specials)} specials and "
                              f"{len(symbols) - len(specials):,} lines), but the checkpoint's embedding has {rows:,} "
                              f"rows: not this checkpoint's dictionary")


# ---- the mapping ------------------------------------------------------------------------------------------------
def fairseq_sinusoids(first: int, n: int, d: int) -> torch.Tensor:
    """Rows first … first + n − 1 of fairseq's sinusoidal table (as tensor2tensor's): for position p and
    i < d/2, sin(p·ω_i) in column i and cos(p·ω_i) in column d/2 + i, ω_i = 10000^(−i/(d/2 − 1)); an odd d has
    a last column of zeros. Computed with the same float32 operations as fairseq's, so bit for bit its values."""
    half = d // 2
    freq = torch.exp(torch.arange(half, dtype=torch.float) * -(math.log(10000) / (half - 1)))
    angles = torch.arange(first + n, dtype=torch.float)[first:, None] * freq[None]
    table = torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)
    return F.pad(table, (0, 1)) if d % 2 else table


def position_table(entries: Entries, side: str, learned: bool, none: bool, n: int, d: int) -> tuple[torch.Tensor, str]:
    """(our position table [n, d], what it came from) of one system (`side`: encoder, decoder): fairseq's positions
    start past the padding index (make_positions), so row i is its pad + 1 + i."""
    if none:
        return torch.zeros(n, d), "no positions"
    if learned:
        table = entries.take(f"{side}.embed_positions.weight")[PAD + 1:PAD + 1 + n].clone()
        if len(table) < n:
            raise CheckpointError(f"{entries.file}: {len(table)} learned positions for {n} in its args")
        return table, "its learned positions, from row pad + 1"
    return fairseq_sinusoids(PAD + 1, n, d), "its sinusoids, from position pad + 1"


def _layout(macaron: bool, decoder: bool = False) -> list[tuple[str, str]]:
    """(fairseq module, its LayerNorm) of each of our sub-steps, in order: an encoder layer's (TransformerEncoderLayer,
    also BERT's), or a decoder layer's (TransformerDecoderLayer: its cross-attention encoder_attn after self_attn)."""
    if decoder:
        return ([("macaron_fc", "macaron_layer_norm")] if macaron else []) + [("self_attn", "self_attn_layer_norm"), (
            "encoder_attn", "encoder_attn_layer_norm"), ("fc", "final_layer_norm")]
    return ([("macaron_fc", "layer_norms.2")] if macaron else []) + [("self_attn", "layer_norms.0"),
                                                                      ("fc", "layer_norms.1")]


def map_layer(entries: Entries, theirs: str, mine: str, layout: list[tuple[str, str]], affine: bool) -> dict:
    """Our weights of one layer (`mine`, e.g. "layers.0.") from fairseq's (`theirs`, e.g. "encoder.layers.0.")."""
    ours = {}
    for k, (module, norm) in enumerate(layout):
        for p in ("weight", "bias"):
            if module == "self_attn":  # q, k, v stacked as fairseq's in_proj
                ours[f"{mine}ops.{k}.qkv.{p}"] = entries.take(f"{theirs}self_attn.in_proj_{p}")
            elif module == "encoder_attn":  # the queries read the target, keys and values the source
                stacked = entries.take(f"{theirs}encoder_attn.in_proj_{p}")
                d = len(stacked) // 3
                ours[f"{mine}ops.{k}.q.{p}"], ours[f"{mine}ops.{k}.kv.{p}"] = stacked[:d], stacked[d:]
            else:
                ours[f"{mine}ops.{k}.fc1.{p}"] = entries.take(f"{theirs}{module}1.{p}")
                ours[f"{mine}ops.{k}.fc2.{p}"] = entries.take(f"{theirs}{module}2.{p}")
            if module.endswith("attn"):
                ours[f"{mine}ops.{k}.out.{p}"] = entries.take(f"{theirs}{module}.out_proj.{p}")
            if affine:
                ours[f"{mine}norms.{k}.{p}"] = entries.take(f"{theirs}{norm}.{p}")
    return ours


def convert(ckpt: dict, symbols: list[str], file: Path, dict_file: Path, name: str
            ) -> tuple[ModelConfig, dict[str, torch.Tensor], dict]:
    """(our config, our weights, facts for the card) of a BERT checkpoint read by read_checkpoint, whose dictionary's
    entries are `symbols`."""
    fields = architecture(ckpt["args"], file)
    entries = Entries(ckpt["model"], file, fields["arch"])
    if entries.version("encoder") < 2:
        raise CheckpointError(f"{file}: written by a fairseq before version 2 of its encoder (no final LayerNorm): "
                              f"not mapped")
    words = entries.take("encoder.embed_tokens.weight")
    V, d = words.shape
    if d != fields["encoder_embed_dim"]:
        raise CheckpointError(f"{file}: the token embedding is {d} wide, its args say encoder_embed_dim="
                              f"{fields['encoder_embed_dim']}")
    check_dictionary(symbols, SPECIALS, V, dict_file)
    macaron, affine, act = bool(fields["macaron"]), not fields["no_normalize_affine"], fields["act_fn"]
    n_layers, max_len = int(fields["encoder_layers"]), int(fields["max_positions"])

    table, positions = position_table(entries, "encoder", fields["encoder_learned_pos"],
                                      fields["no_token_positional_embeddings"], max_len, d)
    if "encoder.embed_segment.weight" in entries:
        table = table + entries.take("encoder.embed_segment.weight")[1]
        positions += " + segment 1's row"
    ours = {"token_embedding.weight": words, "position_embedding.weight": table}
    for i in range(n_layers):
        ours.update(map_layer(entries, f"encoder.layers.{i}.", f"layers.{i}.", _layout(macaron), affine))
    if affine:
        ours.update({f"final_norm.{p}": entries.take(f"encoder.layer_norm.{p}") for p in ("weight", "bias")})

    state = entries.state
    head = "mid_layer.0.weight" in state and "embed_out" in state and torch.equal(state["embed_out"].float(), words)
    if head:
        entries.used.add("embed_out")
        for k in (0, 2):  # Linear, act_fn, LayerNorm: the same indices in mid_layer and our mlm_transform
            ours.update({f"mlm_transform.{k}.{p}": entries.take(f"mid_layer.{k}.{p}") for p in ("weight", "bias")})
        ours["mlm_bias"] = torch.zeros(V)  # fairseq's head has none
    no_head = "the masked-word head, whose output embedding is not the token embedding"
    left = entries.left({} if head else {k: no_head for k in state if k.startswith("mid_layer.") or k == "embed_out"})

    ffn = int(fields["encoder_ffn_embed_dim"])
    config = ModelConfig(
        scheme="macaron" if macaron else "transformer", norm="pre", d_model=d, n_layers=n_layers,
        n_heads=int(fields["encoder_attention_heads"]), ffn_total=ffn * (2 if macaron else 1), activation=act,
        convection_activations=("relu", act) if macaron else None, dropout=0.0, vocab_size=V, max_len=max_len,
        attention="dot", position="learned", layer_norm_eps=1e-5, pad_id=PAD, mlm_head=head, norm_affine=affine,
        head_activation=act, embedding_scale=math.sqrt(d), hf_family="fairseq", name=name)
    facts = dict(arch=fields["arch"], fields={k: v for k, v in fields.items() if k != "arch"}, positions=positions,
                 head=head, left_out=sorted(set(left.values())), num_updates=_updates(ckpt), dtype=entries.dtype)
    return config, ours, facts


def _updates(ckpt: dict) -> int | None:
    history = ckpt.get("optimizer_history") or [{}]
    return history[-1].get("num_updates") if isinstance(history[-1], dict) else None


# ---- the translation mapping ------------------------------------------------------------------------------------
# fairseq's upgrade_state_dict renames a decoder layer's norms of older checkpoints on load; so do we
OLD_DECODER_NORMS = {"layer_norms.0": "self_attn_layer_norm", "layer_norms.1": "encoder_attn_layer_norm",
                     "layer_norms.2": "final_layer_norm"}


def translation_fields(args: argparse.Namespace, file: Path) -> dict:
    """The fields of a mapped translation architecture as its args hold them (the architecture's default for one they
    lack; a decoder's size as the encoder's where neither says, as base_architecture does); what we cannot map is
    refused by name."""
    arch = refuse_unmapped(args, file)
    f = {k: getattr(args, k, default) for k, default in TRANSLATION[arch].items()}
    for k in ("embed_dim", "ffn_embed_dim"):
        f[f"decoder_{k}"] = f[f"decoder_{k}"] or f[f"encoder_{k}"]
    for k in ("input_dim", "output_dim"):
        f[f"decoder_{k}"] = f[f"decoder_{k}"] or f["decoder_embed_dim"]
    f.update(arch=arch, macaron=bool(f["macaron"]), tied=bool(f["share_all_embeddings"]
                                                               or f["share_decoder_input_output_embed"]))
    f["source_lang"], f["target_lang"] = _languages(args, arch, file)
    why = None
    if f["adaptive_softmax_cutoff"] is not None:
        why = "an adaptive softmax head (adaptive_softmax_cutoff)"
    elif f["decoder_input_dim"] != f["decoder_embed_dim"] or f["decoder_output_dim"] != f["decoder_embed_dim"]:
        why = "projections into and out of the decoder (decoder_input_dim, decoder_output_dim ≠ decoder_embed_dim)"
    elif f["encoder_embed_dim"] != f["decoder_embed_dim"]:
        why = "encoder and decoder of different widths (fairseq's cross-attention cannot read that source)"
    elif f["macaron"] and f["encoder_ffn_embed_dim"] != f["decoder_ffn_embed_dim"]:
        why = ("a Macaron decoder whose halves differ in width (fairseq sizes its first half-FFN by "
               "encoder_ffn_embed_dim, its second by decoder_ffn_embed_dim; ours are one width)")
    if why:
        raise CheckpointError(f"{file}: {arch} with {why} is not mapped")
    return f


def _languages(args, arch: str, file: Path) -> tuple[str, str]:
    """The task's source_lang and target_lang (translation.py infers them from the data's file names before it
    trains, so args hold them), else the architecture's name's pair (iwslt_de_en: de → en)."""
    found = re.search(r"_([a-z]{2})_([a-z]{2})(?:_|$)", arch)
    source = getattr(args, "source_lang", None) or (found and found.group(1))
    target = getattr(args, "target_lang", None) or (found and found.group(2))
    if not (source and target):
        raise CheckpointError(f"{file}: its args name no source_lang and target_lang, and {arch} no language pair")
    return source, target


def convert_translation(ckpt: dict, dictionaries: tuple[list[str], list[str]], file: Path,
                        dict_files: tuple[Path, Path], name: str
                        ) -> tuple[TranslationConfig, dict[str, torch.Tensor], dict]:
    """(our config, our weights, facts for the card) of a translation checkpoint, whose source and target
    dictionaries' entries are `dictionaries`."""
    f = translation_fields(ckpt["args"], file)
    state = {_new_norm_name(k): t for k, t in ckpt["model"].items()}
    entries = Entries(state, file, f["arch"])
    configs, ours, positions = {}, {}, {}
    for side, symbols, dict_file in zip(("encoder", "decoder"), dictionaries, dict_files):
        pre = bool(f[f"{side}_normalize_before"])
        if pre and entries.version(side) < 2:
            raise CheckpointError(f"{file}: written by a fairseq before version 2 of its {side} (no final LayerNorm): "
                                  f"not mapped")
        words = entries.take(f"{side}.embed_tokens.weight")
        check_dictionary(symbols, DICTIONARY_SPECIALS, len(words), dict_file)
        configs[side] = _system_config(f, side, len(words), name)
        table, positions[side] = position_table(entries, side, f[f"{side}_learned_pos"],
                                                f["no_token_positional_embeddings"], configs[side].max_len,
                                                words.shape[1])
        mine = {"token_embedding.weight": words, "position_embedding.weight": table}
        for i in range(configs[side].n_layers):
            mine.update(map_layer(entries, f"{side}.layers.{i}.", f"layers.{i}.",
                                  _layout(f["macaron"], side == "decoder"), affine=True))
        if pre:
            mine.update({f"final_norm.{p}": entries.take(f"{side}.layer_norm.{p}") for p in ("weight", "bias")})
        ours.update({f"{side}.{k}": t for k, t in mine.items()})
    shared = _shared(f, entries, ours, dictionaries, file)
    if not f["tied"]:
        ours["decoder.lm_head.weight"] = entries.take("decoder.embed_out")
    left = entries.left({})
    config = TranslationConfig(configs["encoder"], configs["decoder"], shared_embeddings=shared,
                               source_lang=f["source_lang"], target_lang=f["target_lang"], name=name)
    facts = dict(arch=f["arch"], fields={k: v for k, v in f.items() if k != "arch"}, positions=positions,
                 shared=shared, left_out=sorted(set(left.values())), num_updates=_updates(ckpt), dtype=entries.dtype)
    return config, ours, facts


def _new_norm_name(key: str) -> str:
    """A decoder layer's norm under the name fairseq's upgrade_state_dict gives it (layer_norms.0 → …)."""
    found = re.fullmatch(r"(decoder\.layers\.\d+\.)(layer_norms\.\d)(\..*)", key)
    return found.group(1) + OLD_DECODER_NORMS[found.group(2)] + found.group(3) if found else key


def _system_config(f: dict, side: str, vocab_size: int, name: str) -> ModelConfig:
    """Our config of one system (`side`: encoder or decoder) of a translation architecture's fields."""
    d, ffn, macaron = int(f[f"{side}_embed_dim"]), int(f[f"{side}_ffn_embed_dim"]), f["macaron"]
    decoder = side == "decoder"
    return ModelConfig(
        scheme="macaron" if macaron else "transformer", norm="pre" if f[f"{side}_normalize_before"] else "post",
        embedding_norm=False, d_model=d, n_layers=int(f[f"{side}_layers"]), n_heads=int(f[f"{side}_attention_heads"]),
        ffn_total=ffn * (2 if macaron else 1), activation="relu", dropout=0.0, vocab_size=vocab_size,
        max_len=int(f["max_target_positions" if decoder else "max_source_positions"]), attention="dot",
        position="learned", layer_norm_eps=1e-5, pad_id=PAD, mlm_head=False, embedding_scale=math.sqrt(d),
        causal=decoder, cross_attention=decoder, lm_head=decoder, lm_head_tied=f["tied"], hf_family="fairseq",
        name=f"{name} ({side})")


def _shared(f: dict, entries: Entries, ours: dict, dictionaries, file: Path) -> bool:
    """Whether the source, the target and the head share one token embedding (share_all_embeddings: a joined
    dictionary); then the decoder's table is stored once, as the encoder's."""
    if not f["share_all_embeddings"]:
        return False
    if dictionaries[0] != dictionaries[1]:
        raise CheckpointError(f"{file}: share_all_embeddings needs one joined dictionary; the source's and the "
                              f"target's given differ")
    if not torch.equal(ours["encoder.token_embedding.weight"], ours["decoder.token_embedding.weight"]):
        raise CheckpointError(f"{file}: share_all_embeddings, but the encoder's and decoder's token embeddings differ")
    del ours["decoder.token_embedding.weight"]
    return True


# ---- the folder ---------------------------------------------------------------------------------------------------
def import_fairseq(checkpoint, dictionary=None, bpe_codes=None, out=None, name: str | None = None, *,
                   source_dict=None, target_dict=None) -> Path:
    """Read a fairseq 0.6 checkpoint of a mapped architecture (MAPPED, TRANSLATION), its dictionary (`dictionary`;
    a translation model's may be two, `source_dict` and `target_dict`) and (if given) its BPE codes, check them and
    write a model folder of ours at `out`: safetensors, config.json, tokenizer.json (the paper's reading,
    macaron.formats.moses_bpe), README.md (the card) and converted.json. Every check runs before anything is written."""
    checkpoint, out = Path(checkpoint), Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir()) and not (out / SOURCE).is_file()):
        raise CheckpointError(f"{out}: exists and is not a folder this import wrote; give a new folder")
    ckpt = read_checkpoint(checkpoint)
    arch = refuse_unmapped(ckpt["args"], checkpoint)
    files = _dictionary_files(arch, dictionary, source_dict, target_dict)
    try:
        specials = DICTIONARY_SPECIALS if arch in TRANSLATION else SPECIALS
        symbols = [read_dictionary(f, specials) for f in files]
        merges, rules = read_codes(bpe_codes) if bpe_codes else (None, "0.2")
    except ReadingError as e:
        raise CheckpointError(str(e)) from None
    source = dict(dictionary=files[0].name, bpe_codes=Path(bpe_codes).name if bpe_codes else None)
    try:
        if arch in TRANSLATION:
            config, state, facts = convert_translation(ckpt, (symbols[0], symbols[-1]), checkpoint,
                                                       (files[0], files[-1]), name or out.name)
            recipe = (iwslt14 if "iwslt" in arch or "iwslt" in str(getattr(ckpt["args"], "data", "")) else wmt14)(
                config.source_lang)
            reading = TranslationReading(MosesBPE(symbols[0], merges, rules, source, recipe), config.target_lang,
                                         symbols[-1])
            model, kind = EncoderDecoder(config, reading), "translation"
        else:
            config, state, facts = convert(ckpt, symbols[0], checkpoint, files[0], name or out.name)
            model, kind = Model(config, MosesBPE(symbols[0], merges, rules, source)), "bert"
        _fill(model, state, checkpoint, facts["arch"])
    except CheckpointError:
        raise
    except (ValueError, TypeError, IndexError, RuntimeError) as e:  # a size its args do not allow, a wrong shape
        raise CheckpointError(f"{checkpoint}: weights or args that do not fit together ({_first_line(e)})") from None
    record = dict(source=f"fairseq 0.6 (Lu et al. 2019, {kind}/)",
                  checkpoint=str(checkpoint.resolve()), sha256=_sha256(checkpoint), bytes=checkpoint.stat().st_size,
                  dictionary=str(files[0].resolve()), target_dictionary=str(files[-1].resolve()),
                  bpe_codes=str(Path(bpe_codes).resolve()) if bpe_codes else None, bpe_merges=len(merges or ()),
                  bpe_rules=rules if merges else None, reading="approximate" if merges is None else "the paper's",
                  **facts)
    if kind == "bert":
        del record["target_dictionary"]
    else:
        record["recipe"] = reading.source.recipe.name
    _write(model, out, (translation_card if kind == "translation" else card)(model, record), record)
    return out


def _dictionary_files(arch: str, dictionary, source_dict, target_dict) -> list[Path]:
    """[the dictionary] or, a translation model's given apart, [source's, target's]."""
    if arch in TRANSLATION and (source_dict or target_dict):
        if dictionary or not (source_dict and target_dict):
            raise CheckpointError("give --dict (a joined dictionary), or both --source-dict and --target-dict")
        return [Path(source_dict), Path(target_dict)]
    if source_dict or target_dict:
        raise CheckpointError(f"{arch} is a BERT model with one dictionary: give it as --dict")
    if not dictionary:
        raise CheckpointError("give the checkpoint's dictionary: --dict dict.txt"
                              + (" (or --source-dict and --target-dict)" if arch in TRANSLATION else ""))
    return [Path(dictionary)]


def _fill(model, state: dict, checkpoint: Path, arch: str) -> None:
    """Load our weights into the model, once each fits it: one message for the first misfits."""
    expected = model.state_dict()
    wrong = [f"{k}: {tuple(state[k].shape)} for {tuple(expected[k].shape)}" for k in expected
             if k in state and state[k].shape != expected[k].shape]
    missing = sorted(set(expected) - set(state))
    if wrong or missing:
        raise CheckpointError(f"{checkpoint}: weights do not fit {arch}'s args: "
                              + "; ".join(wrong[:3] + [f"missing {m}" for m in missing[:3]]))
    model.load_state_dict(state)


def _write(model, out: Path, text: str, record: dict) -> None:
    """The folder, written whole beside `out` and then moved into place."""
    staging = out.parent / f".{out.name}.importing"
    shutil.rmtree(staging, ignore_errors=True)
    model.save(staging, card=text)
    (staging / SOURCE).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    if out.exists():
        shutil.rmtree(out)
    staging.rename(out)


def _sha256(file: Path) -> str:
    h = hashlib.sha256()
    with open(file, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def _card(title: str, what: str, rows: list[tuple[str, str]], converted: list[str], left_out: list[str]) -> str:
    """A model card: where the weights came from (a table), what became of each part and what was left out."""
    table = "\n".join(f"| {k} | {v} |" for k, v in rows)
    return (f"# {title}\n\nThe paper's own {what} (Lu et al. 2019, *Understanding and Improving Transformer From a "
            f"Multi-Particle Dynamic System Point of View*), imported from its fairseq 0.6 checkpoint by "
            f"`python -m macaron import-fairseq`.\n\n| | |\n|---|---|\n{table}\n\n## Converted\n"
            + "".join(f"- {x}\n" for x in converted if x)
            + "\n## Left out\n" + "".join(f"- {x}\n" for x in left_out + ["the optimizer's state and the training "
                                                                          "meters"])
            + f"\n`{SOURCE}` records the source files and the architecture's fields.\n")


def _source_rows(r: dict) -> list[tuple[str, str]]:
    return [("source", f"`{Path(r['checkpoint']).name}` ({r['bytes']:,} bytes, sha256 `{r['sha256'][:16]}…`)")]


def _tail_rows(model, r: dict) -> list[tuple[str, str]]:
    return [("updates", f"{r['num_updates']:,}" if isinstance(r["num_updates"], int) else "not recorded"),
            ("parameters", f"{model.num_parameters():,}"),
            ("weights", f"float32 safetensors (the checkpoint's: {r['dtype']})")]


def card(model: Model, r: dict) -> str:
    """The model card of a BERT import: where the weights came from and what became of each part."""
    c, f = model.config, r["fields"]
    act = c.activation.upper()
    layer = (f"Macaron: ½ FFN (ReLU), attention, ½ FFN ({act}); scheme `macaron` (Strang–Marchuk)" if f["macaron"]
             else f"Transformer: attention, FFN ({act}); scheme `transformer` (Lie–Trotter)")
    codes = Path(r["bpe_codes"]).name if r["bpe_codes"] else ""
    reading = (f"Moses normalisation and tokenisation (no escaping), lower case, BPE with `{codes}` "
               f"({r['bpe_merges']:,} merges), as bert/macaron-scripts read text" if r["bpe_merges"] else
               "**approximate**: no BPE codes were given, so each word is split into the longest pieces of the "
               "dictionary (Moses and lower case as the paper's)")
    rows = _source_rows(r) + [
        ("architecture", f"`{r['arch']}`: {c.n_layers} layers × {c.d_model}, {c.n_heads} heads, FFN "
                         f"{f['encoder_ffn_embed_dim']}{' per half' if f['macaron'] else ''}"),
        ("layer", f"{layer}; pre-LN, norms {'with' if c.norm_affine else 'without'} gain and bias"),
        ("dictionary", f"`{Path(r['dictionary']).name}`: {c.vocab_size:,} entries (BertDictionary's "
                       f"{len(SPECIALS)} specials, then its lines): token ids unchanged"),
        ("reading", reading + f"; a sentence is <cls> … </s> (ids {CLS} and {EOS}), segment 1")] + _tail_rows(model, r)
    head = f"the masked-word head: Linear → {act} → LayerNorm → the token embedding (tied), no bias" if r["head"] \
        else None
    converted = [f"the token embedding, times √d = {c.embedding_scale:.4g} (`embedding_scale`)",
                 f"one position table: {r['positions']}",
                 "every layer's attention (q, k, v stacked as fairseq's in_proj), FFNs and norms",
                 "the final LayerNorm", head]
    return _card(c.name, "model", rows, converted, r["left_out"])


def translation_card(model: EncoderDecoder, r: dict) -> str:
    """The model card of a translation import: the two systems, how text is read and written, what was converted."""
    c, f = model.config, r["fields"]
    e, d = c.encoder, c.decoder
    pre = e.norm == "pre"
    layer = ("Macaron: ½ FFN, attention, ½ FFN (every FFN ReLU); scheme `macaron` (Strang–Marchuk); the decoder's: "
             "½ FFN, self-attention (causal), cross-attention, ½ FFN" if f["macaron"] else
             "Transformer: attention, FFN (ReLU); scheme `transformer` (Lie–Trotter); the decoder's: self-attention "
             "(causal), cross-attention, FFN")
    norms = ("pre-LN (a final LayerNorm in each system)" if pre else
             "post-LN (a LayerNorm after each residual sub-step, none on the embedding, no final one)")
    codes = Path(r["bpe_codes"]).name if r["bpe_codes"] else ""
    steps = {"iwslt14": "Moses tokenisation (escaped), lower case, as prepare-iwslt14.sh",
             "wmt14": "Moses punctuation normalisation, non-printing characters removed, Moses tokenisation "
                      "(escaped, hyphens split as @-@), cased, as prepare-wmt14en2de.sh"}[r["recipe"]]
    bpe = (f"subword-nmt BPE with `{codes}` ({r['bpe_merges']:,} merges)" if r["bpe_merges"] else
           "**approximate** BPE: no codes were given, so each word is split into the longest pieces of the dictionary")
    joined = c.shared_embeddings or Path(r["dictionary"]) == Path(r["target_dictionary"])
    dictionary = (f"`{Path(r['dictionary']).name}`, joined: {e.vocab_size:,} entries" if joined else
                  f"`{Path(r['dictionary']).name}` ({e.vocab_size:,} entries) and `{Path(r['target_dictionary']).name}`"
                  f" ({d.vocab_size:,})")
    rows = _source_rows(r) + [
        ("architecture", f"`{r['arch']}`, {c.source_lang} → {c.target_lang}: encoder {e.n_layers} layers × "
                         f"{e.d_model}, {e.n_heads} heads; decoder {d.n_layers} × {d.d_model}, {d.n_heads} heads; FFN "
                         f"{f['encoder_ffn_embed_dim']}{' per half' if f['macaron'] else ''}"),
        ("layer", f"{layer}; {norms}"),
        ("dictionary", f"{dictionary} (Dictionary's {len(DICTIONARY_SPECIALS)} specials, then its lines): ids "
                       f"unchanged; a source is its pieces and </s> (id {EOS}), a target starts from </s>"),
        ("reading", f"{steps}; {bpe}; the translation read back with its BPE removed and detokenised by Moses "
                    f"({c.target_lang})"),
        ("search", "fairseq's: beam 5, length penalty 1 (test-iwslt14.sh; its WMT14 scripts: beam 4, 0.6), at most "
                   "200 words")] + _tail_rows(model, r)
    embeddings = ("one token embedding for the source, the target and the next-word head (share_all_embeddings)"
                  if c.shared_embeddings else "each system's token embedding; the next-word head "
                  + ("tied to the decoder's" if d.lm_head_tied else "its own (embed_out)"))
    converted = [f"{embeddings}, times √d = {e.embedding_scale:.4g} (`embedding_scale`)",
                 f"each system's position table: {r['positions']['encoder']}"
                 + ("" if r["positions"]["decoder"] == r["positions"]["encoder"] else
                    f" (the decoder's: {r['positions']['decoder']})"),
                 "every layer's self-attention (q, k, v stacked as fairseq's in_proj), the decoder's cross-attention "
                 "(encoder_attn's in_proj split: q from the target, k and v from the source), FFNs and LayerNorms",
                 "each system's final LayerNorm" if pre else "no embedding LayerNorm (`embedding_norm: false`)"]
    return _card(c.name, "translation model", rows, converted, r["left_out"])
