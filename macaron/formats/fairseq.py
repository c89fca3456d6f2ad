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
import math
import re
from pathlib import Path

import torch

from ..config import ModelConfig
from ..network.positions import sinusoids
from ..translation.model import TranslationConfig
from .base import read_pickle
from .folder import CheckpointError, require_finite
from .moses_bpe import (
    DICTIONARY_SPECIALS,
    PAD,
    SPECIALS,
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
    ckpt = read_pickle(file, SAFE, "checkpoint", "a fairseq 0.6 checkpoint")
    if not isinstance(ckpt, dict) or not isinstance(ckpt.get("args"), argparse.Namespace) \
            or not isinstance(ckpt.get("model"), dict):
        raise CheckpointError(f"{file}: not a fairseq checkpoint (it has no 'args' Namespace and 'model' weights)")
    return ckpt


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
    return sinusoids(n, d, start=PAD + 1, halves=True, fairseq=True), "its sinusoids, from position pad + 1"


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
    f["source_lang"], f["target_lang"] = translation_languages(args, arch, file)
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


def translation_languages(args, arch: str, file: Path) -> tuple[str, str]:
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
