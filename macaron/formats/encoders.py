"""Bring your own model: a local Hugging Face encoder folder as a post-LN Lie–Trotter encoder (decoders: their
families are in formats.decoders; formats.registry reads both).

A BERT layer is exactly our `transformer` scheme with post-LN: x ← LN(x + Attn(x)), then
x ← LN(x + FFN(x)); so are the layers of RoBERTa, DistilBERT, ALBERT and ELECTRA. What differs is
data, one `Family` each (FAMILIES): the weights' names, the config's field names, where the positions
start, whether the embeddings are factorised (E → H after their norm) and whether one layer's weights
serve at every depth (ALBERT). A segment embedding for segment 0 is a constant added to every token,
so it is folded into the position table, as is RoBERTa's offset past the padding index (a slice).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import torch

from ..config import ModelConfig
from .base import ACTIVATIONS, Format, Unmapped, activation, stack_qkv, what_it_is
from .folder import CheckpointError, folder_name, read_tokenizer, read_weights

BERT_FIELDS = dict(d_model="hidden_size", n_layers="num_hidden_layers", n_heads="num_attention_heads",
                   ffn_total="intermediate_size", max_len="max_position_embeddings", vocab_size="vocab_size",
                   activation="hidden_act", layer_norm_eps="layer_norm_eps", pad_id="pad_token_id")
BERT_LAYER = ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
              "attention.output.LayerNorm", "intermediate.dense", "output.dense", "output.LayerNorm")


@dataclass(frozen=True)
class Family:
    """How one Hugging Face model_type maps onto our layers: names and the few facts that differ."""
    title: str                      # the family's own name, as the explorer labels it
    prefix: str                     # the base model's weight prefix ("roberta.")
    layer: str                      # one layer's weight path ({i}: its depth)
    names: tuple[str, ...]          # under `layer`: query, key, value, attention out, its norm, FFN in, FFN out,
    #                                 its norm
    head: tuple[str, str, str, str]  # MLM head: transform dense, its norm, output bias, decoder (tied)
    fields: dict = field(default_factory=lambda: BERT_FIELDS)  # our config field → the HF config's key
    defaults: dict = field(default_factory=dict)  # HF config values when config.json leaves them out
    head_activation: str = ""       # the head's own activation, when fixed whatever hidden_act says
    projection: str = ""            # the E → H map of factorised embeddings (under the prefix)
    factorised: str = "never"       # "never", "always" (ALBERT maps E → H even when E = H) or "when E ≠ H"
    offset: bool = False            # positions start at padding index + 1 (fairseq's RoBERTa)
    shared: bool = False            # one layer's weights at every depth

    def first_position(self, pad_id: int) -> int:
        """The row of the position table the first token reads (RoBERTa: past the padding index)."""
        return pad_id + 1 if self.offset else 0

    def load(self, fields: dict, folder: Path) -> tuple[ModelConfig, dict[str, torch.Tensor]]:
        """(our config, our state) of a folder of this family (as macaron.formats.decoders.Decoder.load)."""
        return mapped(self, fields, folder)


_ROBERTA = dict(prefix="roberta.", layer="encoder.layer.{i}.", names=BERT_LAYER,
                head=("lm_head.dense", "lm_head.layer_norm", "lm_head.bias", "lm_head.decoder.weight"),
                head_activation="gelu", offset=True, defaults=dict(pad_token_id=1))
FAMILIES: dict[str, Family] = {
    "bert": Family("BERT", "bert.", "encoder.layer.{i}.", BERT_LAYER,
                   ("cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm", "cls.predictions.bias",
                    "cls.predictions.decoder.weight")),
    "roberta": Family("RoBERTa", **_ROBERTA),
    "xlm-roberta": Family("XLM-RoBERTa", **_ROBERTA),
    "camembert": Family("CamemBERT", **_ROBERTA),
    "distilbert": Family(
        "DistilBERT", "distilbert.", "transformer.layer.{i}.",
        ("attention.q_lin", "attention.k_lin", "attention.v_lin", "attention.out_lin", "sa_layer_norm", "ffn.lin1",
         "ffn.lin2", "output_layer_norm"),
        ("vocab_transform", "vocab_layer_norm", "vocab_projector.bias", "vocab_projector.weight"),
        fields=dict(BERT_FIELDS, d_model="dim", n_layers="n_layers", n_heads="n_heads", ffn_total="hidden_dim",
                    activation="activation"),
        defaults=dict(layer_norm_eps=1e-12)),  # its config has no such field: its norms' eps is fixed
    "albert": Family(
        "ALBERT", "albert.", "encoder.albert_layer_groups.0.albert_layers.0.",
        ("attention.query", "attention.key", "attention.value", "attention.dense", "attention.LayerNorm", "ffn",
         "ffn_output", "full_layer_layer_norm"),
        ("predictions.dense", "predictions.LayerNorm", "predictions.bias", "predictions.decoder.weight"),
        defaults=dict(embedding_size=128, hidden_act="gelu_new"), projection="encoder.embedding_hidden_mapping_in",
        factorised="always", shared=True),
    "electra": Family(
        "ELECTRA", "electra.", "encoder.layer.{i}.", BERT_LAYER,
        ("generator_predictions.dense", "generator_predictions.LayerNorm", "generator_lm_head.bias",
         "generator_lm_head.weight"),
        defaults=dict(embedding_size=128), head_activation="gelu", projection="embeddings_project",
        factorised="when E ≠ H"),
}
DEFAULTS = dict(hidden_act="gelu", activation="gelu", layer_norm_eps=1e-12, pad_token_id=0)

def family_of(hf: dict, folder: Path) -> Family:
    """The Family of a Hugging Face encoder's config.json, or an Unmapped error naming what it is (the registry adds
    what loads)."""
    kind = hf.get("model_type", "bert")  # old BERT exports have no model_type
    positions = hf.get("position_embedding_type", "absolute")
    if kind not in FAMILIES or hf.get("is_decoder") or hf.get("is_encoder_decoder"):
        problem = what_it_is(hf)
    elif positions != "absolute":
        problem = f"model_type {kind!r} with {positions!r} positions is not one we map (absolute positions only)"
    elif kind == "albert" and (hf.get("num_hidden_groups", 1), hf.get("inner_group_num", 1)) != (1, 1):
        problem = (f"ALBERT with {hf.get('num_hidden_groups')} layer groups of {hf.get('inner_group_num')} layers: "
                   f"only ALBERT's usual one group of one shared layer is mapped")
    else:
        return FAMILIES[kind]
    raise Unmapped(f"{folder / 'config.json'}: {problem}")


def _get(hf: dict, fam: Family, ours: str):
    """The HF config's value for our field `ours`: config.json's, else the family's default, else HF's."""
    key = fam.fields[ours]
    for source in (hf, fam.defaults, DEFAULTS):
        if source.get(key) is not None:
            return source[key]
    raise KeyError(key)


def _pad(hf: dict, fam: Family) -> int:
    key = fam.fields["pad_id"]
    if fam.offset and key in hf and hf[key] is None:  # HF's RoBERTa cannot run without it either
        raise ValueError(f"{key} is null, but {fam.title}'s positions start past the padding index: "
                         f"give the padding token's id")
    return _get(hf, fam, "pad_id")


def hf_config(hf: dict, fam: Family, folder: Path, with_head: bool) -> ModelConfig:
    """Our config for the fields of a Hugging Face encoder's config.json (its family: family_of)."""
    try:
        width, d = hf.get("embedding_size", fam.defaults.get("embedding_size")), _get(hf, fam, "d_model")
        factorised = fam.factorised == "always" or (fam.factorised != "never" and width not in (None, d))
        pad = _pad(hf, fam)
        return ModelConfig(
            scheme="transformer", norm="post", d_model=d, n_layers=_get(hf, fam, "n_layers"),
            n_heads=_get(hf, fam, "n_heads"), ffn_total=_get(hf, fam, "ffn_total"),
            activation=activation(_get(hf, fam, "activation"), fam.fields["activation"]), dropout=0.0,
            vocab_size=_get(hf, fam, "vocab_size"),
            max_len=_get(hf, fam, "max_len") - fam.first_position(pad),  # RoBERTa: the rows past its offset
            attention="dot", position="learned", layer_norm_eps=_get(hf, fam, "layer_norm_eps"),
            pad_id=pad, mlm_head=with_head, shared=fam.shared,
            embedding_size=width if factorised else None,
            head_activation=ACTIVATIONS[fam.head_activation] if fam.head_activation else "", hf_family=fam.title,
            name=folder_name(folder))  # a package's model/ folder: the package's name; a Hub snapshot: its id
    except KeyError as e:
        raise CheckpointError(f"{folder / 'config.json'}: missing field {e}") from None
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"{folder / 'config.json'}: {e}") from None


def has_head(hf: dict[str, torch.Tensor], fam: Family) -> bool:
    """Whether the weights hold the family's MLM head with its decoder tied to the word embeddings
    (our head is tied; an untied decoder is left out rather than replaced)."""
    if not any(k.startswith(fam.head[0] + ".") for k in hf):
        return False
    words = "embeddings.word_embeddings.weight"
    decoder, words = hf.get(fam.head[3]), hf.get(fam.prefix + words, hf.get(words))
    return decoder is None or (words is not None and torch.equal(decoder, words))


def _embeddings(hf: dict, fam: Family, config: ModelConfig) -> dict[str, torch.Tensor]:
    e = "embeddings."
    offset = fam.first_position(config.pad_id)
    segment0 = hf.get(e + "token_type_embeddings.weight", torch.zeros(1, 1))[0]  # DistilBERT has none
    out = {
        "token_embedding.weight": hf[e + "word_embeddings.weight"],
        "position_embedding.weight": hf[e + "position_embeddings.weight"][offset:] + segment0,
        "embed_norm.weight": hf[e + "LayerNorm.weight"],
        "embed_norm.bias": hf[e + "LayerNorm.bias"],
    }
    if config.embedding_size:
        out.update({f"embed_proj.{p}": hf[f"{fam.projection}.{p}"] for p in ("weight", "bias")})
    return out


def _layers(hf: dict, fam: Family, config: ModelConfig) -> dict[str, torch.Tensor]:
    out = {}
    for i in range(1 if fam.shared else config.n_layers):  # a shared layer is stored once (model.py's aliases)
        s, o = fam.layer.format(i=i), f"layers.{i}."
        q, k, v, att, norm0, fc1, fc2, norm1 = (s + n for n in fam.names)
        for p in ("weight", "bias"):
            out[o + f"ops.0.qkv.{p}"] = stack_qkv(hf, (q, k, v), p)
            for ours, theirs in (("ops.0.out", att), ("norms.0", norm0), ("ops.1.fc1", fc1), ("ops.1.fc2", fc2),
                                 ("norms.1", norm1)):
                out[o + f"{ours}.{p}"] = hf[f"{theirs}.{p}"]
    return out


def _head(hf: dict, fam: Family) -> dict[str, torch.Tensor]:
    dense, norm, bias, _ = fam.head
    out = {f"mlm_transform.0.{p}": hf[f"{dense}.{p}"] for p in ("weight", "bias")}
    out.update({f"mlm_transform.2.{p}": hf[f"{norm}.{p}"] for p in ("weight", "bias")})
    out["mlm_bias"] = hf[bias]
    return out


def hf_state(hf: dict[str, torch.Tensor], fam: Family, config: ModelConfig, folder: Path
             ) -> dict[str, torch.Tensor]:
    """The weights under our names (the head's names are outside the base model's prefix)."""
    base = {k.removeprefix(fam.prefix): v for k, v in hf.items()}
    try:
        out = _embeddings(base, fam, config) | _layers(base, fam, config)
        return out | (_head(hf, fam) if config.mlm_head else {})
    except KeyError as e:
        raise CheckpointError(f"{folder}: weight {e} is missing; "
                              f"is this a checkpoint of the {fam.title} family?") from None


def mapped(fam: Family, fields: dict, folder: Path) -> tuple[ModelConfig, dict[str, torch.Tensor]]:
    """(our config, our state) of a Hugging Face folder of family `fam` (family_of its config.json)."""
    hf = read_weights(folder)
    config = hf_config(fields, fam, folder, with_head=has_head(hf, fam))
    return config, hf_state(hf, fam, config, folder)


class Encoders(Format):
    """The Hugging Face encoder families (FAMILIES): a family is one entry there, nothing else."""
    name = "hf-encoder"
    types = {t: f.title for t, f in FAMILIES.items()}

    def recognises(self, fields: dict) -> bool:  # old BERT exports have no model_type
        return fields.get("model_type", "bert" if "hidden_size" in fields else None) in FAMILIES

    def judge(self, fields: dict, folder: Path) -> None:
        family_of(fields, folder)

    def load(self, folder: Path, fields: dict):
        return family_of(fields, folder).load(fields, folder)

    def reading(self, folder: Path, config: ModelConfig):
        return read_tokenizer(folder, config.vocab_size)


ENCODERS = Encoders()
