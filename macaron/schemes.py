"""Splitting schemes: the one registry read by the neural layers, the toy ODE lab and the figures.

An ODE dx/dt = F(x) + G(x) with F = diffusion (particles move because of each other,
self-attention) and G = convection (each particle moves on its own, the FFN) is advanced
one step of size h by running the sub-flows one after another, each for a fraction of h:

    Lie–Trotter     x ← Φ_G(h) Φ_F(h) x                 local error O(h²)   (Transformer layer)
    Strang–Marchuk  x ← Φ_G(h/2) Φ_F(h) Φ_G(h/2) x       local error O(h³)   (Macaron layer)
    the control     x ← Φ_G(h/2) Φ_G(h/2) Φ_F(h) x       local error O(h²)   (Macaron's sub-layers, Lie–Trotter order)

The orders hold for exact sub-flows Φ and, for Strang, the same G in both halves. A network layer
takes one Euler step per sub-step (O(h²) for both orders) and a Macaron layer's two half-FFNs are
different networks (O(h²) even when solved exactly): macaron.lab (untied) and macaron.studies.bridge measure both.

A scheme is data: a tuple of sub-steps (kind, fraction), read left to right, plus the words
and the formula a reader sees. Every registered scheme can build a network layer and run
in the toy lab.

A decoder (an encoder–decoder's target side) adds one kind: CROSS, the target's particles moving toward the
source's, a field the other particle system makes (cross-attention). with_cross puts it right after each
self-attention of any scheme: a Transformer decoder layer is F, C, G and a Macaron decoder layer ½G, F, C, ½G,
as fairseq runs them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

DIFFUSION = "diffusion"    # F: interaction between particles (self-attention)
CONVECTION = "convection"  # G: each particle on its own (feed-forward network)
FULL = "full"              # F + G in one sub-step: no splitting (a parallel attention + FFN block)
KINDS = (DIFFUSION, CONVECTION, FULL)  # the operators of a splitting scheme (every one runs in the toy lab)
CROSS = "cross"            # C: the field another particle system makes (a decoder's cross-attention to the source)
SUBSTEP_KINDS = KINDS + (CROSS,)

# What each kind of sub-step is called when read aloud: the operator, and the network part computing it.
OPERATOR = {DIFFUSION: ("diffusion", "attention"), CONVECTION: ("convection", "FFN"),
            FULL: ("diffusion + convection", "attention + FFN"), CROSS: ("external field", "cross-attention")}
OPERATOR_NAME = {kind: f"{math} ({network})" for kind, (math, network) in OPERATOR.items()}
# Which operator is which, said wherever F and G are named before a page has said it
F_AND_G = (f"**F** = {OPERATOR_NAME[DIFFUSION]}: each particle moves because of the others; "
           f"**G** = {OPERATOR_NAME[CONVECTION]}: each particle moves on its own.")
# What a step's formula means, said under every formula of one
PHI_SAID = ("Φ_K(h) = the flow of K for time h: solved exactly, or by one Euler step x + h·K(x) (what a residual "
            "sub-layer does). Read right to left: Lie–Trotter runs F first.")
# The schemes' orders and their conditions, in one paragraph (the pages that show trained layers say it)
ORDERS_SAID = (
    "A **Transformer** layer runs the **Lie–Trotter** order (attention, then FFN); a **Macaron** layer the "
    "**Strang–Marchuk** order (½ FFN, attention, ½ FFN). Solved exactly, with the same FFN in both halves and "
    "smooth operators, Strang's local error is O(h³) against Lie–Trotter's O(h²) as the step h shrinks; a real "
    "layer takes one Euler step per sub-step, which is O(h²) either way, a post-LN layer (as the shipped models) "
    "then a LayerNorm whose move does not shrink with the step, and its two half-FFNs are different networks — "
    "the **Splitting lab** measures the step, the LayerNorms' move and the two halves.")


class Sub(NamedTuple):
    """One sub-step of a splitting scheme: run operator `kind` for `fraction` of the step."""

    kind: str
    fraction: float


LIE_TROTTER = (Sub(DIFFUSION, 1.0), Sub(CONVECTION, 1.0))
STRANG = (Sub(CONVECTION, 0.5), Sub(DIFFUSION, 1.0), Sub(CONVECTION, 0.5))
ATT_FFN_ATT = (Sub(DIFFUSION, 0.5), Sub(CONVECTION, 1.0), Sub(DIFFUSION, 0.5))  # paper's Table 3 baseline
LIE_TROTTER_GF = (Sub(CONVECTION, 1.0), Sub(DIFFUSION, 1.0))
# The Macaron layer's sub-layers in Lie–Trotter order: in a stack, (F ½G ½G)ⁿ differs from Strang's (½G F ½G)ⁿ
# only in where one half-G sits (last, not first), so it separates the order from the split FFN (issue 47)
LIE_TROTTER_HALVES = (Sub(DIFFUSION, 1.0), Sub(CONVECTION, 0.5), Sub(CONVECTION, 0.5))
UNSPLIT = (Sub(FULL, 1.0),)  # with Euler: one step of the whole field, x + h(F + G)


@dataclass(frozen=True)
class Scheme:
    name: str                   # registry key, e.g. in URLs: "lie-trotter"
    substeps: tuple[Sub, ...]
    title: str                  # the reader's name with its order of sub-steps, for tables
    short: str                  # the reader's name, for legends
    layer: str                  # the network layer it models
    latex: str                  # one step, read right to left
    alias: str = ""             # the model name config.json files use ("transformer")


# Registry order is reading order (the lab lists the schemes this way).
SCHEMES: dict[str, Scheme] = {s.name: s for s in (
    Scheme("lie-trotter", LIE_TROTTER, "Lie–Trotter: F, then G", "Lie–Trotter", "Transformer layer",
           r"x \leftarrow \Phi_G(h)\,\Phi_F(h)\,x", alias="transformer"),
    Scheme("strang", STRANG, "Strang–Marchuk: ½G, F, ½G", "Strang–Marchuk", "Macaron layer",
           r"x \leftarrow \Phi_G(\tfrac{h}{2})\,\Phi_F(h)\,\Phi_G(\tfrac{h}{2})\,x", alias="macaron"),
    # one name wherever it is shown, "Control": the race's (F ½G ½G)ⁿ against Strang's (½G F ½G)ⁿ (issue 47)
    Scheme("lie-trotter-halves", LIE_TROTTER_HALVES, "Control: F, ½G, ½G", "Control",
           "Macaron's sub-layers in Transformer order",
           r"x \leftarrow \Phi_G(\tfrac{h}{2})\,\Phi_G(\tfrac{h}{2})\,\Phi_F(h)\,x",
           alias="transformer-halves"),
    Scheme("unsplit", UNSPLIT, "Unsplit Euler: x + h(F + G)", "unsplit Euler", "no splitting",
           r"x \leftarrow x + h\,\bigl(F(x) + G(x)\bigr)"),
    Scheme("lie-trotter-gf", LIE_TROTTER_GF, "Lie–Trotter: G, then F", "Lie–Trotter, G first",
           "FFN before attention", r"x \leftarrow \Phi_F(h)\,\Phi_G(h)\,x"),
    Scheme("strang-fgf", ATT_FFN_ATT, "Strang–Marchuk: ½F, G, ½F", "Strang, F halved", "Att–FFN–Att layer",
           r"x \leftarrow \Phi_F(\tfrac{h}{2})\,\Phi_G(h)\,\Phi_F(\tfrac{h}{2})\,x",
           alias="att-ffn-att"),
)}
ALIASES = {s.alias: s.name for s in SCHEMES.values() if s.alias}


def with_cross(substeps: tuple[Sub, ...]) -> tuple[Sub, ...]:
    """A decoder layer's sub-steps: the scheme's, with a cross-attention sub-step (of the same fraction) right after
    each one that runs a self-attention, as fairseq's decoder layer runs them (Transformer: F, C, G; Macaron:
    ½G, F, C, ½G)."""
    out: list[Sub] = []
    for s in substeps:
        out.append(s)
        if s.kind in (DIFFUSION, FULL):
            out.append(Sub(CROSS, s.fraction))
    return tuple(out)


def get_scheme(name: str) -> Scheme:
    """The registered scheme of a name or of a model alias ("transformer" is "lie-trotter")."""
    try:
        return SCHEMES[ALIASES.get(name, name)]
    except KeyError:
        raise ValueError(f"unknown scheme {name!r}; choose one of {sorted(SCHEMES) + sorted(ALIASES)}") from None


def fraction_text(fraction: float) -> str:
    return {1.0: "", 0.5: "½ ", 0.25: "¼ "}.get(fraction, f"{fraction:g}·")


def substep_label(layer: int, sub: Sub) -> str:
    """'layer 3 · ½ convection (FFN)'; layers are counted from 1 for readers."""
    return f"layer {layer + 1} · {fraction_text(sub.fraction)}{OPERATOR_NAME[sub.kind]}"


def substep_times(substeps: tuple[Sub, ...]) -> list[float]:
    """Time reached after each sub-step inside one layer, in units of layers.

    Each sub-step advances the clock in proportion to its fraction, so layer boundaries
    fall on integers whatever the scheme: Lie–Trotter reaches ½ then 1, Strang ¼, ¾, 1.
    """
    total = sum(s.fraction for s in substeps)
    times, t = [], 0.0
    for s in substeps:
        t += s.fraction
        times.append(t / total)
    return times


def order_of(substeps: tuple[Sub, ...]) -> tuple[str, ...]:
    """The order in which the operators act, repeats in a row merged: the control's F, ½G, ½G acts as F, G
    (Lie–Trotter's order), though a network's two half-FFNs are two sub-layers."""
    kinds = [s.kind for s in substeps]
    return tuple(k for i, k in enumerate(kinds) if i == 0 or kinds[i - 1] != k)


def n_convection(substeps: tuple[Sub, ...]) -> int:
    """Sub-steps that run an FFN: they share the layer's FFN budget."""
    return sum(s.kind in (CONVECTION, FULL) for s in substeps)


def n_diffusion(substeps: tuple[Sub, ...]) -> int:
    """Sub-steps that run an attention."""
    return sum(s.kind in (DIFFUSION, FULL) for s in substeps)


def n_full(substeps: tuple[Sub, ...]) -> int:
    """Unsplit sub-steps (attention and FFN in one)."""
    return sum(s.kind == FULL for s in substeps)
