"""Translation as two particle systems: an encoder–decoder (DESIGN.md, "Two particle systems").

The source sentence's particles move through the encoder (a Model, as every encoder here); the target sentence's
through the decoder (a Model too: causal, with a next-word head), whose layers add one sub-step kind, cross-attention
(schemes.CROSS): the target's particles move toward the source's final states, a field the other system makes.

    m.translate("ein satz .", beam=5)    the source's Trajectory, the target's (teacher-forced on the translation,
                                         every sub-step recorded), the generated ids and the text
    m.target_logits(source_ids, target_ids)   [len(target_ids) + 1, V]: row k the next word after </s> and
                                              target_ids[:k]

Generation is fairseq 0.6's SequenceGenerator (the paper's translation/fairseq/sequence_generator.py and search.py)
on one sentence: the decoder starts from </s>; beam search keeps the `beam` best hypotheses by their summed
log-probabilities, <pad> never chosen, no </s> before the first word, a hypothesis finished when </s> is among the
`beam` best candidates, stopping as soon as `beam` are finished (its default, stop_early), each scored by its summed
log-probability over its length ** lenpen; beam 1 is its greedy search. At most a·|source| + b words (a = 0,
b = 200, its defaults), then every live hypothesis ends. Token ids are fairseq's Dictionary's (<pad> 1, </s> 2,
<unk> 3).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .checkpoint import CheckpointError, default_card, save
from .config import ModelConfig
from .model import Model, _aliases, _drop_aliases, _fill_aliases, _is_id_list
from .moses_bpe import EOS, PAD, UNK, ReadingError, TranslationReading
from .operators import SourceSystem
from .reading import InputError
from .schemes import CROSS
from .trajectory import Trajectory

MAX_LEN_A, MAX_LEN_B = 0.0, 200  # generate.py's --max-len-a and --max-len-b: at most a·|source| + b words
MIN_LEN = 1                       # --min-len: no </s> before the first word
SOURCE, TARGET = "source", "target"  # which particle system a Trajectory is (its meta["system"])
# Sentences to translate, by source language: German's "Bank" is a bench and a bank, English's "bank" a bank and a
# river's side, so the same word must move differently in the decoder (cross-attention tells it which).
EXAMPLES = {
    "de": ("ich sitze auf der bank im park .", "ich bringe das geld zur bank .",
           "wir müssen über die zukunft unserer kinder reden .", "das ist eine sehr gute idee ."),
    "en": ("I sat on the bank of the river.", "I took the money to the bank.",
           "We have to talk about the future of our children.", "That is a very good idea."),
}


@dataclass
class TranslationConfig:
    """The two networks' configs, and what ties them: one token embedding for the source, the target and the next-word
    head (a joined dictionary, fairseq's --share-all-embeddings), the languages."""

    encoder: ModelConfig
    decoder: ModelConfig
    shared_embeddings: bool = False
    source_lang: str = ""
    target_lang: str = ""
    name: str = ""

    def __post_init__(self):
        if isinstance(self.encoder, dict):
            self.encoder = ModelConfig.from_dict(self.encoder)
        if isinstance(self.decoder, dict):
            self.decoder = ModelConfig.from_dict(self.decoder)
        e, d = self.encoder, self.decoder
        if e.causal or e.cross_attention:
            raise ValueError("the encoder is neither causal nor cross-attending: its particles all see each other")
        if not (d.causal and d.cross_attention and d.lm_head):
            raise ValueError("the decoder is causal, attends to the source (cross_attention) and has a next-word head")
        if e.d_model != d.d_model:
            raise ValueError(f"encoder d_model={e.d_model} and decoder d_model={d.d_model}: cross-attention reads "
                             f"the source's states in the target's width")
        if self.shared_embeddings and (e.vocab_size, e.embedding_size) != (d.vocab_size, d.embedding_size):
            raise ValueError("shared_embeddings: the encoder's and decoder's vocabularies and widths differ")

    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return dict(out, encoder=self.encoder.to_dict(), decoder=self.decoder.to_dict())

    @classmethod
    def from_dict(cls, d: dict) -> "TranslationConfig":
        unknown = set(d) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise ValueError(f"unknown config fields {sorted(unknown)}")
        return cls(**d)


class Hypothesis(NamedTuple):
    """A finished hypothesis of the search: its words and </s>, its score (summed log-probability over its length **
    lenpen) and each word's log-probability."""

    tokens: list[int]
    score: float
    positional: list[float]


@dataclass
class Translation:
    """What `translate` gives: both particle systems' trajectories and the words."""

    source: Trajectory   # the encoder's
    target: Trajectory   # the decoder's, on [</s>] + target_ids (teacher-forced on the translation)
    target_ids: list[int]  # the generated words, ending with </s>
    text: str            # target_ids as text: BPE removed, detokenised ("" without a tokenizer)
    score: float         # the search's score of the translation
    beam: int


def beam_search(next_logprobs: Callable[[torch.Tensor], torch.Tensor], beam: int, maxlen: int, vocab_size: int,
                lenpen: float = 1.0, unkpen: float = 0.0, min_len: int = MIN_LEN) -> list[Hypothesis]:
    """fairseq 0.6's SequenceGenerator._generate for one sentence, BeamSearch, stop_early and normalised scores (the
    module's text); `next_logprobs(prefixes [n, t]) -> [n, V]` the log-probabilities of the word after each prefix.
    The finished hypotheses, best first."""
    beam = min(beam, vocab_size - 1)  # pad is never chosen
    prefixes = torch.full((1, 1), EOS, dtype=torch.long)  # the decoder's input so far, one row per live hypothesis
    scores = torch.zeros(1, 0)  # each live hypothesis' summed log-probability after each of its words
    done: list[Hypothesis] = []

    def finish(row: int, total: float, step: int):
        if len(done) < beam:
            words = prefixes[row, 1:].tolist() + [EOS]
            summed = scores[row].tolist() + [total]
            positional = [b - a for a, b in zip([0.0] + summed, summed)]
            done.append(Hypothesis(words, total / (step + 1) ** lenpen, positional))

    for step in range(maxlen + 1):
        lprobs = next_logprobs(prefixes).float().cpu()
        lprobs[:, PAD] = float("-inf")
        lprobs[:, UNK] -= unkpen
        totals = lprobs + scores[:, -1:] if step else lprobs  # [n, V]: summed log-probability with each next word
        if step == maxlen:  # out of room: every live hypothesis ends with </s>, the likeliest first
            for row in totals[:, EOS].argsort(descending=True).tolist():
                finish(row, float(totals[row, EOS]), step)
            break
        best, flat = totals.view(-1).topk(min(2 * beam, totals.numel() - 1))  # 2·beam: half may be </s>
        rows, words = flat // vocab_size, flat % vocab_size
        ends = (words == EOS).tolist()
        if step >= min_len:
            for j in range(beam):
                if ends[j]:
                    finish(int(rows[j]), float(best[j]), step)
            if len(done) == beam:
                break
        live = sorted(range(len(words)), key=lambda j: (ends[j], j))[:beam]  # the best that did not end
        prefixes = torch.cat([prefixes[rows[live]], words[live, None]], dim=1)
        scores = torch.cat([scores[rows[live]], best[live, None]], dim=1)
    return sorted(done, key=lambda h: h.score, reverse=True)


class EncoderDecoder(nn.Module):
    """Two particle systems: `encoder` (a Model) moves the source's particles, `decoder` (a causal Model with a
    next-word head and cross-attention sub-steps) the target's, pulled by the source's final states."""

    def __init__(self, config: TranslationConfig, tokenizer: TranslationReading | None = None):
        super().__init__()
        self.config, self.tokenizer = config, tokenizer
        self.encoder = Model(config.encoder, tokenizer.source if tokenizer else None)
        self.decoder = Model(config.decoder, tokenizer.target if tokenizer else None)
        if config.shared_embeddings:  # one table for the source, the target and the next-word head
            self.decoder.token_embedding = self.encoder.token_embedding
        self.aliases = _aliases(self)  # a shared table is stored once, under the encoder's name
        self.register_state_dict_post_hook(_drop_aliases)
        self.register_load_state_dict_pre_hook(_fill_aliases)

    @property
    def device(self) -> torch.device:
        return self.encoder.device

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    # ---- reading ------------------------------------------------------------------------------------------------
    def tokenize(self, text: str) -> tuple[list[int], list[str], int]:
        """(source ids ending with </s>, display tokens, tokens dropped past the encoder's positions)."""
        return self.encoder.tokenize(text)

    def source_row(self, text_or_ids):
        """The source as the encoder reads it, (ids, tokens, 0, None), checked: one clear InputError for no words, a
        source past the encoder's positions, ids that are not a source."""
        if isinstance(text_or_ids, str):
            ids, tokens, dropped, _ = self.encoder.read(text_or_ids)
            if dropped:
                raise InputError(f"The sentence reads as {len(ids) + dropped} tokens, more than the "
                                 f"{self.config.encoder.max_len} positions this model's encoder has: shorten it.")
        elif _is_id_list(text_or_ids):
            ids, tokens, _, _ = self.encoder.reader.ids(text_or_ids)
            if ids[-1] != EOS or PAD in ids:
                raise InputError(f"source ids end with </s> (id {EOS}) and hold no <pad> (id {PAD}), as the "
                                 f"tokenizer gives them")
        else:
            raise InputError("nothing to translate: give a sentence, or its source ids")
        if len(ids) < 2:
            raise InputError("The text has no readable tokens: type a sentence with words in it.")
        return ids, tokens, 0, None

    # ---- the computation ----------------------------------------------------------------------------------------
    @torch.no_grad()
    def encode(self, source_ids: list[int]) -> SourceSystem:
        """The source's final states [1, S, d], as the decoder's cross-attention reads them."""
        ids = torch.tensor([source_ids], device=self.device)
        return SourceSystem(self.encoder(ids), None)

    def next_logprobs(self, prefixes: torch.Tensor, source: SourceSystem) -> torch.Tensor:
        """[n, V]: the log-probabilities of the word after each prefix [n, t] (each starting with </s>)."""
        hidden = self.decoder(prefixes.to(self.device), None, source=source)[:, -1]
        return F.log_softmax(self.decoder.head(hidden).float(), dim=-1)

    @torch.no_grad()
    def target_logits(self, source_ids, target_ids) -> torch.Tensor:
        """[len(target_ids) + 1, V]: row k the next-word logits after </s> and target_ids[:k], teacher-forced."""
        source = self.encode(self.source_row(source_ids)[0])
        ids = self._target_row(target_ids)[0]
        hidden = self.decoder(torch.tensor([ids], device=self.device), None, source=source)
        return self.decoder.head(hidden)[0]

    def _target_row(self, target_ids):
        """The decoder's input for target_ids, [</s>] + target_ids, as a checked row."""
        ids = [int(i) for i in (target_ids.tolist() if torch.is_tensor(target_ids) else target_ids)]
        if len(ids) + 1 > self.config.decoder.max_len:
            raise InputError(f"{len(ids)} target tokens and the start: more than the decoder's "
                             f"{self.config.decoder.max_len} positions")
        return self.decoder.reader.ids([EOS, *ids])

    @torch.no_grad()
    def translate(self, text_or_source_ids, beam: int = 5, max_tokens: int | None = None, lenpen: float = 1.0,
                  unkpen: float = 0.0) -> Translation:
        """Translate one sentence (text, or source ids ending with </s>) by fairseq's search (the module's text):
        beam 5 and lenpen 1 as the paper tested IWSLT14 (its WMT14 scripts: beam 4, lenpen 0.6), beam 1 greedy.
        `max_tokens`: the most words before </s> (default a·|source| + b); at most the decoder's positions − 2, so
        the teacher-forced trace of the translation, which reads its final </s> too, fits them."""
        if not isinstance(beam, int) or beam < 1:
            raise InputError(f"beam={beam!r}: give a beam of 1 (greedy) or more")
        row = self.source_row(text_or_source_ids)
        source, states = self._trace(self.encoder, row, text_or_source_ids if isinstance(text_or_source_ids, str)
                                     else "", SOURCE)
        memory = SourceSystem(states, None)
        maxlen = int(MAX_LEN_A * len(row[0]) + MAX_LEN_B) if max_tokens is None else int(max_tokens)
        maxlen = min(maxlen, self.config.decoder.max_len - 2)
        if maxlen < 1:
            raise InputError(f"max_tokens={max_tokens}: give at least one word")
        best = beam_search(lambda prefixes: self.next_logprobs(prefixes, memory), beam, maxlen,
                           self.config.decoder.vocab_size, lenpen, unkpen)[0]
        text = self.tokenizer.target.decode(best.tokens) if self.tokenizer else ""
        target, _ = self._trace(self.decoder, self._target_row(best.tokens), text, TARGET, memory, len(row[0]))
        return Translation(source, target, best.tokens, text, best.score, beam)

    @torch.no_grad()
    def trace_target(self, source, target_ids) -> Trajectory:
        """The decoder's Trajectory on [</s>] + target_ids, teacher-forced (any target: a reference translation as
        well as the model's own), its particles pulled by the source's (text or ids) final states."""
        row = self.source_row(source)
        memory = self.encode(row[0])
        return self._trace(self.decoder, self._target_row(target_ids), "", TARGET, memory, len(row[0]))[0]

    @torch.no_grad()
    def _trace(self, model: Model, row, text: str, system: str, source: SourceSystem | None = None,
               source_length: int | None = None) -> tuple[Trajectory, torch.Tensor]:
        """(one system's Trajectory, its final states [1, T, d]): every sub-step recorded."""
        record: list = []
        final = model(torch.tensor([row[0]], device=self.device), None, record, source=source)
        meta = dict(model._meta(), system=system, translation=self.config.name)
        traj = model._trajectories([row], [text], record, final, model._steps(), meta,
                                   [source_length] if source_length else None)[0]
        return traj, final

    def save(self, path, card: str | None = None, dtype: torch.dtype | None = None):
        return save(self, path, card if card is not None else default_card_of(self), dtype)


def default_card_of(model: EncoderDecoder) -> str:
    """A card for a translation model of our own: what it is, then each system's card."""
    c = model.config
    return (f"# {c.name or 'translation model'}\n\nAn encoder–decoder ({c.source_lang or '?'} → {c.target_lang or '?'}"
            f"), {model.num_parameters():,} parameters; embeddings {'shared' if c.shared_embeddings else 'separate'}."
            f"\n\n" + "\n".join("#" + default_card(m) for m in (model.encoder, model.decoder)))


def build(config: TranslationConfig, tokenizer: TranslationReading | None = None) -> EncoderDecoder:
    """A fresh encoder–decoder in eval mode."""
    return EncoderDecoder(config, tokenizer).eval()


def from_folder(folder, fields: dict) -> EncoderDecoder:
    """The encoder–decoder a folder's config.json (`fields`) and tokenizer.json describe, its weights not yet read
    (macaron.loading reads and checks them)."""
    try:
        config = TranslationConfig.from_dict(fields)
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"{folder / 'config.json'}: {e}") from None
    config.name = config.name or folder.name
    tokenizer = None
    if (folder / "tokenizer.json").is_file():
        try:
            tokenizer = TranslationReading.from_file(folder / "tokenizer.json")
        except ReadingError as e:
            raise CheckpointError(str(e)) from None
        sizes = (tokenizer.source.get_vocab_size(), tokenizer.target.get_vocab_size())
        if sizes != (config.encoder.vocab_size, config.decoder.vocab_size):
            raise CheckpointError(f"{folder / 'tokenizer.json'}: dictionaries of {sizes[0]:,} and {sizes[1]:,} entries "
                                  f"for embeddings of {config.encoder.vocab_size:,} and {config.decoder.vocab_size:,}")
    return EncoderDecoder(config, tokenizer)



# ---- both systems on one clock ------------------------------------------------------------------------------------
def joint(tr: Translation) -> Trajectory:
    """Both particle systems as one Trajectory on one clock, for one picture: the source's particles first, then the
    target's. The encoder's sub-steps move the source while the target's particles wait at their embeddings; then the
    decoder's move the target while the source stays where the encoder left it (its final states are what
    cross-attention reads; post-LN they are its last state, pre-LN the encoder's last LayerNorm of it). Each mixing
    matrix is placed in its block of one [(S + T) × (S + T)] matrix: the encoder's in source × source, the decoder's
    self-attention in target × target, cross-attention in target rows × source columns; the rows of the system that
    does not move are zero. Decoder sub-steps run on from the encoder's last layer (time L_enc + t); meta
    "two_systems" says where the target starts and the encoder ends."""
    src, tgt = tr.source, tr.target
    S, T = len(src.tokens), len(tgt.tokens)
    enc_layers = src.times[-1]
    waiting = np.broadcast_to(tgt.states[0], (src.n_steps + 1, T, tgt.states.shape[-1]))
    encoded = np.broadcast_to(src.states[-1], (tgt.n_steps, S, src.states.shape[-1]))
    states = np.concatenate([np.concatenate([src.states, waiting], 1), np.concatenate([encoded, tgt.states[1:]], 1)])
    heads = {m.shape[0] for m in src.mixing + tgt.mixing if m is not None}

    def placed(m, rows: slice, cols: slice):
        if m is None:
            return None
        m = m if len(heads) == 1 else m.mean(0, keepdims=True)  # encoder and decoder of different head counts
        out = np.zeros((m.shape[0], S + T, S + T), np.float32)
        out[:, rows, cols] = m
        return out

    source, target = slice(0, S), slice(S, S + T)
    mixing = ([placed(m, source, source) for m in src.mixing]
              + [placed(m, target, source if step.kind == CROSS else target) for m, step in zip(tgt.mixing, tgt.steps)])
    steps = ([dataclasses.replace(s, label=f"encoder {s.label}") for s in src.steps]
             + [dataclasses.replace(s, layer=s.layer + int(enc_layers), time=s.time + enc_layers,
                                    label=f"decoder {s.label}") for s in tgt.steps])
    meta = dict(tgt.meta, model=tr.source.meta.get("translation") or tgt.meta.get("model", ""), causal=False,
                two_systems=dict(source=S, encoder_layers=float(enc_layers)))
    return Trajectory(tokens=src.tokens + tgt.tokens, token_ids=src.token_ids + tgt.token_ids, states=states,
                      steps=steps, mixing=mixing, final=np.concatenate([src.final, tgt.final]), meta=meta,
                      text=f"{src.text} → {tr.text}")
