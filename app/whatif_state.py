"""What if… as the app keeps it: one intervention (macaron.interventions) as plain values, a Spec, which the panel's
widgets hold (whatif_panel), the address bar carries (if=off&if_kind=diffusion&if_layers=0,1) and the caches key on
(explorer_cache.what_if); and the Spec made into the library's interventions for one run.

The address bar counts as the library does, from 0 (layers, heads, tokens); `if_t` is a layer boundary, t = 0 the
embedding and t = k the end of layer k (the clock's whole numbers). The panel names layers and heads from 1, as the
steps' labels and the head picker do.
"""
from __future__ import annotations

from dataclasses import dataclass

from macaron import InputError
from macaron import interventions as iv
from macaron.schemes import CONVECTION, CROSS, DIFFUSION

WHAT = {"": "nothing: the model as trained", "off": "switch a sub-step off", "scale": "scale a sub-step",
        "head": "silence a head", "cut": "cut a particle from the others", "hold": "hold a particle still",
        "patch": "patch a particle from another sentence"}
USES = {"": (), "off": ("kind", "layers", "system"), "scale": ("kind", "factor", "layers", "system"),
        "head": ("kind", "head", "layers", "system"), "cut": ("token", "t"), "hold": ("token", "t"),
        "patch": ("token", "t", "other")}  # the values each one reads
KINDS = {"off": (DIFFUSION, CONVECTION, CROSS), "scale": (DIFFUSION, CONVECTION, CROSS), "head": (DIFFUSION, CROSS)}
SYSTEMS = ("", "source", "target")  # a translator's: both, the encoder's, the decoder's


@dataclass(frozen=True)
class Spec:
    """One intervention as the widgets hold it: plain values, hashable (a cache's key)."""

    what: str = ""                 # a key of WHAT; "" nothing
    kind: str = DIFFUSION          # the sub-step switched off or scaled, or whose head is silenced
    layers: tuple[int, ...] = ()   # counted from 0; (): every layer
    factor: float = 0.5            # a scale's
    head: int = 0
    token: int = 0                 # the particle cut, held or patched (Trajectory.tokens' index)
    t: int = 0                     # a layer boundary: cut from layer t + 1 on, held from t, patched at t
    other: str = ""                # the sentence a patch takes the particle's state from
    system: str = ""               # a translator's system ("source", "target"; "": both)

    def used(self) -> tuple[str, ...]:
        return USES[self.what]


def param(name: str) -> str:
    """The URL parameter of a Spec field: `if` for what, `if_<name>` for the others."""
    return "if" if name == "what" else f"if_{name}"


def layer_list(text: str) -> list[int]:
    """'0,2' → [0, 2] (a ValueError for anything else)."""
    return [int(x) for x in text.split(",") if x.strip()]


PARSE = {"what": str, "kind": str, "layers": layer_list, "factor": float, "head": int, "token": int, "t": int,
         "other": str, "system": str}  # the URL's text → a widget's value
VALID = {"what": lambda v: v in WHAT, "kind": lambda v: v in (DIFFUSION, CONVECTION, CROSS),
         "system": lambda v: v in SYSTEMS}  # the rest: any value of its type (the library judges it for the model)


def url(spec: Spec | None) -> dict:
    """The URL parameters of a Spec: what it is and the values it reads (none where nothing is chosen)."""
    out = {param("what"): spec.what if spec else None}
    for name in spec.used() if spec else ():
        value = getattr(spec, name)
        if name == "layers":
            value = ",".join(map(str, value))  # (): every layer, no parameter
        elif name == "factor":
            value = f"{value:g}"
        out[param(name)] = value  # "" stays out of the address (explorer_state.sync_url)
    return out


def interventions(spec: Spec, boundaries: list[int], other=None) -> list:
    """The library's interventions for `spec` in a run whose layer boundaries are `boundaries` (indices into its
    states; Trajectory.layer_boundaries of the system the particle is in), `other` the trace a patch reads (a
    Trajectory of the same model, or a translator's source system's). InputError names what does not exist."""
    layers, system = spec.layers or None, spec.system or None
    if spec.what == "off":
        return [iv.Off(spec.kind, layers=layers, system=system)]
    if spec.what == "scale":
        return [iv.Scale(spec.kind, spec.factor, layers=layers, system=system)]
    if spec.what == "head":
        return [iv.Head(layer=i, head=spec.head, kind=spec.kind, system=system)
                for i in (layers or range(len(boundaries) - 1))]
    if spec.what == "cut":
        return [iv.Cut(spec.token, from_layer=spec.t)]
    if not 0 <= spec.t < len(boundaries):
        raise InputError(f"t = {spec.t} is not a layer boundary of this run: it has t = 0 (the embedding) to "
                         f"t = {len(boundaries) - 1}")
    if spec.what == "hold":
        return [iv.Hold(spec.token, from_state=boundaries[spec.t])]
    if spec.what == "patch":
        return [iv.Patch(source=other, token=spec.token, state=boundaries[spec.t])]
    raise InputError(f"what if {spec.what!r}: choose one of {', '.join(w for w in WHAT if w)}")
