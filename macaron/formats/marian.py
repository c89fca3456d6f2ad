"""Hugging Face Marian translation models (transformers' MarianMTModel: the Helsinki-NLP opus-mt models) as our one
encoder–decoder (macaron.translation.model): the Transformer side of a real translation pair, opened from its folder.

What transformers computes (models/marian/modeling_marian.py) and where it goes in our network; what differs from
the paper's fairseq models is data:

    x₀ = s·E[token] + P[i]      s = √d with scale_embedding, else 1 (embedding_scale); P: MarianSinusoidalPositional-
      Embedding, [sin | cos] halves as fairseq's, but ω_i = 10000^(−2i/d) (fairseq's: 10000^(−i/(d/2 − 1))) and
      positions from 0 (fairseq's: from pad + 1), so a table of its own: `sinusoids`, folded into the position table
      as the fairseq import folds its own (a file that stores the table is read as stored, as transformers reads it)
    post-LN: x ← LN(x + Attn(x)), in the decoder x ← LN(x + Cross(x; source)), x ← LN(x + FFN(x)); no norm on the
      embedding, none at the end (norm "post", embedding_norm False); LayerNorm eps 1e-5
    FFN: fc2(act(fc1 x)), act the config's activation_function (opus-mt: swish, SiLU)
    attention: q, k, v and out projections, all with biases (ours: q, k, v stacked; the cross-attention's k, v)
    next-word head: logits = h·Oᵀ + b, b the final_logits_bias (lm_head_bias); O with tie_word_embeddings the
      decoder's table (one table of the source, the target and the head with share_encoder_decoder_embeddings),
      else lm_head. transformers 5 ties tables only with tie_word_embeddings: untied, each system reads its own
      (encoder.embed_tokens, decoder.embed_tokens) and model.shared is in no forward (`_tables`)

Text is read as MarianTokenizer reads it (models/marian/tokenization_marian.py): SentencePiece with source.spm splits
the source (a leading >>lang<< code kept whole, a typed special token kept as itself), vocab.json gives each piece its
id (a piece it lacks: <unk>), </s> ends the sentence; a translation is read back as its decode(ids,
skip_special_tokens=True): specials dropped, the pieces joined by SentencePiece (the source's model, unless the
vocabularies are separate). The search is transformers' generate (translation.search.TransformersGenerate), with the
settings of the folder's generation_config.json (else of config.json), as transformers reads them; the decoder
starts from decoder_start_token_id (opus-mt: <pad>), which bad_words_ids [[pad]] keeps from being chosen.
"""
from __future__ import annotations

import re
from pathlib import Path

import torch

from ..config import ModelConfig
from ..network.positions import sinusoids
from ..translation.model import Generation, TranslationConfig
from .base import CONFIG, TOKENIZER, TOKENIZER_EXTRAS, Format, activation, finite_state, read_pickle, stack_qkv
from .folder import INDEX, SINGLE, CheckpointError, folder_name, read_json, read_weights
from .moses_bpe import Encoding, ReadingError

BIN = "pytorch_model.bin"  # the older Hub folders' weights: a pickle, read as data only (weights_only)
READING = ("source.spm", "target.spm", "vocab.json")  # what MarianTokenizer reads (with tokenizer_config.json)
GENERATION = "generation_config.json"  # the search's settings, read where a folder has them
SPIECE_UNDERLINE = "▁"
CODE = re.compile(r">>.*?<<")  # a multilingual model's target language code, >>fra<<, before the text
# GenerationConfig fields whose processors TransformersGenerate does not reproduce: (field, the value that is off)
UNMAPPED = (("repetition_penalty", 1.0), ("encoder_repetition_penalty", 1.0), ("no_repeat_ngram_size", 0),
            ("encoder_no_repeat_ngram_size", 0), ("min_new_tokens", None), ("forced_bos_token_id", None),
            ("suppress_tokens", None), ("begin_suppress_tokens", None), ("sequence_bias", None),
            ("exponential_decay_length_penalty", None), ("guidance_scale", None))


def is_marian(fields: dict) -> bool:
    return fields.get("model_type") == "marian"


# ---- config.json and generation_config.json -------------------------------------------------------------------
def _one_id(value, what: str):
    """A token id a config gives as an int or a list of one."""
    if isinstance(value, list):
        if len(value) != 1:
            raise ValueError(f"{what}={value}: one id is mapped, not several")
        value = value[0]
    return value


def generation(folder: Path, fields: dict) -> tuple[Generation, tuple[int, int, int]]:
    """(the search's settings, (decoder_start_token_id, eos_token_id, pad_token_id)) as transformers' generate reads
    them: generation_config.json where the folder has one, else config.json's fields; transformers' defaults for
    those they leave out. A setting whose processor we do not reproduce is refused by name."""
    file = folder / GENERATION
    g = read_json(file) if file.is_file() else fields
    where = file if file.is_file() else folder / "config.json"
    try:
        on = [name for name, off in UNMAPPED if g.get(name, off) not in (off, None, [])]
        if on:
            raise ValueError(f"{', '.join(on)} set: transformers' processors for them are not reproduced here")
        if g.get("max_new_tokens") is not None:
            raise ValueError("max_new_tokens set: give the length as max_length")
        eos = _one_id(g.get("eos_token_id"), "eos_token_id")
        start = g.get("decoder_start_token_id", g.get("bos_token_id"))
        pad = g.get("pad_token_id", eos)
        bad = g.get("bad_words_ids") or []
        if any(len(words) != 1 for words in bad):
            raise ValueError(f"bad_words_ids={bad}: only single-token bans are mapped")
        forced = _one_id(g.get("forced_eos_token_id"), "forced_eos_token_id")
        if None in (eos, start, pad):
            raise ValueError("eos_token_id, decoder_start_token_id (or bos_token_id) and pad_token_id are needed")
        settings = Generation(
            num_beams=int(g.get("num_beams") or 1), length_penalty=float(g.get("length_penalty", 1.0)),
            early_stopping=g.get("early_stopping", False), max_length=g.get("max_length"),
            min_length=int(g.get("min_length") or 0), banned=tuple(w[0] for w in bad if w[0] != eos),
            forced_eos_token_id=forced, renormalize_logits=bool(g.get("renormalize_logits", False)))
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"{where}: {e}") from None
    return settings, (int(start), int(eos), int(pad))


def _system(fields: dict, side: str, vocab_size: int, name: str) -> ModelConfig:
    """Our config of one system (`side`: encoder or decoder) of a Marian config.json."""
    d = fields["d_model"]
    decoder = side == "decoder"
    return ModelConfig(
        scheme="transformer", norm="post", embedding_norm=False, d_model=d, n_layers=fields[f"{side}_layers"],
        n_heads=fields[f"{side}_attention_heads"], ffn_total=fields[f"{side}_ffn_dim"],
        activation=activation(fields.get("activation_function", "gelu"), "activation_function"),
        dropout=0.0, vocab_size=vocab_size, max_len=fields.get("max_position_embeddings", 1024), attention="dot",
        position="learned", layer_norm_eps=1e-5, pad_id=fields["pad_token_id"], mlm_head=False,
        embedding_scale=d ** 0.5 if fields.get("scale_embedding") else 1.0, causal=decoder, cross_attention=decoder,
        lm_head=decoder, lm_head_tied=fields.get("tie_word_embeddings", True), lm_head_bias=decoder,
        hf_family="Marian", name=f"{name} ({side})")


def marian_config(fields: dict, folder: Path, unk: int) -> TranslationConfig:
    """Our config of a Marian folder's config.json (and its search's settings); `unk`: the reading's <unk> id."""
    name = folder_name(folder)
    try:
        shared = fields.get("share_encoder_decoder_embeddings", True)
        vocab = fields["vocab_size"]
        target_vocab = vocab if shared else (fields.get("decoder_vocab_size") or vocab)
        settings, (start, eos, pad) = generation(folder, fields)
        source_lang, target_lang = languages_of(folder)
        return TranslationConfig(_system(fields, "encoder", vocab, name),
                                 _system(fields, "decoder", target_vocab, name),
                                 shared_embeddings=shared and fields.get("tie_word_embeddings", True),
                                 source_lang=source_lang, target_lang=target_lang, name=name, start_id=start,
                                 eos_id=eos, pad_id=pad, unk_id=unk, generation=settings)
    except KeyError as e:
        raise CheckpointError(f"{folder / 'config.json'}: missing field {e}") from None
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"{folder / 'config.json'}: {e}") from None


def languages_of(folder: Path) -> tuple[str, str]:
    """(source, target) language: tokenizer_config.json's, else the opus-mt name's (opus-mt-de-en), else ''."""
    tokenizer = _tokenizer_config(folder)
    found = re.search(r"opus-mt-([a-zA-Z_]+)-([a-zA-Z_]+)$", folder_name(folder))
    return (tokenizer.get("source_lang") or (found and found.group(1)) or "",
            tokenizer.get("target_lang") or (found and found.group(2)) or "")


def _tokenizer_config(folder: Path) -> dict:
    file = folder / "tokenizer_config.json"
    doc = read_json(file) if file.is_file() else {}
    if not isinstance(doc, dict):
        raise CheckpointError(f"{file}: expected a JSON object")
    return doc


# ---- the weights --------------------------------------------------------------------------------------------------
def read_marian_weights(folder: Path) -> dict[str, torch.Tensor]:
    """The folder's tensors: its safetensors (macaron.formats.folder.read_weights), else pytorch_model.bin, a pickle
    read with torch's weights-only unpickler (tensors and containers; nothing in it runs)."""
    if not (folder / BIN).is_file() or list(folder.glob("*.safetensors")):
        return read_weights(folder)
    return finite_state(folder / BIN, read_pickle(folder / BIN))


def _attention(w: dict, theirs: str, mine: str, cross: bool) -> dict:
    """One attention's weights: q, k, v stacked (ours), or q apart and k, v stacked (a cross-attention's)."""
    out = {}
    for p in ("weight", "bias"):
        if cross:
            out[f"{mine}q.{p}"] = w[f"{theirs}q_proj.{p}"]
            out[f"{mine}kv.{p}"] = stack_qkv(w, (f"{theirs}k_proj", f"{theirs}v_proj"), p)
        else:
            out[f"{mine}qkv.{p}"] = stack_qkv(w, tuple(f"{theirs}{n}_proj" for n in "qkv"), p)
        out[f"{mine}out.{p}"] = w[f"{theirs}out_proj.{p}"]
    return out


def _layer(w: dict, theirs: str, mine: str, decoder: bool) -> dict:
    """One layer's weights: its sub-steps in our order (self-attention, [cross-attention], FFN), each with its norm."""
    parts = [("self_attn", "self_attn_layer_norm")] + ([("encoder_attn", "encoder_attn_layer_norm")] if decoder
                                                       else []) + [("fc", "final_layer_norm")]
    out = {}
    for k, (module, norm) in enumerate(parts):
        if module == "fc":
            out |= {f"{mine}ops.{k}.fc{n}.{p}": w[f"{theirs}fc{n}.{p}"] for n in (1, 2) for p in ("weight", "bias")}
        else:
            out |= _attention(w, f"{theirs}{module}.", f"{mine}ops.{k}.", cross=module == "encoder_attn")
        out |= {f"{mine}norms.{k}.{p}": w[f"{theirs}{norm}.{p}"] for p in ("weight", "bias")}
    return out


EMBEDDINGS = ("shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight", "lm_head.weight")


def _tables(w: dict, config: TranslationConfig, folder: Path) -> dict[str, torch.Tensor]:
    """Our token tables from the ones transformers 5's forward reads, as its from_pretrained fills them. Tied
    (_tied_weights_keys, applied only with tie_word_embeddings): the head and the decoder's table are one, and with
    shared embeddings the encoder's and model.shared too, read from whichever of those names the file holds (it may
    hold model.shared alone); transformers unties those that differ, which our tying cannot follow, so they are
    refused. Untied: each its own, where the file lacks a system's table model.shared (transformers 4 built both
    systems on that one table)."""
    shared, encoder, decoder, head = EMBEDDINGS

    def own(key: str) -> torch.Tensor:
        if key not in w and shared not in w:
            raise KeyError(key)
        return w.get(key, w.get(shared))

    if not config.decoder.lm_head_tied:
        return {"encoder.token_embedding.weight": own(encoder), "decoder.token_embedding.weight": own(decoder),
                "decoder.lm_head.weight": w[head]}
    tied = [k for k in (EMBEDDINGS if config.shared_embeddings else (decoder, head)) if k in w]
    if not tied:
        raise KeyError(decoder)
    if not all(torch.equal(w[tied[0]], w[k]) for k in tied[1:]):
        raise CheckpointError(f"{folder}: config.json ties {', '.join(tied)}, but the file's differ: set "
                              f"tie_word_embeddings to false in config.json if each is its own")
    if config.shared_embeddings:  # one table, stored once under the encoder's name
        return {"encoder.token_embedding.weight": w[tied[0]]}
    return {"encoder.token_embedding.weight": own(encoder), "decoder.token_embedding.weight": w[tied[0]]}


def marian_state(weights: dict, config: TranslationConfig, folder: Path) -> dict[str, torch.Tensor]:
    """Our weights from a MarianMTModel's (or MarianModel's) state dict."""
    w = {k.removeprefix("model."): t.float() if t.is_floating_point() else t for k, t in weights.items()}
    try:
        out = _tables(w, config, folder)
        for side, c in (("encoder", config.encoder), ("decoder", config.decoder)):
            stored = w.get(f"{side}.embed_positions.weight")  # older exports keep the table; transformers reads it
            out[f"{side}.position_embedding.weight"] = stored if stored is not None else \
                sinusoids(c.max_len, c.d_model, halves=True, dtype=torch.float64)  # transformers' own table
            for i in range(c.n_layers):
                out |= {f"{side}.{k}": t for k, t in _layer(w, f"{side}.layers.{i}.", f"layers.{i}.",
                                                            side == "decoder").items()}
        bias = w.get("final_logits_bias")  # a MarianModel has none: transformers' zeros
        out["decoder.lm_bias"] = torch.zeros(config.decoder.vocab_size) if bias is None else bias.reshape(-1)
        return out
    except KeyError as e:
        raise CheckpointError(f"{folder}: weight {e} is missing; is this a MarianMTModel checkpoint?") from None


# ---- the reading --------------------------------------------------------------------------------------------------
class SentencePieces:
    """One system's reading, as MarianTokenizer's in its mode: SentencePiece (`pieces`) splits text, `vocab` gives the
    ids; ids are read back to text by `joiner`'s SentencePiece. The interface the library reads of a tokenizer
    (encode, decode, token_to_id, id_to_token, get_vocab, get_vocab_size). The specials show as </s>, [UNK] (an
    unknown piece as [UNK:piece]) and <pad>, the start of a Marian target."""

    note = ""  # the model's own reading

    def __init__(self, pieces, vocab: dict[str, int], names: tuple[str, str, str], joiner, clean_up: bool = False):
        self.pieces, self.vocab, self.joiner, self.clean_up = pieces, vocab, joiner, clean_up
        self.specials = {name: vocab[name] for name in names}  # </s>, <unk>, <pad>: typed in a text, each is itself
        self.eos, self.unk, self.pad = self.specials.values()
        self.symbols = {i: s for s, i in vocab.items()}
        self.shown = {self.eos: "</s>", self.unk: "[UNK]", self.pad: "<pad>"}
        self._split = re.compile("(" + "|".join(map(re.escape, sorted(names, key=len, reverse=True))) + ")")

    def encode(self, text: str, add_special_tokens: bool = True) -> Encoding:
        """The pieces' ids and display tokens, </s> last: a special token typed is itself, a leading >>lang<< code
        one piece (MarianTokenizer's tokenize: its split on special tokens, then _tokenize on each part)."""
        ids, tokens = [], []
        for part in self._split.split(text):
            if part in self.specials:
                ids.append(self.specials[part])
                tokens.append(self.shown.get(ids[-1], part))
                continue
            code = CODE.match(part) if part.startswith(">>") else None
            pieces = ([code.group()] if code else []) + self.pieces.encode(part[code.end():] if code else part,
                                                                         out_type=str)
            for piece in pieces:
                ids.append(self.vocab.get(piece, self.unk))
                unknown = ids[-1] == self.unk and piece not in self.specials
                tokens.append(f"[UNK:{piece.lstrip(SPIECE_UNDERLINE) or piece}]" if unknown else
                              self.shown.get(ids[-1], piece))
        if add_special_tokens:
            ids.append(self.eos)
            tokens.append(self.shown[self.eos])
        return Encoding(ids, tokens, [(0, 0)] * len(ids))

    def decode(self, ids) -> str:
        """MarianTokenizer.decode(ids, skip_special_tokens=True): the specials left out, the pieces joined."""
        specials, size = set(self.specials.values()), self.joiner.GetPieceSize()
        pieces = [self.symbols.get(i) or self.joiner.IdToPiece(i) for i in map(int, ids)  # ids neither names: none
                  if i not in specials and (i in self.symbols or 0 <= i < size)]
        text = self.joiner.decode_pieces(pieces).replace(SPIECE_UNDERLINE, " ").strip()
        if self.clean_up:  # PreTrainedTokenizerBase.clean_up_tokenization, where the tokenizer's config asks for it
            for a, b in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                         (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")):
                text = text.replace(a, b)
        return text

    def token_to_id(self, token: str) -> int | None:
        aliases = {"[UNK]": self.unk, "[PAD]": self.pad}  # the names the explorer looks for
        return aliases.get(token, self.vocab.get(token))

    def id_to_token(self, i: int) -> str | None:
        return self.shown.get(i, self.symbols.get(i))

    def get_vocab(self) -> dict[str, int]:
        return {self.id_to_token(i): i for i in self.symbols}

    def get_vocab_size(self) -> int:
        return max(self.symbols) + 1

    def save(self, path) -> None:
        raise ReadingError("a Marian model reads text with its own folder's source.spm, target.spm and vocab.json: "
                           "open that folder rather than saving a copy")


class MarianReading:
    """A Marian model's reading: `source` (source.spm, vocab.json) for the encoder, `target` (target.spm, and
    target_vocab.json where the vocabularies are separate) for the decoder's ids and the translation's text."""

    note = ""

    def __init__(self, source: SentencePieces, target: SentencePieces):
        self.source, self.target = source, target

    @classmethod
    def from_folder(cls, folder: Path) -> "MarianReading":
        """As MarianTokenizer.from_pretrained(folder) reads it (its tokenizer_config.json's special tokens and
        separate_vocabs); a file missing or unreadable is named."""
        config = _tokenizer_config(folder)
        separate = bool(config.get("separate_vocabs", False))
        source_spm, target_spm = (_spm(folder / f"{side}.spm") for side in ("source", "target"))
        names = tuple(_content(config.get(f"{k}_token", default)) for k, default in
                      (("eos", "</s>"), ("unk", "<unk>"), ("pad", "<pad>")))
        sides = []
        for vocab_file, pieces in (("vocab.json", source_spm), ("target_vocab.json" if separate else "vocab.json",
                                                                target_spm)):
            vocab = _vocab(folder / vocab_file)
            missing = [t for t in names if t not in vocab]
            if missing:
                raise CheckpointError(f"{folder / vocab_file}: no entry for {', '.join(missing)}")
            sides.append(SentencePieces(pieces, vocab, names, target_spm if separate else source_spm,
                                        bool(config.get("clean_up_tokenization_spaces", False))))
        return cls(*sides)


def _content(token) -> str:
    """A special token as tokenizer_config.json gives it: a string, or an AddedToken's dict."""
    return token.get("content") if isinstance(token, dict) else str(token)


def _spm(file: Path):
    import sentencepiece

    if not file.is_file():
        raise CheckpointError(f"{file}: the Marian tokenizer's SentencePiece model is missing")
    processor = sentencepiece.SentencePieceProcessor()
    try:
        processor.Load(str(file))
    except (OSError, RuntimeError) as e:
        raise CheckpointError(f"{file}: not a readable SentencePiece model ({e})") from None
    return processor


def _vocab(file: Path) -> dict[str, int]:
    vocab = read_json(file)
    if not isinstance(vocab, dict) or not vocab or not all(isinstance(i, int) for i in vocab.values()):
        raise CheckpointError(f"{file}: expected a JSON object of pieces and their ids")
    return vocab


# ---- the format ---------------------------------------------------------------------------------------------------
class Marian(Format):
    """A Marian folder: config.json, its reading's files (MarianTokenizer's), then the weights; a wrong file is named
    before a larger one is read. The older Hub folders' weights are pytorch_model.bin, read as data only."""
    name, translates = "hf-marian", True
    types = {"marian": "Marian"}
    weights = (SINGLE, INDEX, BIN)
    files = (TOKENIZER, *TOKENIZER_EXTRAS, *READING, "target_vocab.json")
    settings = (GENERATION,)
    judged_with = (CONFIG, GENERATION)

    def recognises(self, fields: dict) -> bool:
        return fields.get("model_type") == "marian"

    def judge(self, fields: dict, folder: Path) -> None:  # its search's settings too, before any weight comes
        marian_config(fields, folder, unk=0)

    def needs(self, listed: set[str]) -> tuple[str, ...]:
        missing = [f for f in READING if f not in listed]
        if missing:
            raise CheckpointError(f"a Marian model without {', '.join(missing)} on the Hub: its text could not be "
                                  f"read as MarianTokenizer reads it")
        return tuple(f for f in (*self.files, *self.settings) if f in listed)

    def load(self, folder: Path, fields: dict):
        return self.open(folder, fields)[:2]

    def open(self, folder: Path, fields: dict):
        reading = self.reading(folder, None)  # its files named before the weights are read
        config = self.config(folder, fields, reading)
        return config, marian_state(read_marian_weights(folder), config, folder), reading

    def config(self, folder: Path, fields: dict, reading: MarianReading) -> TranslationConfig:
        config = marian_config(fields, folder, reading.source.unk)
        for side, c in ((reading.source, config.encoder), (reading.target, config.decoder)):
            if side.get_vocab_size() > c.vocab_size:
                raise CheckpointError(f"{folder}: the vocabulary has {side.get_vocab_size():,} ids for "
                                      f"{c.vocab_size:,} embeddings (config.json)")
        if reading.target.eos != config.eos_id:
            raise CheckpointError(f"{folder}: vocab.json's </s> is id {reading.target.eos}, the config's "
                                  f"eos_token_id {config.eos_id}")
        return config

    def reading(self, folder: Path, config) -> MarianReading:
        return MarianReading.from_folder(folder)


MARIAN = Marian()
