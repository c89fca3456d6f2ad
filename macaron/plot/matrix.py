"""The mixing matrix beside the particles plane, on the animation's clock: who pulls whom at each sub-step (row i
listens to column j; each row sums to 100 %), the identity for convection, over the block of particles that moves
(of two systems, the moving one's rows over the columns it listens to). particles.py draws it beside the plane,
slides.py in the lesson file; `mixing_heatmap` draws one sub-step on its own.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import plotly.graph_objects as go

from ..schemes import CONVECTION, CROSS, SUBSTEP_KINDS
from ..studies.analysis import attention
from ..trajectory import Trajectory
from .style import KIND_COLOR, KIND_NAME, base_layout, display_token, esc, figure, short_token

SCREEN_FONT = 14  # px: the figures' font on a screen (style.FONT); a larger one is a projector's (presenter mode)


def weights(traj: Trajectory, step: int, head: int | None) -> np.ndarray:
    """Sub-step `step`'s mixing matrix [T, T] (one head, or None: their mean; analysis.attention); a convection
    step has none: a ValueError that says so."""
    m = attention(traj, step, head)
    if m is None:
        raise ValueError(f"sub-step {step} ({traj.steps[step].label}) is a convection step: no mixing matrix")
    return m


def _scale(color: str) -> list:
    """White to a kind's colour, steep at first (attention weights of a few per cent still show),
    then to a darker shade of it."""
    dark = "#" + "".join(f"{int(color[i:i + 2], 16) // 2:02x}" for i in (1, 3, 5))
    return [[0.0, "#ffffff"], [0.04, "#f0f0f0"], [0.3, color], [1.0, dark]]


MIXING_SCALE = {kind: _scale(KIND_COLOR[kind]) for kind in SUBSTEP_KINDS}

class Mixing(NamedTuple):
    """What the matrix beside the plane shows at a frame: `z` [rows, columns] in whole per cent, its colour scale, a
    caption, and which particles the rows and the columns are (indices into the trajectory's tokens)."""

    z: np.ndarray
    scale: list
    caption: str
    rows: np.ndarray
    cols: np.ndarray


def mixing_block(traj: Trajectory, f: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows, columns) of the particles frame f's sub-step mixes: all of one system; of two (translation.joint), the
    moving system's rows over the columns of the system it listens to: the source's own during the encoder (and the
    embedding), the translation's for the decoder's self-attention and FFN, the source's for its cross-attention."""
    every = np.arange(len(traj.tokens))
    two = traj.meta.get("two_systems")
    step = traj.steps[f - 1] if f else None
    if not two:
        if step is not None and step.kind == CROSS:
            raise ValueError("a cross-attention matrix reads the source's particles, which a decoder's trajectory "
                             "alone does not hold: draw both systems, translation.joint")
        return every, every
    source, target = every[:two["source"]], every[two["source"]:]
    if f <= two["encoder_steps"]:
        return source, source
    return target, source if step.kind == CROSS else target


def mixing_state(traj: Trajectory, f: int, head: int | None) -> Mixing:
    """The matrix of the sub-step that produced state f, over its block (mixing_block): its mixing matrix, the
    identity for convection (each particle reads only itself), blank for the embedding. Per cent as bytes keep 19
    frames of a 32 × 32 matrix small for the browser."""
    rows, cols = mixing_block(traj, f)
    if f == 0:
        return Mixing(np.zeros((len(rows), len(cols)), np.uint8), _scale("#ffffff"), "embedding: no sub-step yet",
                      rows, cols)
    kind, m = traj.steps[f - 1].kind, traj.mixing[f - 1]
    if m is None:
        return Mixing(np.eye(len(rows), dtype=np.uint8) * 100, MIXING_SCALE[CONVECTION], f"{KIND_NAME[kind]}: identity",
                      rows, cols)
    which = f"mean of {m.shape[0]} heads" if head is None or m.shape[0] == 1 else f"head {head + 1}"
    w = np.asarray(weights(traj, f - 1, head), np.float64)[np.ix_(rows, cols)]
    return Mixing(np.rint(100 * w).astype(np.uint8), MIXING_SCALE[kind], f"{KIND_NAME[kind]}: {which}", rows, cols)


def _names(traj: Trajectory) -> list[str]:
    return [esc(display_token(t, i)) for i, t in enumerate(traj.tokens)]  # unique: categories of both axes


def matrix_trace(traj: Trajectory, f: int, head: int | None, axes=("x2", "y2")) -> dict:
    """The heatmap of frame f's matrix (matrix_frame, named), on `axes`: 0 to 100 %, hover in words."""
    return dict(matrix_frame(traj, f, head, names=True), zmin=0, zmax=100, showscale=False, xgap=0.5, ygap=0.5,
                hovertemplate="%{y} listens to %{x}: %{z}%<extra></extra>", xaxis=axes[0], yaxis=axes[1])


def matrix_frame(traj: Trajectory, f: int, head: int | None, names: bool = False) -> dict:
    """The matrix of frame f; with its rows' and columns' names where they are new (the first frame, and every frame
    of two systems, whose block changes), so that a frame of one system sends only its numbers."""
    z, scale, _, rows, cols = mixing_state(traj, f, head)
    if not (names or "two_systems" in traj.meta):
        return dict(type="heatmap", z=z, colorscale=scale)
    every = _names(traj)
    return dict(type="heatmap", z=z, x=[every[i] for i in cols], y=[every[i] for i in rows], colorscale=scale)


def _names_room(traj: Trajectory, px: float) -> float:
    """Pixels the matrix's column names take, upright under it (none beyond 40 names: hover names them)."""
    return (0.62 * px * max(len(short_token(t)) for t in traj.tokens) + 8) if largest_block(traj) <= 40 else 0


def _fits(traj: Trajectory, width_px: float, height_px: float, px: int) -> float:
    """How many rows and columns named in `px` a matrix `width_px` × `height_px` has room for (a row 4/3 of a name's
    size; the column names upright under it)."""
    return 0.75 * min(width_px, height_px - _names_room(traj, px)) / px


def matrix_font(traj: Trajectory, width_px: float, height_px: float, font_size: int) -> int | None:
    """The size of the matrix's row and column names beside a plot `width_px` × `height_px`: on a screen as large as
    a row and a column of the largest block leave room for, 8 px to 2 px under the labels' font; on a projector (a
    font above SCREEN_FONT) the particles' label size itself, or None where the matrix has no room for names that
    large: it gives way to the plane."""
    n = largest_block(traj)
    if font_size <= SCREEN_FONT:
        return int(np.clip(0.75 * min(width_px, height_px) / n, 8, font_size - 2))
    return font_size if _fits(traj, width_px, height_px, font_size) >= n else None


def matrix_axes(traj: Trajectory, height_px: float, split: float, px: int, f: int) -> dict:
    """The matrix's axes beside the plane: rows and columns named by their tokens (mixing_block's; up to 40, beyond,
    hover names them) in `px` (matrix_font), the names of the columns upright under the matrix."""
    n = largest_block(traj)
    room = _names_room(traj, px)  # upright names, px
    axes = matrix_ticks(traj, f, n <= 40)
    look = dict(showgrid=False, zeroline=False, tickfont=dict(size=px))
    axes["xaxis2"].update(look, domain=[split + 0.1, 1.0], anchor="y2", tickangle=-90)
    axes["yaxis2"].update(look, domain=[min(0.4, room / height_px), 1.0], anchor="x2")
    return axes


def largest_block(traj: Trajectory) -> int:
    """The most particles the matrix shows at any frame: its rows or columns (mixing_block)."""
    return max(len(part) for f in range(traj.n_steps + 1) for part in mixing_block(traj, f))


def matrix_ticks(traj: Trajectory, f: int, shown: bool) -> dict:
    """The names of the rows and columns of frame f's matrix (`shown`: none where a block has more than 40 tokens,
    hover names them), the first row on top."""
    names, short = _names(traj), [esc(short_token(t)) for t in traj.tokens]
    rows, cols = mixing_block(traj, f)

    def ticks(which, span):  # the range too: an axis of categories keeps the first frame's count otherwise
        return dict(tickmode="array", tickvals=[names[i] for i in which] if shown else [],
                    ticktext=[short[i] for i in which], range=span, autorange=False)

    return dict(xaxis2=ticks(cols, [-0.5, len(cols) - 0.5]), yaxis2=ticks(rows, [len(rows) - 0.5, -0.5]))


def mixing_heatmap(traj: Trajectory, step: int, head: int | None = None, height: int | None = None) -> go.Figure:
    """Row i = how particle i spreads its attention over the particles j (each row sums to 100 %)."""
    weights(traj, step, head)  # a convection step has no mixing matrix: say so
    trace = matrix_trace(traj, step + 1, head, ("x", "y"))
    trace.update(showscale=True, colorbar=dict(title=dict(text="weight"), ticksuffix="%", thickness=14))
    T = len(trace["y"])
    ticks = matrix_ticks(traj, step + 1, largest_block(traj) <= 40)["xaxis2"]
    layout = base_layout(height or int(min(760, max(380, 18 * T + 170))),
                         title=dict(text=f"Who pulls whom · {esc(traj.steps[step].label.split(' · ')[0])} · "
                                         f"{esc(mixing_state(traj, step + 1, head).caption)}", x=0,
                                    font=dict(size=15)),
                         xaxis=dict(ticks, title=dict(text="listens to … (key j)"), side="bottom",
                                    tickangle=-90 if len(trace["x"]) > 12 else -50),
                         yaxis=dict(title=dict(text="particle i (query)"), autorange="reversed",
                                    tickfont=dict(size=11 if T > 20 else 13)),
                         margin=dict(l=110, r=20, t=50, b=110))
    return figure([trace], layout)
