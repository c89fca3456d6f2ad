"""Splitting schemes: the one definition shared by the neural layers and the toy ODE lab.

An ODE dx/dt = F(x) + G(x) with F = diffusion (particles move because of each other,
self-attention) and G = convection (each particle moves on its own, the FFN) is advanced
one step of size γ by running the sub-flows one after another, each for a fraction of γ:

    Lie–Trotter     x ← Φ_G(γ) Φ_F(γ) x                 local error O(γ²)   (Transformer layer)
    Strang–Marchuk  x ← Φ_G(γ/2) Φ_F(γ) Φ_G(γ/2) x       local error O(γ³)   (Macaron layer)

A scheme is data: a tuple of sub-steps (kind, fraction), read left to right.
"""
from __future__ import annotations

from typing import NamedTuple

DIFFUSION = "diffusion"    # F: interaction between particles (self-attention)
CONVECTION = "convection"  # G: each particle on its own (feed-forward network)
KINDS = (DIFFUSION, CONVECTION)


class Sub(NamedTuple):
    """One sub-step of a splitting scheme: run operator `kind` for `fraction` of the step."""

    kind: str
    fraction: float


LIE_TROTTER = (Sub(DIFFUSION, 1.0), Sub(CONVECTION, 1.0))
STRANG = (Sub(CONVECTION, 0.5), Sub(DIFFUSION, 1.0), Sub(CONVECTION, 0.5))
ATT_FFN_ATT = (Sub(DIFFUSION, 0.5), Sub(CONVECTION, 1.0), Sub(DIFFUSION, 0.5))  # paper's Table 3 baseline

# The same schemes with the roles of F and G swapped (for the toy lab's order studies).
LIE_TROTTER_GF = (Sub(CONVECTION, 1.0), Sub(DIFFUSION, 1.0))
STRANG_FGF = ATT_FFN_ATT

SCHEMES: dict[str, tuple[Sub, ...]] = {
    "transformer": LIE_TROTTER,
    "macaron": STRANG,
    "att-ffn-att": ATT_FFN_ATT,
}

# What each sub-step is called when read aloud; fractions as a reader writes them.
OPERATOR_NAME = {DIFFUSION: "diffusion (attention)", CONVECTION: "convection (FFN)"}


def get_scheme(name: str) -> tuple[Sub, ...]:
    try:
        return SCHEMES[name]
    except KeyError:
        raise ValueError(f"unknown scheme {name!r}; choose one of {sorted(SCHEMES)}") from None


def fraction_text(fraction: float) -> str:
    return {1.0: "", 0.5: "½ ", 0.25: "¼ "}.get(fraction, f"{fraction:g}·")


def substep_label(layer: int, sub: Sub) -> str:
    """'layer 3 · ½ convection (FFN)'; layers are counted from 1 for readers."""
    return f"layer {layer + 1} · {fraction_text(sub.fraction)}{OPERATOR_NAME[sub.kind]}"


def substep_times(scheme: tuple[Sub, ...]) -> list[float]:
    """Time reached after each sub-step inside one layer, in units of layers.

    Each sub-step advances the clock in proportion to its fraction, so layer boundaries
    fall on integers whatever the scheme: Lie–Trotter reaches ½ then 1, Strang ¼, ¾, 1.
    """
    total = sum(s.fraction for s in scheme)
    times, t = [], 0.0
    for s in scheme:
        t += s.fraction
        times.append(t / total)
    return times


def n_convection(scheme: tuple[Sub, ...]) -> int:
    return sum(s.kind == CONVECTION for s in scheme)
