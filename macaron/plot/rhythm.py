"""The rhythm of a layer: how far the particles move in each sub-step, as bars over layer time (one row per
trajectory) and as a token × sub-step map. Trajectories in, Plotly figures out.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from ..schemes import SUBSTEP_KINDS
from ..studies.analysis import displacement_norms, kept_states
from ..trajectory import Trajectory
from .particles import keep_mask, kept_tokens
from .style import KIND_COLOR, KIND_NAME, base_layout, display_token, esc, figure, subplots_layout


def displacement(trajs: Sequence[Trajectory], names: Sequence[str] | None = None,
                 keeps: Sequence[np.ndarray | None] | None = None, per_token: bool = True,
                 height: int | None = None, normalised: bool = False) -> go.Figure:
    """Bars: mean ‖Δx‖ of each sub-step, spanning its share of layer time, coloured by kind.
    Dots: every particle's own ‖Δx‖. One row per trajectory, sharing the time axis and the ‖Δx‖
    scale. `normalised`: moves of the states as the operators read them (analysis.standardise)."""
    n = len(trajs)
    names = list(names) if names else [t.meta.get("model", "") for t in trajs]
    keeps = list(keeps) if keeps else [None] * n
    # Plain dicts, like every other builder: Plotly validating the figure took most of a Particles page run.
    layout = subplots_layout(n, 1, shared_xaxes=True, vertical_spacing=0.12 if n > 1 else 0.0,
                             subplot_titles=[esc(s) for s in names] if n > 1 else None)
    data, legend_done = [], set()
    for r, (traj, keep) in enumerate(zip(trajs, keeps), start=1):
        keep = keep_mask(traj, keep)
        norms = displacement_norms(kept_states(traj, normalised, keep))  # [S-1, T]
        tokens = kept_tokens(traj, keep)
        t0, t1 = traj.times[:-1], traj.times[1:]  # each sub-step spans its share of layer time
        axes = dict(xaxis=f"x{r if r > 1 else ''}", yaxis=f"y{r if r > 1 else ''}")
        for kind in SUBSTEP_KINDS:
            sel = [k for k, s in enumerate(traj.steps) if s.kind == kind]
            if not sel:
                continue
            data.append(dict(
                type="bar", x=[(t0[k] + t1[k]) / 2 for k in sel], y=[norms[k].mean() for k in sel],
                width=[(t1[k] - t0[k]) * 0.92 for k in sel], marker=dict(color=KIND_COLOR[kind]),
                name=KIND_NAME[kind], legendgroup=kind, showlegend=kind not in legend_done,
                hovertext=[f"{esc(traj.steps[k].label)}<br>mean ‖Δx‖ = {norms[k].mean():.3g}" for k in sel],
                hoverinfo="text", **axes))
            legend_done.add(kind)
        if per_token and len(tokens):
            hov = [f"{esc(tok)} · {esc(traj.steps[k].label)}: {norms[k, i]:.3g}"
                   for k in range(len(traj.steps)) for i, tok in enumerate(tokens)]
            data.append(dict(type="scatter", x=np.repeat((t0 + t1) / 2, len(tokens)), y=norms.ravel(),
                             mode="markers", name="one particle", legendgroup="tok",
                             showlegend="tok" not in legend_done, hovertext=hov, hoverinfo="text",
                             marker=dict(size=4, color="rgba(40,40,40,0.45)"), **axes))
            legend_done.add("tok")
        layout[f"yaxis{r if r > 1 else ''}"].update(title=dict(text="‖Δx‖"), rangemode="tozero",
                                                    **(dict(matches="y") if r > 1 else {}))
    L = max(int(round(t.times[-1])) for t in trajs)
    for r in range(1, n + 1):
        layout[f"xaxis{r if r > 1 else ''}"].update(tickmode="array", tickvals=list(range(L + 1)),
                                                    ticktext=[str(i) for i in range(L + 1)], showgrid=True,
                                                    gridcolor="#bbb", showticklabels=True)
    layout[f"xaxis{n if n > 1 else ''}"]["title"] = dict(text="layer time t (layer boundaries)")
    for a in layout.get("annotations", []):
        a["font"] = dict(size=14)
    layout.update(base_layout(height or (200 + 210 * n), barmode="overlay", bargap=0,
                              margin=dict(l=60, r=20, t=75, b=50)))
    layout["legend"] = dict(orientation="h", x=0.0, xanchor="left", y=1.0, yref="container", yanchor="top",
                            font=dict(size=13))
    return figure(data, layout)


def displacement_heatmap(traj: Trajectory, keep: np.ndarray | None = None, height: int | None = None) -> go.Figure:
    """Token × sub-step map of ‖Δx‖; cells span each sub-step's share of layer time."""
    keep = keep_mask(traj, keep)
    norms = displacement_norms(traj.states[:, keep]).T  # [T, S-1]
    idx = np.flatnonzero(keep)
    names = [esc(display_token(traj.tokens[i], int(i))) for i in idx]
    data = [dict(type="heatmap", z=norms, x=traj.times.tolist(), y=list(range(len(idx))), colorscale="Viridis",
                 colorbar=dict(title=dict(text="‖Δx‖"), thickness=14),
                 hovertext=[[f"{names[i]} · {esc(s.label)}: {norms[i, k]:.3g}" for k, s in enumerate(traj.steps)]
                            for i in range(len(idx))], hoverinfo="text")]
    L = int(round(traj.times[-1]))
    layout = base_layout(height or int(min(700, 16 * len(idx) + 160)),
                         xaxis=dict(title=dict(text="layer time t"), tickmode="array", tickvals=list(range(L + 1))),
                         yaxis=dict(tickmode="array", tickvals=list(range(len(idx))), ticktext=names,
                                    autorange="reversed", tickfont=dict(size=11)),
                         margin=dict(l=110, r=20, t=30, b=50))
    return figure(data, layout)
