"""What a model guesses: the logit lens (the top guesses read from every recorded state) and attribution (how
much each token supports the top guess), from macaron.studies.analysis results.
"""
from __future__ import annotations

import html
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from ..schemes import CONVECTION, DIFFUSION, FULL
from ..trajectory import Trajectory
from .particles import kinds_of
from .style import base_layout, display_token, esc, figure

STEP_MARK = {DIFFUSION: "◆ ", CONVECTION: "● ", FULL: "■ "}  # what produced the state a row reads


def logit_lens(guesses: list[list[tuple[str, float]]], traj: Trajectory, height: int | None = None) -> go.Figure:
    """Rows: the recorded states (embedding, every sub-step); columns: the top-k guesses."""
    S = len(guesses)
    k = max((len(g) for g in guesses), default=0)
    z = np.array([[p for _, p in g] + [np.nan] * (k - len(g)) for g in guesses])
    text = [[esc(display_token(t)) for t, _ in g] + [""] * (k - len(g)) for g in guesses]
    kinds = kinds_of(traj)
    rows = [f"{STEP_MARK.get(kinds[i], '')}{esc(lab)}" for i, lab in enumerate(traj.labels[:S])]
    hover = [[f"{rows[i]}<br>#{j + 1}: <b>{text[i][j]}</b> {z[i, j]:.1%}" for j in range(len(guesses[i]))]
             for i in range(S)]
    data = [dict(type="heatmap", z=z, x=[f"#{j + 1}" for j in range(k)], y=list(range(S)), text=text,
                 texttemplate="%{text}", textfont=dict(size=13), zmin=0, zmax=1,
                 colorscale=[[0, "#f7fbff"], [0.25, "#c6dbef"], [0.6, "#4292c6"], [1, "#08306b"]],
                 hovertext=hover, hoverinfo="text", xgap=2, ygap=1,
                 colorbar=dict(title=dict(text="prob."), thickness=12, tickformat=".0%"))]
    layout = base_layout(height or int(min(1100, 20 * S + 110)),
                         yaxis=dict(tickmode="array", tickvals=list(range(S)), ticktext=rows, autorange="reversed",
                                    tickfont=dict(size=12)),
                         xaxis=dict(side="top", title=dict(text="top guesses, best first")),
                         margin=dict(l=230, r=10, t=60, b=10))
    return figure(data, layout)


def _diverging(v: float) -> str:
    """Colour-blind-safe diverging scale: blue (supports) … white … orange (works against)."""
    v = float(np.clip(v, -1, 1))
    pos, neg, white = (33, 102, 172), (230, 97, 1), (255, 255, 255)
    c = pos if v >= 0 else neg
    a = abs(v)
    rgb = [round(w + (cc - w) * a) for w, cc in zip(white, c)]
    return f"rgb({rgb[0]},{rgb[1]},{rgb[2]})"


def attribution_html(tokens: Sequence[str], scores: np.ndarray) -> str:
    """The sentence as a strip of tokens shaded by attribution (escaped: never executes HTML)."""
    s = np.asarray(scores, dtype=np.float64)
    top = float(np.abs(s).max()) if s.size else 0.0
    norm = s / top if top > 0 else s
    spans = []
    for tok, v, raw in zip(tokens, norm, s):
        fg = "#fff" if abs(v) > 0.6 else "#111"
        spans.append(f"<span title='{html.escape(tok, quote=True)}: {raw:+.3g}' style='background:{_diverging(v)};"
                     f"color:{fg};padding:3px 6px;margin:2px;border-radius:4px;display:inline-block;"
                     f"border:1px solid #ddd;font-size:1.05rem'>{html.escape(tok)}</span>")
    legend = ("<div style='font-size:0.85rem;color:#555;margin-top:4px'>"
              f"<span style='background:{_diverging(1)};color:#fff;padding:1px 6px;border-radius:3px'>supports</span>"
              " · white: little effect · "
              f"<span style='background:{_diverging(-1)};color:#fff;padding:1px 6px;border-radius:3px'>"
              "works against</span></div>")
    return "<div style='line-height:2.1'>" + "".join(spans) + "</div>" + legend
