"""Pure figure builders: trajectories (and arrays from app.analysis) in, Plotly figures out.

No Streamlit here: every function is usable from a notebook and testable on its own.
Colours are colour-blind safe: Paul Tol's "muted" palette (with marker shapes) for tokens,
Okabe–Ito blue and vermillion for the two kinds of sub-step.
"""
from __future__ import annotations

import html
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from macaron.trajectory import Trajectory

from . import analysis as an

# ---- style -----------------------------------------------------------------------------------
DIFFUSION_COLOR = "#0072B2"   # Okabe–Ito blue: attention, particles move because of each other
CONVECTION_COLOR = "#D55E00"  # Okabe–Ito vermillion: FFN, each particle moves on its own
KIND_COLOR = {"diffusion": DIFFUSION_COLOR, "convection": CONVECTION_COLOR}
KIND_NAME = {"diffusion": "diffusion (attention)", "convection": "convection (FFN)"}
TOKEN_COLORS = ("#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255",
                "#AA4499")  # Paul Tol, muted: safe for the common colour-vision deficiencies
SPECIAL_COLOR = "#888888"
MASK_COLOR = "#000000"
SYMBOLS_2D = ("circle", "square", "diamond", "triangle-up", "pentagon", "hexagon", "star-triangle-up",
              "hourglass")
SYMBOLS_3D = ("circle", "square", "diamond", "cross", "x", "circle-open", "square-open", "diamond-open")
FONT = dict(family="Inter, Source Sans Pro, Helvetica, Arial, sans-serif", size=14, color="#222")
_TEMPLATE: list[dict] = []


def _template() -> dict:
    """plotly_white as a dict (figures here skip validation, which would expand a template name)."""
    if not _TEMPLATE:
        import plotly.io as pio
        _TEMPLATE.append(pio.templates["plotly_white"].to_plotly_json())
    return _TEMPLATE[0]


PLAY_MS = 450


def esc(text: str) -> str:
    """Plotly renders a subset of HTML in text: escape tokens so '<b>' shows as typed."""
    return html.escape(str(text), quote=False)


def display_token(tok: str, i: int | None = None) -> str:
    tok = tok[:18] + "…" if len(tok) > 19 else tok
    return tok if i is None else f"{i}·{tok}"


def token_style(tokens: Sequence[str], three_d: bool = False) -> tuple[list[str], list[str]]:
    """(colour, marker symbol) per token: special tokens grey, [MASK] black, the rest cycle
    through 9 colours × 8 shapes (72 distinct looks before one repeats)."""
    symbols = SYMBOLS_3D if three_d else SYMBOLS_2D
    colors, marks, n = [], [], 0
    for tok in tokens:
        if tok == an.MASK_TOKEN:
            colors.append(MASK_COLOR)
            marks.append("diamond" if three_d else "star")
        elif tok in an.SPECIAL_TOKENS:
            colors.append(SPECIAL_COLOR)
            marks.append("square-open" if three_d else "square-open")
        else:
            colors.append(TOKEN_COLORS[n % len(TOKEN_COLORS)])
            marks.append(symbols[(n // len(TOKEN_COLORS)) % len(symbols)])
            n += 1
    return colors, marks


def _label_priority(tokens: Sequence[str]) -> list[int]:
    """Order in which particles earn a label: [MASK] first, then words, then pieces, then specials."""
    def rank(i):
        t = tokens[i]
        if t == an.MASK_TOKEN:
            return (0, i)
        if t in an.SPECIAL_TOKENS:
            return (3, i)
        if t.startswith("##") or not any(c.isalnum() for c in t):
            return (2, i)
        return (1, i)
    return sorted(range(len(tokens)), key=rank)


LABEL_POSITIONS = ("top center", "bottom center", "middle right", "middle left")


def label_box(px: float, py: float, half_w: float, h: float, position: str) -> tuple[float, float, float, float]:
    """(x0, x1, y0, y1) in pixels, y up, of a label drawn at `position` around the point (px, py)."""
    if position == "top center":
        return px - half_w, px + half_w, py + 5, py + 5 + h
    if position == "bottom center":
        return px - half_w, px + half_w, py - 5 - h, py - 5
    if position == "middle right":
        return px + 7, px + 7 + 2 * half_w, py - h / 2, py + h / 2
    return px - 7 - 2 * half_w, px - 7, py - h / 2, py + h / 2


def place_labels(xy: np.ndarray, texts: Sequence[str], xrange, yrange, width_px: float = 640,
                 height_px: float = 420, font_px: float = 13, order: Sequence[int] | None = None,
                 max_labels: int | None = None) -> tuple[list[str], list[str]]:
    """Greedy label placement. Each particle, in `order`, tries above, below, right and left of
    its dot; a label is kept at the first place where its box stays inside the plot, overlaps no
    label already placed and covers no other particle. Returns (texts with hidden ones as '',
    textposition per particle)."""
    xy = np.asarray(xy, dtype=np.float64)
    n = len(texts)
    out, where = [""] * n, ["top center"] * n
    if n == 0:
        return out, where
    sx = width_px / max(xrange[1] - xrange[0], 1e-12)
    sy = height_px / max(yrange[1] - yrange[0], 1e-12)
    px = (xy[:, 0] - xrange[0]) * sx
    py = (xy[:, 1] - yrange[0]) * sy
    half_w = np.array([0.31 * font_px * max(len(t), 1) + 3 for t in texts])
    h = font_px * 1.25
    boxes = np.empty((n, 4))  # x0, x1, y0, y1 of placed labels
    placed = 0
    for i in (order if order is not None else range(n)):
        if max_labels is not None and placed >= max_labels:
            break
        if not np.isfinite(px[i]) or not np.isfinite(py[i]):
            continue
        others = np.ones(n, bool)
        others[i] = False
        for pos in LABEL_POSITIONS:
            x0, x1, y0, y1 = label_box(px[i], py[i], half_w[i], h, pos)
            if x0 < -2 or x1 > width_px + 2 or y0 < -2 or y1 > height_px + 2:
                continue  # would be cut at the plot's edge
            b = boxes[:placed]
            if placed and np.any((b[:, 0] < x1) & (x0 < b[:, 1]) & (b[:, 2] < y1) & (y0 < b[:, 3])):
                continue
            if np.any(others & (px > x0 - 3) & (px < x1 + 3) & (py > y0 - 3) & (py < y1 + 3)):
                continue  # the label would hide another particle
            boxes[placed] = (x0, x1, y0, y1)
            placed += 1
            out[i], where[i] = texts[i], pos
            break
    return out, where


def declutter(xy: np.ndarray, texts: Sequence[str], xrange, yrange, width_px: float = 640,
              height_px: float = 420, font_px: float = 13, order: Sequence[int] | None = None,
              max_labels: int | None = None) -> list[str]:
    """The texts that `place_labels` keeps ('' for hidden ones)."""
    return place_labels(xy, texts, xrange, yrange, width_px, height_px, font_px, order, max_labels)[0]


def _axis_title(i: int, explained) -> str:
    share = float(explained[i]) if i < len(explained) else 0.0
    return f"PC{i + 1} ({share:.0%} of variance)"


class AnimatedFigure(go.Figure):
    """A go.Figure whose animation frames stay plain dicts.

    Plotly validates every property of every frame when a Figure is built (about half a second
    for 37 frames × 4 traces, on every new sentence); these frames are made by this module and
    validated in the tests instead. `to_dict()` (what Streamlit, `to_json` and `to_html` use)
    includes them; `raw_frames` holds them."""

    def __init__(self, spec: dict, frames: list[dict]):
        super().__init__(spec, _validate=False)
        self.__dict__["raw_frames"] = list(frames)

    def to_dict(self) -> dict:
        d = super().to_dict()
        d["frames"] = self.raw_frames
        return d

    def to_plotly_json(self) -> dict:
        return self.to_dict()


def _figure(data, layout, frames=None) -> go.Figure:
    """Build from plain dicts without Plotly's per-property validation (tests validate)."""
    spec = {"data": data, "layout": layout}
    if frames is not None:
        return AnimatedFigure(spec, frames)
    return go.Figure(spec, _validate=False)


def frames_of(fig: go.Figure) -> list[dict]:
    """The animation frames of a figure built here, as dicts."""
    return list(getattr(fig, "raw_frames", None) or [f.to_plotly_json() for f in fig.frames])


def _base_layout(height: int, **extra) -> dict:
    layout = dict(template=_template(), font=FONT, height=height, margin=dict(l=60, r=20, t=60, b=50),
                  hoverlabel=dict(font_size=14), legend=dict(orientation="h", yanchor="bottom", y=1.0,
                                                              xanchor="right", x=1.0))
    layout.update(extra)
    return layout


def _frame_title(label: str, kind: str | None, t: float) -> str:
    if kind is None:
        return f"<b>{esc(label)}</b>  ·  t = 0 (before layer 1)"
    return (f"<b>{esc(label.split(' · ')[0])} · <span style='color:{KIND_COLOR[kind]}'>"
            f"{esc(label.split(' · ', 1)[-1])}</span></b>  ·  t = {t:g}")


def _kinds(traj: Trajectory) -> list[str | None]:
    """Kind of the sub-step that produced each state (None for the embedding)."""
    return [None] + [s.kind for s in traj.steps]


def _slider_label(t: float) -> str:
    return f"{int(t)}" if float(t).is_integer() else ""


def _play_controls(frame_names: list[str], slider_labels: list[str], start: int, redraw: bool,
                   plot_height_px: float, prefix: str = "") -> dict:
    """Play/pause buttons and a frame slider under the plot, placed in pixels below the x-axis title."""
    below = lambda px: -px / max(plot_height_px, 1.0)  # paper coordinates of `px` under the plot area
    frame_args = dict(frame=dict(duration=0, redraw=redraw), mode="immediate", transition=dict(duration=0))
    play = dict(label="▶ Play", method="animate",
                args=[None, dict(frame=dict(duration=PLAY_MS, redraw=redraw), fromcurrent=True,
                                 transition=dict(duration=0), mode="immediate")])
    pause = dict(label="❚❚ Pause", method="animate", args=[[None], frame_args])
    return dict(
        updatemenus=[dict(type="buttons", direction="left", showactive=False, x=0.0, xanchor="left", y=below(62),
                          yanchor="top", pad=dict(t=0, r=10), buttons=[play, pause], font=dict(size=14))],
        sliders=[dict(active=start, x=0.22, len=0.78, y=below(52), yanchor="top", pad=dict(t=0, b=0),
                      currentvalue=dict(visible=False, prefix=prefix), ticklen=4, font=dict(size=12),
                      steps=[dict(label=lab, method="animate", args=[[name], frame_args])
                             for name, lab in zip(frame_names, slider_labels)])],
    )


def _segments(a: np.ndarray, b: np.ndarray, dims: int) -> list[list]:
    """[start, end, None] polylines for each particle: per-axis coordinate lists."""
    out = []
    for k in range(dims):
        seg = np.empty((len(a), 3), dtype=object)
        seg[:, 0], seg[:, 1], seg[:, 2] = a[:, k], b[:, k], None
        out.append(seg.ravel().tolist())
    return out


def _trail(coords: np.ndarray, f: int, length: int, dims: int) -> list[list]:
    lo = max(0, f - length)
    path = coords[lo:f + 1]  # [L, T, k]
    L, T = path.shape[0], path.shape[1]
    out = []
    for k in range(dims):
        arr = np.empty((T, L + 1), dtype=object)
        arr[:, :L] = path[:, :, k].T
        arr[:, L] = None
        out.append(arr.ravel().tolist())
    return out


def _panel_traces(coords, tokens, texts_all, colors, marks, kinds, f, trail, dims, axes=None, hover_prefix="",
                  show_legend=True) -> list[dict]:
    """The traces of one animation panel at state f: trail, diffusion move, convection move, particles."""
    three = dims == 3
    kind = kinds[f]
    x = coords[f]
    T = len(tokens)
    ax = {} if axes is None else dict(xaxis=axes[0], yaxis=axes[1])
    typ = "scatter3d" if three else "scatter"
    names = ["x", "y", "z"][:dims]
    tr = _trail(coords, f, trail, dims)
    trail_colors = [c for c in colors for _ in range(min(trail, f) + 2)]
    traces = [dict(type=typ, mode="lines+markers", name="trail", hoverinfo="skip",
                   line=dict(color="rgba(120,120,120,0.35)", width=1.5 if not three else 2),
                   marker=dict(size=4 if not three else 2, color=trail_colors, opacity=0.5),
                   showlegend=show_legend, legendgroup="trail", **dict(zip(names, tr)), **ax)]
    for k in ("diffusion", "convection"):
        if f > 0 and kind == k:
            seg = _segments(coords[f - 1], x, dims)
        else:
            seg = [[None] for _ in range(dims)]  # one empty point keeps the legend entry visible
        what = "attention" if k == "diffusion" else "FFN"
        t = dict(type=typ, mode="lines" if three else "lines+markers", name=f"{k} move ({what})",
                 hoverinfo="skip", line=dict(color=KIND_COLOR[k], width=3 if not three else 6),
                 showlegend=show_legend, legendgroup=k, **dict(zip(names, seg)), **ax)
        if not three:
            t["marker"] = dict(symbol="arrow", angleref="previous", size=[0, 11, 0] * (len(seg[0]) // 3) or 0,
                               color=KIND_COLOR[k])
        traces.append(t)
    hover = [f"{hover_prefix}<b>{esc(tok)}</b> (token {i})" for i, tok in enumerate(tokens)]
    traces.append(dict(type=typ, mode="markers+text", name="particles", showlegend=False,
                       text=[esc(s) for s in texts_all[f][0]], textposition=texts_all[f][1],
                       textfont=dict(size=13 if not three else 12, color="#111"),
                       hovertext=hover, hoverinfo="text",
                       marker=dict(size=12 if not three else 6, color=colors, symbol=marks,
                                   line=dict(width=1, color="white" if not three else "#333")),
                       **dict(zip(names, [x[:, k] for k in range(dims)])), **ax))
    return traces


def _labels_per_frame(coords, tokens, xr, yr, mode, width_px, height_px) -> list[tuple[list[str], list[str]]]:
    """(texts, textpositions) for every frame."""
    shown = [display_token(t) for t in tokens]
    top = ["top center"] * len(tokens)
    if mode == "none":
        return [([""] * len(tokens), top) for _ in range(len(coords))]
    if mode == "all":
        return [(shown, top) for _ in range(len(coords))]
    order = _label_priority(tokens)
    return [place_labels(c[:, :2], shown, xr, yr, width_px, height_px, order=order) for c in coords]


def particles_animation(traj: Trajectory, proj: an.Projection, keep: np.ndarray | None = None, *,
                        start: int = 0, trail: int = 4, labels: str = "auto", height: int = 560,
                        title: str = "") -> go.Figure:
    """The particles animation: one frame per recorded state, in one fixed PCA frame.

    proj.coords [S, T_kept, 2 or 3] comes from analysis.pca_project on the same trajectory.
    `labels`: 'auto' (greedy, no overlaps), 'all', or 'none'. Hover always names the token.
    """
    coords = np.asarray(proj.coords)
    S, T, dims = coords.shape
    keep = np.ones(len(traj.tokens), bool) if keep is None else np.asarray(keep)
    tokens = [t for t, k in zip(traj.tokens, keep) if k]
    three = dims == 3
    colors, marks = token_style(tokens, three)
    kinds = _kinds(traj)
    ranges = [an.padded_range(coords[..., k]) for k in range(dims)]
    # plot area in pixels: the figure spans the main column (≈ 820 px on a 1280 laptop, ≈ 560 px on a
    # 1024 projector with the sidebar open); size for the narrower one
    texts = _labels_per_frame(coords, tokens, ranges[0], ranges[1], labels, 600, 340)
    start = int(np.clip(start, 0, S - 1))
    trail = max(0, int(trail))
    frames = []
    times = traj.times
    for f in range(S):
        frames.append(dict(name=str(f), data=_panel_traces(coords, tokens, texts, colors, marks, kinds, f, trail,
                                                            dims),
                           layout=dict(title=dict(text=_frame_title(traj.labels[f], kinds[f], times[f])))))
    margin = dict(l=60, r=20, t=88, b=125)
    layout = _base_layout(height, title=dict(text=_frame_title(traj.labels[start], kinds[start], times[start]),
                                             x=0.0, xanchor="left", xref="paper", y=0.985, yref="container",
                                             yanchor="top", font=dict(size=17)),
                          uirevision="particles", margin=margin)
    layout["legend"] = dict(orientation="h", x=0.0, xanchor="left", y=1.01, yanchor="bottom", font=dict(size=13))
    if three:
        axis = lambda k: dict(title=dict(text=f"PC{k + 1}"), range=list(ranges[k]), autorange=False)
        layout["scene"] = dict(xaxis=axis(0), yaxis=axis(1), zaxis=axis(2), aspectmode="cube",
                               camera=dict(eye=dict(x=1.6, y=1.4, z=1.0)))
        layout["margin"] = margin = dict(l=0, r=0, t=100, b=125)
    else:
        layout["xaxis"] = dict(title=dict(text=_axis_title(0, proj.explained)), range=list(ranges[0]),
                               autorange=False, zeroline=False)
        layout["yaxis"] = dict(title=dict(text=_axis_title(1, proj.explained)), range=list(ranges[1]),
                               autorange=False, zeroline=False)
    # slider tick labels are layer numbers; the full sub-step label is the frame title
    layout.update(_play_controls([str(f) for f in range(S)], [_slider_label(t) for t in times], start,
                                 redraw=three, plot_height_px=height - margin["t"] - margin["b"]))
    if title:
        layout["meta"] = dict(title=title)
    return _figure(frames[start]["data"], layout, frames)


def trajectory_still(traj: Trajectory, proj: an.Projection, keep=None, frame: int = -1, **kw) -> go.Figure:
    """A single frame (no animation controls), e.g. for a printout."""
    d = particles_animation(traj, proj, keep, start=frame % len(proj.coords), **kw).to_dict()
    d["layout"].pop("updatemenus", None)
    d["layout"].pop("sliders", None)
    return _figure(d["data"], d["layout"])


# ---- who pulls whom -------------------------------------------------------------------------------
def _mixing(traj: Trajectory, step: int, head: int | None) -> np.ndarray:
    m = traj.mixing[step]
    if m is None:
        raise ValueError(f"sub-step {step} ({traj.steps[step].label}) is a convection step: no mixing matrix")
    return m.mean(0) if head is None else m[head]


def diffusion_steps(traj: Trajectory) -> list[int]:
    return [k for k, s in enumerate(traj.steps) if s.kind == "diffusion" and traj.mixing[k] is not None]


def mixing_heatmap(traj: Trajectory, step: int, head: int | None = None, height: int | None = None) -> go.Figure:
    """Row i = how particle i spreads its attention over the particles j (each row sums to 1)."""
    w = _mixing(traj, step, head)
    T = len(traj.tokens)
    names = [esc(display_token(t, i)) for i, t in enumerate(traj.tokens)]
    which = "mean over heads" if head is None else f"head {head + 1}"
    hover = [[f"<b>{names[i]}</b> listens to <b>{names[j]}</b>: {w[i, j]:.2f}" for j in range(T)] for i in range(T)]
    data = [dict(type="heatmap", z=w, x=list(range(T)), y=list(range(T)), colorscale="Cividis", zmin=0,
                 zmax=float(max(w.max(), 1e-6)), hovertext=hover, hoverinfo="text",
                 colorbar=dict(title=dict(text="weight"), thickness=14))]
    tick = dict(tickmode="array", tickvals=list(range(T)), ticktext=names, tickfont=dict(size=11 if T > 20 else 13))
    xtick = dict(tick, ticktext=[str(i) for i in range(T)]) if T > 12 else tick  # many columns: numbers only
    layout = _base_layout(height or int(min(760, max(380, 18 * T + 170))),
                          title=dict(text=f"{esc(traj.steps[step].label)} · {which}", x=0, font=dict(size=15)),
                          xaxis=dict(title=dict(text="is pulled towards … (key j)" + (": numbers as in the rows"
                                                                                         if T > 12 else "")),
                                     side="bottom", **xtick),
                          yaxis=dict(title=dict(text="particle i (query)"), autorange="reversed", **tick),
                          margin=dict(l=110, r=20, t=50, b=110))
    layout["xaxis"]["tickangle"] = 0 if T > 12 else -50
    return _figure(data, layout)


def mixing_edges(traj: Trajectory, proj: an.Projection, keep: np.ndarray | None, step: int,
                 head: int | None = None, top_k: int = 2, min_weight: float | None = None,
                 height: int = 480) -> go.Figure:
    """The particles before a diffusion sub-step, an edge from each particle to the ones it attends
    to most (width ∝ weight), and each particle's move during the sub-step (arrow). Only weights
    above `min_weight` (default: 1.5× uniform attention, at least 0.05) are drawn."""
    coords = np.asarray(proj.coords)
    keep = np.ones(len(traj.tokens), bool) if keep is None else np.asarray(keep)
    idx = np.flatnonzero(keep)
    tokens = [traj.tokens[i] for i in idx]
    w = _mixing(traj, step, head)[np.ix_(idx, idx)]
    if min_weight is None:
        min_weight = max(0.05, 1.5 / max(len(traj.tokens), 1))
    before, after = coords[step, :, :2], coords[step + 1, :, :2]
    colors, marks = token_style(tokens)
    xr, yr = an.padded_range(coords[..., 0]), an.padded_range(coords[..., 1])
    bins = [(0.5, 1.01, 4.5, 0.85), (0.25, 0.5, 2.5, 0.6), (min_weight, 0.25, 1.2, 0.4)]
    data, mid_x, mid_y, mid_text = [], [], [], []
    edges = []
    for i in range(len(idx)):
        order = [j for j in np.argsort(-w[i]) if j != i][:top_k]
        edges += [(i, j, float(w[i, j])) for j in order if w[i, j] >= min_weight]
    for lo, hi, width, alpha in bins:
        sel = [(i, j, v) for i, j, v in edges if lo <= v < hi]
        xs, ys = [], []
        for i, j, v in sel:
            xs += [before[i, 0], before[j, 0], None]
            ys += [before[i, 1], before[j, 1], None]
            mid_x.append((before[i, 0] + before[j, 0]) / 2)
            mid_y.append((before[i, 1] + before[j, 1]) / 2)
            mid_text.append(f"<b>{esc(tokens[i])}</b> is pulled towards <b>{esc(tokens[j])}</b> ({v:.2f})")
        data.append(dict(type="scatter", mode="lines", x=xs, y=ys, hoverinfo="skip",
                         name=f"attention {lo:.2g}–{min(hi, 1):.2g}",
                         line=dict(color=f"rgba(0,114,178,{alpha})", width=width)))
    data.append(dict(type="scatter", mode="markers", x=mid_x, y=mid_y, hovertext=mid_text, hoverinfo="text",
                     marker=dict(size=8, color="rgba(0,0,0,0)"), showlegend=False))
    seg = _segments(before, after, 2)
    data.append(dict(type="scatter", mode="lines+markers", x=seg[0], y=seg[1], name="move in this sub-step",
                     hoverinfo="skip", line=dict(color=DIFFUSION_COLOR, width=2, dash="dot"),
                     marker=dict(symbol="arrow", angleref="previous", size=[0, 10, 0] * len(idx),
                                 color=DIFFUSION_COLOR)))
    texts, where = place_labels(before, [display_token(t) for t in tokens], xr, yr, 390, 300,
                                order=_label_priority(tokens))
    data.append(dict(type="scatter", mode="markers+text", x=before[:, 0], y=before[:, 1], showlegend=False,
                     text=[esc(t) for t in texts], textposition=where, textfont=dict(size=13),
                     hovertext=[esc(t) for t in tokens], hoverinfo="text",
                     marker=dict(size=12, color=colors, symbol=marks, line=dict(width=1, color="white"))))
    if not edges:
        note = dict(text=f"attention is nearly uniform here: no weight above {min_weight:.2f}", x=0.5, y=1.0,
                    xref="paper", yref="paper", yanchor="bottom", showarrow=False, font=dict(size=13, color="#555"))
    layout = _base_layout(height, title=dict(text=f"Who pulls whom · {esc(traj.steps[step].label)}", x=0,
                                             font=dict(size=15)),
                          xaxis=dict(title=dict(text=_axis_title(0, proj.explained)), range=list(xr), zeroline=False),
                          yaxis=dict(title=dict(text=_axis_title(1, proj.explained)), range=list(yr),
                                     zeroline=False),
                          margin=dict(l=60, r=20, t=50, b=100))
    layout["legend"] = dict(orientation="h", x=0.0, xanchor="left", y=-0.2, yanchor="top", font=dict(size=12))
    if not edges:
        layout["annotations"] = [note]
    return _figure(data, layout)


# ---- rhythm: displacement per sub-step --------------------------------------------------------
def _step_spans(traj: Trajectory) -> tuple[np.ndarray, np.ndarray]:
    t = traj.times
    return t[:-1], t[1:]


def displacement_figure(trajs: Sequence[Trajectory], names: Sequence[str] | None = None,
                        keeps: Sequence[np.ndarray | None] | None = None, per_token: bool = True,
                        height: int | None = None) -> go.Figure:
    """Bars: mean ‖Δx‖ of each sub-step, spanning its share of layer time, coloured by kind.
    Dots: every particle's own ‖Δx‖. One row per trajectory, sharing the time axis."""
    from plotly.subplots import make_subplots

    n = len(trajs)
    names = list(names) if names else [t.meta.get("model", "") for t in trajs]
    keeps = list(keeps) if keeps else [None] * n
    fig = make_subplots(rows=n, cols=1, shared_xaxes=True, vertical_spacing=0.12 if n > 1 else 0.0,
                        subplot_titles=[esc(s) for s in names] if n > 1 else None)
    legend_done = set()
    for r, (traj, keep) in enumerate(zip(trajs, keeps), start=1):
        keep = np.ones(len(traj.tokens), bool) if keep is None else np.asarray(keep)
        norms = an.displacement_norms(traj.states[:, keep])  # [S-1, T]
        tokens = [t for t, k in zip(traj.tokens, keep) if k]
        t0, t1 = _step_spans(traj)
        for kind in ("diffusion", "convection"):
            sel = [k for k, s in enumerate(traj.steps) if s.kind == kind]
            if not sel:
                continue
            fig.add_trace(go.Bar(
                x=[(t0[k] + t1[k]) / 2 for k in sel], y=[norms[k].mean() for k in sel],
                width=[(t1[k] - t0[k]) * 0.92 for k in sel], marker_color=KIND_COLOR[kind],
                name=KIND_NAME[kind], legendgroup=kind, showlegend=kind not in legend_done,
                hovertext=[f"{esc(traj.steps[k].label)}<br>mean ‖Δx‖ = {norms[k].mean():.3g}" for k in sel],
                hoverinfo="text"), row=r, col=1)
            legend_done.add(kind)
        if per_token and len(tokens):
            xs = np.repeat((t0 + t1) / 2, len(tokens))
            ys = norms.ravel()
            hov = [f"{esc(tok)} · {esc(traj.steps[k].label)}: {norms[k, i]:.3g}"
                   for k in range(len(traj.steps)) for i, tok in enumerate(tokens)]
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="markers", name="one particle", legendgroup="tok",
                                     showlegend="tok" not in legend_done, hovertext=hov, hoverinfo="text",
                                     marker=dict(size=4, color="rgba(40,40,40,0.45)")), row=r, col=1)
            legend_done.add("tok")
        fig.update_yaxes(title_text="‖Δx‖", row=r, col=1, rangemode="tozero")
    L = max(int(round(t.times[-1])) for t in trajs)
    fig.update_xaxes(tickmode="array", tickvals=list(range(L + 1)), ticktext=[str(i) for i in range(L + 1)],
                     showgrid=True, gridcolor="#bbb", showticklabels=True)
    fig.update_xaxes(title_text="layer time t (layer boundaries)", row=n, col=1)
    fig.update_layout(**_base_layout(height or (200 + 210 * n), barmode="overlay", bargap=0,
                                     margin=dict(l=60, r=20, t=75, b=50)))
    fig.update_layout(legend=dict(orientation="h", x=0.0, xanchor="left", y=1.0, yref="container", yanchor="top",
                                  font=dict(size=13)))
    fig.update_annotations(font_size=14)
    return fig


def displacement_heatmap(traj: Trajectory, keep: np.ndarray | None = None, height: int | None = None) -> go.Figure:
    """Token × sub-step map of ‖Δx‖; cells span each sub-step's share of layer time."""
    keep = np.ones(len(traj.tokens), bool) if keep is None else np.asarray(keep)
    norms = an.displacement_norms(traj.states[:, keep]).T  # [T, S-1]
    idx = np.flatnonzero(keep)
    names = [esc(display_token(traj.tokens[i], int(i))) for i in idx]
    data = [dict(type="heatmap", z=norms, x=traj.times.tolist(), y=list(range(len(idx))), colorscale="Viridis",
                 colorbar=dict(title=dict(text="‖Δx‖"), thickness=14),
                 hovertext=[[f"{names[i]} · {esc(s.label)}: {norms[i, k]:.3g}" for k, s in enumerate(traj.steps)]
                            for i in range(len(idx))], hoverinfo="text")]
    L = int(round(traj.times[-1]))
    layout = _base_layout(height or int(min(700, 16 * len(idx) + 160)),
                          xaxis=dict(title=dict(text="layer time t"), tickmode="array", tickvals=list(range(L + 1))),
                          yaxis=dict(tickmode="array", tickvals=list(range(len(idx))), ticktext=names,
                                     autorange="reversed", tickfont=dict(size=11)),
                          margin=dict(l=110, r=20, t=30, b=50))
    return _figure(data, layout)


# ---- logit lens, attribution -------------------------------------------------------------------
def logit_lens_figure(guesses: list[list[tuple[str, float]]], traj: Trajectory, height: int | None = None) -> go.Figure:
    """Rows: the recorded states (embedding, every sub-step); columns: the top-k guesses."""
    S = len(guesses)
    k = max((len(g) for g in guesses), default=0)
    z = np.array([[p for _, p in g] + [np.nan] * (k - len(g)) for g in guesses])
    text = [[esc(display_token(t)) for t, _ in g] + [""] * (k - len(g)) for g in guesses]
    kinds = _kinds(traj)
    rows = [f"{'' if kinds[i] is None else ('◆ ' if kinds[i] == 'diffusion' else '● ')}{esc(lab)}"
            for i, lab in enumerate(traj.labels[:S])]
    hover = [[f"{rows[i]}<br>#{j + 1}: <b>{text[i][j]}</b> {z[i, j]:.1%}" for j in range(len(guesses[i]))]
             for i in range(S)]
    data = [dict(type="heatmap", z=z, x=[f"#{j + 1}" for j in range(k)], y=list(range(S)), text=text,
                 texttemplate="%{text}", textfont=dict(size=13), zmin=0, zmax=1,
                 colorscale=[[0, "#f7fbff"], [0.25, "#c6dbef"], [0.6, "#4292c6"], [1, "#08306b"]],
                 hovertext=hover, hoverinfo="text", xgap=2, ygap=1,
                 colorbar=dict(title=dict(text="prob."), thickness=12, tickformat=".0%"))]
    layout = _base_layout(height or int(min(1100, 20 * S + 110)),
                          yaxis=dict(tickmode="array", tickvals=list(range(S)), ticktext=rows, autorange="reversed",
                                     tickfont=dict(size=12)),
                          xaxis=dict(side="top", title=dict(text="top guesses, best first")),
                          margin=dict(l=230, r=10, t=60, b=10))
    return _figure(data, layout)


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


# ---- comparisons ----------------------------------------------------------------------------------
def time_grid(*trajs: Trajectory) -> np.ndarray:
    return np.unique(np.round(np.concatenate([t.times for t in trajs]), 6))


def compare_animation(panels: Sequence[dict], start_time: float = 0.0, trail: int = 3, labels: str = "auto",
                      height: int = 520, share_axes: bool = False) -> go.Figure:
    """Side-by-side animations synchronised by layer time.

    panels: dicts with name, traj, coords [S, T, 2], keep [T_all] and explained. One frame per
    time on the union grid; each panel shows its latest state at that time, so layer
    boundaries line up although the schemes have different numbers of sub-steps."""
    from plotly.subplots import make_subplots

    n = len(panels)
    grid = time_grid(*[p["traj"] for p in panels])
    fig = make_subplots(rows=1, cols=n, horizontal_spacing=0.11)
    layout = fig.layout.to_plotly_json()
    prepared = []
    all_ranges = []
    for p in panels:
        coords = np.asarray(p["coords"])[..., :2]
        keep = np.ones(len(p["traj"].tokens), bool) if p.get("keep") is None else np.asarray(p["keep"])
        tokens = [t for t, k in zip(p["traj"].tokens, keep) if k]
        xr, yr = an.padded_range(coords[..., 0]), an.padded_range(coords[..., 1])
        all_ranges.append((xr, yr))
        prepared.append(dict(coords=coords, tokens=tokens, style=token_style(tokens), kinds=_kinds(p["traj"]),
                             xr=xr, yr=yr))
    if share_axes:
        xr = (min(r[0][0] for r in all_ranges), max(r[0][1] for r in all_ranges))
        yr = (min(r[1][0] for r in all_ranges), max(r[1][1] for r in all_ranges))
        for q in prepared:
            q["xr"], q["yr"] = xr, yr
    for q in prepared:
        q["texts"] = _labels_per_frame(q["coords"], q["tokens"], q["xr"], q["yr"], labels, 330 if n > 1 else 700, 290)

    def annotations(t):
        out = []
        for c, (p, q) in enumerate(zip(panels, prepared)):
            f = an.state_at(p["traj"].times, t)
            kind = q["kinds"][f]
            lab = p["traj"].labels[f]
            colour = KIND_COLOR.get(kind, "#222")
            dom = layout[f"xaxis{'' if c == 0 else c + 1}"]["domain"]
            out.append(dict(text=f"<b>{esc(p['name'])}</b><br><span style='color:{colour}'>{esc(lab)}</span>",
                            x=(dom[0] + dom[1]) / 2, y=1.0, xref="paper", yref="paper", xanchor="center",
                            yanchor="bottom", showarrow=False, font=dict(size=14)))
        return out

    def frame_data(t):
        data = []
        for c, (p, q) in enumerate(zip(panels, prepared)):
            f = an.state_at(p["traj"].times, t)
            axes = (f"x{'' if c == 0 else c + 1}", f"y{'' if c == 0 else c + 1}")
            colors, marks = q["style"]
            data += _panel_traces(q["coords"], q["tokens"], q["texts"], colors, marks, q["kinds"], f, trail, 2,
                                  axes=axes, hover_prefix=esc(p["name"]) + ": ", show_legend=c == 0)
        return data

    start = int(np.argmin(np.abs(grid - start_time)))
    frames = [dict(name=f"{t:g}", data=frame_data(t), layout=dict(annotations=annotations(t))) for t in grid]
    for c, (p, q) in enumerate(zip(panels, prepared)):
        sfx = "" if c == 0 else str(c + 1)
        layout[f"xaxis{sfx}"].update(range=list(q["xr"]), autorange=False, zeroline=False,
                                     title=dict(text=_axis_title(0, p.get("explained", [])), font=dict(size=13)))
        layout[f"yaxis{sfx}"].update(range=list(q["yr"]), autorange=False, zeroline=False,
                                     title=dict(text=_axis_title(1, p.get("explained", [])), font=dict(size=13)))
    margin = dict(l=60, r=20, t=95, b=125)
    layout.update(_base_layout(height, margin=margin, uirevision="compare", annotations=annotations(grid[start])))
    layout["legend"] = dict(orientation="h", x=0.0, xanchor="left", y=1.0, yref="container", yanchor="top",
                            font=dict(size=13))
    # redraw: the panel titles (annotations) change with every frame
    layout.update(_play_controls([f["name"] for f in frames], [_slider_label(t) for t in grid], start,
                                 redraw=True, plot_height_px=height - margin["t"] - margin["b"]))
    return _figure(frames[start]["data"], layout, frames)


def overlay_figure(a: np.ndarray, b: np.ndarray, tokens: Sequence[str], name_a: str, name_b: str,
                   residual: float, t: float, explained=(), height: int = 480) -> go.Figure:
    """A's particles (filled) and B's after Procrustes alignment (open), joined token by token."""
    a, b = np.asarray(a)[:, :2], np.asarray(b)[:, :2]
    xr = an.padded_range(np.concatenate([a[:, 0], b[:, 0]]))
    yr = an.padded_range(np.concatenate([a[:, 1], b[:, 1]]))
    seg = _segments(a, b, 2)
    colors, _ = token_style(tokens)
    texts, where = place_labels(a, [display_token(t) for t in tokens], xr, yr, 480, 330,
                                order=_label_priority(tokens))
    data = [dict(type="scatter", mode="lines", x=seg[0], y=seg[1], name="same token", hoverinfo="skip",
                 line=dict(color="rgba(100,100,100,0.6)", width=1.5)),
            dict(type="scatter", mode="markers+text", x=a[:, 0], y=a[:, 1], name=esc(name_a),
                 text=[esc(s) for s in texts], textposition=where, textfont=dict(size=13),
                 hovertext=[f"{esc(name_a)}: {esc(t)}" for t in tokens], hoverinfo="text",
                 marker=dict(size=12, color=colors, symbol="circle", line=dict(width=1, color="white"))),
            dict(type="scatter", mode="markers", x=b[:, 0], y=b[:, 1], name=f"{esc(name_b)} (aligned)",
                 hovertext=[f"{esc(name_b)} (aligned): {esc(t)}" for t in tokens], hoverinfo="text",
                 marker=dict(size=12, color=colors, symbol="diamond-open", line=dict(width=2.5)))]
    layout = _base_layout(height, title=dict(text=f"Overlay at t = {t:g} after orthogonal Procrustes · "
                                                  f"residual {residual:.3f}", x=0, font=dict(size=15)),
                          xaxis=dict(title=dict(text=_axis_title(0, explained)), range=list(xr), zeroline=False),
                          yaxis=dict(title=dict(text=_axis_title(1, explained)), range=list(yr), zeroline=False),
                          margin=dict(l=60, r=20, t=80, b=50))
    return _figure(data, layout)


def cka_figure(m: np.ndarray, traj_a: Trajectory, traj_b: Trajectory, name_a: str, name_b: str,
               height: int = 480) -> go.Figure:
    """Linear CKA between every state of A (rows) and of B (columns); ticks at layer boundaries."""
    la, lb = traj_a.labels, traj_b.labels
    hover = [[f"{esc(name_a)}: {esc(la[i])}<br>{esc(name_b)}: {esc(lb[j])}<br>CKA = {m[i, j]:.3f}"
              for j in range(m.shape[1])] for i in range(m.shape[0])]

    def ticks(traj):
        b = traj.layer_boundaries()
        return dict(tickmode="array", tickvals=b, ticktext=[f"{traj.times[i]:g}" for i in b])

    data = [dict(type="heatmap", z=m, colorscale="Viridis", zmin=0, zmax=1, hovertext=hover, hoverinfo="text",
                 colorbar=dict(title=dict(text="CKA"), thickness=14))]
    layout = _base_layout(height, xaxis=dict(title=dict(text=f"{esc(name_b)}: layer time"), **ticks(traj_b)),
                          yaxis=dict(title=dict(text=f"{esc(name_a)}: layer time"), autorange="reversed",
                                     **ticks(traj_a)),
                          margin=dict(l=70, r=20, t=30, b=60))
    return _figure(data, layout)


def lines_over_depth(series: Sequence[tuple[str, np.ndarray, np.ndarray]], ytitle: str, height: int = 360,
                     yrange: tuple[float, float] | None = None) -> go.Figure:
    """One line per (name, times, values); vertical grid lines at layer boundaries."""
    dashes = ("solid", "dash", "dot", "dashdot")
    colors = ("#0072B2", "#D55E00", "#009E73", "#CC79A7")
    data = [dict(type="scatter", mode="lines+markers", x=np.asarray(t).tolist(), y=np.asarray(v).tolist(),
                 name=esc(name), line=dict(color=colors[i % 4], dash=dashes[i % 4], width=2.5),
                 marker=dict(size=6)) for i, (name, t, v) in enumerate(series)]
    L = max((int(np.ceil(np.max(t))) for _, t, _ in series), default=1)
    layout = _base_layout(height, xaxis=dict(title=dict(text="layer time t"), tickmode="array",
                                             tickvals=list(range(L + 1)), gridcolor="#bbb"),
                          yaxis=dict(title=dict(text=ytitle), **({"range": list(yrange)} if yrange else {})),
                          margin=dict(l=60, r=20, t=40, b=50))
    return _figure(data, layout)


def to_html(fig: go.Figure, title: str = "Macaron Explorer") -> str:
    """A self-contained HTML page (plotly.js inlined: opens offline)."""
    return fig.to_html(include_plotlyjs=True, full_html=True, auto_play=False,
                       config=dict(displaylogo=False, responsive=True)).replace(
        "<head>", f"<head><title>{html.escape(title)}</title>", 1)
