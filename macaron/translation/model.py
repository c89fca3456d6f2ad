"""Translation as two particle systems: an encoder–decoder (DESIGN.md, "Two particle systems").

The source sentence's particles move through the encoder (a Model, as every encoder here); the target sentence's
through the decoder (a Model too: causal, with a next-word head), whose layers add one sub-step kind, cross-attention
(schemes.CROSS): the target's particles move toward the source's final states, a field the other system makes.

    m.translate("ein satz .", beam=5)    the source's Trajectory, the target's (teacher-forced on the translation,
                                         every sub-step recorded), the generated ids and the text
    m.search("ein satz .", beam=5)       the same search's best hypothesis alone, nothing recorded (for BLEU)
    m.trace("ein satz .", beam=1, interventions=[Off("cross")])   both systems as one Trajectory (joint), altered
                                         (macaron.interventions: in the search and in both systems' traces)
    m.target_logits(source_ids, target_ids)   [len(target_ids) + 1, V]: row k the next word after the start token and
                                              target_ids[:k]

A model translates as its own code does (macaron.translation.search): the paper's models (macaron.formats.fairseq)
by fairseq 0.6's SequenceGenerator on one sentence (FairseqBeam), Hugging Face Marian models (macaron.formats.marian)
by transformers' `generate` (TransformersGenerate, its Generation settings from the model's generation_config.json).
Both read the decoder one new word a step (NextWord: incremental decoding, as fairseq's and transformers' own).
search.own_search chooses a model's search from its config; `translate(..., search=...)` runs another.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from ..config import ModelConfig
from ..network.interventions import prepare
from ..network.model import Model, is_id_list, recorded_trajectories, store_shared_once
from ..network.operators import SourceSystem
from ..network.reading import InputError
from ..schemes import CROSS
from ..trajectory import Trajectory
from . import EOS, PAD, UNK
from .search import Generation, Hypothesis, NextWord, Search, Specials, own_search

SOURCE, TARGET = "source", "target"  # which particle system a Trajectory is (its meta["system"])
# Sentences to translate, by source language: German's "Bank" is a bench and a bank, English's "bank" a bank and a
# river's side, Spanish's "banco" a bench and a bank, so the same word must move differently in the decoder
# (cross-attention tells it which).
EXAMPLES = {
    "de": ("ich sitze auf der bank im park .", "ich bringe das geld zur bank .",
           "wir müssen über die zukunft unserer kinder reden .", "das ist eine sehr gute idee ."),
    "en": ("I sat on the bank of the river.", "I took the money to the bank.",
           "We have to talk about the future of our children.", "That is a very good idea."),
    "es": ("Me senté en el banco del parque.", "Llevé el dinero al banco.",
           "Tenemos que hablar del futuro de nuestros hijos.", "Esa es una muy buena idea."),
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
    # the token ids the search and the checks read (fairseq's Dictionary's by default; Marian's from its config)
    start_id: int = EOS
    eos_id: int = EOS
    pad_id: int = PAD
    unk_id: int = UNK
    generation: Generation | None = None  # transformers' generate settings (Marian); None: fairseq's generator

    def __post_init__(self):
        if isinstance(self.encoder, dict):
            self.encoder = ModelConfig.from_dict(self.encoder)
        if isinstance(self.decoder, dict):
            self.decoder = ModelConfig.from_dict(self.decoder)
        if isinstance(self.generation, dict):
            self.generation = Generation(**self.generation)
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

    @property
    def specials(self) -> Specials:
        return Specials(self.start_id, self.eos_id, self.pad_id, self.unk_id)

    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return dict(out, encoder=self.encoder.to_dict(), decoder=self.decoder.to_dict(),
                    generation=self.generation and dataclasses.asdict(self.generation))

    @classmethod
    def from_dict(cls, d: dict) -> "TranslationConfig":
        unknown = set(d) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise ValueError(f"unknown config fields {sorted(unknown)}")
        return cls(**d)


@dataclass
class Translation:
    """What `translate` gives: both particle systems' trajectories and the words."""

    source: Trajectory   # the encoder's
    target: Trajectory   # the decoder's, on [start] + target_ids (teacher-forced on the translation)
    target_ids: list[int]  # the generated words, ending with </s> (the start token left out)
    text: str            # target_ids as text: BPE removed, detokenised ("" without a tokenizer)
    score: float         # the search's score of the translation
    beam: int
    lenpen: float = 1.0  # the length penalty that score was divided by (its length to this power)




class EncoderDecoder(nn.Module):
    """Two particle systems: `encoder` (a Model) moves the source's particles, `decoder` (a causal Model with a
    next-word head and cross-attention sub-steps) the target's, pulled by the source's final states."""

    def __init__(self, config: TranslationConfig, tokenizer=None):
        # tokenizer: how both languages are read, its .source and .target (formats.moses_bpe's TranslationReading,
        # JointReading for ours); None: the model reads token ids only
        super().__init__()
        self.config, self.tokenizer = config, tokenizer
        self.encoder = Model(config.encoder, tokenizer.source if tokenizer else None)
        self.decoder = Model(config.decoder, tokenizer.target if tokenizer else None)
        if config.shared_embeddings:  # one table for the source, the target and the next-word head
            self.decoder.token_embedding = self.encoder.token_embedding
        store_shared_once(self)  # a shared table is stored once, under the encoder's name

    kind = "translator"  # two particle systems (a Model's kind: "encoder" or "decoder", one)

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
        elif is_id_list(text_or_ids):
            ids, tokens, _, _ = self.encoder.reader.ids(text_or_ids)
            c = self.config
            if ids[-1] != c.eos_id or c.pad_id in ids:
                raise InputError(f"source ids end with </s> (id {c.eos_id}) and hold no <pad> (id {c.pad_id}), as "
                                 f"the tokenizer gives them")
        else:
            raise InputError("nothing to translate: give a sentence, or its source ids")
        if len(ids) < 2:
            raise InputError("The text has no readable tokens: type a sentence with words in it.")
        return ids, tokens, 0, None

    # ---- the computation ----------------------------------------------------------------------------------------
    @torch.no_grad()
    def encode(self, source_ids: list[int], interventions=None) -> SourceSystem:
        """The source's final states [1, S, d], as the decoder's cross-attention reads them (`interventions` in the
        encoder)."""
        ids = torch.tensor([source_ids], device=self.device)
        program, edits = prepare(self.encoder, interventions, [len(source_ids)], system=SOURCE)
        return SourceSystem(self.encoder(ids, program=program, edits=edits), None)

    def forward(self, source, source_mask, target_in):
        """Teacher-forced batches: the decoder's final states [B, T, d] on target_in [B, T], pulled by the source's
        [B, S] (source_mask [B, S]: True on real tokens, None without padding; the target needs none: causal)."""
        return self.decoder(target_in, None, source=SourceSystem(self.encoder(source, source_mask), source_mask))

    @torch.no_grad()
    def target_logits(self, source_ids, target_ids) -> torch.Tensor:
        """[len(target_ids) + 1, V]: row k the next-word logits after the start token and target_ids[:k],
        teacher-forced."""
        source = self.encode(self.source_row(source_ids)[0])
        ids = self._target_row(target_ids)[0]
        hidden = self.decoder(torch.tensor([ids], device=self.device), None, source=source)
        return self.decoder.head(hidden)[0]

    def _target_row(self, target_ids):
        """The decoder's input for target_ids, [start] + target_ids, as a checked row."""
        ids = [int(i) for i in (target_ids.tolist() if torch.is_tensor(target_ids) else target_ids)]
        if len(ids) + 1 > self.config.decoder.max_len:
            raise InputError(f"{len(ids)} target tokens and the start: more than the decoder's "
                             f"{self.config.decoder.max_len} positions")
        return self.decoder.reader.ids([self.config.start_id, *ids])

    @torch.no_grad()
    def translate(self, text_or_source_ids, beam: int | None = None, max_tokens: int | None = None,
                  lenpen: float | None = None, unkpen: float = 0.0, interventions=None,
                  search: Search | None = None) -> Translation:
        """Translate one sentence (text, or source ids ending with </s>) by the model's own search (the module's text).
        `beam`: 1 greedy; by default the model's own (fairseq: 5, as the paper tested IWSLT14; its WMT14 scripts: 4;
        Marian: its generation config's num_beams). `lenpen`: by default fairseq's 1, Marian's length_penalty.
        `max_tokens`: the most words before </s> (default fairseq's a·|source| + b, Marian's max_length); at most the
        decoder's positions − 2, so the teacher-forced trace of the translation, which reads its final </s> too, fits
        them. `unkpen` (fairseq's): subtracted from <unk>'s log-probability (search.own_search). `search`: another
        search (a translation.search.Search) instead of the model's own; the settings before it are then not read.
        `interventions`: what to change in both systems as they run, the search included (macaron.interventions)."""
        row = self.source_row(text_or_source_ids)
        search = search or own_search(self.config, len(row[0]), beam, max_tokens, lenpen, unkpen)
        source, states = self._trace(self.encoder, row, text_or_source_ids if isinstance(text_or_source_ids, str)
                                     else "", SOURCE, interventions=interventions)
        memory = SourceSystem(states, None)
        best = search.run(NextWord(self.decoder, memory, *prepare(self.decoder, interventions, system=TARGET)))[0]
        text = self.tokenizer.target.decode(best.tokens) if self.tokenizer else ""
        target, _ = self._trace(self.decoder, self._target_row(best.tokens), text, TARGET, memory, len(row[0]),
                                interventions)
        return Translation(source, target, best.tokens, text, best.score, *search.said)

    def trace(self, text_or_source_ids, beam: int | None = 1, interventions=None, **options) -> Trajectory:
        """One sentence translated (translate, greedy by default), both systems as one Trajectory on one clock
        (joint): what a translator's trace is, `interventions` and all."""
        return joint(self.translate(text_or_source_ids, beam, interventions=interventions, **options))

    @torch.no_grad()
    def search(self, text_or_source_ids, beam: int | None = None, max_tokens: int | None = None,
               lenpen: float | None = None, unkpen: float = 0.0, search: Search | None = None) -> Hypothesis:
        """translate's search alone, nothing traced: its best hypothesis (words ending with </s>, score), what a BLEU
        score reads."""
        row = self.source_row(text_or_source_ids)
        search = search or own_search(self.config, len(row[0]), beam, max_tokens, lenpen, unkpen)
        return search.run(NextWord(self.decoder, self.encode(row[0])))[0]

    @torch.no_grad()
    def trace_target(self, source, target_ids, interventions=None) -> Trajectory:
        """The decoder's Trajectory on [start] + target_ids, teacher-forced (any target: a reference translation as
        well as the model's own), its particles pulled by the source's (text or ids) final states; `interventions`
        in both systems (macaron.interventions)."""
        row = self.source_row(source)
        memory = self.encode(row[0], interventions)
        return self._trace(self.decoder, self._target_row(target_ids), "", TARGET, memory, len(row[0]),
                           interventions)[0]

    @torch.no_grad()
    def _trace(self, model: Model, row, text: str, system: str, source: SourceSystem | None = None,
               source_length: int | None = None, interventions=None) -> tuple[Trajectory, torch.Tensor]:
        """(one system's Trajectory, its final states [1, T, d]): every sub-step recorded, `interventions` in it."""
        program, edits = prepare(model, interventions, [len(row[0])], system=system)
        record: list = []
        final = model(torch.tensor([row[0]], device=self.device), None, record, program, source=source, edits=edits)
        meta = dict(model.trace_meta(interventions=interventions), system=system, translation=self.config.name)
        traj = recorded_trajectories([row], [text], record, final, model.trace_steps(), meta,
                                     [source_length] if source_length else None)[0]
        return traj, final


def build(config: TranslationConfig, tokenizer=None) -> EncoderDecoder:
    """A fresh encoder–decoder in eval mode."""
    return EncoderDecoder(config, tokenizer).eval()


class JointReading(NamedTuple):
    """A translator of ours reads both languages with one joint vocabulary (a Hugging Face tokenizers Tokenizer,
    macaron.train.tatoeba): a source's pieces and </s>; a translation's ids read back to text by its decoder."""

    source: object
    note: str = ""

    @property
    def target(self):
        return self.source

    def save(self, path) -> None:
        self.source.save(str(path))


PRESETS = "presets.txt"  # a translator trained here ships the first sentences of its test set (train.publish)


def presets(folder) -> list[str]:
    """A translator's own preset sentences (its folder's presets.txt, one a line), or []."""
    file = Path(folder) / PRESETS
    try:
        return [line for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError):
        return []


# ---- both systems on one clock ------------------------------------------------------------------------------------
def joint(tr: Translation) -> Trajectory:
    """Both particle systems as one Trajectory on one clock, for one picture: the source's particles first, then the
    target's. The encoder's sub-steps move the source while the target's particles wait at their embeddings; then the
    decoder's move the target while the source stays where the encoder left it (its final states are what
    cross-attention reads; post-LN they are its last state, pre-LN the encoder's last LayerNorm of it). Each mixing
    matrix is placed in its block of one [(S + T) × (S + T)] matrix: the encoder's in source × source, the decoder's
    self-attention in target × target, cross-attention in target rows × source columns; the rows of the system that
    does not move are zero. Decoder sub-steps run on from the encoder's last layer (time L_enc + t); meta
    "two_systems" says where the target starts and where the encoder ends (its time and its last sub-step)."""
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
                two_systems=dict(source=S, encoder_layers=float(enc_layers), encoder_steps=src.n_steps))
    return Trajectory(tokens=src.tokens + tgt.tokens, token_ids=src.token_ids + tgt.token_ids, states=states,
                      steps=steps, mixing=mixing, final=np.concatenate([src.final, tgt.final]), meta=meta,
                      text=f"{src.text} → {tr.text}")
