"""Trajectory: a sentence's path through a model, one state per sub-step.

Everything downstream (plots, metrics, exports, comparisons) reads this object and never
reaches into a model.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field, fields

import numpy as np

SPECIAL_TOKENS = ("[CLS]", "[SEP]", "[PAD]", "</s>", "<pad>")  # </s>: fairseq's end and start; <pad>: Marian's start
MASK_TOKEN = "[MASK]"  # where a person types a word to be guessed (a decoder reads it as the place of its next word)


def brief(obj) -> str:
    """A dataclass in a line or two: arrays by shape and dtype, lists by length, long values cut, so that a
    notebook cell ending in a trajectory (or an analysis result) echoes what it holds, not every number."""
    def said(v) -> str:
        if isinstance(v, np.ndarray):
            return np.array2string(v, precision=4, separator=", ") if v.size <= 4 else f"array{list(v.shape)} {v.dtype}"
        if isinstance(v, float):
            return f"{v:.4g}"
        if isinstance(v, list) and v and not isinstance(v[0], str):
            return f"[{len(v)} × {type(v[0]).__name__}]"
        r = repr(v)
        if len(r) <= 72:
            return r
        return r[:70] + (f"…] ({len(v)})" if isinstance(v, list) else f"… ({len(v)})" if isinstance(v, dict) else "…")
    return f"{type(obj).__name__}(" + ", ".join(f"{f.name}={said(getattr(obj, f.name))}" for f in fields(obj)) + ")"


@dataclass(frozen=True)
class Step:
    """One sub-step of one layer: `layer` (0-based), `kind` (what moved the particles: schemes.SUBSTEP_KINDS),
    `fraction` (the share of the layer's step h it runs for), `time` (the depth reached, in layers) and `label`."""

    layer: int       # 0-based layer index
    kind: str        # "diffusion" | "convection" | "full" | "cross" (schemes.SUBSTEP_KINDS)
    fraction: float  # h: share of the layer's step this sub-step runs for
    time: float      # depth reached after this sub-step, in layers (boundaries on integers)
    label: str       # e.g. "layer 3 · ½ convection (FFN)"


@dataclass
class Trajectory:
    """One sentence's path through one model: a particle per token, a state per sub-step.

    Fields: `tokens` (display strings) and `token_ids`; `states`, float32 [n_steps + 1, n_tokens, d], the embedding
    (with its position signal) first, then the residual stream after every sub-step; `steps`, one `Step` per sub-step
    (layer, kind, fraction h, the time reached, a label); `mixing`, per sub-step the attention weights [heads, T, T]
    of a diffusion (a cross-attention's [heads, T, S]: target rows, source columns), None for a convection; `final`,
    the model's output [n_tokens, d] after any final norm; `meta`, how it was computed (model name, scheme, norm,
    attention, position, d_model, n_layers, n_heads, `step`: the training step of the weights, None where not
    recorded, device, causal; `program` and `interventions` where given, `reading` where the tokenizer notes how it
    read the text); `text`, the text traced;
    `truncated`, the tokens dropped to fit the model's positions; `guess_at`, the row the model's head answers (an
    encoder's first [MASK], a decoder's last token or the one before its [MASK]), None where there is none.

    Derived: `displacements` (each sub-step's move), `times` (each state's depth in layers), `labels`,
    `layer_boundaries()` (the states at the ends of layers), `n_steps`, `causal`, `interventions`. `states[k + 1] -
    states[k]` replays sub-step k exactly; plots and measures read this object, never a model's internals.
    """

    tokens: list[str]                   # display strings, one per particle
    token_ids: list[int]
    states: np.ndarray                  # float32 [n_steps + 1, n_tokens, d]; states[0] = embedding
    steps: list[Step]                   # one per sub-step
    mixing: list[np.ndarray | None]     # per sub-step: [heads, T, T] for diffusion, None for convection, and for a
                                        # decoder's cross-attention [heads, T, S]: target rows, source columns
    final: np.ndarray                   # [n_tokens, d]: the model's output (after any final norm)
    meta: dict = field(default_factory=dict)  # how it was computed: model name, scheme, sizes, device, ...
    text: str = ""                      # the text traced ("" for token ids)
    truncated: int = 0                  # tokens dropped to fit the token limit ([SEP] stays last)
    # Where the model's head answers the sentence: an encoder's first [MASK] (the word there); a decoder's token
    # before where [MASK] was typed (the word after it, read from the words before), else its last token (the
    # word after the sentence). None: no head, or no [MASK] for an encoder to guess.
    guess_at: int | None = None

    __repr__ = brief

    @property
    def causal(self) -> bool:
        """Whether each particle moved only because of those before it (a decoder)."""
        return bool(self.meta.get("causal"))

    @property
    def interventions(self) -> list[str]:
        """What was done to this run (macaron.interventions), in words; [] for the model as it computes."""
        return [i["label"] for i in self.meta.get("interventions", ())]

    @property
    def displacements(self) -> np.ndarray:
        """[n_steps, n_tokens, d]: how far each particle moves in each sub-step (pre-LN: velocity × h;
        post-LN the LayerNorm's own move is in it too)."""
        return np.diff(self.states, axis=0)

    @property
    def n_steps(self) -> int:
        """The number of sub-steps: one fewer than the states."""
        return len(self.steps)

    @property
    def times(self) -> np.ndarray:
        """Depth of every state in layers: 0 for the embedding, then each sub-step's time."""
        return np.array([0.0] + [s.time for s in self.steps])

    @property
    def labels(self) -> list[str]:
        """One name a state: "embedding", then each sub-step's label."""
        return ["embedding"] + [s.label for s in self.steps]

    def layer_boundaries(self) -> list[int]:
        """Indices into `states` of the embedding and the end of every layer."""
        return [0] + [k + 1 for k, s in enumerate(self.steps) if float(s.time).is_integer()]

    def to_dict(self) -> dict:
        """Every field as plain Python (lists for arrays): JSON-ready; from_dict reads it back."""
        return {
            "tokens": self.tokens,
            "token_ids": self.token_ids,
            "steps": [s.__dict__ for s in self.steps],
            "states": self.states.tolist(),
            "final": self.final.tolist(),
            "mixing": [None if m is None else m.tolist() for m in self.mixing],
            "meta": self.meta,
            "text": self.text,
            "truncated": self.truncated,
            "guess_at": self.guess_at,
        }

    def to_json(self) -> str:
        """to_dict as JSON text (float32 states written in full: about 20 bytes a number)."""
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_dict(cls, d: dict) -> "Trajectory":
        """The Trajectory that to_dict (or json.loads of to_json) wrote; arrays back to float32."""
        return cls(
            tokens=list(d["tokens"]),
            token_ids=list(d["token_ids"]),
            states=np.asarray(d["states"], dtype=np.float32),
            steps=[Step(**s) for s in d["steps"]],
            mixing=[None if m is None else np.asarray(m, dtype=np.float32) for m in d["mixing"]],
            final=np.asarray(d["final"], dtype=np.float32),
            meta=dict(d.get("meta", {})),
            text=d.get("text", ""),
            truncated=int(d.get("truncated", 0)),
            guess_at=d.get("guess_at"),
        )

    def to_csv(self) -> str:
        """Long format: one row per (state, token) with the full vector; spreadsheet friendly."""
        out = io.StringIO()
        w = csv.writer(out)
        d = self.states.shape[-1]
        w.writerow(["step", "label", "time", "kind", "token_index", "token", *[f"x{i}" for i in range(d)]])
        kinds = [""] + [s.kind for s in self.steps]
        for k, (label, t) in enumerate(zip(self.labels, self.times)):
            for i, tok in enumerate(self.tokens):
                w.writerow([k, label, f"{t:g}", kinds[k], i, tok, *np.round(self.states[k, i], 6).tolist()])
        return out.getvalue()
