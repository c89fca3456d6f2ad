"""The checkpoint folder format: config.json, safetensors shards (≤ 15 MiB each) with an index,
tokenizer.json and a model card README.md. Nothing pickled is ever read.

This module reads and writes the files and knows nothing of the network (Model.save calls `save`); formats.ours
reads our folders' configs, formats.registry tells every format's folder from the others.

A tensor larger than a shard (the 8k × 512 embedding is 16 MiB) is stored as row blocks
named `<name>.__part<i>` and joined again on load.
"""
from __future__ import annotations

import json
from pathlib import Path

import torch
from huggingface_hub import save_torch_state_dict
from safetensors import SafetensorError
from safetensors.torch import load_file
from tokenizers import Tokenizer

from .moses_bpe import MosesBPE, ReadingError, is_moses_bpe

MAX_SHARD_BYTES = 14 * 2**20  # tensor bytes; headers stay well inside the 15 MiB limit
INDEX = "model.safetensors.index.json"
SINGLE = "model.safetensors"
PART = ".__part"
FACTS = "training.json"  # a trained folder's facts (macaron.train writes them, macaron.sources.milestones reads them)


class CheckpointError(RuntimeError):
    """A checkpoint folder that cannot be loaded; the message names the file and the problem."""


# ---- saving ---------------------------------------------------------------------------
def _split_large(state: dict, limit: int) -> dict:
    out = {}
    for name, t in state.items():
        t = t.detach().contiguous()
        if t.numel() * t.element_size() <= limit // 2:
            out[name] = t
            continue
        rows = max(1, (limit // 2) // (t[0].numel() * t.element_size()))
        for i, block in enumerate(t.split(rows)):
            out[f"{name}{PART}{i}"] = block.clone()
    return out


def save(model, path, card: str | None = None, dtype: torch.dtype | None = None) -> Path:
    """Write `model` (a Model, or a translator's EncoderDecoder) as a folder `macaron.load` opens: its config.json,
    weights (safetensors), tokenizer.json and a README.md card (`card`, else one that says what it is). `dtype=
    torch.float16` halves the weights on disk (loaded back as float32); a tensor that float16 cannot hold (|w| >
    65504) stays float32. `macaron.save(model, folder)`."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    for old in list(path.glob("model*.safetensors")) + [path / INDEX]:
        old.unlink(missing_ok=True)  # a smaller model must not leave stale shards behind
    state = {k: _stored(v, dtype) for k, v in model.state_dict().items()}
    state = _split_large(state, MAX_SHARD_BYTES)
    save_torch_state_dict(state, path, max_shard_size=MAX_SHARD_BYTES)
    (path / "config.json").write_text(json.dumps(model.config.to_dict(), indent=2) + "\n")
    if model.tokenizer is not None:
        model.tokenizer.save(str(path / "tokenizer.json"))
    (path / "README.md").write_text(card if card is not None else default_card(model))
    return path


def _stored(t: torch.Tensor, dtype: torch.dtype | None) -> torch.Tensor:
    if dtype is None or not t.is_floating_point():
        return t
    fits = dtype != torch.float16 or bool(t.abs().max() <= torch.finfo(torch.float16).max) if t.numel() else True
    return t.to(dtype) if fits else t


def default_card(model) -> str:
    """A card for a model of our own: what it is (a translator: each system's card after its own)."""
    c = model.config
    if getattr(model, "kind", None) == "translator":
        return (f"# {c.name or 'translation model'}\n\nAn encoder–decoder ({c.source_lang or '?'} → "
                f"{c.target_lang or '?'}), {model.num_parameters():,} parameters; embeddings "
                f"{'shared' if c.shared_embeddings else 'separate'}.\n\n"
                + "\n".join("#" + default_card(m) for m in (model.encoder, model.decoder)))
    rows = "\n".join(f"| `{k}` | `{v}` |" for k, v in c.to_dict().items())
    return (f"# {c.name or 'macaron model'}\n\nScheme `{c.scheme}`, {c.n_layers} layers × {c.d_model}, "
            f"{model.num_parameters():,} parameters. Untrained unless stated below.\n\n"
            f"| field | value |\n|---|---|\n{rows}\n")


# ---- reading --------------------------------------------------------------------------
def read_json(file: Path, error: type[Exception] = CheckpointError):
    """A JSON file's content, or `error` naming the file: missing, unreadable or not JSON. The one reader
    of our JSON files (a model folder's here; a run's checkpoint state, a packed corpus's manifest and a
    corpus's statistics in macaron.train)."""
    file = Path(file)
    if not file.is_file():
        raise error(f"{file}: file is missing")
    try:
        return json.loads(file.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise error(f"{file}: not valid JSON ({e})") from None
    except OSError as e:
        raise error(f"{file}: unreadable ({e})") from None



def read_facts(folder: Path) -> dict | None:
    """A trained folder's facts (training.json: steps, tokens, seed, final figures; macaron.train writes it),
    None where there are none (a model of your own); an error naming the file where it is unreadable. The one
    reader of them: a command that needs them says what is missing (macaron.train.card.trained_facts)."""
    try:
        facts = json.loads((folder / FACTS).read_text())
    except FileNotFoundError:
        return None
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CheckpointError(f"{folder / FACTS}: unreadable training facts ({e})") from None
    return facts if isinstance(facts, dict) else None


def translator_scores(folder) -> dict | None:
    """A translator trained here: its test BLEU and chrF with what they were measured on (its training.json's
    final scores), or None for any other folder."""
    try:
        facts = read_facts(Path(folder)) or {}
        final = facts.get("final") or {}
        return {k: final[k] for k in ("bleu", "chrf", "beam", "lenpen", "sentences", "bleu_signature")} \
            if facts.get("task") == "translation" and "bleu" in final else None
    except (CheckpointError, OSError, ValueError, KeyError):
        return None


def read_metrics(file: Path) -> list[dict]:
    """The rows of a training run's metrics.jsonl ([] where there is none), skipping a line that does not
    parse: a run still writing may have left its last line half written."""
    rows = []
    try:
        lines = Path(file).read_text().splitlines()
    except OSError:
        return rows
    for line in lines:
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows

def folder_name(folder: Path) -> str:
    """A model's name from its folder: the folder's own; a package's nested model/ folder its parent's; a snapshot
    in the Hugging Face Hub cache (models--owner--name/snapshots/<commit>) its Hub id, owner/name."""
    folder = Path(folder)
    repo = folder.parent.parent.name
    if folder.parent.name == "snapshots" and repo.startswith("models--"):
        return repo.removeprefix("models--").replace("--", "/")
    return folder.parent.name if folder.name == "model" else folder.name


def open_tokenizer(file: Path, error: type[Exception] = CheckpointError) -> Tokenizer:
    """A tokenizer.json without padding or truncation, or `error` naming the file: the one reader of
    tokenizer files (a model folder's here, a corpus's in macaron.train)."""
    file = Path(file)
    if not file.is_file():
        raise error(f"{file}: tokenizer file is missing")
    try:
        tok = Tokenizer.from_file(str(file))
    except Exception as e:  # tokenizers raises a bare Exception on malformed files
        raise error(f"{file}: not a readable tokenizer ({e})") from None
    tok.no_padding()  # exported BERT tokenizers often pad to a fixed length: particles must be real tokens
    tok.no_truncation()  # the model truncates itself, and says so
    return tok


def read_tokenizer(folder: Path, vocab_size: int, bert_names: bool = True) -> Tokenizer | None:
    """The folder's tokenizer.json, checked against the embedding; an encoder's specials under BERT's names (a
    decoder's <s> is its beginning of text, not a [CLS]: it keeps its own)."""
    file = folder / "tokenizer.json"
    if not file.exists():
        return None
    if is_moses_bpe(file):  # the paper's reading (macaron.formats.fairseq's imports): its specials already BERT's names
        try:
            tok, bert_names = MosesBPE.from_file(file), False
        except ReadingError as e:
            raise CheckpointError(str(e)) from None
    else:
        tok = open_tokenizer(file)
    if tok.get_vocab_size() > vocab_size:
        raise CheckpointError(f"{file}: vocabulary of {tok.get_vocab_size()} tokens does not match the "
                              f"model's {vocab_size} embeddings (config.json)")
    return bert_specials(tok) if bert_names else tok


BERT_SPECIALS = {"<s>": "[CLS]", "</s>": "[SEP]", "<mask>": "[MASK]", "<pad>": "[PAD]", "<unk>": "[UNK]"}


def bert_specials(tok: Tokenizer) -> Tokenizer:
    """The tokenizer with RoBERTa's and SentencePiece's specials (<s>, </s>, <mask>, <pad>, <unk>) under
    BERT's names, each keeping its id: the explorer finds [CLS], [SEP] and [MASK] by name, so a RoBERTa
    sentence's mask is typed [MASK] and guessed like BERT's. A name the vocabulary already has stays."""
    vocab = tok.get_vocab()
    rename = {a: b for a, b in BERT_SPECIALS.items() if a in vocab and b not in vocab}
    if not rename:
        return tok

    def renamed(x):
        if isinstance(x, str):
            return rename.get(x, x)
        if isinstance(x, list):
            return [renamed(v) for v in x]
        if isinstance(x, dict):
            return {rename.get(k, k): renamed(v) for k, v in x.items()}
        return x

    doc = json.loads(tok.to_str())  # the specials live in added_tokens, the post-processor and the model's vocab
    doc["added_tokens"], doc["post_processor"] = renamed(doc.get("added_tokens")), renamed(doc.get("post_processor"))
    doc["model"].update({k: renamed(doc["model"][k]) for k in ("vocab", "unk_token") if k in doc["model"]})
    return Tokenizer.from_str(json.dumps(doc))


def read_weights(folder: Path) -> dict[str, torch.Tensor]:
    """All tensors of the folder, shards merged and split tensors joined."""
    if (folder / INDEX).exists():
        index = read_json(folder / INDEX)
        files = sorted(set(index.get("weight_map", {}).values()))
        if not files:
            raise CheckpointError(f"{folder / INDEX}: lists no weight files")
    elif (folder / SINGLE).exists():
        files = [SINGLE]
    else:
        raise CheckpointError(f"{folder}: no weights ({SINGLE} or {INDEX}) in the folder")
    state: dict[str, torch.Tensor] = {}
    for name in files:
        file = folder / name
        if not file.is_file():
            raise CheckpointError(f"{file}: weight shard is missing (named in {INDEX})")
        try:
            tensors = load_file(file)
        except (SafetensorError, OSError, ValueError) as e:
            raise CheckpointError(f"{file}: damaged or truncated safetensors file ({e})") from None
        for key, t in tensors.items():
            require_finite(file, key.split(PART)[0], t)
        state.update(tensors)
    return _join_parts(state)


def require_finite(file: Path, key: str, t: torch.Tensor) -> None:
    """Overwritten bytes load fine but poison every trace: a float tensor with NaN or infinite values is refused,
    the file and the tensor named (safetensors, fairseq's and Marian's pickles alike)."""
    if t.is_floating_point() and not bool(torch.isfinite(t).all()):
        bad = int((~torch.isfinite(t)).sum())
        raise CheckpointError(f"{file}: tensor {key!r} holds {bad:,} NaN or infinite value(s); the file is damaged")


def _join_parts(state: dict) -> dict:
    parts: dict[str, list] = {}
    for key in [k for k in state if PART in k]:
        name, i = key.rsplit(PART, 1)
        parts.setdefault(name, []).append((int(i), state.pop(key)))
    for name, blocks in parts.items():
        state[name] = torch.cat([b for _, b in sorted(blocks, key=lambda ib: ib[0])])
    return state
