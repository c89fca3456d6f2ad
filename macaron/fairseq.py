"""The paper's own models (Lu et al. 2019): its fairseq 0.6 checkpoints of BERT-base, Macaron and the baseline,
imported once into a model folder of ours.

    python -m macaron import-fairseq checkpoint_pretrained.pt --dict dict.txt [--bpe-codes bpe-code] --out FOLDER

A checkpoint is a pickle, read here as data only: torch's weights-only unpickler, allowing the types a fairseq 0.6
checkpoint holds besides tensors and containers (SAFE: its args, an argparse.Namespace, and the training meters
of extra_state, read as plain records) and nothing else. A file that names anything more is refused, and nothing
in it runs. The folder written holds safetensors and JSON (macaron.checkpoint).

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

from .checkpoint import CheckpointError
from .config import ModelConfig
from .model import Model
from .moses_bpe import CLS, EOS, PAD, SPECIALS, MosesBPE, ReadingError, read_codes, read_dictionary

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
OTHERS = {  # what the release's other registered architectures are, for the message that refuses them
    "transformer_bert": "the registered base of the BERT architectures (post-LN, and without the act_fn and "
                        "no_normalize_affine its layers need: fairseq 0.6 cannot build it)",
    "transformer_classifier": "a GLUE classifier (a fine-tuned encoder with a class head, no masked-word head)",
    "transformer_lm": "a language model (a decoder)",
    "transformer": "a translation model (an encoder–decoder)",
    "lstm": "a translation model (LSTM)", "fconv": "a translation model (convolutions)",
}
LEFT_OUT = {"classifier.weight": "the next-sentence classifier", "classifier.bias": "the next-sentence classifier",
            "encoder.embed_positions._float_tensor": "a dtype marker of the sinusoids",
            "encoder.version": "fairseq's format version (2: a final LayerNorm)"}


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


def architecture(args: argparse.Namespace, file: Path) -> dict:
    """The fields of a mapped architecture, as the checkpoint's args hold them (the architecture's own default
    for one they lack); an unmapped one is refused by name, with those we map."""
    arch = getattr(args, "arch", None)
    if arch not in MAPPED:
        raise CheckpointError(f"{file}: architecture {arch!r}{_what(str(arch))} is not one we map; these are: "
                              f"{', '.join(MAPPED)}")
    fields = {k: getattr(args, k, default) for k, default in MAPPED[arch].items()}
    fields["arch"] = arch
    fields["max_positions"] = getattr(args, "max_positions", getattr(args, "max_source_positions", 384))
    if not fields["encoder_normalize_before"]:
        raise CheckpointError(f"{file}: {arch} with encoder_normalize_before=False (post-LN) is not mapped: "
                              f"fairseq's post-LN encoder has no embedding LayerNorm, ours has")
    if fields["act_fn"] not in ("relu", "gelu"):
        raise CheckpointError(f"{file}: act_fn={fields['act_fn']!r}: fairseq 0.6 knows relu and gelu")
    return fields


def _tensors(state: dict, file: Path) -> dict[str, torch.Tensor]:
    """The model's entries, each a tensor."""
    for key, t in state.items():
        if not torch.is_tensor(t):
            raise CheckpointError(f"{file}: model entry {key!r} is a {type(t).__name__}, not a tensor")
    return state


def _finite(key: str, t: torch.Tensor, file: Path) -> torch.Tensor:
    """A weight the conversion uses, as float32, checked finite (not every entry: the sinusoids' _float_tensor is
    an uninitialised dtype marker, whatever its value)."""
    if t.is_floating_point():
        if not bool(torch.isfinite(t).all()):
            bad = int((~torch.isfinite(t)).sum())
            raise CheckpointError(f"{file}: tensor {key!r} holds {bad:,} NaN or infinite value(s); the file is damaged")
        t = t.float()
    return t


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


def _layout(macaron: bool) -> list[tuple[str, int]]:
    """(fairseq module, its LayerNorm index) of each of our sub-steps, in order."""
    return [("macaron_fc", 2), ("self_attn", 0), ("fc", 1)] if macaron else [("self_attn", 0), ("fc", 1)]


def convert(ckpt: dict, symbols: list[str], file: Path, dict_file: Path, name: str
            ) -> tuple[ModelConfig, dict[str, torch.Tensor], dict]:
    """(our config, our weights, facts for the card) of a checkpoint read by read_checkpoint, whose dictionary's
    entries are `symbols`."""
    fields = architecture(ckpt["args"], file)
    state = _tensors(ckpt["model"], file)
    used: set[str] = set()

    def take(key: str) -> torch.Tensor:
        if key not in state:
            raise CheckpointError(f"{file}: weight {key!r} is missing; is this a {fields['arch']} checkpoint?")
        used.add(key)
        return _finite(key, state[key], file)

    if float(state.get("encoder.version", torch.tensor([2.0]))[0]) < 2:
        raise CheckpointError(f"{file}: written by a fairseq before version 2 of its encoder (no final LayerNorm): "
                              f"not mapped")
    words = take("encoder.embed_tokens.weight")
    V, d = words.shape
    if d != fields["encoder_embed_dim"]:
        raise CheckpointError(f"{file}: the token embedding is {d} wide, its args say encoder_embed_dim="
                              f"{fields['encoder_embed_dim']}")
    if len(symbols) != V:
        raise CheckpointError(f"{dict_file}: {len(symbols):,} entries ({len(SPECIALS)} specials and "
                              f"{len(symbols) - len(SPECIALS):,} lines), but the checkpoint's embedding has {V:,} "
                              f"rows: not this checkpoint's dictionary")
    macaron, affine, act = bool(fields["macaron"]), not fields["no_normalize_affine"], fields["act_fn"]
    n_layers, max_len = int(fields["encoder_layers"]), int(fields["max_positions"])

    positions = "no positions"
    table = torch.zeros(max_len, d)
    if not fields["no_token_positional_embeddings"]:
        if fields["encoder_learned_pos"]:
            table = take("encoder.embed_positions.weight")[PAD + 1:PAD + 1 + max_len].clone()
            positions = "its learned positions, from row pad + 1"
        else:
            table = fairseq_sinusoids(PAD + 1, max_len, d)
            positions = "its sinusoids, from position pad + 1"
        if len(table) < max_len:
            raise CheckpointError(f"{file}: {len(table)} positions for max_positions={max_len}")
    if "encoder.embed_segment.weight" in state:
        table = table + take("encoder.embed_segment.weight")[1]
        positions += " + segment 1's row"
    ours = {"token_embedding.weight": words, "position_embedding.weight": table}

    for i in range(n_layers):
        theirs, mine = f"encoder.layers.{i}.", f"layers.{i}."
        for k, (module, norm) in enumerate(_layout(macaron)):
            if module == "self_attn":
                for p in ("weight", "bias"):
                    ours[f"{mine}ops.{k}.qkv.{p}"] = take(f"{theirs}self_attn.in_proj_{p}")  # q, k, v stacked
                    ours[f"{mine}ops.{k}.out.{p}"] = take(f"{theirs}self_attn.out_proj.{p}")
            else:
                for p in ("weight", "bias"):
                    ours[f"{mine}ops.{k}.fc1.{p}"] = take(f"{theirs}{module}1.{p}")
                    ours[f"{mine}ops.{k}.fc2.{p}"] = take(f"{theirs}{module}2.{p}")
            if affine:
                for p in ("weight", "bias"):
                    ours[f"{mine}norms.{k}.{p}"] = take(f"{theirs}layer_norms.{norm}.{p}")
    if affine:
        ours.update({f"final_norm.{p}": take(f"encoder.layer_norm.{p}") for p in ("weight", "bias")})

    head = "mid_layer.0.weight" in state and "embed_out" in state and torch.equal(state["embed_out"].float(), words)
    if head:
        used.add("embed_out")
        for k in (0, 2):  # Linear, act_fn, LayerNorm: the same indices in mid_layer and our mlm_transform
            ours.update({f"mlm_transform.{k}.{p}": take(f"mid_layer.{k}.{p}") for p in ("weight", "bias")})
        ours["mlm_bias"] = torch.zeros(V)  # fairseq's head has none
    left = {k: LEFT_OUT.get(k, "") for k in state if k not in used}
    if not head:
        left.update({k: "the masked-word head, whose output embedding is not the token embedding" for k in left
                     if k.startswith("mid_layer.") or k == "embed_out"})
    unknown = sorted(k for k, why in left.items() if not why)
    if unknown:
        raise CheckpointError(f"{file}: weights we do not map: {', '.join(unknown[:5])}"
                              + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""))

    ffn = int(fields["encoder_ffn_embed_dim"])
    config = ModelConfig(
        scheme="macaron" if macaron else "transformer", norm="pre", d_model=d, n_layers=n_layers,
        n_heads=int(fields["encoder_attention_heads"]), ffn_total=ffn * (2 if macaron else 1), activation=act,
        convection_activations=("relu", act) if macaron else None, dropout=0.0, vocab_size=V, max_len=max_len,
        attention="dot", position="learned", layer_norm_eps=1e-5, pad_id=PAD, mlm_head=head, norm_affine=affine,
        head_activation=act, embedding_scale=math.sqrt(d), hf_family="fairseq", name=name)
    history = ckpt.get("optimizer_history") or [{}]
    facts = dict(arch=fields["arch"], fields={k: v for k, v in fields.items() if k != "arch"}, positions=positions,
                 head=head, left_out=sorted(set(left.values())),
                 num_updates=history[-1].get("num_updates") if isinstance(history[-1], dict) else None,
                 dtype=str(ckpt["model"]["encoder.embed_tokens.weight"].dtype).removeprefix("torch."))
    return config, ours, facts


# ---- the folder ---------------------------------------------------------------------------------------------------
def import_fairseq(checkpoint, dictionary, bpe_codes=None, out=None, name: str | None = None) -> Path:
    """Read a fairseq 0.6 checkpoint of a MAPPED architecture, its dict.txt and (if given) its BPE codes, check them
    and write a model folder of ours at `out`: safetensors, config.json, tokenizer.json (the paper's reading,
    macaron.moses_bpe), README.md (the card) and converted.json. Every check runs before anything is written."""
    checkpoint, dictionary = Path(checkpoint), Path(dictionary)
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir()) and not (out / SOURCE).is_file()):
        raise CheckpointError(f"{out}: exists and is not a folder this import wrote; give a new folder")
    try:
        symbols = read_dictionary(dictionary)
        merges, rules = read_codes(bpe_codes) if bpe_codes else (None, "0.2")
    except ReadingError as e:
        raise CheckpointError(str(e)) from None
    ckpt = read_checkpoint(checkpoint)
    try:
        config, state, facts = convert(ckpt, symbols, checkpoint, dictionary, name or out.name)
    except CheckpointError:
        raise
    except (ValueError, TypeError, IndexError, RuntimeError) as e:  # a size its args do not allow, a wrong shape
        raise CheckpointError(f"{checkpoint}: weights or args that do not fit together ({_first_line(e)})") from None
    tokenizer = MosesBPE(symbols, merges, rules, source=dict(dictionary=dictionary.name,
                                                              bpe_codes=Path(bpe_codes).name if bpe_codes else None))
    model = Model(config, tokenizer)
    expected = model.state_dict()
    wrong = [f"{k}: {tuple(state[k].shape)} for {tuple(expected[k].shape)}" for k in expected
             if k in state and state[k].shape != expected[k].shape]
    missing = sorted(set(expected) - set(state))
    if wrong or missing:
        raise CheckpointError(f"{checkpoint}: weights do not fit {facts['arch']}'s args: "
                              + "; ".join(wrong[:3] + [f"missing {m}" for m in missing[:3]]))
    model.load_state_dict(state)
    record = dict(source="fairseq 0.6 (Lu et al. 2019, bert/)", checkpoint=str(checkpoint.resolve()),
                  sha256=_sha256(checkpoint), bytes=checkpoint.stat().st_size, dictionary=str(dictionary.resolve()),
                  bpe_codes=str(Path(bpe_codes).resolve()) if bpe_codes else None, bpe_merges=len(merges or ()),
                  bpe_rules=rules if merges else None, reading="approximate" if merges is None else "the paper's",
                  **facts)
    staging = out.parent / f".{out.name}.importing"
    shutil.rmtree(staging, ignore_errors=True)
    model.save(staging, card=card(model, record))
    (staging / SOURCE).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    if out.exists():
        shutil.rmtree(out)
    staging.rename(out)
    return out


def _sha256(file: Path) -> str:
    h = hashlib.sha256()
    with open(file, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def card(model: Model, r: dict) -> str:
    """The model card: where the weights came from and what became of each part."""
    c, f = model.config, r["fields"]
    act = c.activation.upper()
    layer = (f"Macaron: ½ FFN (ReLU), attention, ½ FFN ({act}); scheme `macaron` (Strang–Marchuk)" if f["macaron"]
             else f"Transformer: attention, FFN ({act}); scheme `transformer` (Lie–Trotter)")
    codes = Path(r["bpe_codes"]).name if r["bpe_codes"] else ""
    reading = (f"Moses normalisation and tokenisation (no escaping), lower case, BPE with `{codes}` "
               f"({r['bpe_merges']:,} merges), as bert/macaron-scripts read text" if r["bpe_merges"] else
               "**approximate**: no BPE codes were given, so each word is split into the longest pieces of the "
               "dictionary (Moses and lower case as the paper's)")
    rows = [("source", f"`{Path(r['checkpoint']).name}` ({r['bytes']:,} bytes, sha256 `{r['sha256'][:16]}…`)"),
            ("architecture", f"`{r['arch']}`: {c.n_layers} layers × {c.d_model}, {c.n_heads} heads, FFN "
                             f"{f['encoder_ffn_embed_dim']}{' per half' if f['macaron'] else ''}"),
            ("layer", f"{layer}; pre-LN, norms {'with' if c.norm_affine else 'without'} gain and bias"),
            ("dictionary", f"`{Path(r['dictionary']).name}`: {c.vocab_size:,} entries (BertDictionary's "
                           f"{len(SPECIALS)} specials, then its lines): token ids unchanged"),
            ("reading", reading + f"; a sentence is <cls> … </s> (ids {CLS} and {EOS}), segment 1"),
            ("updates", f"{r['num_updates']:,}" if isinstance(r["num_updates"], int) else "not recorded"),
            ("parameters", f"{model.num_parameters():,}"),
            ("weights", f"float32 safetensors (the checkpoint's: {r['dtype']})")]
    table = "\n".join(f"| {k} | {v} |" for k, v in rows)
    head = f"the masked-word head: Linear → {act} → LayerNorm → the token embedding (tied), no bias" if r["head"] \
        else None
    converted = [f"the token embedding, times √d = {c.embedding_scale:.4g} (`embedding_scale`)",
                 f"one position table: {r['positions']}",
                 "every layer's attention (q, k, v stacked as fairseq's in_proj), FFNs and norms",
                 "the final LayerNorm", head]
    return (f"# {c.name}\n\nThe paper's own model (Lu et al. 2019, *Understanding and Improving Transformer From a "
            f"Multi-Particle Dynamic System Point of View*), imported from its fairseq 0.6 checkpoint by "
            f"`python -m macaron import-fairseq`.\n\n| | |\n|---|---|\n{table}\n\n## Converted\n"
            + "".join(f"- {x}\n" for x in converted if x)
            + "\n## Left out\n" + "".join(f"- {x}\n" for x in r["left_out"] + ["the optimizer's state and the "
                                                                                   "training meters"])
            + f"\n`{SOURCE}` records the source files and the architecture's fields.\n")
