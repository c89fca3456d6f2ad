"""Bring a decoder: local Hugging Face folders of GPT-2, GPT-NeoX (Pythia) and Llama (with Mistral and Qwen2, which
the same code reads) as our layers, each block the splitting scheme it is.

- GPT-2 and Llama run **Lie–Trotter** pre-LN steps, x ← x + Attn(N(x)) then x ← x + MLP(N(x)): our `transformer`
  scheme with pre-LN, causal attention and a next-word head.
- GPT-NeoX runs the **parallel block** x ← x + Attn(N₁x) + MLP(N₂x): the *unsplit* Euler step (`unsplit`, one
  sub-step of the whole field), with its two norms (ModelConfig.parallel_norms); with use_parallel_residual off it
  is Lie–Trotter again.

What differs between them is data: weight names, GPT-2's transposed Conv1D matrices, GPT-NeoX's query, key and
value interleaved head by head, rotary positions on part of each head (NeoX) or all of it (Llama), RMSNorm and the
gated FFN (Llama), grouped-query attention. A bias a family leaves out where another has it (Qwen2's attention
output) is a zero: the same map, one network.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

from ..config import ModelConfig
from .base import Format, activation, stack_qkv
from .folder import CheckpointError, folder_name, read_tokenizer, read_weights


def _rope(hf: dict) -> tuple[float, float]:
    """(theta, share of each head turned) from rope_parameters (transformers ≥ 5) or the older top-level keys."""
    rope = hf.get("rope_parameters") or hf.get("rope_scaling") or {}
    kind = rope.get("rope_type", rope.get("type", "default"))
    if kind != "default":
        raise ValueError(f"rope_type {kind!r} (rotary positions rescaled) is not mapped: only the default rotary "
                         f"positions are")
    theta = rope.get("rope_theta", hf.get("rope_theta", hf.get("rotary_emb_base", 10000.0)))
    share = rope.get("partial_rotary_factor", hf.get("partial_rotary_factor", hf.get("rotary_pct", 1.0)))
    return float(theta), float(share)


def _common(folder: Path, **fields) -> dict:
    """The fields every decoder shares: causal, pre-LN, no dropout, our name for the folder."""
    return dict(norm="pre", causal=True, dropout=0.0, mlm_head=False, attention="dot",
                name=folder_name(folder), **fields)


# ---- GPT-2 ------------------------------------------------------------------------------------------------
def gpt2_config(hf: dict, folder: Path, names: set) -> dict:
    if hf.get("scale_attn_by_inverse_layer_idx") or hf.get("reorder_and_upcast_attn"):
        raise ValueError("GPT-2 with scale_attn_by_inverse_layer_idx or reorder_and_upcast_attn is not mapped")
    d = hf["n_embd"]
    return _common(folder, scheme="transformer", d_model=d, n_layers=hf["n_layer"], n_heads=hf["n_head"],
                   ffn_total=hf.get("n_inner") or 4 * d, activation=activation(hf.get("activation_function",
                                                                                       "gelu_new")),
                   vocab_size=hf["vocab_size"], max_len=hf["n_positions"], position="learned",
                   layer_norm_eps=hf.get("layer_norm_epsilon", 1e-5), lm_head=_lm(hf), lm_head_tied=True)


def gpt2_state(w: dict, cfg: ModelConfig) -> dict:
    out = {"token_embedding.weight": w["wte.weight"], "position_embedding.weight": w["wpe.weight"],
           "final_norm.weight": w["ln_f.weight"], "final_norm.bias": w["ln_f.bias"]}
    for i in range(cfg.n_layers):
        s, o = f"h.{i}.", f"layers.{i}."
        for theirs, ours in (("ln_1", "norms.0"), ("ln_2", "norms.1")):
            out |= {f"{o}{ours}.{p}": w[f"{s}{theirs}.{p}"] for p in ("weight", "bias")}
        for theirs, ours in (("attn.c_attn", "ops.0.qkv"), ("attn.c_proj", "ops.0.out"), ("mlp.c_fc", "ops.1.fc1"),
                             ("mlp.c_proj", "ops.1.fc2")):  # Conv1D keeps its matrix as [in, out]
            out[f"{o}{ours}.weight"], out[f"{o}{ours}.bias"] = w[f"{s}{theirs}.weight"].T, w[f"{s}{theirs}.bias"]
    return out


# ---- GPT-NeoX (Pythia) --------------------------------------------------------------------------------------
def neox_config(hf: dict, folder: Path, names: set) -> dict:
    theta, share = _rope(hf)
    d, H = hf["hidden_size"], hf["num_attention_heads"]
    parallel = hf.get("use_parallel_residual", True)
    return _common(folder, scheme="unsplit" if parallel else "transformer", parallel_norms=parallel,
                   d_model=d, n_layers=hf["num_hidden_layers"], n_heads=H, ffn_total=hf["intermediate_size"],
                   activation=activation(hf.get("hidden_act", "gelu")), vocab_size=hf["vocab_size"],
                   max_len=hf["max_position_embeddings"], position="rotary", rotary_dims=int(d // H * share),
                   rope_theta=theta, layer_norm_eps=hf.get("layer_norm_eps", 1e-5),
                   lm_head=_lm(hf), lm_head_tied=bool(hf.get("tie_word_embeddings", False)))


def _neox_qkv(t: torch.Tensor, heads: int) -> torch.Tensor:
    """GPT-NeoX's fused projection holds, head by head, that head's query, key and value rows: ours holds every
    head's queries, then keys, then values."""
    per = t.view(heads, 3, -1, *t.shape[1:])  # [H, 3, d_head, (d)]
    return torch.cat([per[:, j].reshape(-1, *t.shape[1:]) for j in range(3)])


def neox_state(w: dict, cfg: ModelConfig) -> dict:
    out = {"token_embedding.weight": w["embed_in.weight"], "final_norm.weight": w["final_layer_norm.weight"],
           "final_norm.bias": w["final_layer_norm.bias"]}
    if cfg.lm_head and not cfg.lm_head_tied:
        out["lm_head.weight"] = w["embed_out.weight"]
    attn, ffn, second = (("ops.0.diffusion", "ops.0.convection", "ops.0.ffn_norm") if cfg.parallel_norms else
                         ("ops.0", "ops.1", "norms.1"))
    for i in range(cfg.n_layers):
        s, o = f"layers.{i}.", f"layers.{i}."
        for p in ("weight", "bias"):
            out[f"{o}norms.0.{p}"] = w[f"{s}input_layernorm.{p}"]
            out[f"{o}{second}.{p}"] = w[f"{s}post_attention_layernorm.{p}"]
            out[f"{o}{attn}.qkv.{p}"] = _neox_qkv(w[f"{s}attention.query_key_value.{p}"], cfg.n_heads)
            out[f"{o}{attn}.out.{p}"] = w[f"{s}attention.dense.{p}"]
            out[f"{o}{ffn}.fc1.{p}"] = w[f"{s}mlp.dense_h_to_4h.{p}"]
            out[f"{o}{ffn}.fc2.{p}"] = w[f"{s}mlp.dense_4h_to_h.{p}"]
    return out


# ---- Llama (Mistral, Qwen2) ---------------------------------------------------------------------------------
def llama_config(hf: dict, folder: Path, names: set) -> dict:
    theta, share = _rope(hf)
    d, H = hf["hidden_size"], hf["num_attention_heads"]
    if hf.get("head_dim") not in (None, d // H):
        raise ValueError(f"head_dim={hf['head_dim']} differs from hidden_size / num_attention_heads = {d // H}: "
                         f"not mapped")
    window = hf.get("sliding_window") if hf.get("use_sliding_window", True) else None
    biased = any(".bias" in n for n in names if ".layers." in n or n.startswith("layers."))
    return _common(folder, scheme="transformer", d_model=d, n_layers=hf["num_hidden_layers"], n_heads=H,
                   n_kv_heads=hf.get("num_key_value_heads") or H, ffn_total=hf["intermediate_size"],
                   activation=activation(hf.get("hidden_act", "silu")), gated_ffn=True, norm_kind="rms",
                   bias=biased, vocab_size=hf["vocab_size"],
                   max_len=min(hf["max_position_embeddings"], window or hf["max_position_embeddings"]),
                   position="rotary", rotary_dims=int(d // H * share), rope_theta=theta,
                   layer_norm_eps=hf.get("rms_norm_eps", 1e-6),
                   lm_head=_lm(hf), lm_head_tied=bool(hf.get("tie_word_embeddings", False)))


def llama_state(w: dict, cfg: ModelConfig) -> dict:
    out = {"token_embedding.weight": w["embed_tokens.weight"], "final_norm.weight": w["norm.weight"]}
    if cfg.lm_head and not cfg.lm_head_tied:
        out["lm_head.weight"] = w["lm_head.weight"]
    for i in range(cfg.n_layers):
        s, o = f"layers.{i}.", f"layers.{i}."
        out[f"{o}norms.0.weight"] = w[f"{s}input_layernorm.weight"]
        out[f"{o}norms.1.weight"] = w[f"{s}post_attention_layernorm.weight"]
        for ours, theirs in (("ops.0.qkv", ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj")),
                             ("ops.0.out", ("self_attn.o_proj",)),
                             ("ops.1.fc1", ("mlp.gate_proj", "mlp.up_proj")), ("ops.1.fc2", ("mlp.down_proj",))):
            out[f"{o}{ours}.weight"] = stack_qkv(w, tuple(s + t for t in theirs), "weight")
            if cfg.bias:  # a bias this family leaves out here is zero
                out[f"{o}{ours}.bias"] = torch.cat([w.get(f"{s}{t}.bias", w[f"{s}{t}.weight"].new_zeros(
                    w[f"{s}{t}.weight"].shape[0])) for t in theirs])
    return out


def _lm(hf: dict) -> bool:
    """Whether the folder is of a causal-LM class (a next-word head; save_pretrained leaves a tied one out)."""
    return any(a.endswith(("LMHeadModel", "ForCausalLM")) for a in hf.get("architectures") or [])


@dataclass(frozen=True)
class Decoder:
    """How one Hugging Face decoder model_type maps onto our layers."""
    title: str
    prefixes: tuple[str, ...]                       # the base model's weight prefix in the causal-LM class
    config: Callable[[dict, Path, set], dict]       # our ModelConfig fields from config.json and the weight names
    state: Callable[[dict, ModelConfig], dict]      # our weights from theirs (prefix removed)
    classes: str                                    # the transformers classes whose folders load

    def load(self, hf: dict, folder: Path) -> tuple[ModelConfig, dict[str, torch.Tensor]]:
        """(our config, our state) of a folder of this family."""
        weights = read_weights(folder)
        base = {_strip(k, self.prefixes): v for k, v in weights.items()}
        try:
            config = ModelConfig(**self.config(hf, folder, set(base)), hf_family=self.title)
        except KeyError as e:
            raise CheckpointError(f"{folder / 'config.json'}: missing field {e}") from None
        except (TypeError, ValueError) as e:
            raise CheckpointError(f"{folder / 'config.json'}: {e}") from None
        try:
            return config, self.state(base, config)
        except KeyError as e:
            raise CheckpointError(f"{folder}: weight {e} is missing; is this a checkpoint of the {self.title} "
                                  f"family?") from None


def _strip(name: str, prefixes: tuple[str, ...]) -> str:
    return next((name.removeprefix(p) for p in prefixes if name.startswith(p)), name)


_LLAMA = dict(prefixes=("model.",), config=llama_config, state=llama_state)
DECODERS: dict[str, Decoder] = {
    "gpt2": Decoder("GPT-2", ("transformer.",), gpt2_config, gpt2_state, "GPT2LMHeadModel, GPT2Model"),
    "gpt_neox": Decoder("GPT-NeoX", ("gpt_neox.",), neox_config, neox_state,
                        "GPTNeoXForCausalLM, GPTNeoXModel (Pythia)"),
    "llama": Decoder("Llama", classes="LlamaForCausalLM, LlamaModel", **_LLAMA),
    "mistral": Decoder("Mistral", classes="MistralForCausalLM, MistralModel", **_LLAMA),
    "qwen2": Decoder("Qwen2", classes="Qwen2ForCausalLM, Qwen2Model", **_LLAMA),
}


class Decoders(Format):
    """The Hugging Face decoder families (DECODERS): a family is one entry there, nothing else."""
    name = "hf-decoder"
    types = {t: d.title for t, d in DECODERS.items()}

    def recognises(self, fields: dict) -> bool:
        return fields.get("model_type") in DECODERS

    def load(self, folder: Path, fields: dict):
        return DECODERS[fields["model_type"]].load(fields, folder)

    def reading(self, folder: Path, config: ModelConfig):
        # a decoder's <s> is its beginning of text, not a [CLS]: its specials keep their names
        return read_tokenizer(folder, config.vocab_size, bert_names=False)


DECODERS_FORMAT = Decoders()
