"""What if: switch a force off, silence a head, cut or hold a particle, patch a state, and watch the particles part.

    from macaron import interventions as iv
    t = model.trace(text, interventions=[iv.Off("diffusion", layers=[0, 1]), iv.Head(layer=2, head=1),
                                        iv.Patch(source=other, token=4, state=6)])
    tr = translator.translate(text, beam=1, interventions=[iv.Off("cross")])
    iv.effect(model, model.trace(text), t)      each particle's distance from its own path, the answer before/after

One mechanism (DESIGN.md, "What if"): a sub-step's fraction h in the program the model runs (Off is h = 0, Scale
multiplies it: the step size made a knob) and one small hook the network reads sub-step by sub-step (Edits): a head's
output before the output projection, the positions a cut particle is hidden from, a particle's state held or
replaced. The clock stays the model's own, so an altered Trajectory lines up state by state with the unaltered one,
and its meta["interventions"] says what was done to it.

Layers count from 0 and are the program's entries (the model's layers, unless a program repeats one); `state` indexes
Trajectory.states (0 the embedding, then one per sub-step); `token` indexes Trajectory.tokens. On a translator, Off,
Scale and Head act in every system that has the sub-step (`system`: "source" or "target" for one), "cross" in the
decoder; Cut and Hold in the source sentence (system="target": the translation's particles); a Patch in the system
its source trajectory is of. The labels in meta count layers from 1, as the steps' labels do.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from .network.interventions import Cut, Edits, Head, Hold, Off, Patch, Scale, layers_said, said, whole_number
from .network.operators import SourceSystem
from .network.reading import InputError
from .trajectory import Trajectory

__all__ = ["Off", "Scale", "Head", "Cut", "Hold", "Patch", "Effect", "effect", "drift", "PatchingMap",
           "patching_map", "layers_said", "said"]


# ---- what it changed ----------------------------------------------------------------------------------------------
@dataclass
class Effect:
    """An altered run against the unaltered one: how far each particle strayed from its own path, and the answer."""

    drift: np.ndarray                 # [S, T]: each particle's distance from its own unaltered path at every state
    position: int | None              # where the model answers (Trajectory.guess_at); None: no answer to read
    before: list[tuple[str, float]]   # the top words and their probabilities, unaltered
    after: list[tuple[str, float]]    # the same, altered (its own top words)
    target_drift: np.ndarray | None = None  # a translation's target particles, when both runs wrote the same words


def drift(plain: Trajectory, altered: Trajectory) -> np.ndarray:
    """[S, T]: ‖altered − plain‖ of each particle at every state; the runs must be of the same particles and clock."""
    if plain.token_ids != altered.token_ids or plain.states.shape != altered.states.shape:
        raise InputError("the two runs are not of the same particles and sub-steps: compare a sentence's altered run "
                         "with its own unaltered one")
    return np.linalg.norm(altered.states.astype(np.float64) - plain.states, axis=-1)


def effect(model, plain, altered, k: int = 5) -> Effect:
    """What an intervention changed: `plain` and `altered` are one sentence's Trajectories of `model` (the answer: the
    top-k words where it answers, Trajectory.guess_at, by its head on the final state), or a translator's two
    Translations (the answer: each translation and its probability; the drift of the source's particles, and of the
    target's when both runs wrote the same words)."""
    if model.kind == "translator":
        same = plain.target_ids == altered.target_ids
        return Effect(drift(plain.source, altered.source), None, [translation_said(plain)],
                      [translation_said(altered)], drift(plain.target, altered.target) if same else None)
    d = drift(plain, altered)
    at = plain.guess_at if model.has_head else None
    if at is None:
        return Effect(d, None, [], [])
    return Effect(d, at, model.logit_lens(plain, at, k)[-1], model.logit_lens(altered, at, k)[-1])


def translation_said(tr) -> tuple[str, float]:
    """(a translation's text, its probability: the product of its words' by the search's score, lenpen undone)."""
    words = len(tr.target_ids)
    return tr.text, float(math.exp(tr.score * words ** tr.lenpen))


# ---- activation patching swept -------------------------------------------------------------------------------------
@dataclass
class PatchingMap:
    """How much of the clean answer each patch restores: the corrupted sentence run with one particle's state at one
    layer boundary taken from the clean run, for every boundary and particle."""

    restored: np.ndarray   # [boundaries, T]: (patched − corrupted) / (clean − corrupted) of the metric; 1 is clean
    states: list[int]      # each row's index into Trajectory.states: the state entering each layer, then the last
    tokens: list[str]      # the clean sentence's particles
    position: int          # where the answer is read
    clean: float           # the metric on the clean run
    corrupted: float       # on the corrupted run


def word_id(model, word) -> int:
    """A word's token id (a translator's: in its target vocabulary): the one token the word becomes after a space, as
    in the middle of a sentence ("she" → GPT-2's "Ġshe", SentencePiece's "▁she", an uncased BERT's "she" for "She"),
    else the token itself ("Ġshe"), else a token id."""
    translator = model.kind == "translator"
    tok = model.tokenizer.target if translator and model.tokenizer else model.tokenizer
    vocab = model.config.decoder.vocab_size if translator else model.config.vocab_size
    i = word
    if isinstance(word, str) and tok:
        ids = tok.encode(" " + word.strip(), add_special_tokens=False).ids if word.strip() else []
        i = ids[0] if len(ids) == 1 else tok.token_to_id(word)
    if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < vocab:
        raise InputError(f"word {word!r} is not one token of this model's vocabulary: give one of its tokens or a "
                         "token id")
    return int(i)


@torch.no_grad()
def patching_map(model, clean, corrupted, words: tuple, position: int | None = None, batch_size: int = 64,
                 prefix=()) -> PatchingMap:
    """Activation patching as a map (TransformerLens's get_act_patch_resid_pre, and the last state too): the metric
    is the logit difference logit(words[0]) − logit(words[1]) of the word the model answers at `position` (default:
    the clean sentence's, Trajectory.guess_at); every (layer boundary, particle) patch of the corrupted run with the
    clean run's state, `batch_size` runs a batch. On a translator the particles patched are the source's (the
    encoder's) and the answer is the translation's next word after `prefix` (target ids; default: its first word),
    teacher-forced: `position` is then len(prefix), the translation's particle that answers."""
    a, b, metric = (source_system if model.kind == "translator" else one_system)(model, clean, corrupted, words,
                                                                                 position, prefix)
    clean_m, corrupted_m = float(metric(a.token_ids)[0]), float(metric(b.token_ids)[0])
    if clean_m == corrupted_m:
        raise InputError("the two sentences give the same logit difference: there is nothing for a patch to restore")
    cells = [(s, t) for s in a.layer_boundaries() for t in range(len(a.tokens))]
    out = []
    for start in range(0, len(cells), batch_size):
        chunk = cells[start:start + batch_size]
        patches = [(t, s, torch.as_tensor(a.states[s, t], device=model.device), r) for r, (s, t) in enumerate(chunk)]
        out.append(metric(b.token_ids, Edits([None] * a.n_steps, [], patches), len(chunk)))
    restored = (torch.cat(out).numpy().reshape(len(a.layer_boundaries()), -1) - corrupted_m) / (clean_m - corrupted_m)
    return PatchingMap(restored, a.layer_boundaries(), a.tokens, metric.at, clean_m, corrupted_m)


def same_length(a: Trajectory, b: Trajectory) -> None:
    if len(a.tokens) != len(b.tokens):
        raise InputError(f"the clean sentence has {len(a.tokens)} tokens and the corrupted one {len(b.tokens)}: "
                         f"patch between sentences of the same length")


def one_system(model, clean, corrupted, words, position, prefix):
    """(clean and corrupted Trajectories, the metric of a run: ids, Edits, batch → [batch] logit differences) of an
    encoder or a decoder, the answer read at `position`."""
    if prefix:
        raise InputError("a prefix is a translation's beginning: this model is one particle system")
    a, b = model.trace(clean), model.trace(corrupted)
    same_length(a, b)
    at = a.guess_at if position is None else whole_number(position, "position")
    if at is None or at >= len(a.tokens):
        raise InputError(f"position {at}: give where the answer is read, a token of the sentence (or type a [MASK])")
    good, bad = (word_id(model, w) for w in words)

    def metric(ids, edits=None, batch: int = 1) -> torch.Tensor:  # [batch]
        logits = model.head(model(torch.tensor([ids], device=model.device).expand(batch, -1), edits=edits)[:, at])
        return (logits[:, good] - logits[:, bad]).float().cpu()

    metric.at = at
    return a, b, metric


def source_system(model, clean, corrupted, words, position, prefix):
    """one_system's for a translator: its source's Trajectories (greedy translations' encoders), and the metric of
    the translation's next word after `prefix`, teacher-forced, the decoder reading the patched source."""
    a, b = (model.translate(text, beam=1).source for text in (clean, corrupted))
    same_length(a, b)
    target = [int(i) for i in prefix]
    if position is not None and whole_number(position, "position") != len(target):
        raise InputError(f"position {position}: a translator answers the word after its prefix, at {len(target)}")
    if len(target) + 1 > model.config.decoder.max_len:
        raise InputError(f"a prefix of {len(target)} tokens is past the decoder's {model.config.decoder.max_len} "
                         "positions")
    good, bad = (word_id(model, w) for w in words)

    def metric(ids, edits=None, batch: int = 1) -> torch.Tensor:  # [batch]
        source = model.encoder(torch.tensor([ids], device=model.device).expand(batch, -1), edits=edits)
        row = torch.tensor([[model.config.start_id, *target]], device=model.device).expand(batch, -1)
        logits = model.decoder.head(model.decoder(row, source=SourceSystem(source, None))[:, -1])
        return (logits[:, good] - logits[:, bad]).float().cpu()

    metric.at = len(target)
    return a, b, metric
