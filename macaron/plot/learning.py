"""Learning, watched: a sentence's measures at the stages of a model's training (macaron.studies.learning),
against training tokens, under the held-out curve of the same run."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from ..studies.learning import Stage
from .style import GUIDE_COLOR, PARTICLE_COLOR, base_layout, esc, figure, subplots_layout

CURVE_COLOR = "#555555"
STAGE_COLOR = "#0072B2"  # Okabe–Ito blue: the sentence, measured at the stages


def _sentence_row(stages: Sequence[Stage]) -> tuple[str, list[float]]:
    """What the bottom row shows: how far apart the two uses of the word end up, else the clusters."""
    if all(s.distance is not None for s in stages):
        return "two uses of the word:<br>1 − cos at the last state", [float(s.distance[-1]) for s in stages]
    return "effective clusters<br>at the last state", [s.clusters for s in stages]


def learning(stages: Sequence[Stage], curve: dict, height: int = 620) -> go.Figure:
    """Three rows against training tokens (millions): the held-out loss, the context effect (how much the
    loss rises when the other words are shuffled), and the sentence measured at each stage. Each stage is a
    dotted vertical line named at the top; its held-out figures are the dots on the curves."""
    millions = np.asarray(curve["tokens"], dtype=np.float64) / 1e6
    at = [np.nan if s.milestone.tokens is None else s.milestone.tokens / 1e6 for s in stages]  # None: not recorded
    names = [esc(s.milestone.name) for s in stages]
    ytitle, values = _sentence_row(stages)
    data = []
    for row, key, title in ((1, "loss", "held-out loss (nats)"), (2, "context_effect", "context effect (nats)")):
        axis = "" if row == 1 else str(row)
        data.append(dict(type="scatter", mode="lines", x=millions.tolist(), y=np.asarray(curve[key]).tolist(),
                         xaxis=f"x{axis}", yaxis=f"y{axis}", line=dict(color=CURVE_COLOR, width=2),
                         name=title, showlegend=False, hovertemplate="%{x:.2f} M tokens: %{y:.3f}<extra></extra>"))
        figures = [getattr(s.milestone, key) for s in stages]
        data.append(dict(type="scatter", mode="markers", x=at, y=[np.nan if v is None else v for v in figures],
                         xaxis=f"x{axis}", yaxis=f"y{axis}", marker=dict(size=10, color=STAGE_COLOR),
                         text=names, hovertemplate="%{text}: %{y:.3f}<extra></extra>", showlegend=False))
    data.append(dict(type="scatter", mode="lines+markers", x=at, y=values, xaxis="x3", yaxis="y3", text=names,
                     line=dict(color=STAGE_COLOR, width=3), marker=dict(size=10, color=STAGE_COLOR),
                     hovertemplate="%{text}: %{y:.3f}<extra></extra>", showlegend=False))
    layout = base_layout(height, **subplots_layout(3, 1, shared_xaxes=True, vertical_spacing=0.06),
                         margin=dict(l=90, r=20, t=70, b=50))
    layout["xaxis3"]["title"] = dict(text="training tokens (millions)")
    for row, title in ((1, "held-out loss"), (2, "context effect<br>(nats)"), (3, ytitle)):
        layout[f"yaxis{'' if row == 1 else row}"]["title"] = dict(text=title, font=dict(size=13))
    layout["shapes"] = [dict(type="line", xref="x", yref="paper", x0=x, x1=x, y0=0, y1=1,
                             line=dict(color=GUIDE_COLOR, width=1, dash="dot")) for x in at]
    layout["annotations"] = [dict(x=x, y=1.0, xref="x", yref="paper", yanchor="bottom", text=name, showarrow=False,
                                  textangle=-30, font=dict(size=12, color=PARTICLE_COLOR))
                             for x, name in zip(at, names)]
    return figure(data, layout)
