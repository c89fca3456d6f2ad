"""The What if… panel of Particles, Compare and Translate: choose an intervention (what, in which layers, which head
or particle, from which sentence for a patch); the page draws its run altered, over the run as trained
(macaron.plot.whatif), and the panel says what was done and the answer before → after.

A page reads the choice before it draws (chosen), runs it (explorer_cache.what_if), then draws the panel's widgets
under its figure (controls). Its values are a whatif_state.Spec, kept in the address bar.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields

import streamlit as st

import explorer_state as state
import whatif_state as ws
from macaron import interventions as iv
from macaron.plot.whatif import answer
from macaron.schemes import CONVECTION, CROSS, DIFFUSION, OPERATOR, OPERATOR_NAME

SYSTEM_SAID = {"": "both systems", "source": "the encoder (source)", "target": "the decoder (translation)"}
HEAD_KIND = {DIFFUSION: "self-attention", CROSS: "cross-attention"}
FACTORS = (-10.0, 10.0)  # the factor's box: 0 is off, 1 as trained, 2 twice as far


@dataclass
class Offer:
    """What the panel offers for a page's run(s): every layer, head, particle and boundary they all have."""

    layers: int                   # layers 0 … layers − 1
    heads: int
    tokens: list[str]             # the particles one may pick, as the page names them
    kinds: tuple[str, ...] = (DIFFUSION, CONVECTION)
    systems: bool = False         # a translator's: which system a sub-step or head is changed in

    @property
    def boundaries(self) -> int:  # t = 0 … layers
        return self.layers + 1


def key(prefix: str, name: str) -> str:
    return f"{prefix}_{ws.param(name)}"


def widget_default(name: str):
    value = next(f.default for f in fields(ws.Spec) if f.name == name)
    return list(value) if name == "layers" else value


def chosen(prefix: str) -> ws.Spec | None:
    """The intervention the panel holds (on a page's first run, the address bar's), None for nothing."""
    values = {}
    for f in fields(ws.Spec):
        k = key(prefix, f.name)
        state.init_widget(k, ws.param(f.name), widget_default(f.name), parse=ws.PARSE[f.name],
                          valid=ws.VALID.get(f.name))
        values[f.name] = st.session_state[k]
    spec = ws.Spec(**dict(values, layers=tuple(sorted(set(values["layers"])))))
    return spec if spec.what else None


def said(spec: ws.Spec, tokens: list[str], systems: bool = False) -> str:
    """What was done, in the panel's words: layers and heads counted from 1, a particle by its number and text."""
    where = f" of {SYSTEM_SAID[spec.system]}" if systems and spec.system else ""
    layers = iv.layers_said(spec.layers or None)
    who = f"token {spec.token}" + (f" ({tokens[spec.token]})" if 0 <= spec.token < len(tokens) else "")
    return {"off": lambda: f"{OPERATOR[spec.kind][0]} off in {layers}{where}",
            "scale": lambda: f"{OPERATOR[spec.kind][0]} ×{spec.factor:g} in {layers}{where}",
            "head": lambda: f"{HEAD_KIND.get(spec.kind, spec.kind)} head {spec.head + 1} silenced in {layers}{where}",
            "cut": lambda: f"{who} cut from the others from layer {spec.t + 1} on",
            "hold": lambda: f"{who} held still from t = {spec.t} on",
            "patch": lambda: f"{who} patched at t = {spec.t} from “{spec.other}”"}[spec.what]()


def offered(spec: ws.Spec, offer: Offer) -> dict:
    """Whether each value the intervention reads is one the panel can show for these runs."""
    return {"kind": spec.kind in kinds(spec.what, offer), "layers": all(0 <= i < offer.layers for i in spec.layers),
            "factor": math.isfinite(spec.factor) and FACTORS[0] <= spec.factor <= FACTORS[1],
            "head": 0 <= spec.head < offer.heads, "token": 0 <= spec.token < len(offer.tokens),
            "t": 0 <= spec.t < (offer.layers if spec.what == "cut" else offer.boundaries), "other": True,
            "system": spec.system in (ws.SYSTEMS if offer.systems else ("",))}


def kinds(what: str, offer: Offer) -> tuple[str, ...]:
    return tuple(k for k in ws.KINDS.get(what, ()) if k in offer.kinds)


def mend(prefix: str, spec: ws.Spec | None, offer: Offer, refused: bool) -> None:
    """A value the panel cannot show for these runs (a layer the model does not have, a particle past the
    sentence's end, a factor that is not a finite number) goes back to its default; where it made the run refuse
    (the page said why), the panel goes back to nothing chosen."""
    if spec is None:
        return
    bad = [name for name, ok in offered(spec, offer).items() if not ok and name in spec.used()]
    for name in bad:
        st.session_state[key(prefix, name)] = widget_default(name)
    if bad and refused:
        st.session_state[key(prefix, "what")] = ""


def controls(prefix: str, offer: Offer, spec: ws.Spec | None, refused: bool, url: dict,
             answers: list[tuple[str, iv.Effect | None]] = (), note: str = "") -> ws.Spec | None:
    """The panel under a page's figure: what to change, where; then what was done and the answer before → after
    (`answers`: each run's name and Effect), and `note`. The address bar follows. Returns the choice as drawn."""
    mend(prefix, spec, offer, refused)
    with st.container(border=True, key=f"{prefix}_whatif"):
        head, what_box = st.columns([1, 3], vertical_alignment="center")
        head.markdown("**What if…**", help="Change the model as it runs, and watch the particles part from their "
                                           "paths: the figure above plays the altered run over the run as trained "
                                           "(its ghost, hollow grey), on one clock.")
        what = what_box.selectbox("What if", list(ws.WHAT), key=key(prefix, "what"), format_func=ws.WHAT.get,
                                  on_change=kept_kind, args=(prefix, offer), label_visibility="collapsed")
        drawn = widgets(prefix, what, offer)
        now = chosen(prefix)
        if spec is not None and not refused:
            results(spec, offer, answers, note)
    url.update(ws.url(now))
    state.sync_url(url)
    not_drawn(prefix, keep=("what", *drawn))
    return now


def not_drawn(prefix: str, keep: tuple[str, ...] = ()) -> None:
    """The panel's widgets this run did not draw (all of them where the page stopped before its figure): given
    again by the run that draws them (explorer_state.not_drawn), from the values the address bar last held."""
    state.not_drawn(*(key(prefix, f.name) for f in fields(ws.Spec) if f.name not in keep))


def kept_kind(prefix: str, offer: Offer) -> None:
    """A new choice of what to change keeps the sub-step where it can, else takes the first on offer. A callback can
    come after the run that dropped the choice (not_drawn: a lesson step opened meanwhile): then there is none to
    keep, and the run that draws the panel gives it again."""
    what, k = st.session_state.get(key(prefix, "what")), key(prefix, "kind")
    if what is None:
        return
    options = kinds(what, offer)
    if options and st.session_state.get(k) not in options:
        st.session_state[k] = options[0]


def widgets(prefix: str, what: str, offer: Offer) -> tuple[str, ...]:
    """The values `what` reads, side by side; their names."""
    used = tuple(u for u in ws.USES[what] if (u != "system" or offer.systems)
                 and (u != "kind" or len(kinds(what, offer)) > 1))  # one attention to choose: nothing to ask
    if not used:
        return ()
    row = iter(st.columns(len(used)))
    t_said = {"cut": ("From layer", lambda t: f"layer {t + 1} on"), "hold": ("Held from", boundary_said),
              "patch": ("Patched at", boundary_said)}
    for name in used:
        k = key(prefix, name)
        if name == "kind":
            options = kinds(what, offer)
            next(row).selectbox("Sub-step" if what != "head" else "Attention", options, key=k,
                                format_func=HEAD_KIND.get if what == "head" else OPERATOR_NAME.get)
        elif name == "layers":
            next(row).multiselect("Layers", list(range(offer.layers)), key=k, format_func=lambda i: f"layer {i + 1}",
                                  placeholder="every layer", help="None chosen: every layer.")
        elif name == "factor":
            next(row).number_input("Factor", *FACTORS, key=k, step=0.25, format="%g",
                                   help="Each move of that sub-step times this: 0 is off, 1 as trained, 2 twice as "
                                        "far (the step size made a knob).")
        elif name == "head":
            next(row).selectbox("Head", list(range(offer.heads)), key=k, format_func=lambda h: f"head {h + 1}",
                                help="Its output is zero before the output projection (TransformerLens's "
                                     "zero-ablation).")
        elif name == "token":
            next(row).selectbox("Particle", list(range(len(offer.tokens))), key=k,
                                format_func=lambda i: f"{i} · {offer.tokens[i]}")
        elif name == "t":
            label, fmt = t_said[what]
            last = offer.layers if what == "cut" else offer.boundaries
            next(row).selectbox(label, list(range(last)), key=k, format_func=fmt)
        elif name == "other":
            next(row).text_input("From the sentence", key=k, placeholder="another sentence, as many tokens",
                                 help="The particle's state at that depth is taken from this sentence's run of the "
                                      "same model, and the run goes on from there (activation patching).")
        elif name == "system":
            next(row).selectbox("In", list(ws.SYSTEMS), key=k, format_func=SYSTEM_SAID.get)
    return used


def boundary_said(t: int) -> str:
    return f"t = {t}" + (" (the embedding)" if t == 0 else f" (after layer {t})")


def md(text: str) -> str:
    """Text shown as typed in Streamlit's Markdown (a model's words may hold *, _, $ or brackets)."""
    return "".join("\\" + c if c in "\\`*_$[]<>#" else c for c in text)


def results(spec: ws.Spec, offer: Offer, answers, note: str) -> None:
    """What was done and what it changed, in words."""
    lines = [f"**What if** {md(said(spec, offer.tokens, offer.systems))}:"]
    for name, effect in answers:
        words = answer(effect)
        who = f"**{md(name)}** · " if name else ""
        lines.append(f"{who}before: {md(words[0])} → **after: {md(words[1])}**" if words else
                     f"{who}no answer to read here (add [MASK] to the sentence, or a word for a decoder to guess).")
    st.markdown("  \n".join(lines))
    if note:
        st.caption(note)
