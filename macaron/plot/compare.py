"""Figures that compare trajectories: side by side on one layer clock, overlaid after Procrustes on
the same clock, CKA between every pair of states, and measures over depth."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from ..studies.analysis import Procrustes, Projection, state_at, time_grid
from ..trajectory import Trajectory
from .particles import (
    clock,
    kept_tokens,
    kinds_of,
    legend_room,
    plane,
    plane_frame,
    plane_traces,
    plot_widths,
    slider_label,
)
from .style import (
    KIND_COLOR,
    MODEL_LOOK,
    SLOT_COLORS,
    axis_title,
    base_layout,
    equal_units,
    esc,
    figure,
    ink,
    label_priority,
    label_traces,
    padded_range,
    place_labels,
    play_controls,
    subplots_layout,
    token_style,
    true_aspect,
)


def _state_label(traj: Trajectory, f: int) -> str:
    """A state's sub-step in words, in its kind's colour."""
    kind = kinds_of(traj)[f]
    return f"<span style='color:{ink(KIND_COLOR.get(kind, '#222222'))}'>{esc(traj.labels[f])}</span>"


def _clock(grid: np.ndarray, start_time: float, height: int, margin: dict, font_size: int,
           encoder_layers: float | None = None) -> tuple[int, dict]:
    """The start frame and the Play button and slider of a figure on the layer clock `grid` (of two systems, for
    translation models: the encoder's layers, then the decoder's)."""
    start = int(np.argmin(np.abs(grid - start_time)))
    names = [f"{t:g}" for t in grid]
    return start, play_controls(names, [slider_label(t, 1.0, encoder_layers) for t in grid], start,
                                height - margin["t"] - margin["b"], font_size=font_size)


def _encoder_layers(trajs: Sequence[Trajectory]) -> float | None:
    """Translation models' common encoder depth, on whose clock the decoder's layers follow; else None."""
    depths = {(t.meta.get("two_systems") or {}).get("encoder_layers") for t in trajs}
    return depths.pop() if len(depths) == 1 else None


def compare(trajs: Sequence[Trajectory], projections: Sequence[Projection], names: Sequence[str], *,
            start_time: float = 0.0, trail: int = 3, labels: str = "auto", height: int = 500,
            width: int | tuple[int, int] = (660, 1560), font_size: int = 14, share_axes: bool = False) -> go.Figure:
    """Side-by-side particle animations on one layer clock.

    One frame per time on the union grid; each panel shows its latest state at that time, so layer
    boundaries line up although the schemes take different numbers of sub-steps. Titles and labels
    are redrawn every frame. `share_axes`: one range for all panels (projections fitted together,
    analysis.project_together)."""
    n = len(trajs)
    grid = time_grid(*trajs)
    layout = subplots_layout(1, n, horizontal_spacing=0.1)
    margin = dict(l=60, r=16, t=104 + 8 * (font_size - 14), b=104)  # title, legend, two-line panel titles
    margin["t"] += max(legend_room(t, font_size, width, margin) for t in trajs)
    size = (plot_widths(width, margin, (1 - 0.1 * (n - 1)) / n), height - margin["t"] - margin["b"])
    ranges = [[padded_range(np.asarray(p.coords)[..., k]) for k in range(2)] for p in projections]
    if share_axes:
        ranges = [[[min(r[k][0] for r in ranges), max(r[k][1] for r in ranges)] for k in range(2)]] * n
    sfx = ["" if c == 0 else str(c + 1) for c in range(n)]
    planes = [plane(t, _two_axes(p), trail=trail, labels=labels, axes=(f"x{s}", f"y{s}"), size_px=size,
                    font_px=font_size, ranges=r)
              for t, p, r, s in zip(trajs, projections, ranges, sfx)]

    def states(t):
        return [state_at(p.traj.times, t) for p in planes]

    def annotations(t):
        out = []
        for c, (p, f) in enumerate(zip(planes, states(t))):
            dom = layout[f"xaxis{sfx[c]}"]["domain"]
            out.append(dict(text=f"<b>{esc(names[c])}</b><br>{_state_label(p.traj, f)}", x=(dom[0] + dom[1]) / 2,
                            y=1.0, xref="paper", yref="paper", xanchor="center", yanchor="bottom", showarrow=False,
                            font=dict(size=font_size)))
        return out

    encoder_layers = _encoder_layers(trajs)

    def title(t):
        when = clock(trajs[0], t) if encoder_layers is not None else f"t = {t:g}"
        return f"<b>layer time {when}</b>  ·  both panels at their latest state by then"

    start, controls = _clock(grid, start_time, height, margin, font_size, encoder_layers)
    data = [tr for c, (p, f) in enumerate(zip(planes, states(grid[start])))
            for tr in plane_traces(p, f, legend=c == 0, hover_prefix=esc(names[c]) + ": ")]
    frames = [dict(name=f"{t:g}", traces=list(range(len(data))),
                   data=[d for c, (p, f) in enumerate(zip(planes, states(t)))
                         for d in plane_frame(p, f, esc(names[c]) + ": ")],
                   layout=dict(title=dict(text=title(t)), annotations=annotations(t))) for t in grid]
    for c, p in enumerate(planes):
        for i, axis in enumerate(("xaxis", "yaxis")):
            layout[axis + sfx[c]].update(range=p.ranges[i], autorange=False, zeroline=False,
                                         title=dict(text=axis_title(i, projections[c].explained)),
                                         **(true_aspect(f"x{sfx[c]}") if axis == "yaxis" else {}))
    layout.update(base_layout(height, margin=margin, uirevision="compare", annotations=annotations(grid[start]),
                              font=dict(base_layout(0)["font"], size=font_size),
                              title=dict(text=title(grid[start]), x=0.0, xanchor="left", y=1.0 - 10 / height,
                                         yref="container", yanchor="top", font=dict(size=font_size + 2))))
    layout["legend"] = dict(orientation="h", x=0.0, xanchor="left", y=1.0 - 2.7 * font_size / height,
                            yref="container", yanchor="top", font=dict(size=font_size - 1))
    layout.update(controls)
    return figure(data, layout, frames)


def _two_axes(p: Projection) -> Projection:
    return Projection(np.asarray(p.coords)[..., :2], p.explained[:2], p.components[:2], p.mean, p.keep)


def overlay(result: Procrustes, traj_a: Trajectory, traj_b: Trajectory, names: Sequence[str], *,
            start_time: float = 0.0, labels: str = "auto", height: int = 500,
            width: int | tuple[int, int] = (660, 1560), font_size: int = 14) -> go.Figure:
    """A's particles (filled) and B's after Procrustes (open diamonds), joined token by token, in A's
    PCA frame, animated on the same layer clock as `compare`: one rotation for all layers, and at
    every time B's cloud shifted and scaled onto A's."""
    grid = time_grid(traj_a, traj_b)
    tokens = kept_tokens(traj_a, result.projection.keep)
    allxy = np.concatenate([result.a.reshape(-1, 2), result.b.reshape(-1, 2)])
    margin = dict(l=60, r=16, t=96, b=104)
    size = (plot_widths(width, margin, 1.0)[:1], height - margin["t"] - margin["b"])
    xr, yr = equal_units(padded_range(allxy[:, 0]), padded_range(allxy[:, 1]), size[0][0], size[1])
    colors, _ = token_style(tokens)
    order = label_priority(tokens)
    placed = {}

    def at(t):
        return state_at(traj_a.times, t), state_at(traj_b.times, t)

    def labels_of(fa) -> list[dict]:
        """The leader lines and the labels of A's particles at its state fa."""
        if fa not in placed:
            placed[fa] = ([None] * len(tokens) if labels == "none" else
                          place_labels(result.a[fa], tokens, xr, yr, size[0], size[1], font_size, order,
                                       labels == "all" or len(tokens) <= 30, prefer=placed.get(fa - 1)))
        text, leaders = label_traces(result.a[fa], placed[fa], xr, yr, size[0][0], size[1], font_size)
        return [dict(type="scatter", **leaders), dict(type="scatter", **text)]

    def traces(t):
        fa, fb = at(t)
        a, b = result.a[fa], result.b[fb]
        seg = np.full((len(a), 3, 2), np.nan, np.float32)
        seg[:, 0], seg[:, 1] = a, b
        return [dict(type="scatter", x=seg[..., 0].ravel(), y=seg[..., 1].ravel()),
                dict(type="scatter", x=np.asarray(a[:, 0], np.float32), y=np.asarray(a[:, 1], np.float32)),
                dict(type="scatter", x=np.asarray(b[:, 0], np.float32), y=np.asarray(b[:, 1], np.float32))
                ] + labels_of(fa)

    def title(t):
        fa, fb = at(t)
        i = int(np.argmin(np.abs(result.layer_times - t)))
        at_boundary = abs(result.layer_times[i] - t) < 1e-9
        res = f"  ·  residual here {result.layer_residuals[i]:.2f}" if at_boundary else ""
        return (f"<b>t = {t:g}</b>{res}<br><span style='font-size:{font_size - 1}px'>{esc(names[0])}: "
                f"{_state_label(traj_a, fa)}  ·  {esc(names[1])}: {_state_label(traj_b, fb)}</span>")

    look_b = MODEL_LOOK[1]
    start, controls = _clock(grid, start_time, height, margin, font_size)
    data = [dict(type="scatter", mode="lines", name="same token", hoverinfo="skip",
                 line=dict(color="rgba(100,100,100,0.55)", width=1.5)),
            dict(type="scatter", mode="markers", name=esc(names[0]), hovertext=[f"{esc(names[0])}: {esc(tok)}"
                                                                                 for tok in tokens],
                 hoverinfo="text", marker=dict(size=11, color=colors, symbol=MODEL_LOOK[0].symbol,
                                               line=dict(width=1, color="white"))),
            dict(type="scatter", mode="markers", name=f"{esc(names[1])} (rotated onto A)",
                 hovertext=[f"{esc(names[1])}: {esc(tok)}" for tok in tokens], hoverinfo="text",
                 marker=dict(size=11, color=SLOT_COLORS[0], symbol=f"{look_b.symbol}-open", line=dict(width=2))),
            dict(type="scatter", mode="lines", name="leaders", hoverinfo="skip", showlegend=False,
                 line=dict(color="rgba(90,90,90,0.55)", width=1)),
            dict(type="scatter", mode="markers+text", name="labels", hoverinfo="skip", showlegend=False,
                 marker=dict(size=10, opacity=0), textfont=dict(size=font_size, color="#111"))]
    for d, update in zip(data, traces(grid[start])):
        d.update(update)
    frames = [dict(name=f"{t:g}", traces=list(range(len(data))), data=traces(t),
                   layout=dict(title=dict(text=title(t)))) for t in grid]
    explained = result.projection.explained
    layout = base_layout(height, title=dict(text=title(grid[start]), x=0.0, xanchor="left", y=1.0 - 10 / height,
                                            yref="container", yanchor="top", font=dict(size=font_size + 1)),
                         font=dict(base_layout(0)["font"], size=font_size), uirevision="overlay",
                         xaxis=dict(title=dict(text=axis_title(0, explained)), range=xr, autorange=False,
                                    zeroline=False),
                         yaxis=dict(title=dict(text=axis_title(1, explained)), range=yr, autorange=False,
                                    zeroline=False, **true_aspect("x")),
                         margin=margin)
    layout["legend"] = dict(orientation="h", x=0.0, xanchor="left", y=1.0 - 56 / height, yref="container",
                            yanchor="top", font=dict(size=font_size - 1))
    layout.update(controls)
    return figure(data, layout, frames)


def cka(m: np.ndarray, traj_a: Trajectory, traj_b: Trajectory, name_a: str, name_b: str,
        height: int = 480) -> go.Figure:
    """Linear CKA (analysis.cka) between every state of A (rows) and of B (columns); ticks at layer
    boundaries."""
    la, lb = traj_a.labels, traj_b.labels
    hover = [[f"{esc(name_a)}: {esc(la[i])}<br>{esc(name_b)}: {esc(lb[j])}<br>CKA = {m[i, j]:.3f}"
              for j in range(m.shape[1])] for i in range(m.shape[0])]

    def ticks(traj):
        b = traj.layer_boundaries()
        return dict(tickmode="array", tickvals=b, ticktext=[f"{traj.times[i]:g}" for i in b])

    data = [dict(type="heatmap", z=m, colorscale="Viridis", zmin=0, zmax=1, hovertext=hover, hoverinfo="text",
                 colorbar=dict(title=dict(text="CKA"), thickness=14))]
    layout = base_layout(height, xaxis=dict(title=dict(text=f"{esc(name_b)}: layer time"), **ticks(traj_b)),
                         yaxis=dict(title=dict(text=f"{esc(name_a)}: layer time"), autorange="reversed",
                                    **ticks(traj_a)),
                         margin=dict(l=70, r=20, t=30, b=60))
    return figure(data, layout)


def lines_over_depth(series: Sequence[tuple[str, np.ndarray, np.ndarray]], ytitle: str, height: int = 360,
                     yrange: tuple[float, float] | None = None, colors: Sequence[str] | None = None) -> go.Figure:
    """One line per (name, times, values), in the looks of models A, B, …: solid with dots, dashed
    with diamonds; `colors` (e.g. style.model_colors of their schemes), else greys. Vertical grid
    lines at layer boundaries."""
    colors = list(colors) if colors else [SLOT_COLORS[i % len(SLOT_COLORS)] for i in range(len(series))]
    data = [dict(type="scatter", mode="lines+markers", x=np.asarray(t).tolist(), y=np.asarray(v).tolist(),
                 name=esc(name), line=dict(color=colors[i], dash=MODEL_LOOK[i % 2].dash, width=3),
                 marker=dict(size=7, symbol=MODEL_LOOK[i % 2].symbol, color=colors[i]))
            for i, (name, t, v) in enumerate(series)]
    L = max((int(np.ceil(np.max(t))) for _, t, _ in series), default=1)
    layout = base_layout(height, xaxis=dict(title=dict(text="layer time t"), tickmode="array",
                                            tickvals=list(range(L + 1)), gridcolor="#bbb"),
                         yaxis=dict(title=dict(text=ytitle), **({"range": list(yrange)} if yrange else {})),
                         margin=dict(l=60, r=20, t=40, b=50))
    layout["legend"] = dict(orientation="h", x=0.0, xanchor="left", y=1.0, yanchor="bottom")
    return figure(data, layout)
