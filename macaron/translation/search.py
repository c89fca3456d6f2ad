"""The searches an encoder–decoder translates by, as strategies (Search): each says which hypotheses live on after a
step, the decoder (NextWord) what the next word's log-probabilities are after each.

A search calls its decoder once a step: first with the start token, run whole; then with each live hypothesis'
newest word and the row of the previous call's hypotheses it continues, so that the decoder keeps those rows of
what it computed (KeyValueCache.select: fairseq's reorder_incremental_state, transformers' _reorder_cache) and runs
the new words alone; it never has to find a hypothesis' parent by its words.

    FairseqBeam            fairseq 0.6's SequenceGenerator (the paper's translation/fairseq/sequence_generator.py
                           and search.py) on one sentence, the paper's models' (macaron.formats.fairseq): the decoder
                           starts from </s>; beam search keeps the `beam` best hypotheses by their summed
                           log-probabilities, <pad> never chosen, no </s> before the first word, a hypothesis finished
                           when </s> is among the `beam` best candidates, stopping as soon as `beam` are finished (its
                           default, stop_early), each scored by its summed log-probability over its length ** lenpen;
                           beam 1 is its greedy search. At most a·|source| + b words (a = 0, b = 200, its defaults),
                           then every live hypothesis ends. Token ids are fairseq's Dictionary's (<pad> 1, </s> 2,
                           <unk> 3): Specials' defaults.
    TransformersGenerate   transformers' `generate` without sampling, Hugging Face Marian models'
                           (macaron.formats.marian), its Generation settings from the model's generation_config.json,
                           starting from the model's decoder_start_token_id: beam 1 its greedy search, more its beam
                           search.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import NamedTuple, Protocol

import torch
import torch.nn.functional as F

from ..network.model import Model
from ..network.operators import KeyValueCache, SourceSystem
from ..network.reading import InputError
from . import EOS, PAD, UNK

BEAM = 5                          # the paper's beam (test-iwslt14.sh)
MAX_LEN_A, MAX_LEN_B = 0.0, 200  # generate.py's --max-len-a and --max-len-b: at most a·|source| + b words
MIN_LEN = 1                       # --min-len: no </s> before the first word
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


class Hypothesis(NamedTuple):
    """A finished hypothesis of the search: its words and </s>, its score (summed log-probability over its length **
    lenpen) and each word's log-probability."""

    tokens: list[int]
    score: float
    positional: list[float]


def _positional(summed: list[float]) -> list[float]:
    """Each word's log-probability, from the running sums after each word."""
    return [b - a for a, b in zip([0.0] + summed, summed)]


class StepDecoder(Protocol):
    """The decoder as a search calls it, once a step: the log-probabilities [n, V] of the word after each of the n
    live hypotheses. `rows` None: `words` [n, t] are whole prefixes, the start token first (the first call); else
    `words` [n, k] are the hypotheses' new words and hypothesis i continues row rows[i] of the previous call's."""

    def __call__(self, words: torch.Tensor, rows: torch.Tensor | None = None) -> torch.Tensor: ...


class NextWord:
    """The decoder as a search reads it (a StepDecoder), by incremental decoding as fairseq's and transformers' own:
    a KeyValueCache holds what the decoder computed for the words read. Causal attention makes a prefix's keys and
    values depend on its own words only, so a hypothesis continues its parent's: the cache keeps the rows the search
    names (KeyValueCache.select) and only the new words run. The first call (rows None) runs its prefixes whole on a
    fresh cache; so does every call of a decoder whose attention is synthesized (its logits are no keys to keep),
    which keeps the prefixes themselves, reordered by the same rows. `program` and `edits`: the decoder run altered
    (macaron.interventions.prepare)."""

    def __init__(self, decoder: Model, source: SourceSystem | None, program=None, edits=None):
        self.decoder, self.source, self.program, self.edits = decoder, source, program, edits
        self.incremental = decoder.config.attention == "dot"
        self.cache: KeyValueCache | None = None
        self.prefixes: torch.Tensor | None = None  # synthesized attention: the live hypotheses, read whole each call

    def __call__(self, words: torch.Tensor, rows: torch.Tensor | None = None) -> torch.Tensor:
        words = words.to(self.decoder.device)
        if rows is None:  # the start: whole prefixes, nothing kept yet
            self.cache = KeyValueCache() if self.incremental else None
        elif self.incremental:
            self.cache.select(rows.to(words.device))
        else:  # no keys to keep: each hypothesis' whole prefix again
            words = torch.cat([self.prefixes[rows.to(words.device)], words], dim=1)
        self.prefixes = None if self.incremental else words
        hidden = self.decoder(words, None, program=self.program, source=self.source, cache=self.cache,
                              edits=self.edits)[:, -1]
        return F.log_softmax(self.decoder.head(hidden).float(), dim=-1)


class Search(ABC):
    """A search strategy: `run(decoder)` the finished hypotheses, best first (the module's text)."""

    @abstractmethod
    def run(self, decoder: StepDecoder) -> list[Hypothesis]:
        ...

    @property
    @abstractmethod
    def said(self) -> tuple[int, float]:
        """(its beam, the length penalty its scores are divided by), as a Translation records them."""

    @staticmethod
    def read(decoder: StepDecoder, prefixes: torch.Tensor, parents: torch.Tensor | None) -> torch.Tensor:
        """The log-probabilities [n, V] (float, on the CPU) of the word after each of `prefixes` [n, t]: the first
        call (parents None) reads them whole, the next ones their newest words, hypothesis i continuing row
        parents[i] of the previous call's."""
        out = decoder(prefixes) if parents is None else decoder(prefixes[:, -1:], parents)
        return out.float().cpu()


@dataclass(frozen=True)
class FairseqBeam(Search):
    """fairseq 0.6's SequenceGenerator._generate for one sentence, BeamSearch, stop_early and normalised scores (the
    module's text): at most `maxlen` words before </s>; `unkpen` subtracted from <unk>'s log-probability."""

    beam: int
    maxlen: int
    vocab_size: int
    lenpen: float = 1.0
    unkpen: float = 0.0
    min_len: int = MIN_LEN
    specials: Specials = Specials()

    @property
    def said(self) -> tuple[int, float]:
        return self.beam, self.lenpen

    def run(self, decoder: StepDecoder) -> list[Hypothesis]:
        start, eos, pad, unk = self.specials
        beam, lenpen, V = min(self.beam, self.vocab_size - 1), self.lenpen, self.vocab_size  # pad is never chosen
        prefixes = torch.full((1, 1), start, dtype=torch.long)  # the decoder's input so far, a row per live hypothesis
        parents = None  # the row of the previous call's hypotheses each live one continues (None: the first call)
        scores = torch.zeros(1, 0)  # each live hypothesis' summed log-probability after each of its words
        done: list[Hypothesis] = []

        def finish(row: int, total: float, step: int):
            if len(done) < beam:
                words = prefixes[row, 1:].tolist() + [eos]
                summed = scores[row].tolist() + [total]
                done.append(Hypothesis(words, total / (step + 1) ** lenpen, _positional(summed)))

        for step in range(self.maxlen + 1):
            lprobs = self.read(decoder, prefixes, parents)
            lprobs[:, pad] = float("-inf")
            lprobs[:, unk] -= self.unkpen
            totals = lprobs + scores[:, -1:] if step else lprobs  # [n, V]: summed log-probability with each next word
            if step == self.maxlen:  # out of room: every live hypothesis ends with </s>, the likeliest first
                for row in totals[:, eos].argsort(descending=True).tolist():
                    finish(row, float(totals[row, eos]), step)
                break
            best, flat = totals.view(-1).topk(min(2 * beam, totals.numel() - 1))  # 2·beam: half may be </s>
            rows, words = flat // V, flat % V
            ends = (words == eos).tolist()
            if step >= self.min_len:
                for j in range(beam):
                    if ends[j]:
                        finish(int(rows[j]), float(best[j]), step)
                if len(done) == beam:
                    break
            live = sorted(range(len(words)), key=lambda j: (ends[j], j))[:beam]  # the best that did not end
            parents = rows[live]
            prefixes = torch.cat([prefixes[parents], words[live, None]], dim=1)
            scores = torch.cat([scores[parents], best[live, None]], dim=1)
        return sorted(done, key=lambda h: h.score, reverse=True)


@dataclass(frozen=True)
class TransformersGenerate(Search):
    """transformers' GenerationMixin.generate for one sentence without sampling (generation/utils.py): beam 1 its
    greedy search (_sample: the best word each step), more its beam search (_beam_search). `max_length` counts the
    decoder's ids, the start included. Each step's log-probabilities pass its logits processors in its order:
    `banned` words and, below min_length, </s> to −∞; at the last place max_length leaves, only forced_eos_token_id;
    renormalised if renormalize_logits. A hypothesis ends at </s> or max_length. The finished hypotheses, best
    first, each scored by its summed log-probability over its length (</s> counted) ** lenpen (by default the
    generation's length_penalty)."""

    beam: int
    max_length: int
    generation: Generation
    specials: Specials = Specials()
    lenpen: float | None = None

    @property
    def said(self) -> tuple[int, float]:
        return self.beam, self.generation.length_penalty if self.lenpen is None else self.lenpen

    def run(self, decoder: StepDecoder) -> list[Hypothesis]:
        return self._greedy(decoder) if self.beam == 1 else self._beams(decoder)

    @property
    def penalty(self) -> float:
        return self.generation.length_penalty if self.lenpen is None else self.lenpen

    def _next(self, decoder: StepDecoder, prefixes: torch.Tensor, parents: torch.Tensor | None) -> torch.Tensor:
        """The next word's log-probabilities after `prefixes`, processed as _get_logits_processor's are for these
        settings."""
        g, eos = self.generation, self.specials.eos
        lprobs = self.read(decoder, prefixes, parents)
        lprobs[:, list(g.banned)] = float("-inf")
        if prefixes.shape[1] < g.min_length:
            lprobs[:, eos] = float("-inf")
        if g.forced_eos_token_id is not None and prefixes.shape[1] == self.max_length - 1:
            lprobs = torch.full_like(lprobs, float("-inf"))
            lprobs[:, g.forced_eos_token_id] = 0
        return F.log_softmax(lprobs, dim=-1) if g.renormalize_logits else lprobs

    def _greedy(self, decoder: StepDecoder) -> list[Hypothesis]:
        """The best word, until </s> or max_length."""
        eos = self.specials.eos
        prefixes = torch.full((1, 1), self.specials.start, dtype=torch.long)
        parents, summed = None, [0.0]
        while prefixes.shape[1] < self.max_length and (prefixes.shape[1] == 1 or prefixes[0, -1] != eos):
            lprobs = self._next(decoder, prefixes, parents)[0]
            word = int(lprobs.argmax())
            summed.append(summed[-1] + float(lprobs[word]))
            prefixes, parents = torch.cat([prefixes, torch.tensor([[word]])], dim=1), torch.zeros(1, dtype=torch.long)
        words = prefixes[0, 1:].tolist()
        return [Hypothesis(words, summed[-1] / len(words) ** self.penalty, _positional(summed[1:]))]

    def _beams(self, decoder: StepDecoder) -> list[Hypothesis]:
        """transformers' _beam_search on one sentence: each step the 2·beam best continuations of the live
        hypotheses; those of the first `beam` that end (</s>, or max_length reached) compete for the `beam` finished
        places, scored by length ** lenpen; the best `beam` that do not end live on. It stops when no live hypothesis
        can still beat the worst finished one (early_stopping False: judged at its present length; "never": at
        max_length), when `beam` are finished (early_stopping True), or when every continuation ends."""
        beam, max_length, lenpen, early_stopping = self.beam, self.max_length, self.penalty, \
            self.generation.early_stopping
        prefixes = torch.full((beam, 1), self.specials.start, dtype=torch.long)
        parents = None  # the row of the previous call's hypotheses each live one continues (None: the first call)
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
            lprobs = self._next(decoder, prefixes, parents)
            V = lprobs.shape[1]
            best, flat = (lprobs + live[:, None]).view(-1).topk(2 * beam)
            rows, words = flat // V, flat % V
            candidates = torch.cat([prefixes[rows], words[:, None]], dim=1)
            candidate_sums = torch.cat([sums[rows], best[:, None]], dim=1)
            ends = (words == self.specials.eos) | (length + 1 >= max_length)
            # the live hypotheses of the next step: the best `beam` that did not end
            alive = best + ends.float() * SHUT
            keep = alive.topk(beam).indices
            prefixes, parents, live, sums = candidates[keep], rows[keep], alive[keep], candidate_sums[keep]
            # the finished ones: an ending among the first `beam` candidates, by its length ** lenpen
            scores = best / (length ** lenpen)
            scores = scores + float(early_stopping is True and bool(is_finished.all())) * SHUT \
                + float(not hopeful) * SHUT
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


def own_search(config, source_length: int, beam: int | None = None, max_tokens: int | None = None,
               lenpen: float | None = None, unkpen: float = 0.0) -> Search:
    """The search a translator (its TranslationConfig) runs unless given another: fairseq 0.6's beam for ours and the
    paper's models, transformers' generate where the model's files set a Generation (Marian); each setting as given,
    else the model's own (fairseq: beam 5, lenpen 1, at most a·|source| + b words; Marian: its generation config),
    and at most the decoder's positions − 2 words, so that the trace of the translation and its </s> fits them."""
    g, vocab, positions = config.generation, config.decoder.vocab_size, config.decoder.max_len
    beam = (g.num_beams if g else BEAM) if beam is None else beam
    lenpen = (g.length_penalty if g else 1.0) if lenpen is None else lenpen
    if isinstance(beam, bool) or not isinstance(beam, int) or beam < 1:
        raise InputError(f"beam={beam!r}: give a beam of 1 (greedy) or more")
    if g and unkpen:
        raise InputError("unkpen is fairseq's: transformers' generate has no penalty for <unk>")
    if max_tokens is None:  # the words before </s> each search allows by default
        maxlen = int(MAX_LEN_A * source_length + MAX_LEN_B) if g is None else \
            (g.max_length or min(NEW_TOKENS + 1, positions)) - 2
    else:
        maxlen = int(max_tokens)
    maxlen = min(maxlen, positions - 2)
    if maxlen < 1:
        raise InputError(f"max_tokens={max_tokens}: give at least one word")
    if g is None:
        return FairseqBeam(beam, maxlen, vocab, lenpen, unkpen, specials=config.specials)
    return TransformersGenerate(beam, maxlen + 2, g, config.specials, lenpen)  # max_length: the start, maxlen, </s>
