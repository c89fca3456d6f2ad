"""Translation as two particle systems: an encoder–decoder (DESIGN.md, "Two particle systems").

The source sentence's particles move through the encoder (a Model, as every encoder here); the target sentence's
through the decoder (a Model too: causal, with a next-word head), whose layers add one sub-step kind, cross-attention
(schemes.CROSS): the target's particles move toward the source's final states, a field the other system makes.

    m.translate("ein satz .", beam=5)    the source's Trajectory, the target's (teacher-forced on the translation,
                                         every sub-step recorded), the generated ids and the text
    m.search("ein satz .", beam=5)       the same search's best hypothesis alone, nothing recorded (for BLEU)
    m.target_logits(source_ids, target_ids)   [len(target_ids) + 1, V]: row k the next word after the start token and
                                              target_ids[:k]

A model translates as its own code does. The paper's models (macaron.formats.fairseq) by fairseq 0.6's SequenceGenerator
(the paper's translation/fairseq/sequence_generator.py and search.py) on one sentence, `beam_search`: the decoder
starts from </s>; beam search keeps the `beam` best hypotheses by their summed log-probabilities, <pad> never chosen,
no </s> before the first word, a hypothesis finished when </s> is among the `beam` best candidates, stopping as soon
as `beam` are finished (its default, stop_early), each scored by its summed log-probability over its length **
lenpen; beam 1 is its greedy search. At most a·|source| + b words (a = 0, b = 200, its defaults), then every live
hypothesis ends. Token ids are fairseq's Dictionary's (<pad> 1, </s> 2, <unk> 3): TranslationConfig's defaults.
Hugging Face Marian models (macaron.formats.marian) by transformers' `generate` (`generate_search`, its Generation
settings from the model's generation_config.json), starting from the model's decoder_start_token_id. Both searches
read the decoder one new word a step (NextWord: incremental decoding, as fairseq's and transformers' own).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..config import ModelConfig
from ..formats.folder import CheckpointError, default_card, read_facts, save
from ..formats.moses_bpe import EOS, PAD, UNK, ReadingError, TranslationReading, is_moses_bpe_pair
from ..network.model import Model, is_id_list, recorded_trajectories, store_shared_once
from ..network.operators import KeyValueCache, SourceSystem
from ..network.reading import InputError
from ..schemes import CROSS
from ..trajectory import Trajectory

MAX_LEN_A, MAX_LEN_B = 0.0, 200  # generate.py's --max-len-a and --max-len-b: at most a·|source| + b words
MIN_LEN = 1                       # --min-len: no </s> before the first word
BEAM = 5                          # the paper's beam (test-iwslt14.sh)
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
NEW_TOKENS = 20                   # transformers' max_length when no config sets one: 20 tokens after the start
SHUT = -1.0e9                     # transformers' beam search: the score that takes a hypothesis out of the running


class Specials(NamedTuple):
    """The token ids a search reads: the decoder's first input, the end of a sentence, padding (never chosen), the
    unknown word."""

    start: int = EOS
    eos: int = EOS
    pad: int = PAD
    unk: int = UNK


@dataclass
class Generation:
    """transformers' GenerationConfig, the fields `generate` reads for one sentence without sampling (the others are
    refused where a model's files set them: macaron.formats.marian): its defaults are transformers'."""

    num_beams: int = 1
    length_penalty: float = 1.0
    early_stopping: bool | str = False   # True: stop at num_beams finished; False: a heuristic; "never"
    max_length: int | None = None        # the decoder's ids, the start included (None: NEW_TOKENS after the start)
    min_length: int = 0                  # no </s> while the decoder's ids are fewer
    banned: tuple[int, ...] = ()         # bad_words_ids of one token each (Marian's [[pad]])
    forced_eos_token_id: int | None = None  # the one word allowed at the last place max_length leaves
    renormalize_logits: bool = False     # log-softmax again after the bans

    def __post_init__(self):
        self.banned = tuple(self.banned)  # JSON gives a list


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
    target: Trajectory   # the decoder's, on [start] + target_ids (teacher-forced on the translation)
    target_ids: list[int]  # the generated words, ending with </s> (the start token left out)
    text: str            # target_ids as text: BPE removed, detokenised ("" without a tokenizer)
    score: float         # the search's score of the translation
    beam: int
    lenpen: float = 1.0  # the length penalty that score was divided by (its length to this power)


def beam_search(next_logprobs: Callable[[torch.Tensor], torch.Tensor], beam: int, maxlen: int, vocab_size: int,
                lenpen: float = 1.0, unkpen: float = 0.0, min_len: int = MIN_LEN,
                specials: Specials = Specials()) -> list[Hypothesis]:
    """fairseq 0.6's SequenceGenerator._generate for one sentence, BeamSearch, stop_early and normalised scores (the
    module's text); `next_logprobs(prefixes [n, t]) -> [n, V]` the log-probabilities of the word after each prefix.
    The finished hypotheses, best first."""
    start, eos, pad, unk = specials
    beam = min(beam, vocab_size - 1)  # pad is never chosen
    prefixes = torch.full((1, 1), start, dtype=torch.long)  # the decoder's input so far, one row per live hypothesis
    scores = torch.zeros(1, 0)  # each live hypothesis' summed log-probability after each of its words
    done: list[Hypothesis] = []

    def finish(row: int, total: float, step: int):
        if len(done) < beam:
            words = prefixes[row, 1:].tolist() + [eos]
            done.append(Hypothesis(words, total / (step + 1) ** lenpen, _positional(scores[row].tolist() + [total])))

    for step in range(maxlen + 1):
        lprobs = next_logprobs(prefixes).float().cpu()
        lprobs[:, pad] = float("-inf")
        lprobs[:, unk] -= unkpen
        totals = lprobs + scores[:, -1:] if step else lprobs  # [n, V]: summed log-probability with each next word
        if step == maxlen:  # out of room: every live hypothesis ends with </s>, the likeliest first
            for row in totals[:, eos].argsort(descending=True).tolist():
                finish(row, float(totals[row, eos]), step)
            break
        best, flat = totals.view(-1).topk(min(2 * beam, totals.numel() - 1))  # 2·beam: half may be </s>
        rows, words = flat // vocab_size, flat % vocab_size
        ends = (words == eos).tolist()
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


def _positional(summed: list[float]) -> list[float]:
    """Each word's log-probability, from the running sums after each word."""
    return [b - a for a, b in zip([0.0] + summed, summed)]


def generate_search(next_logprobs: Callable[[torch.Tensor], torch.Tensor], beam: int, max_length: int,
                    generation: Generation, specials: Specials, lenpen: float | None = None) -> list[Hypothesis]:
    """transformers' GenerationMixin.generate for one sentence without sampling (generation/utils.py): beam 1 its
    greedy search (_sample: the best word each step), more its beam search (_beam_search). `max_length` counts the
    decoder's ids, the start included. Each step's log-probabilities pass its logits processors in its order:
    `banned` words and, below min_length, </s> to −∞; at the last place max_length leaves, only forced_eos_token_id;
    renormalised if renormalize_logits. A hypothesis ends at </s> or max_length. The finished hypotheses, best
    first, each scored by its summed log-probability over its length (</s> counted) ** length_penalty."""
    g, (start, eos, _, _) = generation, specials
    lenpen = g.length_penalty if lenpen is None else lenpen

    def processed(prefixes: torch.Tensor) -> torch.Tensor:  # _get_logits_processor's, for these settings
        lprobs = next_logprobs(prefixes).float().cpu()
        lprobs[:, list(g.banned)] = float("-inf")
        if prefixes.shape[1] < g.min_length:
            lprobs[:, eos] = float("-inf")
        if g.forced_eos_token_id is not None and prefixes.shape[1] == max_length - 1:
            lprobs = torch.full_like(lprobs, float("-inf"))
            lprobs[:, g.forced_eos_token_id] = 0
        return F.log_softmax(lprobs, dim=-1) if g.renormalize_logits else lprobs

    prefixes = torch.full((1, 1), start, dtype=torch.long)
    if beam == 1:  # greedy: the best word, until </s> or max_length
        summed = [0.0]
        while prefixes.shape[1] < max_length and (prefixes.shape[1] == 1 or prefixes[0, -1] != eos):
            lprobs = processed(prefixes)[0]
            word = int(lprobs.argmax())
            summed.append(summed[-1] + float(lprobs[word]))
            prefixes = torch.cat([prefixes, torch.tensor([[word]])], dim=1)
        words = prefixes[0, 1:].tolist()
        return [Hypothesis(words, summed[-1] / len(words) ** lenpen, _positional(summed[1:]))]
    return _beams(processed, prefixes.expand(beam, 1), max_length, lenpen, g.early_stopping, eos)


def _beams(processed, prefixes: torch.Tensor, max_length: int, lenpen: float, early_stopping, eos: int
           ) -> list[Hypothesis]:
    """transformers' _beam_search on one sentence: each step the 2·beam best continuations of the live hypotheses;
    those of the first `beam` that end (</s>, or max_length reached) compete for the `beam` finished places, scored
    by length ** lenpen; the best `beam` that do not end live on. It stops when no live hypothesis can still beat the
    worst finished one (early_stopping False: judged at its present length; "never": at max_length), when `beam`
    are finished (early_stopping True), or when every continuation ends."""
    beam = len(prefixes)
    live = torch.full((beam,), SHUT)
    live[0] = 0.0  # one hypothesis to start from: the others are copies, kept out of the first choice
    sums = torch.zeros(beam, 0)  # each live hypothesis' summed log-probability after each of its words
    finished: list[list[int] | None] = [None] * beam
    finished_sums: list[list[float]] = [[]] * beam
    finished_scores = torch.full((beam,), SHUT)
    is_finished = torch.zeros(beam, dtype=torch.bool)
    hopeful = True  # whether a live hypothesis may still beat the worst finished one
    while True:
        length = prefixes.shape[1]  # the decoder's ids so far, the start included
        lprobs = processed(prefixes)
        V = lprobs.shape[1]
        best, flat = (lprobs + live[:, None]).view(-1).topk(2 * beam)
        rows, words = flat // V, flat % V
        candidates = torch.cat([prefixes[rows], words[:, None]], dim=1)
        candidate_sums = torch.cat([sums[rows], best[:, None]], dim=1)
        ends = (words == eos) | (length + 1 >= max_length)
        # the live hypotheses of the next step: the best `beam` that did not end
        alive = best + ends.float() * SHUT
        keep = alive.topk(beam).indices
        prefixes, live, sums = candidates[keep], alive[keep], candidate_sums[keep]
        # the finished ones: an ending among the first `beam` candidates, by its length ** lenpen
        scores = best / (length ** lenpen)
        scores = scores + float(early_stopping is True and bool(is_finished.all())) * SHUT + float(not hopeful) * SHUT
        ending = ends & (torch.arange(2 * beam) < beam)
        scores = scores + (~ending).float() * SHUT
        merged = torch.cat([finished_scores, scores])
        picked = merged.topk(beam).indices.tolist()
        tokens = finished + [c[1:].tolist() for c in candidates]
        all_sums = finished_sums + candidate_sums.tolist()
        finished, finished_sums = [tokens[i] for i in picked], [all_sums[i] for i in picked]
        finished_scores, is_finished = merged[picked], torch.cat([is_finished, ending])[picked]
        # could a live hypothesis still beat the worst finished one? (_check_early_stop_heuristic)
        at = max_length - 1 if early_stopping == "never" and lenpen > 0 else length
        could = live[0] / (at ** lenpen) > torch.where(is_finished, finished_scores.min(), torch.tensor(SHUT))
        hopeful = hopeful and bool(could.any())
        if not hopeful or (early_stopping is True and bool(is_finished.all())) or bool(ends.all()):
            break
    return [Hypothesis(t, float(s), _positional(sm)) for t, s, sm, f in
            zip(finished, finished_scores, finished_sums, is_finished) if f]


class NextWord:
    """The decoder as a search reads it: prefixes [n, t] -> [n, V], the log-probabilities of the word after each,
    by incremental decoding (KeyValueCache). Causal attention makes a prefix's keys and values depend on its own
    words only, so the row of the last call's prefixes that is a prefix without its newest word holds them: only
    the newest word is run. A call whose prefixes do not all extend the last call's (the first) runs them whole, as
    does every call of a decoder whose attention is synthesized (its logits are no keys to keep)."""

    def __init__(self, decoder: Model, source: SourceSystem):
        self.decoder, self.source = decoder, source
        self.incremental = decoder.config.attention == "dot"
        self.cache, self.read = KeyValueCache(), None  # the keys and values of `read`, the last call's prefixes

    def __call__(self, prefixes: torch.Tensor) -> torch.Tensor:
        prefixes = prefixes.to(self.decoder.device)
        rows = self._parents(prefixes) if self.incremental else None
        if rows is None:
            self.cache, new = KeyValueCache() if self.incremental else None, prefixes
        else:
            self.cache.select(rows)
            new = prefixes[:, -1:]
        hidden = self.decoder(new, None, source=self.source, cache=self.cache)[:, -1]
        self.read = prefixes
        return F.log_softmax(self.decoder.head(hidden).float(), dim=-1)

    def _parents(self, prefixes: torch.Tensor) -> torch.Tensor | None:
        """For each prefix the row of the last call's that is it without its newest word, or None if one has none."""
        if self.read is None or prefixes.shape[1] != self.read.shape[1] + 1:
            return None
        same = (prefixes[:, None, :-1] == self.read[None]).all(-1)  # [n, rows read]
        return same.int().argmax(1) if bool(same.any(1).all()) else None


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
        store_shared_once(self)  # a shared table is stored once, under the encoder's name

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
    def encode(self, source_ids: list[int]) -> SourceSystem:
        """The source's final states [1, S, d], as the decoder's cross-attention reads them."""
        ids = torch.tensor([source_ids], device=self.device)
        return SourceSystem(self.encoder(ids), None)

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
                  lenpen: float | None = None, unkpen: float = 0.0) -> Translation:
        """Translate one sentence (text, or source ids ending with </s>) by the model's own search (the module's text).
        `beam`: 1 greedy; by default the model's own (fairseq: 5, as the paper tested IWSLT14; its WMT14 scripts: 4;
        Marian: its generation config's num_beams). `lenpen`: by default fairseq's 1, Marian's length_penalty.
        `max_tokens`: the most words before </s> (default fairseq's a·|source| + b, Marian's max_length); at most the
        decoder's positions − 2, so the teacher-forced trace of the translation, which reads its final </s> too, fits
        them. `unkpen` (fairseq's): subtracted from <unk>'s log-probability."""
        beam, lenpen = self._settings(beam, lenpen, unkpen)
        row = self.source_row(text_or_source_ids)
        source, states = self._trace(self.encoder, row, text_or_source_ids if isinstance(text_or_source_ids, str)
                                     else "", SOURCE)
        memory = SourceSystem(states, None)
        best = self._search(row, memory, beam, max_tokens, lenpen, unkpen)
        text = self.tokenizer.target.decode(best.tokens) if self.tokenizer else ""
        target, _ = self._trace(self.decoder, self._target_row(best.tokens), text, TARGET, memory, len(row[0]))
        return Translation(source, target, best.tokens, text, best.score, beam, lenpen)

    @torch.no_grad()
    def search(self, text_or_source_ids, beam: int | None = None, max_tokens: int | None = None,
               lenpen: float | None = None, unkpen: float = 0.0) -> Hypothesis:
        """translate's search alone, nothing traced: its best hypothesis (words ending with </s>, score), what a BLEU
        score reads."""
        beam, lenpen = self._settings(beam, lenpen, unkpen)
        row = self.source_row(text_or_source_ids)
        return self._search(row, self.encode(row[0]), beam, max_tokens, lenpen, unkpen)

    def _settings(self, beam, lenpen, unkpen) -> tuple[int, float]:
        """(beam, lenpen) as given, else the model's own; checked."""
        g = self.config.generation
        beam = (g.num_beams if g else BEAM) if beam is None else beam
        lenpen = (g.length_penalty if g else 1.0) if lenpen is None else lenpen
        if not isinstance(beam, int) or beam < 1:
            raise InputError(f"beam={beam!r}: give a beam of 1 (greedy) or more")
        if g and unkpen:
            raise InputError("unkpen is fairseq's: transformers' generate has no penalty for <unk>")
        return beam, lenpen

    def _search(self, row, memory: SourceSystem, beam: int, max_tokens, lenpen: float, unkpen: float) -> Hypothesis:
        """The best hypothesis of the model's own search for the source `row`, whose final states are `memory`."""
        c, g = self.config, self.config.generation
        if max_tokens is None:  # the words before </s> each search allows by default
            maxlen = int(MAX_LEN_A * len(row[0]) + MAX_LEN_B) if g is None else \
                (g.max_length or min(NEW_TOKENS + 1, c.decoder.max_len)) - 2
        else:
            maxlen = int(max_tokens)
        maxlen = min(maxlen, c.decoder.max_len - 2)
        if maxlen < 1:
            raise InputError(f"max_tokens={max_tokens}: give at least one word")
        next_logprobs = NextWord(self.decoder, memory)
        if g is None:
            return beam_search(next_logprobs, beam, maxlen, c.decoder.vocab_size, lenpen, unkpen,
                               specials=c.specials)[0]
        return generate_search(next_logprobs, beam, maxlen + 2, g, c.specials, lenpen)[0]  # the start, maxlen, </s>

    @torch.no_grad()
    def trace_target(self, source, target_ids) -> Trajectory:
        """The decoder's Trajectory on [start] + target_ids, teacher-forced (any target: a reference translation as
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
        meta = dict(model.trace_meta(), system=system, translation=self.config.name)
        traj = recorded_trajectories([row], [text], record, final, model.trace_steps(), meta,
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


def reading_of(file) -> TranslationReading | JointReading:
    """A translation folder's tokenizer.json: the paper's reading (ours, key "reader") or one joint vocabulary."""
    from tokenizers import Tokenizer

    if is_moses_bpe_pair(file):
        return TranslationReading.from_file(file)
    try:
        return JointReading(Tokenizer.from_file(str(file)))
    except Exception as e:  # tokenizers raises its own Exception for a file it cannot read
        raise ReadingError(f"{file}: not a readable tokenizer ({e})") from None


PRESETS = "presets.txt"  # a translator trained here ships the first sentences of its test set (train.publish)


def presets(folder) -> list[str]:
    """A translator's own preset sentences (its folder's presets.txt, one a line), or []."""
    file = Path(folder) / PRESETS
    try:
        return [line for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError):
        return []


def test_scores(folder) -> dict | None:
    """A translator trained here: its test BLEU and chrF with what they were measured on (its training.json's
    final scores), or None for any other folder."""
    try:
        facts = read_facts(Path(folder)) or {}
        final = facts.get("final") or {}
        return {k: final[k] for k in ("bleu", "chrf", "beam", "lenpen", "sentences", "bleu_signature")} \
            if facts.get("task") == "translation" and "bleu" in final else None
    except (CheckpointError, OSError, ValueError, KeyError):
        return None


def from_folder(folder, fields: dict) -> EncoderDecoder:
    """The encoder–decoder a folder's config.json (`fields`) and tokenizer.json describe, its weights not yet read
    (macaron.sources.loading reads and checks them)."""
    try:
        config = TranslationConfig.from_dict(fields)
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"{folder / 'config.json'}: {e}") from None
    config.name = config.name or folder.name
    tokenizer = None
    if (folder / "tokenizer.json").is_file():
        try:
            tokenizer = reading_of(folder / "tokenizer.json")
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
