"""What an intervention is (Off, Scale, Head, Cut, Hold, Patch) and how the network applies it: a sub-step's
fraction h in the program the model runs (Off is h = 0, Scale multiplies it) and one small hook the network reads
sub-step by sub-step (Edits). The public face, with what an intervention changed, is macaron.interventions."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from numbers import Real
from typing import Sequence

import numpy as np
import torch

from ..schemes import CONVECTION, CROSS, DIFFUSION, FULL, OPERATOR
from ..trajectory import Trajectory
from .operators import Edit
from .reading import InputError

KINDS = (DIFFUSION, CONVECTION, CROSS)  # the sub-steps an intervention switches off or scales
SYSTEMS = ("source", "target")          # a translator's two particle systems (translation.model.SOURCE, TARGET)


def whole_number(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise InputError(f"{what}={value!r}: give a whole number from 0 ({what}s count from 0)")
    return int(value)


def _system(system) -> str | None:
    if system is not None and system not in SYSTEMS:
        raise InputError(f"system={system!r}: a translator's systems are 'source' and 'target' (None: both)")
    return system


def _kind(kind) -> str:
    if kind not in KINDS:
        raise InputError(f"kind {kind!r}: choose {', '.join(map(repr, KINDS))}")
    return kind


def _layers(layers) -> tuple[int, ...] | None:
    if layers is None:
        return None
    layers = (layers,) if isinstance(layers, (int, np.integer)) else tuple(layers)
    if not layers:
        raise InputError("layers=[]: name at least one layer (None: every layer)")
    return tuple(whole_number(i, "layer") for i in layers)


def layers_said(layers: tuple[int, ...] | None) -> str:
    """'every layer', 'layer 3', 'layers 1–3' or 'layers 1, 4': counted from 1, as a step's label counts them."""
    if layers is None:
        return "every layer"
    n = sorted({i + 1 for i in layers})
    if len(n) == 1:
        return f"layer {n[0]}"
    run = n == list(range(n[0], n[-1] + 1)) and len(n) > 2
    return f"layers {n[0]}–{n[-1]}" if run else "layers " + ", ".join(map(str, n))


@dataclass(frozen=True)
class Scale:
    """A sub-step kind's move times `factor` at `layers` (None: all): 0 is off, 1 as trained, 2 twice as far."""

    kind: str
    factor: float
    layers: tuple[int, ...] | None = None
    system: str | None = None

    def __post_init__(self):
        _kind(self.kind)
        if isinstance(self.factor, bool) or not isinstance(self.factor, Real) or not math.isfinite(self.factor):
            raise InputError(f"factor={self.factor!r}: give a finite number (0 is off, 1 as trained)")
        object.__setattr__(self, "factor", float(self.factor))
        object.__setattr__(self, "layers", _layers(self.layers))
        _system(self.system)

    @property
    def label(self) -> str:
        return f"{OPERATOR[self.kind][0]} ×{self.factor:g} in {layers_said(self.layers)}"


@dataclass(frozen=True)
class Off(Scale):
    """A sub-step kind switched off at `layers` (None: all): it moves no particle (Scale by 0)."""

    factor: float = field(default=0.0, init=False, repr=False)  # Off(kind, layers, system): the factor is 0

    @property
    def label(self) -> str:
        return f"{OPERATOR[self.kind][0]} off in {layers_said(self.layers)}"


@dataclass(frozen=True)
class Head:
    """One attention head silenced at one layer: its output zero before the output projection (TransformerLens's
    zero-ablation of hook_z); kind "cross": a decoder's cross-attention head."""

    layer: int
    head: int
    kind: str = DIFFUSION
    system: str | None = None

    def __post_init__(self):
        whole_number(self.layer, "layer"), whole_number(self.head, "head"), _system(self.system)
        if self.kind not in (DIFFUSION, CROSS):
            raise InputError(f"kind {self.kind!r}: a head is a self-attention's ('diffusion') or a cross-attention's")

    @property
    def label(self) -> str:
        return f"{'cross-attention ' if self.kind == CROSS else ''}head {self.head} silenced in layer {self.layer + 1}"


@dataclass(frozen=True)
class Cut:
    """A particle cut from the interaction from `from_layer` on: no other particle attends to it (it still moves by
    its own attention and FFN)."""

    token: int
    from_layer: int = 0
    system: str | None = None

    def __post_init__(self):
        whole_number(self.token, "token"), whole_number(self.from_layer, "layer"), _system(self.system)

    @property
    def label(self) -> str:
        return f"token {self.token} cut from the others from layer {self.from_layer + 1} on"


@dataclass(frozen=True)
class Hold:
    """A particle held: from state `from_state` on it does not move (the others still read it there)."""

    token: int
    from_state: int = 0
    system: str | None = None

    def __post_init__(self):
        whole_number(self.token, "token"), whole_number(self.from_state, "state"), _system(self.system)

    @property
    def label(self) -> str:
        return f"token {self.token} held from state {self.from_state} on"


@dataclass(frozen=True, eq=False)
class Patch:
    """A particle's state at Trajectory.states[state] replaced by the same particle's in `source`, another sentence's
    trajectory of the same model and length, and the run continued from there (activation patching)."""

    source: Trajectory
    token: int
    state: int

    def __post_init__(self):
        if not isinstance(self.source, Trajectory):
            raise InputError(f"a patch's source is a Trajectory (another sentence traced), not {type(self.source)}")
        whole_number(self.token, "token"), whole_number(self.state, "state")

    @property
    def system(self) -> str | None:
        return self.source.meta.get("system")

    @property
    def label(self) -> str:
        sentence = self.source.text or " ".join(self.source.tokens)
        return f"token {self.token}'s state {self.state} patched from “{sentence}”"


INTERVENTIONS = (Off, Scale, Head, Cut, Hold, Patch)


def listed(interventions) -> list:
    """The interventions as a list, each one checked to be one."""
    out = list(interventions or ())
    for iv in out:
        if not isinstance(iv, INTERVENTIONS):
            raise InputError(f"{iv!r} is not an intervention: use Off, Scale, Head, Cut, Hold or Patch")
    return out


def said(interventions) -> list[dict]:
    """What was done, as a Trajectory's meta["interventions"] records it: each one's fields and its label."""
    out = []
    for iv in listed(interventions):
        fields = {"source": iv.source.text} if isinstance(iv, Patch) else {}
        fields.update((f.name, list(v) if isinstance(v := getattr(iv, f.name), tuple) else v)
                      for f in dataclasses.fields(iv) if f.init and f.name != "source")  # what was asked
        out.append(dict(what=type(iv).__name__.lower(), **fields, label=iv.label))
    return out


class Edits:
    """One system's interventions as Model.forward reads them, sub-step by sub-step in the program's order (a cursor,
    as KeyValueCache's): each operator's Edit, then the state it left with held particles kept and patched ones
    replaced. Positions are the sentence's: a cached pass's new words start at `offset`. holds: (token, from state);
    patches: (token, state, its value [d], the batch row it is put in: None, every row)."""

    def __init__(self, operators: list[Edit | None], holds: list[tuple[int, int]],
                 patches: list[tuple[int, int, torch.Tensor, int | None]]):
        self.operators, self.holds, self.patches = operators, holds, patches
        self.offset = self.state = self.at = 0

    def begin(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """A pass starts at the embedding x (state 0) of the words from `offset` on."""
        self.offset, self.state, self.at = offset, 0, 0
        return self.placed(x, x)

    def next(self) -> Edit | None:
        """The next sub-step's Edit of its operator."""
        self.at += 1
        return self.operators[self.at - 1]

    def moved(self, before: torch.Tensor, after: torch.Tensor) -> torch.Tensor:
        """The state a sub-step left, `after` (from `before`), as the interventions place it."""
        self.state += 1
        return self.placed(before, after)

    def placed(self, before: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        here = range(self.offset, self.offset + x.shape[1])  # the positions this pass moves
        every = slice(None)
        changes = [(t, before[:, t - self.offset], every) for t, start in self.holds
                   if self.state > start and t in here]
        changes += [(t, value.to(x.dtype), every if row is None else row) for t, s, value, row in self.patches
                    if s == self.state and t in here]
        if changes:
            x = x.clone()  # a switched-off sub-step hands on the state it was given, which the record holds
            for t, v, row in changes:
                x[row, t - self.offset] = v
        return x


def applies(iv, system: str | None) -> bool:
    """Whether an intervention acts in this system: None a lone Model, "source" or "target" a translator's."""
    if system is None:
        if iv.system is not None:
            raise InputError(f"system={iv.system!r} names a translator's system, and this model is one particle "
                             f"system" if not isinstance(iv, Patch) else
                             "the patch's source is a translator's trajectory: patch from this model's own trace")
        return True
    if isinstance(iv, Patch):
        if iv.system is None:
            raise InputError("a translator's particle is patched from one of its systems' trajectories "
                             "(translate(...).source or .target)")
        return iv.system == system
    if isinstance(iv, (Cut, Hold)):
        return (iv.system or "source") == system
    if iv.kind == CROSS and iv.system == "source":
        raise InputError("'cross' with system='source': the source system (the encoder) has no cross-attention, "
                         "the target's has")
    return iv.system in (None, system) and (iv.kind != CROSS or system == "target")


def prepare(model, interventions, lengths: Sequence[int] | None = None, program=None, system: str | None = None):
    """(the program to run, Edits or None) for interventions on one system of `model` (a Model) whose sentences have
    `lengths` tokens (None: not known yet, as in a search; checked on its trace), every one checked first.
    No intervention: the program as given and None, the model's own computation untouched."""
    mine = [iv for iv in listed(interventions) if applies(iv, system)]
    if not mine:
        return program, None
    program = model.program() if program is None else program
    check(model, mine, lengths, program, system)
    run, operators = [], []
    for p, (i, plan) in enumerate(program):
        kinds = [model.layers[i].scheme[k].kind for k, _, _ in plan]
        edits = [substep_edit(model, mine, p, kind) for kind in kinds]
        run.append((i, tuple((k, h * f, n) for (k, h, n), (f, _) in zip(plan, edits))))
        operators += [edit for _, edit in edits]
    holds = [(iv.token, iv.from_state) for iv in mine if isinstance(iv, Hold)]
    patches = [(iv.token, iv.state, torch.as_tensor(iv.source.states[iv.state, iv.token], device=model.device), None)
               for iv in mine if isinstance(iv, Patch)]
    return tuple(run), Edits(operators, holds, patches)


def substep_edit(model, interventions, p: int, kind: str) -> tuple[float, Edit | None]:
    """(the factor on the fraction h, the operator's Edit) of a sub-step of `kind` at program entry p."""
    def factor(of: str) -> float:
        return math.prod(iv.factor for iv in interventions if isinstance(iv, Scale) and iv.kind == of
                         and (iv.layers is None or p in iv.layers))

    attention = {FULL: DIFFUSION}.get(kind, kind)
    heads = [iv.head for iv in interventions if isinstance(iv, Head) and iv.layer == p and iv.kind == attention]
    cut = tuple(sorted({iv.token for iv in interventions if isinstance(iv, Cut) and p >= iv.from_layer}))
    cut = cut if attention == DIFFUSION else ()
    f, parts = factor(attention), (1.0, 1.0)
    if kind == FULL:  # one move of attention and FFN: scaled together by h, or apart inside it
        fd, fc = factor(DIFFUSION), factor(CONVECTION)
        f, parts = (fd, (1.0, 1.0)) if fd == fc else (1.0, (fd, fc))
    if not heads and not cut and parts == (1.0, 1.0):
        return f, None
    keep = None
    if heads:
        keep = torch.ones(model.config.n_heads, device=model.device)
        keep[heads] = 0.0
    return f, Edit(keep, cut, parts)


def named(iv) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(the layers, the states) an intervention names."""
    layers = (iv.layers or ()) if isinstance(iv, Scale) else \
        tuple(getattr(iv, name) for name in ("layer", "from_layer") if hasattr(iv, name))
    return layers, tuple(getattr(iv, name) for name in ("from_state", "state") if hasattr(iv, name))


def check(model, interventions, lengths, program, system: str | None) -> None:
    """Every layer, head, particle and state named exists; a patch is from a trace of this model and length."""
    where = f" in its {system} system" if system else ""
    n_layers, n_states = len(program), 1 + sum(len(plan) for _, plan in program)
    kinds = {model.layers[i].scheme[k].kind for i, plan in program for k, _, _ in plan}
    length = min(lengths) if lengths else None
    for iv in interventions:
        layers, states = named(iv)
        for layer in layers:
            if layer >= n_layers:
                raise InputError(f"layer {layer} does not exist: this model has layers 0–{n_layers - 1}{where} "
                                 f"(counted from 0)")
        for state in states:
            if state >= n_states:
                raise InputError(f"state {state} does not exist: this run has states 0–{n_states - 1}{where} "
                                 f"(Trajectory.states: 0 the embedding, then one per sub-step)")
        if getattr(iv, "kind", None) == CROSS and CROSS not in kinds:
            raise InputError("'cross' acts on a decoder's cross-attention, and this model has none: only a "
                             "translator's decoder reads another particle system")
        if isinstance(iv, Head) and iv.head >= model.config.n_heads:
            raise InputError(f"head {iv.head} does not exist: layer {iv.layer}'s attention has heads "
                             f"0–{model.config.n_heads - 1}{where}")
        if isinstance(iv, (Cut, Hold, Patch)) and length is not None and iv.token >= length:
            raise InputError(f"token {iv.token} does not exist: the sentence has tokens 0–{length - 1}{where}")
        if isinstance(iv, Patch):
            check_source(model, iv.source, lengths, program)


def check_source(model, source: Trajectory, lengths, program) -> None:
    """A patch's source is a trajectory of this model, its program, and the sentence's length."""
    name = model.config.name
    if source.meta.get("model") != name or source.states.shape[-1] != model.config.d_model:
        raise InputError(f"the patch's source was traced by {source.meta.get('model')!r}, not by this model "
                         f"({name!r}): patch from a trajectory of the same model")
    if source.steps != model.trace_steps(program):
        raise InputError("the patch's source ran other sub-steps than this run (another program or model): "
                         "patch from a trajectory of the same model and program")
    for n in lengths or ():
        if n != len(source.tokens):
            raise InputError(f"the patch's source has {len(source.tokens)} tokens and this sentence {n}: patch from "
                             f"a sentence of the same length")
