"""The particles animation of one trajectory, with who pulls whom, on one clock: the plane of particles (laid out
once, then drawn frame by frame; compare and slides draw it too) and the mixing matrix beside it (matrix.py).
Trajectories and macaron.studies.analysis projections in, Plotly figures out. The rhythm of a layer is in rhythm.py,
the logit lens and attribution in guesses.py.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from ..network.reading import InputError
from ..schemes import SUBSTEP_KINDS
from ..studies.analysis import Projection, listens_to
from ..trajectory import Trajectory
from .matrix import (
    largest_block,
    matrix_axes,
    matrix_font,
    matrix_frame,
    matrix_ticks,
    matrix_trace,
    mixing_block,
    mixing_state,
    weights,
)
from .style import (
    KIND_COLOR,
    KIND_NAME,
    SYSTEM_LOOK,
    TRAIL_COLOR,
    Label,
    axis_title,
    base_layout,
    display_token,
    equal_units,
    esc,
    figure,
    ink,
    label_priority,
    label_traces,
    padded_range,
    place_labels,
    play_controls,
    token_style,
    true_aspect,
)

MOST_LABELLED = 30  # up to this many particles, every one is labelled (moved, shortened or on a leader line)
PARTICLE_PX, RIM_PX = 10, 1  # a particle's dot (2-D): its diameter and its white rim
# Plotly's "arrow" marker of size s is a head 0.95·s long and 0.62·s wide (plotly.js symbol_defs: π/2.5 at the tip);
# 2 px above the labels' font, moved back to the dot's rim so that none of it hides under the dot: 15 px long at the
# screen's 14 px font, 19 px at a projector's 18 px (before: size 11, 10.5 px, its first 6 px under the dot)
ARROW_OVER_FONT = 2
# the ring around the particle whose weights the figure spells out (heard_said): black, clear of the dot's rim
RING = dict(mode="markers", name="focus", hoverinfo="skip", showlegend=False,
            marker=dict(size=PARTICLE_PX + 8, color="rgba(0,0,0,0)", line=dict(width=2, color="#111")))
MATRIX_SPLIT = 0.64  # the plane's share of the width beside a matrix (the matrix's: 0.26, after a gap of 0.1)


def arrow_px(font_px: int) -> int:
    """The size of the arrow heads that end the moves, for labels of `font_px`."""
    return font_px + ARROW_OVER_FONT


# ---- the particles animation ------------------------------------------------------------------------
def kinds_of(traj: Trajectory) -> list[str | None]:
    """Kind of the sub-step that produced each state (None for the embedding)."""
    return [None] + [s.kind for s in traj.steps]


def slider_label(t: float, h: float = 1.0, encoder_layers: float | None = None) -> str:
    """A tick at each layer boundary: the layer number, or for steps h of one flow the flow's time h·t; for two
    systems on one clock (translation.joint) E1, E2, … for the encoder's layers and D1, D2, … for the decoder's."""
    if not float(t).is_integer():
        return ""
    if encoder_layers is None or t == 0:
        return f"{h * t:g}"
    return f"E{t:g}" if t <= encoder_layers else f"D{t - encoder_layers:g}"


def keep_mask(traj: Trajectory, keep) -> np.ndarray:
    """[T] bool: the particles kept (`keep`, or every one for None)."""
    return np.ones(len(traj.tokens), bool) if keep is None else np.asarray(keep)


def kept_tokens(traj: Trajectory, keep) -> list[str]:
    return list(traj.tokens) if keep is None else [t for t, k in zip(traj.tokens, keep) if k]


def frame_title(traj: Trajectory, f: int) -> str:
    """What the frame shows, in words: the sub-step just taken (its kind in the kind's colour), the
    layer time, and a step counter."""
    step = traj.steps[f - 1] if f else None
    count = f"sub-step {f} of {traj.n_steps}"
    if step is None and "two_systems" in traj.meta:
        return f"<b>embeddings</b> of both sentences  ·  t = 0, before the encoder  ·  {count}"
    if step is None:
        return f"<b>embedding</b>  ·  t = 0, before layer 1  ·  {count}"
    layer, what = step.label.split(" · ", 1)
    return (f"<b>{esc(layer)} · <span style='color:{ink(KIND_COLOR[step.kind])}'>{esc(what)}</span></b>"
            f"  ·  {clock(traj, step.time, system=False)}  ·  {count}")  # the layer names its system


def clock(traj: Trajectory, depth: float, system: bool = True) -> str:
    """The time a state is at: in layers, or for a model whose layers are steps h of one flow (ModelConfig.step),
    in that flow's time h·depth. Of two systems, the encoder's or the decoder's time, named (`system`) unless the
    words beside it name it already."""
    h = traj.meta.get("step", 1.0)
    systems = traj.meta.get("two_systems")
    if systems:  # the decoder's clock starts where the encoder's stops
        enc = systems["encoder_layers"]
        which, t = ("encoder ", depth) if depth <= enc else ("decoder ", depth - enc)
        return f"{which if system else ''}t = {round(t, 2):g}"
    return f"t = {depth:g}" if h == 1.0 else f"t = {h * depth:.4g} (h = {h:g})"


def _nan_separated(parts: list[np.ndarray]) -> np.ndarray:
    """Polylines [m, L] → one float32 array with NaN between them (Plotly breaks lines at NaN)."""
    stack = np.stack(parts, axis=1)  # [m, L]
    out = np.full((stack.shape[0], stack.shape[1] + 1), np.nan, np.float32)
    out[:, :-1] = stack
    return out.ravel()


def segments(a: np.ndarray, b: np.ndarray, dims: int) -> list[np.ndarray]:
    """Per axis: the segments a[i] → b[i], NaN between them."""
    return [_nan_separated([a[:, k], b[:, k]]) for k in range(dims)]


def _trail(coords: np.ndarray, f: int, length: int, dims: int) -> list[np.ndarray]:
    """Per axis: each particle's last `length` moves (fixed size: early frames repeat the embedding)."""
    idx = [max(0, f - k) for k in range(length, -1, -1)]
    return [_nan_separated([coords[i, :, k] for i in idx]) for k in range(dims)]


@dataclass
class Plane:
    """One particles plane of an animation: every state's positions, the looks and the labels."""

    traj: Trajectory
    coords: np.ndarray                  # [S, T_kept, 2 or 3]
    keep: np.ndarray                    # [T] bool
    tokens: list[str]                   # the kept particles
    ranges: list[list[float]]           # fixed axis ranges
    labels: list[list[Label | None]]    # per state, placed (2-D); empty: none drawn
    size_px: tuple = ((460.0,), 330.0)  # (plot widths, narrowest first; height) the labels were placed for
    axes: tuple[str, str] = ("x", "y")
    trail: int = 4                      # sub-steps of path drawn behind each particle
    head: int | None = None             # the attention head drawn (None: mean over heads)
    font_px: int = 14                   # the figure's font: labels are placed for it

    @property
    def dims(self) -> int:
        return self.coords.shape[-1]

    @property
    def systems(self) -> list[str] | None:
        """Per kept particle, "source" or "target" for two systems on one clock (translation.joint); else None."""
        two = self.traj.meta.get("two_systems")
        if not two:
            return None
        return [("source" if i < two["source"] else "target") for i in np.flatnonzero(self.keep)]


def plot_widths(width: int | tuple[int, int], margin: dict, share: float) -> tuple[float, ...]:
    """Pixel widths of a plot taking `share` of a figure `width` (or range of widths) wide."""
    return tuple((w - margin["l"] - margin["r"]) * share - 10 for w in np.atleast_1d(width))


def plane(traj: Trajectory, proj: Projection, *, trail: int = 4, labels: str = "auto", axes=("x", "y"),
          size_px=((460,), 330), font_px: int = 14, ranges=None, head: int | None = None) -> Plane:
    """Lay out one plane: fixed ranges (2-D: widened to true aspect on the narrowest plot, style.equal_units),
    and (2-D) labels placed frame by frame, each label kept where it was while that place stays free.
    `labels`: 'auto' (every particle up to 30; beyond, the first 30 in label_priority that fit), 'all' (every
    particle, overlapping if it must), 'none'."""
    coords = np.asarray(proj.coords)
    keep = keep_mask(traj, proj.keep)
    tokens = kept_tokens(traj, keep)
    ranges = ranges or [padded_range(coords[..., k]) for k in range(coords.shape[-1])]
    if coords.shape[-1] == 2:  # true aspect: a wider plot shows more of x, and every distance in pixels stays
        ranges = list(equal_units(*ranges, size_px[0][0], size_px[1]))
        size_px = ((size_px[0][0],), size_px[1])
    placed: list[list[Label | None]] = []
    if labels != "none" and coords.shape[-1] == 2:
        texts, order = [display_token(t) for t in tokens], label_priority(tokens)
        force = labels == "all" or len(tokens) <= MOST_LABELLED
        order = order if force else order[:MOST_LABELLED]  # a crowd: the words that matter most, quickly
        for c in coords:
            placed.append(place_labels(c, texts, ranges[0], ranges[1], size_px[0], size_px[1], font_px, order,
                                       force, prefer=placed[-1] if placed else None))
    return Plane(traj, coords, keep, tokens, ranges, placed, size_px, tuple(axes), max(0, int(trail)), head, font_px)


def listened_most(p: Plane, f: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """For the diffusion sub-step that produced state f (None for any other state): per kept particle, the kept
    particle it listened to most besides itself, that weight, and whether it is well above uniform."""
    if f == 0 or p.traj.mixing[f - 1] is None:
        return None
    idx = np.flatnonzero(p.keep)
    w = weights(p.traj, f - 1, p.head)[np.ix_(idx, idx)].copy()
    np.fill_diagonal(w, -1.0)
    j = w.argmax(1)
    weight = w[np.arange(len(idx)), j]
    return j, weight, weight >= max(0.05, 1.5 / len(p.traj.tokens))


def pull_lines(p: Plane, f: int, most: tuple | None) -> list[np.ndarray]:
    """Per axis: a line from each particle to the one it listened to most in the diffusion
    sub-step that produced state f (`most`: listened_most(p, f)), where that weight is well above uniform."""
    if most is None or not most[2].any():
        return [np.full(3, np.nan, np.float32) for _ in range(p.dims)]
    j, _, strong = most
    x = p.coords[f]
    return segments(x[strong], x[j[strong]], p.dims)


def hovers(p: Plane, most: tuple | None, systems: list[str] | None, prefix: str = "") -> list[str]:
    """Each particle's hover text: its word (its system's name first where there are two), and after a diffusion
    sub-step whom it listened to most (`most`: listened_most; the dotted line's end, in words: on a projector's
    small plane the lines alone are hard to follow)."""
    said = [f"{prefix}{systems[i] + ': ' if systems else ''}<b>{esc(display_token(tok))}</b>"
            for i, tok in enumerate(p.tokens)]
    if most is not None:
        for i, (j, weight, strong) in enumerate(zip(*most)):
            if strong:
                said[i] += f"<br>listened most to <b>{esc(display_token(p.tokens[j]))}</b> ({100 * weight:.0f} %)"
    return said


def heard_said(traj: Trajectory, f: int, i: int | None, head: int | None = None) -> str:
    """Whom particle i listened to in the sub-step that produced state f, in words (analysis.listens_to: the top four
    of its row of the matrix, itself and [CLS]/[SEP] included): on a projector, where the matrix gives way and the
    dotted lines are small, the class reads one particle's weights. "" for the embedding and for no particle."""
    if i is None or f == 0:
        return ""
    who = f"<b>{esc(display_token(traj.tokens[i]))}</b>"
    if i not in mixing_block(traj, f)[0]:
        return f"{who} stays put"  # the other system of two moves
    if traj.mixing[f - 1] is None:
        return f"{who} reads only itself"
    heard = listens_to(traj, f - 1, i, head)
    counts = Counter(traj.tokens)  # a repeated word goes by its place, as in the matrix

    def name(j: int) -> str:
        return "itself" if j == i else esc(display_token(traj.tokens[j], j if counts[traj.tokens[j]] > 1 else None))

    return f"{who} listened to: " + " · ".join(f"{name(j)} {100 * w:.0f} %" for j, w in heard)


def ring(p: Plane, f: int, i: int | None) -> dict:
    """A ring around particle i at state f (2-D), the one heard_said speaks of; nothing where it is not drawn."""
    shown = i is not None and bool(p.keep[i])
    x = p.coords[f, int(np.sum(p.keep[:i]))] if shown else (None, None)
    return dict(type="scatter", x=[x[0]], y=[x[1]])


def _xyz(arrays: Sequence[np.ndarray]) -> dict:
    """A frame's update of one scatter trace (its type named so that Plotly can validate it)."""
    return dict(type="scatter3d" if len(arrays) == 3 else "scatter",
                **dict(zip(("x", "y", "z"), [np.asarray(a, np.float32) for a in arrays])))


def plane_traces(p: Plane, f: int, legend: bool = True, hover_prefix: str = "") -> list[dict]:
    """The traces of a plane at state f: trail, one move per kind, attention lines, particles."""
    three = p.dims == 3
    typ = "scatter3d" if three else "scatter"
    ax = {} if three else dict(xaxis=p.axes[0], yaxis=p.axes[1])
    colors, marks = token_style(p.tokens, three)
    systems = p.systems
    if systems:
        colors, marks = [SYSTEM_LOOK[s][0] for s in systems], [SYSTEM_LOOK[s][1] for s in systems]
    traces = [dict(type=typ, mode="lines", name="trail", hoverinfo="skip",  # lines only: a lighter page
                   line=dict(color=TRAIL_COLOR, width=2 if three else 1.5), showlegend=legend, legendgroup="trail",
                   **ax)]
    for k in _kinds(p):
        t = dict(type=typ, mode="lines" if three else "lines+markers", name=KIND_NAME[k], hoverinfo="skip",
                 line=dict(color=KIND_COLOR[k], width=6 if three else 3), showlegend=legend, legendgroup=k, **ax)
        if not three:  # an arrow head at the end of every move, its tip at the rim of the particle's dot
            t["marker"] = dict(symbol="arrow", angleref="previous", size=[0, arrow_px(p.font_px), 0] * len(p.tokens),
                               standoff=PARTICLE_PX / 2 + RIM_PX, color=KIND_COLOR[k])
        traces.append(t)
    traces.append(dict(type=typ, mode="lines" if three else "lines+markers", name="who pulls whom",
                       hoverinfo="skip", line=dict(color="rgba(0,114,178,0.5)", width=3 if three else 1.5, dash="dot"),
                       showlegend=legend and any(m is not None for m in p.traj.mixing), legendgroup="edges",
                       **ax))
    if not three:  # a small head where the line meets the particle listened to
        traces[-1]["marker"] = dict(symbol="arrow", angleref="previous", standoff=6, color="rgba(0,114,178,0.8)")
    particles = dict(type=typ, mode="markers+text" if three else "markers", name="particles", showlegend=False,
                     hoverinfo="text",
                     marker=dict(size=6 if three else PARTICLE_PX, color=colors, symbol=marks,
                                 line=dict(width=1 if three else RIM_PX, color="#333" if three else "white")), **ax)
    if three:
        particles.update(text=[esc(display_token(t)) for t in p.tokens], textfont=dict(size=p.font_px - 1))
    traces.append(particles)
    for system, name in (SYSTEM_NAMES if systems else ()):  # the legend says which shape is which system
        color, symbol, _ = SYSTEM_LOOK[system]
        traces.append(dict(type=typ, mode="markers", name=name, hoverinfo="skip", showlegend=legend,
                           x=[None], y=[None], **({"z": [None]} if three else {}),
                           marker=dict(size=6 if three else 10, color=color, symbol=symbol), **ax))
    if not three:  # labels: one text trace (beside the dots or on leader lines), far faster than annotations
        traces.append(dict(type="scatter", mode="lines", name="leaders", hoverinfo="skip", showlegend=False,
                           line=dict(color="rgba(90,90,90,0.55)", width=1), **ax))
        traces.append(dict(type="scatter", mode="markers+text", name="labels", hoverinfo="skip", showlegend=False,
                           marker=dict(size=10, opacity=0), textfont=dict(size=p.font_px, color="#111"), **ax))
    for trace, update in zip(traces, plane_frame(p, f, hover_prefix)):
        trace.update(update)
    return traces


def _kinds(p: Plane) -> list[str]:
    present = {s.kind for s in p.traj.steps}
    return [k for k in SUBSTEP_KINDS if k in present]


def plane_frame(p: Plane, f: int, hover_prefix: str = "") -> list[dict]:
    """What changes from state to state, trace by trace (in plane_traces' order); `hover_prefix` names the panel."""
    x = p.coords[f]
    kind = kinds_of(p.traj)[f]
    empty = [np.full(3 * len(p.tokens), np.nan, np.float32)] * p.dims
    out = [_xyz(_trail(p.coords, f, p.trail, p.dims))]
    if f:  # a particle that did not move (the other system of two) gets no arrow
        before, after = p.coords[f - 1].copy(), x.copy()
        still = (before == after).all(-1)
        before[still] = after[still] = np.nan
    for k in _kinds(p):
        out.append(_xyz(segments(before, after, p.dims) if f and kind == k else empty))
    most, systems = listened_most(p, f), p.systems  # each once a frame: the lines and the hovers read them
    edges = _xyz(pull_lines(p, f, most))
    if p.dims == 2:
        edges["marker"] = dict(size=[0, 9, 0] * (len(edges["x"]) // 3))
    out.append(edges)
    out.append(dict(_xyz([x[:, k] for k in range(p.dims)]), hovertext=hovers(p, most, systems, hover_prefix)))
    if systems:
        out += [dict(type="scatter3d" if p.dims == 3 else "scatter")] * len(SYSTEM_NAMES)  # the legend's: unchanged
    if p.dims == 2:
        labels = p.labels[f] if p.labels else [None] * len(p.tokens)
        text, leaders = label_traces(x, labels, *p.ranges, p.size_px[0][0], p.size_px[1], p.font_px)
        if systems:  # each label in its system's colour
            text["textfont"] = dict(color=[SYSTEM_LOOK[s][2] for s, lab in zip(systems, labels) if lab is not None])
        out += [dict(type="scatter", **leaders), dict(type="scatter", **text)]
    return out


SYSTEM_NAMES = (("source", "source sentence"), ("target", "translation"))  # the legend of two systems


def legend_names(traj: Trajectory) -> list[str]:
    """The entries of a particles figure's legend: the trail, each kind of move the trajectory makes, the lines of who
    pulls whom, and for two systems which mark is which."""
    present = {s.kind for s in traj.steps}
    return ["trail", *(KIND_NAME[k] for k in SUBSTEP_KINDS if k in present), "who pulls whom",
            *(name for _, name in SYSTEM_NAMES if "two_systems" in traj.meta)]


def entry_px(name: str, font_px: int) -> float:
    """A legend entry's width: about 40 px of symbol and gap and half an em a character, as Chromium draws them."""
    return 40 + 0.5 * font_px * len(name)


def legend_room(traj: Trajectory, font_px: int, width: int | tuple[int, int], margin: dict) -> int:
    """Pixels the horizontal legend of two systems needs above its first row: none where its entries fit in one row
    at the narrowest width the figure may be drawn (entry_px), else a second row, as tall as the font."""
    if "two_systems" not in traj.meta:
        return 0
    fits = sum(entry_px(n, font_px) for n in legend_names(traj)) <= np.min(width) - margin["l"] - margin["r"]
    return 0 if fits else 12 + 2 * font_px


def legend_aside(traj: Trajectory, font_px: int, width: int | tuple[int, int], margin: dict) -> float:
    """The plane's share of the width when the legend stands in a column at its right (where a matrix that gave way
    would be): the widest entry and a gap of 20 px, at the narrowest width the figure may be drawn."""
    room = np.min(width) - margin["l"] - margin["r"]
    return 1.0 - (max(entry_px(n, font_px - 1) for n in legend_names(traj)) + 20) / room


def particles(traj: Trajectory, proj: Projection, *, start: int = 0, trail: int = 4, labels: str = "auto",
              head: int | None = None, height: int = 500, width: int | tuple[int, int] = (660, 1560),
              font_size: int = 14, ranges: list | None = None, focus: int | None = None,
              guesses: Sequence[Sequence[tuple[str, float]]] | None = None) -> go.Figure:
    """The particles animation, one frame per recorded state in one fixed PCA frame, and beside it the mixing matrix
    of the same sub-step: an AnimatedFigure, whose frames are in `raw_frames` (plain dicts that `to_dict`, `to_html`
    and `plot.to_html` include; `frames` stays empty).

    One clock: the particles, their moves, the lines to whom each particle listens most, the
    matrix and the title (sub-step, kind, layer time, step counter) are all frames of this one
    figure, so Play and the slider move them together; every frame redraws its title. proj:
    analysis.project of the same trajectory (2 or 3 axes). `height` and `width` (or the narrowest and
    widest it may stretch to): the size it is drawn at, for which labels are placed; `head`: one
    attention head, or None for their mean; `ranges`: fixed axis ranges (default: around this trajectory's
    coordinates), e.g. one range for a sentence at every stage of training; `focus`: a particle (index into
    traj.tokens) ringed in 2-D, whose weights each frame spells out above the plot (heard_said); `guesses`: per state
    the model's guesses, most likely first (word, probability: analysis.answers), the first named in each frame's
    title."""
    S = len(traj.labels)
    start = int(np.clip(start, 0, S - 1))
    if focus is not None and not 0 <= focus < len(traj.tokens):
        raise InputError(f"focus={focus}: no such particle; this trajectory has {len(traj.tokens)} (0 to "
                         f"{len(traj.tokens) - 1}, traj.tokens.index(word) finds one)")
    three = np.shape(proj.coords)[-1] == 3
    margin = dict(l=60, r=12, t=86 + 3 * (font_size - 14), b=104)  # the title and the legend grow with the font
    rows = legend_room(traj, font_size, width, margin)
    attends = any(m is not None for m in traj.mixing)
    beside = (plot_widths(width, margin, 0.9 - MATRIX_SPLIT)[0], height - margin["t"] - rows - margin["b"])  # px
    names_px = matrix_font(traj, *beside, font_size)
    mixing = attends and names_px is not None  # on a projector a matrix too small to read gives way to the plane,
    aside = attends and not mixing  # and the legend takes the matrix's column: its rows above go to the plane
    margin["t"] += 0 if aside else rows
    plot_h = height - margin["t"] - margin["b"]
    split = MATRIX_SPLIT if mixing else legend_aside(traj, font_size, width, margin) if aside else 1.0
    p = plane(traj, proj, trail=trail, labels=labels, font_px=font_size, head=head,
              size_px=(plot_widths(width, margin, split), plot_h), ranges=ranges)
    ringed = focus is not None and not three
    data = plane_traces(p, start) + ([dict(ring(p, start, focus), **RING)] if ringed else [])
    if mixing:
        data.append(matrix_trace(traj, start, head))

    def annotations(f: int) -> list[dict]:
        if not attends:
            return []
        said = (f" (row listens to column)<br>{esc(mixing_state(traj, f, head).caption)}" if mixing else
                f": the dotted lines<br>(its matrix of {largest_block(traj)} words does not fit at this size)")
        heard = heard_said(traj, f, focus, head)
        said += f"<br>{heard}" if heard else ""
        return [dict(text=f"<b>who pulls whom</b>{said}", x=1.0, y=1.0, xref="paper", yref="paper", xanchor="right",
                     align="right", yanchor="bottom", showarrow=False, font=dict(size=font_size - 2))]  # in the figure

    def titled(f: int) -> str:  # the frame's title, with what the model would guess from that state
        if not guesses:
            return frame_title(traj, f)
        word, p = guesses[f][0]
        return frame_title(traj, f) + f"  ·  guess: “{esc(word)}” {100 * p:.0f} %"

    blocks = mixing and "two_systems" in traj.meta  # each frame its own block: its names and range
    shown = blocks and largest_block(traj) <= 40
    frames = [dict(name=str(f), traces=list(range(len(data))),
                   data=plane_frame(p, f) + ([ring(p, f, focus)] if ringed else [])
                   + ([matrix_frame(traj, f, head)] if mixing else []),
                   layout=dict(title=dict(text=titled(f)), annotations=annotations(f),
                               **(matrix_ticks(traj, f, shown) if blocks else {})))
              for f in range(S)]
    layout = base_layout(height, title=dict(text=titled(start), x=0.0, xanchor="left", xref="paper",
                                            y=1.0 - 12 / height, yref="container", yanchor="top",
                                            font=dict(size=font_size + 3)),
                         font=dict(base_layout(0)["font"], size=font_size), margin=margin, uirevision="particles",
                         annotations=annotations(start))
    where = (dict(orientation="v", x=1.0, xanchor="right", y=1.0, yanchor="top", tracegroupgap=0) if aside else
             dict(orientation="h", x=0.0, xanchor="left", y=1.0 + 30 / plot_h, yanchor="bottom"))
    layout["legend"] = dict(where, font=dict(size=font_size - 1), itemsizing="constant")
    if three:

        def axis(k):
            return dict(title=dict(text=f"PC{k + 1}"), range=p.ranges[k], autorange=False)

        spans = np.array([r[1] - r[0] for r in p.ranges])  # true aspect in space too
        layout["scene"] = dict(xaxis=axis(0), yaxis=axis(1), zaxis=axis(2), aspectmode="manual",
                               aspectratio=dict(zip("xyz", (spans / spans.max()).tolist())),
                               domain=dict(x=[0.0, split - 0.02], y=[0.0, 1.0]),
                               camera=dict(eye=dict(x=1.6, y=1.4, z=1.0)))
    else:
        layout["xaxis"] = dict(title=dict(text=axis_title(0, proj.explained)), range=p.ranges[0], autorange=False,
                               zeroline=False, domain=[0.0, split])
        layout["yaxis"] = dict(title=dict(text=axis_title(1, proj.explained)), range=p.ranges[1], autorange=False,
                               zeroline=False, **true_aspect("x"))
    if mixing:
        layout.update(matrix_axes(traj, plot_h, split, names_px, start))
    # slider ticks at the layer boundaries, on the title's clock; the full sub-step is the title
    h, two = traj.meta.get("step", 1.0), traj.meta.get("two_systems")
    ticks = [slider_label(t, h, two and two["encoder_layers"]) for t in traj.times]
    layout.update(play_controls([str(f) for f in range(S)], ticks, start, plot_h,
                                font_size=font_size))
    return figure(data, layout, frames)
