"""Figures of translation: where a decoder's moves come from (analysis.MoveShares). The two systems' animation is
plot.particles of translation.joint."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..studies.analysis import MoveShares
from .style import KIND_COLOR, KIND_NAME, base_layout, esc, figure, text_on


def move_shares(shares: dict[str, MoveShares], height: int | None = None) -> go.Figure:
    """One stacked bar per layer (of each model named), 100 % wide: the share of the particles' path in that layer
    travelled by each kind of sub-step (for a decoder: self-attention, cross-attention, FFN), its per cent written
    in the bar where it fits."""
    rows, data = [], []
    for name, s in shares.items():
        rows += [(name, layer) for layer in range(s.shares.shape[0])]
    labels = [f"{esc(name)} · layer {layer + 1}" if len(shares) > 1 else f"layer {layer + 1}" for name, layer in rows]
    kinds = list(dict.fromkeys(k for s in shares.values() for k in s.kinds))
    for kind in kinds:
        x = np.concatenate([s.shares[:, s.kinds.index(kind)] if kind in s.kinds else np.zeros(s.shares.shape[0])
                            for s in shares.values()])
        data.append(dict(type="bar", orientation="h", y=labels, x=(100 * x).tolist(), name=KIND_NAME[kind],
                         marker=dict(color=KIND_COLOR[kind], line=dict(color="white", width=1)),
                         text=[f"{v:.0%}" if v >= 0.06 else "" for v in x], textposition="inside",
                         insidetextanchor="middle", textfont=dict(color=text_on(KIND_COLOR[kind]), size=13),
                         hovertemplate="%{y}: %{x:.1f} % " + esc(KIND_NAME[kind]) + "<extra></extra>"))
    layout = base_layout(height or 120 + 34 * len(rows), barmode="stack", bargap=0.25,
                         xaxis=dict(range=[0, 100], ticksuffix=" %", title=dict(text="share of the path each particle "
                                                                                     "travels in the layer")),
                         yaxis=dict(autorange="reversed"), margin=dict(l=10, r=20, t=40, b=60),
                         legend=dict(orientation="h", x=0, y=1.02, yanchor="bottom", traceorder="normal"))
    layout["yaxis"]["automargin"] = True
    return figure(data, layout)
